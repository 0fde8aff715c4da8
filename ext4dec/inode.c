// SPDX-License-Identifier: GPL-2.0
/*
 * Activation and deactivation of inodes.
 *
 * Activation (inode lock held by the caller):
 *  1. refuse what cannot be served: encrypted, verity, DAX, inline-data and
 *     data-journalled inodes, writers, existing mappings;
 *  2. take write access away (i_writecount negative, as exec does), write
 *     back what is dirty, then read and validate the szip header, offset
 *     table and dictionary through the raw page cache and take the block
 *     map;
 *  3. under the mapping's invalidate lock, drop the raw page cache, install
 *     ext4dec's operations and the uncompressed i_size (in memory only:
 *     ext4 writes i_disksize, never i_size), then publish the state.
 * Deactivation (chattr -c, module unload, eviction) reverses step 3 and
 * gives write access back.  The on-disk inode is never modified.
 *
 * Lifetime: @inode->i_private holds the active reference; each open file
 * and each read in progress holds one more.  ext4dec_lock orders the
 * publication against opens, so that "no other open file" checked at
 * deactivation stays true.  The structure is freed after an RCU grace
 * period, as the read path finds it through i_private without the lock.
 */
#include "ext4dec.h"

#include <linux/iomap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

DEFINE_SPINLOCK(ext4dec_lock);
static LIST_HEAD(active_inodes);
static bool shutting_down;

static const int refusal_errno[EXT4DEC_NR_REFUSALS] = {
	[EXT4DEC_REFUSED_NOT_SZIP] = -EINVAL,
	[EXT4DEC_REFUSED_UNSUPPORTED] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_WRITERS] = -ETXTBSY,
	[EXT4DEC_REFUSED_MAPPED] = -EBUSY,
	[EXT4DEC_REFUSED_ENCRYPTED] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_VERITY] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_DAX] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_INLINE] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_JOURNAL_DATA] = -EOPNOTSUPP,
	[EXT4DEC_REFUSED_IO] = -EIO,
	[EXT4DEC_REFUSED_NOMEM] = -ENOMEM,
};

/**
 * ext4dec_is_active() - whether ext4dec serves @inode now
 * @inode: an ext4 inode
 *
 * Return: true if the inode is active.  Without the inode lock the answer
 * may change right after.
 */
bool ext4dec_is_active(const struct inode *inode)
{
	return READ_ONCE(inode->i_private);
}

static void free_rcu(struct rcu_head *rcu)
{
	struct ext4dec_inode *ei = container_of(rcu, struct ext4dec_inode, rcu);

	kvfree(ei->extents);
	szip_file_release(&ei->sf);
	kvfree(ei->meta);
	kfree(ei);
}

static void release(struct kref *ref)
{
	struct ext4dec_inode *ei = container_of(ref, struct ext4dec_inode, ref);

	/* nobody reads any more: no chunk's bytes can be added back */
	ext4dec_cache_drop(ei, 0, U32_MAX);
	call_rcu(&ei->rcu, free_rcu);
}

/**
 * ext4dec_get() - take a reference on an inode's state
 * @inode: an ext4 inode
 *
 * Context: any; does not sleep.
 * Return: the state, or NULL if the inode is not active.
 */
struct ext4dec_inode *ext4dec_get(struct inode *inode)
{
	struct ext4dec_inode *ei;

	rcu_read_lock();
	ei = READ_ONCE(inode->i_private);
	if (ei && !kref_get_unless_zero(&ei->ref))
		ei = NULL;
	rcu_read_unlock();
	return ei;
}

/**
 * ext4dec_put() - drop a reference taken by ext4dec_get() or at open
 * @ei: the state
 */
void ext4dec_put(struct ext4dec_inode *ei)
{
	kref_put(&ei->ref, release);
}

static int refuse(struct inode *inode, struct dentry *dentry,
		  enum ext4dec_refusal why, const char *detail)
{
	static const char *const what[EXT4DEC_NR_REFUSALS] = {
		[EXT4DEC_REFUSED_NOT_SZIP] = "not a valid szip file",
		[EXT4DEC_REFUSED_UNSUPPORTED] = "needs what this kernel lacks",
		[EXT4DEC_REFUSED_WRITERS] = "open for writing",
		[EXT4DEC_REFUSED_MAPPED] = "mapped",
		[EXT4DEC_REFUSED_ENCRYPTED] = "encrypted files are not supported",
		[EXT4DEC_REFUSED_VERITY] = "verity files are not supported",
		[EXT4DEC_REFUSED_DAX] = "DAX files are not supported",
		[EXT4DEC_REFUSED_INLINE] = "inline-data files are not supported",
		[EXT4DEC_REFUSED_JOURNAL_DATA] = "data-journalled files are not supported",
		[EXT4DEC_REFUSED_IO] = "I/O error",
		[EXT4DEC_REFUSED_NOMEM] = "out of memory",
	};

	/* one rate limit per reason: a flood of one hides none of the others */
	static struct ratelimit_state rs[EXT4DEC_NR_REFUSALS] = {
		[0 ... EXT4DEC_NR_REFUSALS - 1] =
			RATELIMIT_STATE_INIT(rs, DEFAULT_RATELIMIT_INTERVAL,
					     DEFAULT_RATELIMIT_BURST),
	};

	atomic64_inc(&ext4dec_stats.refused[why]);
	ext4dec_msg(&rs[why], inode, false, "%pd: not activated: %s%s%s",
		    dentry, what[why], detail ? ": " : "", detail ? detail : "");
	return refusal_errno[why];
}

/* Copy @len bytes at @pos of the raw file out of its page cache. */
static int read_cached(struct inode *inode, loff_t pos, void *buf, size_t len)
{
	while (len) {
		size_t off = offset_in_page(pos);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct folio *folio;
		void *kaddr;

		folio = read_mapping_folio(inode->i_mapping, pos >> PAGE_SHIFT,
					   NULL);
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		kaddr = kmap_local_folio(folio, offset_in_folio(folio, pos));
		memcpy(buf, kaddr, n);
		kunmap_local(kaddr);
		folio_put(folio);
		buf += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/* Read and validate the header, dictionary and tables. */
static int read_szip_meta(struct ext4dec_inode *ei, struct dentry *dentry)
{
	struct szip_info *info = &ei->sf.info;
	struct inode *inode = ei->inode;
	u8 hdr[SZIP2_HEADER_SIZE];
	size_t hdr_len, meta_len;
	char detail[64];
	u32 bad, i;
	enum szip_ret ret;

	hdr_len = min_t(loff_t, ei->raw_size, sizeof(hdr));
	if (read_cached(inode, 0, hdr, hdr_len))
		return refuse(inode, dentry, EXT4DEC_REFUSED_IO, NULL);
	ret = szip_parse_header(info, hdr, hdr_len, ei->raw_size);
	if (ret)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
			      szip_strerror(ret));
	ret = szip_check_support(info);
	if (ret)
		return refuse(inode, dentry, EXT4DEC_REFUSED_UNSUPPORTED,
			      szip_strerror(ret));
	/* each page must lie in one chunk (only systems with pages > 4K) */
	if (info->chunk_size % PAGE_SIZE)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
			      "chunk size smaller than the page size");

	if (info->size > inode->i_sb->s_maxbytes)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
			      "uncompressed size above the file system's limit");
	if (info->data_offset - info->dict_offset > EXT4DEC_MAX_META)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
			      "tables and dictionary over 16 MiB");
	meta_len = info->data_offset - info->dict_offset;
	ei->meta = kvmalloc(meta_len, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ei->meta)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	if (read_cached(inode, info->dict_offset, ei->meta, meta_len))
		return refuse(inode, dentry, EXT4DEC_REFUSED_IO, NULL);
	szip_file_set_meta(&ei->sf, ei->meta);

	if (szip_check_table(&ei->sf, &bad)) {
		snprintf(detail, sizeof(detail), "offset table entry %u out of order or range",
			 bad);
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP, detail);
	}
	for (i = 0; i < info->nr_chunks; i++) {
		if (szip_chunk_clen(&ei->sf, i) > EXT4DEC_MAX_CLEN) {
			snprintf(detail, sizeof(detail), "chunk %u: compressed size over %u bytes",
				 i, EXT4DEC_MAX_CLEN);
			return refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
				      detail);
		}
	}
	if (szip_file_prepare(&ei->sf))
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	return 0;
}

/* Take the block map of the whole raw file. */
static int map_file(struct ext4dec_inode *ei, struct dentry *dentry)
{
	struct inode *inode = ei->inode;
	unsigned int bits = inode->i_blkbits;
	size_t cap = 8, n = 0;
	loff_t pos = 0;
	int err;

	ei->extents = kvmalloc_array(cap, sizeof(*ei->extents), GFP_KERNEL);
	if (!ei->extents)
		return refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	/* bytes after totalSize are never read */
	while (pos < ei->sf.info.total_size) {
		struct ext4dec_extent *e;
		struct iomap map;

		err = ext4dec_ext4_map(inode, pos, ei->sf.info.total_size - pos, &map);
		if (err == -EOPNOTSUPP)
			return refuse(inode, dentry, EXT4DEC_REFUSED_INLINE, NULL);
		if (err || map.offset > pos || !map.length)
			return refuse(inode, dentry, EXT4DEC_REFUSED_IO,
				      "block map");
		if (n == cap) {
			e = kvmalloc_array(cap * 2, sizeof(*e), GFP_KERNEL);
			if (!e)
				return refuse(inode, dentry,
					      EXT4DEC_REFUSED_NOMEM, NULL);
			memcpy(e, ei->extents, n * sizeof(*e));
			kvfree(ei->extents);
			ei->extents = e;
			cap *= 2;
		}
		e = &ei->extents[n++];
		e->lblk = map.offset >> bits;
		e->len = (map.length + (1 << bits) - 1) >> bits;
		e->pblk = map.type == IOMAP_MAPPED ? map.addr >> bits : 0;
		pos = map.offset + map.length;
	}
	ei->nr_extents = n;
	return 0;
}

static struct ext4dec_inode *prepare(struct inode *inode, struct dentry *dentry,
				     int *err)
{
	struct ext4dec_inode *ei = kzalloc(sizeof(*ei), GFP_KERNEL);

	if (!ei) {
		*err = refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
		return NULL;
	}
	INIT_LIST_HEAD(&ei->list);
	kref_init(&ei->ref);
	ext4dec_cache_init_inode(ei);
	ei->inode = inode;
	ei->raw_size = i_size_read(inode);
	*err = read_szip_meta(ei, dentry);
	if (!*err)
		*err = map_file(ei, dentry);
	if (*err) {
		kvfree(ei->extents);
		kvfree(ei->meta);
		kfree(ei);
		return NULL;
	}
	return ei;
}

/*
 * Point the inode at ext4dec's address space operations (invalidate lock
 * held).  i_fop stays ext4's: every open goes through ext4_file_open(),
 * whose hook gives the file ext4dec's file operations.
 */
static void install(struct ext4dec_inode *ei)
{
	struct inode *inode = ei->inode;

	truncate_inode_pages(inode->i_mapping, 0);
	ei->orig_aops = inode->i_mapping->a_ops;
	ei->orig_fop = inode->i_fop;
	WRITE_ONCE(inode->i_mapping->a_ops, &ext4dec_aops);
	i_size_write(inode, ei->sf.info.size);
}

/* Undo install(); the page cache holds uncompressed data until then. */
static void uninstall(struct ext4dec_inode *ei)
{
	struct inode *inode = ei->inode;

	truncate_inode_pages(inode->i_mapping, 0);
	WRITE_ONCE(inode->i_mapping->a_ops, ei->orig_aops);
	i_size_write(inode, ei->raw_size);
}

/**
 * ext4dec_activate() - serve an szip inode decompressed
 * @inode: an ext4 regular file
 * @dentry: a dentry of @inode, for messages and ext4's fileattr_get
 *
 * Context: process; the caller holds the inode lock.
 * Return: 0 if the inode is active (now or already), else a negative
 * errno: -EINVAL not szip, -ETXTBSY open for writing, -EBUSY mapped,
 * -EOPNOTSUPP unsupported kind of inode, -EIO, -ENOMEM, -ENODEV unloading.
 */
int ext4dec_activate(struct inode *inode, struct dentry *dentry)
{
	struct address_space *mapping = inode->i_mapping;
	struct ext4dec_inode *ei;
	unsigned int nofs;
	int err;

	lockdep_assert_held_write(&inode->i_rwsem);
	if (ext4dec_is_active(inode))
		return 0;
	err = ext4dec_ext4_check(inode, dentry);
	if (err >= 0)
		return refuse(inode, dentry, err, NULL);
	if (!atomic_dec_unless_positive(&inode->i_writecount))
		return refuse(inode, dentry, EXT4DEC_REFUSED_WRITERS, NULL);

	if (mapping_mapped(mapping)) {
		err = refuse(inode, dentry, EXT4DEC_REFUSED_MAPPED, NULL);
		goto out_allow_write;
	}
	err = filemap_write_and_wait(mapping);
	if (err) {
		err = refuse(inode, dentry, EXT4DEC_REFUSED_IO, "writeback");
		goto out_allow_write;
	}
	nofs = memalloc_nofs_save();
	ei = prepare(inode, dentry, &err);
	memalloc_nofs_restore(nofs);
	if (!ei)
		goto out_allow_write;

	/*
	 * Publish only once installed: whoever sees the inode active must find
	 * the uncompressed size and no raw page left.  Opens that find the
	 * new operations first wait for the inode lock (ext4dec_open()).
	 */
	filemap_invalidate_lock(mapping);
	spin_lock(&ext4dec_lock);
	err = shutting_down ? -ENODEV : 0;
	if (!err && ext4dec_ioctl_busy_locked(inode))
		err = -EBUSY;	/* e.g. fs-verity being enabled: it writes */
	if (!err)
		list_add(&ei->list, &active_inodes);
	spin_unlock(&ext4dec_lock);
	if (!err) {
		install(ei);
		/* pairs with READ_ONCE() in ext4dec_get() */
		smp_store_release(&inode->i_private, ei);
	}
	filemap_invalidate_unlock(mapping);
	if (err) {
		ext4dec_put(ei);
		goto out_allow_write;
	}
	atomic64_inc(&ext4dec_stats.active_inodes);
	return 0;

out_allow_write:
	atomic_inc(&inode->i_writecount);
	return err;
}

/**
 * ext4dec_deactivate() - return an active inode to its raw bytes
 * @inode: an ext4 inode
 * @own_opens: open files of the inode held by the caller, which do not
 *	count as "open elsewhere"; %EXT4DEC_FORCE to deactivate even while
 *	open or mapped (module unload, undoing a failed chattr)
 *
 * Context: process; the caller holds the inode lock.
 * Return: 0 (also if the inode was not active), or -EBUSY while the file
 * is open elsewhere or mapped.
 */
int ext4dec_deactivate(struct inode *inode, unsigned int own_opens)
{
	struct address_space *mapping = inode->i_mapping;
	struct ext4dec_inode *ei;

	lockdep_assert_held_write(&inode->i_rwsem);
	filemap_invalidate_lock(mapping);
	spin_lock(&ext4dec_lock);
	ei = inode->i_private;
	if (ei && own_opens != EXT4DEC_FORCE &&
	    (atomic_read(&ei->opens) > own_opens || mapping_mapped(mapping))) {
		spin_unlock(&ext4dec_lock);
		filemap_invalidate_unlock(mapping);
		return -EBUSY;
	}
	if (ei) {
		WRITE_ONCE(inode->i_private, NULL);
		list_del_init(&ei->list);
	}
	spin_unlock(&ext4dec_lock);
	if (ei)
		uninstall(ei);
	filemap_invalidate_unlock(mapping);
	if (!ei)
		return 0;

	atomic_inc(&inode->i_writecount);
	atomic64_dec(&ext4dec_stats.active_inodes);
	ext4dec_put(ei);
	return 0;
}

/**
 * ext4dec_evict() - forget an inode ext4 is about to free
 * @inode: the inode being evicted; nobody else can reach it
 */
void ext4dec_evict(struct inode *inode)
{
	struct ext4dec_inode *ei;

	spin_lock(&ext4dec_lock);
	ei = inode->i_private;
	if (ei) {
		WRITE_ONCE(inode->i_private, NULL);
		list_del_init(&ei->list);
	}
	spin_unlock(&ext4dec_lock);
	if (!ei)
		return;
	uninstall(ei);
	atomic_inc(&inode->i_writecount);
	atomic64_dec(&ext4dec_stats.active_inodes);
	ext4dec_put(ei);
}

/**
 * ext4dec_deactivate_all() - deactivate every inode, for module unload
 *
 * Refuses new activations from here on.  Files open with ext4dec's
 * operations hold module references, so none is left; a mapping made
 * through a file opened before activation may be, and is dropped (its next
 * faults read the raw bytes).  Each inode is handled with an active
 * reference on its superblock, so that a concurrent unmount waits; inodes
 * being evicted or unmounted meanwhile are left to the evict hook.
 */
void ext4dec_deactivate_all(void)
{
	struct ext4dec_inode *ei;
	struct super_block *sb;
	struct inode *inode;

	spin_lock(&ext4dec_lock);
	shutting_down = true;
	while ((ei = list_first_entry_or_null(&active_inodes,
					      struct ext4dec_inode, list))) {
		sb = ei->inode->i_sb;
		if (!atomic_inc_not_zero(&sb->s_active))
			sb = NULL;
		inode = sb ? igrab(ei->inode) : NULL;
		spin_unlock(&ext4dec_lock);
		if (inode) {
			inode_lock(inode);
			ext4dec_deactivate(inode, EXT4DEC_FORCE);
			inode_unlock(inode);
			iput(inode);
		}
		if (sb)
			deactivate_super(sb);
		if (!inode)
			schedule_timeout_uninterruptible(1);
		spin_lock(&ext4dec_lock);
	}
	spin_unlock(&ext4dec_lock);
	rcu_barrier();
}
