/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ext4dec private header: transparent decompression of szip files on ext4.
 *
 * An "active" inode is an ext4 regular file flagged +c whose contents are a
 * valid szip file.  Activation leaves the on-disk inode alone and changes
 * only the in-memory one: write access is denied, i_size becomes the
 * uncompressed size, and the inode's address_space_operations and
 * file_operations become ext4dec's, which inflate chunks into the inode's
 * own page cache.  The raw, compressed bytes are read from disk with bios,
 * through a block map taken at activation.
 *
 * Calls go one way, from the top down; no file calls a file above it:
 *
 *   main.c        load and unload; sysfs.c the counters in sysfs
 *   hooks.c       the wrappers of ext4's functions (through ftrace.c)
 *   file.c        file operations, mmap.c page faults
 *   activate.c    activation and deactivation, the data ioctls' gate
 *   load.c        checking and loading an inode's state at activation;
 *                 policy.c who may have a file decoded, and refusals
 *                 remembered
 *   aops.c        address space operations: read_folio; readahead.c
 *   inflate.c     inflating a chunk into page-cache folios
 *   state.c       the lifetime of an inode's state
 *   raw.c         raw block I/O; cache.c kept compressed bytes
 *   workers.c     inflate workers; workspace.c inflate workspaces
 *   ext4.c        ext4's tables, the functions ext4dec wraps, ext4's
 *                 flags and block map; ftrace.c the redirection
 *
 * and into szip/, the decoder library.  Three things every file uses are
 * the exceptions: main.c's parameters, counters and messages
 * (ext4dec_msg()).  The ways back up are callbacks: the VFS and mm call
 * the operation tables, ftrace sends ext4's functions to the wrappers, a
 * raw read's completion and a worker's job call their owner, and the last
 * reference frees the state.  docs/design-notes.md has the whole picture.
 */
#ifndef _EXT4DEC_H
#define _EXT4DEC_H

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk_types.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "compat.h"
#include "ext4dec_ioctl.h"
#include "szip.h"

#define EXT4DEC_VERSION	"0.1"

/* corrupt compressed data, as erofs and ext4 spell it */
#define EFSCORRUPTED	EUCLEAN

/* Largest uncompressed chunk: v2's (v1's is 32 KiB) */
#define EXT4DEC_MAX_CHUNK	SZIP2_MAX_CHUNK_SIZE

/*
 * Largest compressed chunk the module reads: a v1 deflate stream of a chunk
 * stored without compression is a few bytes longer than the chunk, and no
 * encoder writes much more; a v2 chunk is never longer than the chunk.  A
 * file with a longer chunk is refused.
 */
#define EXT4DEC_MAX_CLEN	max(2 * SZIP_MAX_CHUNK_SIZE + 4096, \
				    SZIP2_MAX_CHUNK_SIZE)

/* Largest dictionary + offset table kept in memory (4M chunks) */
#define EXT4DEC_MAX_META	(16U << 20)

/* Compressed bytes one readahead request reads at once, at most */
#define EXT4DEC_RA_BYTES	SZ_2M

/**
 * struct ext4dec_extent - one run of the compressed file's block map
 * @lblk: first logical block
 * @pblk: first physical block on the filesystem's device; 0 for a hole or
 *	an unwritten extent, which read as zeros
 * @len: number of blocks
 */
struct ext4dec_extent {
	u64 lblk;
	u64 pblk;
	u64 len;
};

/*
 * Locking.  The locks that order activation, outermost first:
 *
 *   the inode lock (i_rwsem)	activation and deactivation of the inode
 *				(the caller of ext4dec_activate(),
 *				ext4dec_deactivate() and
 *				ext4dec_deactivate_force() holds it), and
 *				the check of a raw hold against them
 *				(ext4dec_hold_raw())
 *   the mapping's invalidate lock	installing and removing ext4dec's
 *				operations and page cache, against reads
 *				and faults (eviction removes them without
 *				it: nobody else can reach the inode)
 *   ext4dec_lock (spinlock)	static in activate.c: the list of active
 *				inodes, whether activations are allowed, the
 *				inodes held raw, and every change of
 *				@inode->i_private (ext4dec_set_state());
 *				opens count themselves under it
 *				(ext4dec_open_get()).  igrab() takes the
 *				inode's i_lock under it at unload.
 *
 *   ext4dec_raw_reserve_lock (mutex)	raw.c's reserve of compressed
 *				bytes: held by a read_folio() that found no
 *				memory for them, across the reads and
 *				inflations of its folio's chunks, with a
 *				workspace taken under it (ext4dec_ws_get()
 *				may wait for one; no holder of a workspace
 *				waits for the reserve)
 *
 * Leaf locks: ext4dec_cache_lock (cache.c; an inode's @cache xa_lock
 * nests inside it), ext4dec_jobs_lock (workers.c; irq-safe: bios complete
 * in interrupts), ext4dec_ws_lock (workspace.c) and ext4dec_raw_spare_lock
 * (raw.c): nothing else is taken under them.
 *
 * @inode->i_private is read only through ext4dec_state() (acquire), or
 * as a remembered refusal (policy.c), and written only by activate.c
 * (release), under ext4dec_lock.
 *
 * In struct ext4dec_inode: @inode, @sf, @meta, @extents, @nr_extents,
 * @raw_size, @orig_aops, @orig_fop and @orig_folios are set before the
 * structure is published and never change; @list is under ext4dec_lock; @cache changes
 * under ext4dec_cache_lock; @ref, @opens, @flags (bit operations),
 * @ahead_score, @ahead_probe and @inflated are atomic.
 */

/**
 * struct ext4dec_inode - per-inode state of an active inode
 * @list: entry in the list of active inodes, under ext4dec_lock
 * @inode: the ext4 inode
 * @ref: one reference for being active (dropped at deactivation), one per
 *	open file, one per read in progress
 * @rcu: frees the structure after readers that found it through
 *	@inode->i_private are done
 * @opens: open files using ext4dec's file operations, and reads in
 *	progress through files opened with ext4's (ext4dec_file_read())
 * @sf: the validated szip header, and pointers into @meta for the
 *	dictionary and the tables (szip_file_set_meta())
 * @meta: dictionary, offset table and checksum table (kvmalloc'ed)
 * @extents: block map of the compressed file, sorted by @lblk
 * @nr_extents: entries in @extents
 * @raw_size: the file's size on disk (the szip file's length)
 * @orig_aops: ext4's address space operations, restored at deactivation
 * @orig_folios: the folio sizes ext4 gave the mapping, restored at
 *	deactivation (compat.h)
 * @orig_fop: ext4's file operations, for files left open across a
 *	deactivation
 * @flags: EXT4DEC_WARNED once a bad chunk was logged for this inode
 * @cache: compressed bytes kept for later misses, by chunk (cache.c; its
 *	contents under cache.c's lock)
 * @ahead_score: whether reading ahead for @cache pays (cache.c)
 * @ahead_probe: misses counted while it does not (cache.c)
 * @inflated: chunks inflated since activation
 *
 * Published in @inode->i_private (which ext4 does not use) by
 * ext4dec_set_state(); found by the read path with ext4dec_get().
 */
struct ext4dec_inode {
	struct list_head list;
	struct inode *inode;
	struct kref ref;
	struct rcu_head rcu;
	atomic_t opens;
	struct szip_file sf;
	u8 *meta;
	struct ext4dec_extent *extents;
	u32 nr_extents;
	loff_t raw_size;
	const struct address_space_operations *orig_aops;
	const struct file_operations *orig_fop;
	unsigned long orig_folios;
	unsigned long flags;
	struct xarray cache;
	atomic_t ahead_score;
	atomic_t ahead_probe;
	atomic64_t inflated;
};

#define EXT4DEC_WARNED	0

/*
 * @inode->i_private of an inactive inode may hold a remembered refusal
 * (policy.c): a word with this bit set, never a pointer.
 */
#define EXT4DEC_REFUSAL_TAG	1UL

/**
 * ext4dec_state() - the state of an active inode
 * @inode: an ext4 inode
 *
 * @inode->i_private, which ext4 does not use, holds the state while the
 * inode is active, and may hold a remembered refusal while it is not.
 * It is written only by activate.c, under ext4dec_lock; readers need no
 * lock.
 *
 * Return: the state, or NULL if the inode is not active.  Without the
 * inode lock the answer may change right after; to use the state beyond
 * an RCU read-side section, take a reference with ext4dec_get().
 */
static inline struct ext4dec_inode *ext4dec_state(const struct inode *inode)
{
	/* pairs with smp_store_release() in ext4dec_set_state() */
	void *p = smp_load_acquire(&inode->i_private);

	return (unsigned long)p & EXT4DEC_REFUSAL_TAG ? NULL : p;
}

/* Reasons an activation is refused; each has a counter in sysfs. */
enum ext4dec_refusal {
	EXT4DEC_REFUSED_NOT_SZIP,
	EXT4DEC_REFUSED_UNSUPPORTED,
	EXT4DEC_REFUSED_WRITERS,
	EXT4DEC_REFUSED_MAPPED,
	EXT4DEC_REFUSED_ENCRYPTED,
	EXT4DEC_REFUSED_VERITY,
	EXT4DEC_REFUSED_DAX,
	EXT4DEC_REFUSED_INLINE,
	EXT4DEC_REFUSED_JOURNAL_DATA,
	EXT4DEC_REFUSED_IO,
	EXT4DEC_REFUSED_NOMEM,
	EXT4DEC_REFUSED_UNTRUSTED,
	EXT4DEC_NR_REFUSALS
};

/**
 * struct ext4dec_stats - module-wide counters, shown in /sys/kernel/ext4dec
 * @active_inodes: inodes active now
 * @chunks_inflated: chunks decoded successfully
 * @compressed_bytes: compressed bytes read from disk
 * @uncompressed_bytes: bytes produced by inflation
 * @read_errors: chunks that could not be read or decoded
 * @cache_hits: chunks inflated from compressed bytes kept by cache.c
 * @cached_bytes: compressed bytes kept by cache.c now
 * @reserve_reads: chunks read through raw.c's reserve, for lack of memory
 * @worker_chunks: chunks inflated (or failed) by the inflate workers
 * @refused: activation refusals by &enum ext4dec_refusal
 */
struct ext4dec_stats {
	atomic64_t active_inodes;
	atomic64_t chunks_inflated;
	atomic64_t compressed_bytes;
	atomic64_t uncompressed_bytes;
	atomic64_t read_errors;
	atomic64_t cache_hits;
	atomic64_t cached_bytes;
	atomic64_t reserve_reads;
	atomic64_t worker_chunks;
	atomic64_t refused[EXT4DEC_NR_REFUSALS];
};

extern struct ext4dec_stats ext4dec_stats;

/* main.c */
extern unsigned int ext4dec_nr_workspaces;
extern bool ext4dec_reader_inflates;
extern unsigned int ext4dec_readahead_kb;
extern unsigned int ext4dec_fault_around_kb;
extern unsigned int ext4dec_cache_kb;
extern unsigned int ext4dec_cache_ahead_kb;
__printf(4, 5) void ext4dec_msg(struct ratelimit_state *rs,
				const struct inode *inode, bool error,
				const char *fmt, ...);
/* a message rate-limited on its own, as printk_ratelimited() does */
#define ext4dec_msg_ratelimited(inode, error, fmt, ...)			\
({									\
	static DEFINE_RATELIMIT_STATE(_rs, DEFAULT_RATELIMIT_INTERVAL,	\
				      DEFAULT_RATELIMIT_BURST);		\
	ext4dec_msg(&_rs, inode, error, fmt, ##__VA_ARGS__);		\
})
#define ext4dec_warn(inode, fmt, ...) \
	ext4dec_msg_ratelimited(inode, false, fmt, ##__VA_ARGS__)
#define ext4dec_err(inode, fmt, ...) \
	ext4dec_msg_ratelimited(inode, true, fmt, ##__VA_ARGS__)

/* ftrace.c */
/**
 * struct ext4dec_hook - a kernel function redirected to a wrapper
 * @name: the function's name
 * @wrapper: what runs instead
 * @want: whether this call goes to @wrapper, from its arguments (NULL:
 *	every call); the others run the function as if unhooked, with no
 *	module code on their stack.  Called by the ftrace callback, with
 *	preemption disabled: notrace, and nothing it calls may be traced.
 * @address: the function's address
 * @ops: its ftrace_ops
 */
struct ext4dec_hook {
	const char *name;
	void *wrapper;
	bool (*want)(struct ftrace_regs *fregs);
	unsigned long address;
	struct ftrace_ops ops;
};

int ext4dec_hooks_install(struct ext4dec_hook *hooks, size_t count);
void ext4dec_hooks_remove(struct ext4dec_hook *hooks, size_t count);
int ext4dec_hook_enter(void);
void ext4dec_hook_exit(int idx);

/* ext4.c */
/* in the order of installation: what cleans up and guards first */
enum ext4dec_target {
	EXT4DEC_EVICT_INODE,
	EXT4DEC_IOCTL,
#ifdef CONFIG_COMPAT
	EXT4DEC_COMPAT_IOCTL,
#endif
	EXT4DEC_READ_ITER,
#ifdef EXT4DEC_HOOK_SPLICE_READ
	EXT4DEC_SPLICE_READ,
#endif
	EXT4DEC_IOMAP_BEGIN,
	EXT4DEC_LLSEEK,
	EXT4DEC_FIEMAP,
	EXT4DEC_FILEATTR_SET,
	EXT4DEC_FILE_GETATTR,
	EXT4DEC_FILE_OPEN,
	EXT4DEC_NR_TARGETS
};

struct iomap;
int ext4dec_ext4_init(void);
void ext4dec_ext4_exit(void);
unsigned long ext4dec_ext4_target(enum ext4dec_target t, const char **name);
int ext4dec_ext4_open(struct inode *inode, struct file *file);
int ext4dec_ext4_getattr(struct mnt_idmap *idmap, const struct path *path,
			 struct kstat *stat, u32 request_mask,
			 unsigned int query_flags);
int ext4dec_ext4_fileattr_set(struct mnt_idmap *idmap, struct dentry *dentry,
			      struct fileattr *fa);
long ext4dec_ext4_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg, bool compat);
ssize_t ext4dec_ext4_read_iter(struct kiocb *iocb, struct iov_iter *to);
ssize_t ext4dec_ext4_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags);
loff_t ext4dec_ext4_llseek(struct file *file, loff_t offset, int whence);
int ext4dec_ext4_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
			u64 start, u64 len);
void ext4dec_ext4_evict_inode(struct inode *inode);
int ext4dec_ext4_flags(struct inode *inode, struct dentry *dentry, u32 *flags);
bool ext4dec_ext4_journalled(const struct inode *inode);
int ext4dec_ext4_map(struct inode *inode, loff_t pos, loff_t len,
		     struct iomap *map);

/* hooks.c */
int ext4dec_hooks_init(void);
void ext4dec_hooks_names(char *buf, size_t size);
void ext4dec_hooks_exit(void);

/* activate.c */
int ext4dec_activate(struct inode *inode, struct dentry *dentry);
int ext4dec_deactivate(struct inode *inode, unsigned int own_opens);
void ext4dec_deactivate_force(struct inode *inode);
void ext4dec_evict(struct inode *inode);
void ext4dec_activations_start(void);
void ext4dec_deactivate_all(void);
struct ext4dec_inode *ext4dec_open_get(struct inode *inode);
void ext4dec_open_put(struct ext4dec_inode *ei);
long ext4dec_ioctl(struct file *file, unsigned int cmd, unsigned long arg,
		   bool compat);

/*
 * ext4's ioctls that move or rewrite a file's data or its block map (the
 * numbers are ext4's ABI; <uapi/linux/ext4.h> is younger than 6.1).
 * fs-verity enabling writes the Merkle tree through the address space
 * operations and truncates the file.
 */
#define EXT4DEC_IOC_MIGRATE	_IO('f', 9)
/* struct move_extent: 40 bytes */
#define EXT4DEC_IOC_MOVE_EXT	_IOC(_IOC_READ | _IOC_WRITE, 'f', 15, 40)
#define EXT4DEC_IOC_SWAP_BOOT	_IO('f', 17)
/* ext4's extent cache, as FIEMAP reports it (struct fiemap: 32 bytes) */
#define EXT4DEC_IOC_GET_ES_CACHE	_IOC(_IOC_READ | _IOC_WRITE, 'f', 42, 32)

/* Whether ioctl @cmd moves or rewrites data (inline: ftrace.c calls it) */
static __always_inline bool ext4dec_ioctl_moves_data(unsigned int cmd)
{
	switch (cmd) {
	case EXT4DEC_IOC_MIGRATE:
	case EXT4DEC_IOC_MOVE_EXT:
	case EXT4DEC_IOC_SWAP_BOOT:
	case FS_IOC_ENABLE_VERITY:
		return true;
	default:
		return false;
	}
}

/*
 * Whether ioctl @cmd is refused on active inodes: those, and those that
 * report the raw block map (inline: ftrace.c calls it)
 */
static __always_inline bool ext4dec_ioctl_refused(unsigned int cmd)
{
	return ext4dec_ioctl_moves_data(cmd) || cmd == EXT4DEC_IOC_GET_ES_CACHE;
}

/* Whether ext4dec_ioctl() handles ioctl @cmd (inline: ftrace.c calls it) */
static __always_inline bool ext4dec_ioctl_hooked(unsigned int cmd)
{
	return ext4dec_ioctl_refused(cmd) || cmd == EXT4DEC_IOC_GET_STATUS;
}

/**
 * struct ext4dec_raw_hold - an inactive inode kept inactive
 * @list: entry in activate.c's list of holds, under ext4dec_lock
 * @inode: the inode
 */
struct ext4dec_raw_hold {
	struct list_head list;
	struct inode *inode;
};

int ext4dec_hold_raw(struct inode *inode, struct ext4dec_raw_hold *hold, bool nowait);
void ext4dec_release_raw(struct ext4dec_raw_hold *hold);
bool ext4dec_view_sample(const struct inode *inode, unsigned int *seq);
bool ext4dec_view_changed(const struct inode *inode, unsigned int seq);

/* load.c */
int ext4dec_refuse(struct inode *inode, struct dentry *dentry,
		   enum ext4dec_refusal why, const char *detail);
int ext4dec_check(struct inode *inode, struct dentry *dentry);
struct ext4dec_inode *ext4dec_load(struct inode *inode, struct dentry *dentry);

/* policy.c */
bool ext4dec_trusted(const struct inode *inode);
unsigned long ext4dec_fingerprint(struct inode *inode);
bool ext4dec_refusal_lasts(int err);
unsigned long ext4dec_refusal_word(int err, unsigned long fp);
int ext4dec_refusal_remembered(struct inode *inode);
void ext4dec_policy_init(void);

/* state.c */
struct ext4dec_inode *ext4dec_get(struct inode *inode);
void ext4dec_hold(struct ext4dec_inode *ei);
void ext4dec_put(struct ext4dec_inode *ei);
void ext4dec_free_state(struct ext4dec_inode *ei);

/* file.c */
extern const struct file_operations ext4dec_fops;
bool ext4dec_file_live(struct file *file);
ssize_t ext4dec_file_read(struct kiocb *iocb, struct iov_iter *to);
ssize_t ext4dec_file_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags);
loff_t ext4dec_file_llseek(struct file *file, loff_t offset, int whence);
int ext4dec_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
		   u64 start, u64 len);

/* mmap.c */
int ext4dec_file_mmap(struct file *file, struct vm_area_struct *vma);

/* aops.c */
extern const struct address_space_operations ext4dec_aops;

/* readahead.c */
struct ext4dec_reader;
void ext4dec_readahead(struct readahead_control *rac);
struct ext4dec_reader *ext4dec_reader_start(struct address_space *mapping,
					    const loff_t *pos, size_t count);
void ext4dec_reader_end(struct ext4dec_reader *r);
void ext4dec_read_chunk(struct file *file, pgoff_t index, bool around);

/* workspace.c */
struct ext4dec_ws {
	struct list_head list;
	struct szip_decoder *dec;
	u8 *out;
};

int ext4dec_workspaces_init(unsigned int max);
void ext4dec_workspaces_exit(void);
unsigned int ext4dec_nr_workspaces_now(void);
int ext4dec_ws_init(struct ext4dec_ws *ws, gfp_t gfp);
void ext4dec_ws_destroy(struct ext4dec_ws *ws);
struct ext4dec_ws *ext4dec_ws_get(void);
void ext4dec_ws_put(struct ext4dec_ws *ws);

/* inflate.c */
static inline loff_t ext4dec_chunk_pos(const struct ext4dec_inode *ei,
				       u32 chunk)
{
	return (loff_t)chunk * ei->sf.info.chunk_size;
}

/* The last chunk that @folio holds part of */
static inline u32 ext4dec_folio_last_chunk(const struct ext4dec_inode *ei,
					   struct folio *folio)
{
	return min_t(u64, (folio_pos(folio) + folio_size(folio) - 1) / ei->sf.info.chunk_size,
		     ei->sf.info.nr_chunks - 1);
}

void ext4dec_chunk_error(struct ext4dec_inode *ei, u32 chunk,
			 const char *what);
int ext4dec_decode_chunk(struct ext4dec_inode *ei, struct ext4dec_ws *ws,
			 u32 chunk, const u8 *in, u8 *out);

/**
 * struct ext4dec_fill - locked folios filled chunk by chunk, in file order
 * @folio: the next folio to fill
 * @end: the end of the array
 * @failed: a chunk of *@folio failed: it is unlocked, not uptodate, when
 *	its last chunk is done
 * @nr_failed: folios done that way
 */
struct ext4dec_fill {
	struct folio **folio;
	struct folio **end;
	bool failed;
	unsigned int nr_failed;
};

static inline void ext4dec_fill_init(struct ext4dec_fill *f, struct folio **folio,
				     unsigned int nr)
{
	*f = (struct ext4dec_fill){ .folio = folio, .end = folio + nr };
}

void ext4dec_fill_chunk(struct ext4dec_inode *ei, u32 chunk, const u8 *out,
			struct ext4dec_fill *f);
bool ext4dec_inflate_in_place(struct ext4dec_inode *ei, struct ext4dec_ws *ws,
			      u32 chunk, const u8 *in, struct ext4dec_fill *f);

/* cache.c */
struct ext4dec_cached;
int ext4dec_cache_init(void);
void ext4dec_cache_exit(void);
void ext4dec_cache_init_inode(struct ext4dec_inode *ei);
bool ext4dec_cache_ahead(struct ext4dec_inode *ei);
void ext4dec_cache_failed(struct ext4dec_inode *ei);
void ext4dec_cache_add(struct ext4dec_inode *ei, u32 chunk, const u8 *bytes);
struct ext4dec_cached *ext4dec_cache_take(struct ext4dec_inode *ei, u32 chunk);
u8 *ext4dec_cached_bytes(struct ext4dec_cached *e);
void ext4dec_cache_free(struct ext4dec_cached *e);
void ext4dec_cache_drop(struct ext4dec_inode *ei, u32 first, u32 last);

/* raw.c */
/**
 * struct ext4dec_raw_read - a read of raw blocks in flight
 * @pending: the bios in flight, plus one for the submitter
 * @err: an error found before any I/O (a block outside the map)
 * @status: the error of a bio
 * @done: runs when @pending drops to zero, possibly in interrupt context
 */
struct ext4dec_raw_read {
	atomic_t pending;
	int err;
	blk_status_t status;
	void (*done)(struct ext4dec_raw_read *rr);
};

/**
 * struct ext4dec_raw_buf - a buffer of raw bytes, in whole device sectors
 * @buf: the buffer (kvmalloc'ed, a spare one, or @kept's)
 * @pos: position in the raw file of its first byte
 * @len: its length
 * @spare: @buf comes from ext4dec_raw_spare_get()
 * @kept: the bytes of one chunk, kept by cache.c, which are in already
 *
 * The device's logical blocks (usually 512 bytes), not the filesystem's,
 * are the unit: a random read of a small chunk reads little more than the
 * chunk.
 */
struct ext4dec_raw_buf {
	u8 *buf;
	loff_t pos;
	size_t len;
	bool spare;
	struct ext4dec_cached *kept;
};

/* Where raw byte @pos is in @rb */
static inline const u8 *ext4dec_raw_buf_at(const struct ext4dec_raw_buf *rb,
					   loff_t pos)
{
	return rb->buf + (pos - rb->pos);
}

void ext4dec_raw_read_put(struct ext4dec_raw_read *rr);
int ext4dec_raw_buf_alloc(const struct ext4dec_inode *ei, loff_t pos,
			  size_t len, bool spare, struct ext4dec_raw_buf *rb);
void ext4dec_raw_buf_kept(const struct ext4dec_inode *ei, u32 chunk,
			  struct ext4dec_cached *kept,
			  struct ext4dec_raw_buf *rb);
void ext4dec_raw_buf_free(struct ext4dec_raw_buf *rb);
extern struct mutex ext4dec_raw_reserve_lock;
int ext4dec_raw_read_reserve(struct ext4dec_inode *ei, u32 chunk,
			     struct ext4dec_raw_buf *rb);
void ext4dec_raw_start(struct ext4dec_inode *ei, struct ext4dec_raw_buf *rb,
		       struct ext4dec_raw_read *rr);
int ext4dec_raw_finish(struct ext4dec_raw_buf *rb,
		       struct ext4dec_raw_read *rr);
int ext4dec_raw_read_sync(struct ext4dec_inode *ei,
			  struct ext4dec_raw_buf *rb);
int ext4dec_raw_init(void);
void ext4dec_raw_exit(void);

/* workers.c */
/**
 * struct ext4dec_job - work for an inflate worker
 * @list: entry in the workers' queue
 * @fn: what to do, called in the worker with the worker's workspace
 */
struct ext4dec_job {
	struct list_head list;
	void (*fn)(struct ext4dec_job *job, struct ext4dec_ws *ws);
};

int ext4dec_workers_init(unsigned int count, bool rt);
void ext4dec_workers_exit(void);
unsigned int ext4dec_nr_workers(void);
void ext4dec_queue(struct ext4dec_job *job);

/* sysfs.c */
int ext4dec_sysfs_init(void);
void ext4dec_sysfs_exit(void);

#endif /* _EXT4DEC_H */
