// SPDX-License-Identifier: GPL-2.0
/*
 * An inode's state, loaded at activation: whether ext4dec can serve the
 * inode at all, then its szip header, dictionary and tables, read through
 * the raw page cache and validated once, and the block map of the raw
 * file.  Everything the read path trusts is checked here; a file that
 * fails a check is refused with one log line, one errno and one sysfs
 * counter (ext4dec_refuse()), and is read raw.
 */
#include "ext4dec.h"

#include <linux/iomap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static const int ext4dec_refusal_errno[EXT4DEC_NR_REFUSALS] = {
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
	[EXT4DEC_REFUSED_UNTRUSTED] = -EPERM,
};

/**
 * ext4dec_refuse() - report that an inode cannot be activated
 * @inode: the inode
 * @dentry: a dentry of it, for the message
 * @why: the reason, counted in sysfs
 * @detail: what exactly, or NULL
 *
 * Logs a warning, rate-limited per reason: a flood of one reason hides
 * none of the others.
 *
 * Return: the negative errno that stands for @why.
 */
int ext4dec_refuse(struct inode *inode, struct dentry *dentry,
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
		[EXT4DEC_REFUSED_UNTRUSTED] =
			"others than root could have written it (parameters any_owner, trusted_gid)",
	};

	static struct ratelimit_state rs[EXT4DEC_NR_REFUSALS] = {
		[0 ... EXT4DEC_NR_REFUSALS - 1] =
			RATELIMIT_STATE_INIT(rs, DEFAULT_RATELIMIT_INTERVAL,
					     DEFAULT_RATELIMIT_BURST),
	};

	atomic64_inc(&ext4dec_stats.refused[why]);
	ext4dec_msg(&rs[why], inode, false, "%pd: not activated: %s%s%s",
		    dentry, what[why], detail ? ": " : "", detail ? detail : "");
	return ext4dec_refusal_errno[why];
}

/* Copy @len bytes at @pos of the raw file out of its page cache. */
static int ext4dec_read_cached(struct inode *inode, loff_t pos, void *buf, size_t len)
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

/*
 * Parse the szip header at the start of the raw file into @info.
 * Return: 0, or the errno of the refusal, which is reported.
 */
static int ext4dec_read_header(struct inode *inode, struct dentry *dentry,
			       struct szip_info *info, loff_t raw_size)
{
	u8 hdr[SZIP2_HEADER_SIZE];
	size_t hdr_len = min_t(loff_t, raw_size, sizeof(hdr));
	enum szip_ret ret;

	if (ext4dec_read_cached(inode, 0, hdr, hdr_len))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_IO, NULL);
	ret = szip_parse_header(info, hdr, hdr_len, raw_size);
	if (ret)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
				      szip_strerror(ret));
	ret = szip_check_support(info);
	if (ret)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_UNSUPPORTED,
				      szip_strerror(ret));
	return 0;
}

/**
 * ext4dec_check() - whether ext4dec can and may serve this inode
 * @inode: an ext4 regular file
 * @dentry: a dentry of it
 *
 * The kind of inode, the activation policy (policy.c) and the szip
 * header, checked before activation takes write access away: a file
 * refused here never makes a writer's open fail.  ext4dec_load() checks
 * the header again, once nobody can write the file.
 *
 * Context: process; the caller holds the inode lock.
 * Return: 0, or the errno of the refusal, which is reported.
 */
int ext4dec_check(struct inode *inode, struct dentry *dentry)
{
	struct szip_info info;
	u32 flags;

	if (IS_ENCRYPTED(inode))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_ENCRYPTED, NULL);
	if (IS_VERITY(inode))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_VERITY, NULL);
	if (IS_DAX(inode))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_DAX, NULL);
	if (ext4dec_ext4_flags(inode, dentry, &flags))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_IO, NULL);
	if (flags & FS_INLINE_DATA_FL)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_INLINE, NULL);
	/* a regular file flagged as an htree directory: ext4 would take
	 * file->private_data for its directory state at release
	 */
	if (flags & FS_INDEX_FL)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP, NULL);
	/* per-inode +j or a data=journal mount: blocks may sit in the journal */
	if ((flags & FS_JOURNAL_DATA_FL) || ext4dec_ext4_journalled(inode))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_JOURNAL_DATA,
				      NULL);
	if (!ext4dec_trusted(inode))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_UNTRUSTED, NULL);
	return ext4dec_read_header(inode, dentry, &info, i_size_read(inode));
}

/*
 * Start reading [@pos, @pos + @len) of the raw file into its page cache,
 * in large reads: ext4dec_read_cached() would read it a folio at a time,
 * waiting for each.
 */
static void ext4dec_read_ahead_raw(struct inode *inode, loff_t pos, size_t len)
{
	struct file_ra_state ra = { };
	DEFINE_READAHEAD(ractl, NULL, &ra, inode->i_mapping, pos >> PAGE_SHIFT);

	ext4dec_ra_unbounded(&ractl, DIV_ROUND_UP(offset_in_page(pos) + len, PAGE_SIZE));
}

/* Read and validate the header, dictionary and tables. */
static int ext4dec_load_meta(struct ext4dec_inode *ei, struct dentry *dentry)
{
	struct szip_info *info = &ei->sf.info;
	struct inode *inode = ei->inode;
	size_t meta_len;
	char detail[64];
	u32 bad, i;
	int err;

	err = ext4dec_read_header(inode, dentry, info, ei->raw_size);
	if (err)
		return err;
	/* each page must lie in one chunk (only systems with pages > 4K) */
	if (info->chunk_size % PAGE_SIZE)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
				      "chunk size smaller than the page size");

	if (info->size > inode->i_sb->s_maxbytes)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
				      "uncompressed size above the file system's limit");
	if (info->data_offset - info->dict_offset > EXT4DEC_MAX_META)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
				      "tables and dictionary over 16 MiB");
	meta_len = info->data_offset - info->dict_offset;
	ei->meta = kvmalloc(meta_len, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ei->meta)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	ext4dec_read_ahead_raw(inode, info->dict_offset, meta_len);
	if (ext4dec_read_cached(inode, info->dict_offset, ei->meta, meta_len))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_IO, NULL);
	szip_file_set_meta(&ei->sf, ei->meta);

	if (szip_check_table(&ei->sf, &bad)) {
		snprintf(detail, sizeof(detail), "offset table entry %u out of order or range",
			 bad);
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP, detail);
	}
	for (i = 0; i < info->nr_chunks; i++) {
		if (szip_chunk_clen(&ei->sf, i) > EXT4DEC_MAX_CLEN) {
			snprintf(detail, sizeof(detail), "chunk %u: compressed size over %u bytes",
				 i, EXT4DEC_MAX_CLEN);
			return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOT_SZIP,
					      detail);
		}
	}
	if (szip_file_prepare(&ei->sf))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	return 0;
}

/* Take the block map of the whole raw file. */
static int ext4dec_load_extents(struct ext4dec_inode *ei, struct dentry *dentry)
{
	struct inode *inode = ei->inode;
	unsigned int bits = inode->i_blkbits;
	size_t cap = 8, n = 0;
	loff_t pos = 0;
	int err;

	ei->extents = kvmalloc_array(cap, sizeof(*ei->extents), GFP_KERNEL_ACCOUNT);
	if (!ei->extents)
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
	/* bytes after totalSize are never read */
	while (pos < ei->sf.info.total_size) {
		struct ext4dec_extent *e;
		struct iomap map;

		err = ext4dec_ext4_map(inode, pos, ei->sf.info.total_size - pos, &map);
		if (err == -EOPNOTSUPP)
			return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_INLINE, NULL);
		if (err || map.offset > pos || !map.length)
			return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_IO,
					      "block map");
		if (n == cap) {
			e = kvmalloc_array(cap * 2, sizeof(*e), GFP_KERNEL_ACCOUNT);
			if (!e)
				return ext4dec_refuse(inode, dentry,
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

/**
 * ext4dec_load() - read and check what serving an inode needs
 * @inode: an ext4 regular file that ext4dec_check() accepted, with write
 *	access denied and nothing dirty
 * @dentry: a dentry of it, for messages
 *
 * Context: process; the caller holds the inode lock.  Allocates with
 * GFP_NOFS (memalloc_nofs_save()): no reclaim into a filesystem while
 * the inode lock is held.
 * Return: the state, with one reference (for being active) and not
 * published, or an ERR_PTR() of the refusal's errno, which is reported.
 */
struct ext4dec_inode *ext4dec_load(struct inode *inode, struct dentry *dentry)
{
	struct ext4dec_inode *ei;
	unsigned int nofs;
	int err;

	lockdep_assert_held_write(&inode->i_rwsem);
	nofs = memalloc_nofs_save();
	ei = kzalloc(sizeof(*ei), GFP_KERNEL_ACCOUNT);
	if (!ei) {
		err = ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_NOMEM, NULL);
		goto out;
	}
	INIT_LIST_HEAD(&ei->list);
	kref_init(&ei->ref);
	ext4dec_cache_init_inode(ei);
	ei->inode = inode;
	ei->raw_size = i_size_read(inode);
	err = ext4dec_load_meta(ei, dentry) ?: ext4dec_load_extents(ei, dentry);
	if (err) {
		ext4dec_free_state(ei);
		ei = NULL;
	}
out:
	memalloc_nofs_restore(nofs);
	return ei ?: ERR_PTR(err);
}
