/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference ext4dec depends on, one block per API
 * change, each exporting one stable name.  Supported: the kernel lines of
 * tests/kernels (Debian's 6.1, 6.12 and newest cloud kernels); nothing
 * else in the module tests a kernel version.
 */
#ifndef _EXT4DEC_COMPAT_H
#define _EXT4DEC_COMPAT_H

#include <linux/version.h>
#include <linux/ftrace.h>
#include <linux/fs.h>
#include <linux/iomap.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/splice.h>

/* The one version comparison; every block below is written with it. */
#define EXT4DEC_SINCE(a, b, c)	(KERNEL_VERSION(a, b, c) <= LINUX_VERSION_CODE)

/*
 * 6.3: the idmapping argument of inode operations became struct mnt_idmap
 * (it was struct user_namespace).  The hooks only pass it through; older
 * kernels have no struct mnt_idmap, so the name can stand for the old one.
 */
#if !EXT4DEC_SINCE(6, 3, 0)
#define mnt_idmap user_namespace
#endif

/*
 * 6.17: struct fileattr, the argument of ->fileattr_get/->fileattr_set,
 * was renamed struct file_kattr.  The hooks pass it on and read its flags;
 * the old name stands for the new one, as mnt_idmap does above.
 */
#if EXT4DEC_SINCE(6, 17, 0)
#define fileattr file_kattr
#endif

/* 6.7: ftrace_instruction_pointer_set() became ..._regs_set_... */
#if EXT4DEC_SINCE(6, 7, 0)
#define ext4dec_ftrace_set_ip(fregs, ip) \
	ftrace_regs_set_instruction_pointer(fregs, ip)
#else
#define ext4dec_ftrace_set_ip(fregs, ip) \
	ftrace_instruction_pointer_set(fregs, ip)
#endif

/*
 * The arguments of a traced call, in the ftrace callback:
 * ftrace_regs_get_argument() on 6.12 and 7.x; on 6.1, struct ftrace_regs
 * is a struct pt_regs holding them.
 */
#if EXT4DEC_SINCE(6, 12, 0)
#define ext4dec_ftrace_arg(fregs, n)	ftrace_regs_get_argument(fregs, n)
#else
#define ext4dec_ftrace_arg(fregs, n)	regs_get_kernel_argument(&(fregs)->regs, n)
#endif

/*
 * 6.5: generic_file_splice_read() was replaced by filemap_splice_read(),
 * which reads through the page cache like generic_file_splice_read did.
 */
#if EXT4DEC_SINCE(6, 5, 0)
#define ext4dec_splice_read	filemap_splice_read
#else
#define ext4dec_splice_read	generic_file_splice_read
#endif

/*
 * 6.5: ext4 splices with its own ext4_file_splice_read(), from the page
 * cache, no longer through its read_iter: a file opened before activation
 * splices through a hook of it (hooks.c).  Before, ext4's splice_read was
 * generic_file_splice_read(), which reads through ext4_file_read_iter(),
 * hooked already, and which is not ext4's to hook.
 */
#if EXT4DEC_SINCE(6, 5, 0)
#define EXT4DEC_HOOK_SPLICE_READ
#endif

/*
 * 7.x: ext4_iomap_ops gives its mappings through ->iomap_next(), which
 * calls ext4_iomap_begin(), and has no ->iomap_begin; a direct read of a
 * block or less calls ext4_iomap_begin() itself (iomap_dio_read_simple()).
 * No table holds the function: the hook finds it by its name (ext4.c).
 * The probe: <linux/iomap.h> defines DEFINE_IOMAP_ITER_NEXT (7.2, 7.3).
 */
#ifdef DEFINE_IOMAP_ITER_NEXT
#define EXT4DEC_IOMAP_BEGIN_BY_NAME
#endif

/* 6.8: a_ops->error_remove_page(page) became error_remove_folio(folio) */
#if EXT4DEC_SINCE(6, 8, 0)
#define EXT4DEC_AOPS_ERROR_REMOVE \
	.error_remove_folio = generic_error_remove_folio
#else
#define EXT4DEC_AOPS_ERROR_REMOVE \
	.error_remove_page = generic_error_remove_page
#endif

/*
 * a_ops->write_begin: 6.12 hands back a folio instead of a page, 6.17
 * takes the kiocb instead of the file.  Active inodes are never written
 * (write access is denied), and ext4dec's write_begin fails, so that a
 * path that writes through the address space operations regardless (as
 * fs-verity enabling does) gets an error, not a call through NULL.
 */
#if EXT4DEC_SINCE(6, 17, 0)
static inline int ext4dec_write_begin(const struct kiocb *iocb,
				      struct address_space *mapping, loff_t pos,
				      unsigned int len, struct folio **foliop,
				      void **fsdata)
#elif EXT4DEC_SINCE(6, 12, 0)
static inline int ext4dec_write_begin(struct file *file,
				      struct address_space *mapping, loff_t pos,
				      unsigned int len, struct folio **foliop,
				      void **fsdata)
#else
static inline int ext4dec_write_begin(struct file *file,
				      struct address_space *mapping, loff_t pos,
				      unsigned int len, struct page **pagep,
				      void **fsdata)
#endif
{
	return -ETXTBSY;
}

/* 6.11: FMODE_BUF_RASYNC became FOP_BUFFER_RASYNC, a file_operations flag */
#if EXT4DEC_SINCE(6, 11, 0)
#define EXT4DEC_FMODE_RASYNC	0
#else
#define EXT4DEC_FMODE_RASYNC	FMODE_BUF_RASYNC
#endif

/*
 * 6.3: __filemap_get_folio() (and filemap_get_folio()) return an ERR_PTR
 * instead of NULL on failure.  ext4dec_folio_or_null() makes either NULL.
 */
static inline struct folio *ext4dec_folio_or_null(struct folio *folio)
{
#if EXT4DEC_SINCE(6, 3, 0)
	if (IS_ERR(folio))
		return NULL;
#endif
	return folio;
}

/* a locked folio at @index, created if absent, without waiting; or NULL */
static inline struct folio *ext4dec_grab_folio_nowait(struct address_space *m,
						      pgoff_t index)
{
	return ext4dec_folio_or_null(__filemap_get_folio(m, index,
							 FGP_LOCK | FGP_CREAT | FGP_NOWAIT,
							 readahead_gfp_mask(m)));
}

/* a reference on the folio at @index, or NULL */
static inline struct folio *ext4dec_find_folio(struct address_space *m,
					       pgoff_t index)
{
	return ext4dec_folio_or_null(filemap_get_folio(m, index));
}

/*
 * 6.7: file faults may run under the VMA lock instead of the mmap lock
 * (FAULT_FLAG_VMA_LOCK); release_fault_lock() drops whichever is held.
 * Before, ->fault always ran under the mmap lock.
 */
#if EXT4DEC_SINCE(6, 7, 0)
#define ext4dec_release_fault_lock(vmf)	release_fault_lock(vmf)
#else
#define ext4dec_release_fault_lock(vmf)	mmap_read_unlock((vmf)->vma->vm_mm)
#endif

/*
 * 6.7: shrinkers are allocated by shrinker_alloc() and registered with
 * shrinker_register(), freed by shrinker_free(); register_shrinker() on a
 * caller's struct is gone.  ext4dec_shrinker_create() registers one either
 * way (NULL without memory), ext4dec_shrinker_free() unregisters and frees.
 */
static inline struct shrinker *
ext4dec_shrinker_create(unsigned long (*count)(struct shrinker *,
					       struct shrink_control *),
			unsigned long (*scan)(struct shrinker *,
					      struct shrink_control *),
			const char *name)
{
#if EXT4DEC_SINCE(6, 7, 0)
	struct shrinker *s = shrinker_alloc(0, "%s", name);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	shrinker_register(s);
#else
	struct shrinker *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	s->count_objects = count;
	s->scan_objects = scan;
	s->seeks = DEFAULT_SEEKS;
	if (register_shrinker(s, "%s", name)) {
		kfree(s);
		return NULL;
	}
#endif
	return s;
}

static inline void ext4dec_shrinker_free(struct shrinker *s)
{
#if EXT4DEC_SINCE(6, 7, 0)
	shrinker_free(s);
#else
	unregister_shrinker(s);
	kfree(s);
#endif
}

/*
 * 7.x: an iomap_ops may give its mappings through ->iomap_next(iter, ...)
 * instead of ->iomap_begin(); ext4's IOMAP_REPORT ops do (seen in 7.2 and
 * 7.3, whose <linux/iomap.h> defines DEFINE_IOMAP_ITER_NEXT, the probe).
 * ext4dec_iomap_begin() asks @ops for the mapping at @pos either way.
 */
static inline int ext4dec_iomap_begin(const struct iomap_ops *ops,
				      struct inode *inode, loff_t pos,
				      loff_t len, unsigned int flags,
				      struct iomap *map, struct iomap *srcmap)
{
#ifdef DEFINE_IOMAP_ITER_NEXT
	if (!ops->iomap_begin) {
		struct iomap_iter iter = {
			.inode = inode, .pos = pos, .len = len,
			.iter_start_pos = pos, .flags = flags,
		};
		int ret;

		/* no length: no previous mapping to finish, begin at @pos */
		map->length = 0;
		ret = ops->iomap_next(&iter, map, srcmap);
		return ret < 0 ? ret : 0;
	}
#endif
	return ops->iomap_begin(inode, pos, len, flags, map, srcmap);
}

/*
 * The folio sizes of an active inode's page cache.  ext4 gives regular
 * files large folios since 6.16 (mapping flags with a range of orders,
 * AS_FOLIO_ORDER_*, since 6.11; before, a single bit that ext4 never
 * set).  ext4dec_mapping_limit_folios() caps the largest at @max_order,
 * never below the mapping's smallest (a block larger than a page), and
 * returns what was set for ext4dec_mapping_restore_folios(), which
 * writes only if the range changed.  Called with the page cache empty and
 * the invalidate lock held, as ext4 itself changes them when it switches
 * an inode's data journaling; the flags' other bits are not written
 * concurrently then: writes are denied and writeback is done.  The cap
 * is not an invariant: a reader that read the mapping's largest order
 * before activation took the invalidate lock may still add a larger
 * folio, which the read path fills like any other.
 */
#ifdef AS_FOLIO_ORDER_MAX_MASK
static inline unsigned long ext4dec_mapping_limit_folios(struct address_space *m,
							 unsigned int max_order)
{
	unsigned long saved = m->flags & AS_FOLIO_ORDER_MASK;
	unsigned int min_order = mapping_min_folio_order(m);

	/* not below the smallest: mapping_set_folio_order_range() sees to it */
	mapping_set_folio_order_range(m, min_order, min(mapping_max_folio_order(m), max_order));
	return saved;
}

static inline void ext4dec_mapping_restore_folios(struct address_space *m,
						  unsigned long saved)
{
	if ((m->flags & AS_FOLIO_ORDER_MASK) != saved)
		m->flags = (m->flags & ~AS_FOLIO_ORDER_MASK) | saved;
}
#else
static inline unsigned long ext4dec_mapping_limit_folios(struct address_space *m,
							 unsigned int max_order)
{
	return 0;
}

static inline void ext4dec_mapping_restore_folios(struct address_space *m,
						  unsigned long saved)
{
}
#endif

/*
 * 7.0 (b244c89a70b3, "readahead: push invalidate_lock out of
 * page_cache_ra_unbounded"): the caller holds the mapping's invalidate
 * lock, at least shared, across page_cache_ra_unbounded(), as against
 * truncation; before, the function took it itself.
 */
static inline void ext4dec_ra_unbounded(struct readahead_control *ractl,
					unsigned long nr_to_read)
{
#if EXT4DEC_SINCE(7, 0, 0)
	filemap_invalidate_lock_shared(ractl->mapping);
	page_cache_ra_unbounded(ractl, nr_to_read, 0);
	filemap_invalidate_unlock_shared(ractl->mapping);
#else
	page_cache_ra_unbounded(ractl, nr_to_read, 0);
#endif
}

/*
 * zstd decompression with a dictionary (zstd_create_ddict_byreference(),
 * zstd_decompress_using_ddict()): exported by 6.12, absent from 6.1's
 * <linux/zstd.h>.  Without it, zstd files with a dictionary are refused.
 */
#define EXT4DEC_HAVE_ZSTD_DDICT	EXT4DEC_SINCE(6, 12, 0)

#endif /* _EXT4DEC_COMPAT_H */
