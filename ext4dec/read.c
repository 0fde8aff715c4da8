// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: fill the page cache with
 * inflated chunks.
 *
 * readahead() first grows the request to whole chunks, then reads the
 * compressed bytes of a run of chunks with bios through the block map
 * taken at activation (into a private buffer, not through any page cache),
 * inflates each chunk once and fills all of its folios.  read_folio()
 * serves one chunk the same way and fills the chunk's other pages that it
 * can lock without waiting.  A chunk that cannot be read or decoded fails
 * exactly its own folios; the folio contract is followed: uptodate then
 * unlock on success, unlock alone on failure.  Running out of memory for
 * the compressed bytes is no chunk error: readahead leaves the folios to
 * read_folio(), which fails with ENOMEM.
 *
 * Context: process, called with folios locked, possibly under the mapping's
 * invalidate lock; allocations are GFP_NOFS through memalloc_nofs_save().
 */
#include "ext4dec.h"

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

/* Compressed bytes readahead reads in one go before inflating them */
#define BATCH_BYTES	SZ_1M

struct raw_read {
	atomic_t pending;
	struct completion done;
	blk_status_t status;
};

static void raw_end_io(struct bio *bio)
{
	struct raw_read *rr = bio->bi_private;

	if (bio->bi_status)
		WRITE_ONCE(rr->status, bio->bi_status);
	bio_put(bio);
	if (atomic_dec_and_test(&rr->pending))
		complete(&rr->done);
}

static struct page *buf_page(const u8 *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

/* Submit reads of @nr blocks at physical block @pblk into @buf. */
static void submit_blocks(struct ext4dec_inode *ei, u64 pblk, u64 nr, u8 *buf,
			  struct raw_read *rr)
{
	struct inode *inode = ei->inode;
	unsigned int bits = inode->i_blkbits;
	sector_t sector = pblk << (bits - SECTOR_SHIFT);
	size_t len = nr << bits;
	struct bio *bio = NULL;

	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - offset_in_page(buf));

		if (!bio) {
			bio = bio_alloc(inode->i_sb->s_bdev,
					bio_max_segs(DIV_ROUND_UP(len, PAGE_SIZE) + 1),
					REQ_OP_READ, GFP_NOIO);
			bio->bi_iter.bi_sector = sector;
			bio->bi_end_io = raw_end_io;
			bio->bi_private = rr;
		}
		if (bio_add_page(bio, buf_page(buf), n, offset_in_page(buf)) < n) {
			atomic_inc(&rr->pending);
			submit_bio(bio);
			bio = NULL;
			continue;
		}
		buf += n;
		len -= n;
		sector += n >> SECTOR_SHIFT;
	}
	if (bio) {
		atomic_inc(&rr->pending);
		submit_bio(bio);
	}
}

/* Index of the extent holding logical block @lblk, or nr_extents. */
static u32 find_extent(const struct ext4dec_inode *ei, u64 lblk)
{
	u32 lo = 0, hi = ei->nr_extents;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct ext4dec_extent *e = &ei->extents[mid];

		if (lblk < e->lblk)
			hi = mid;
		else if (lblk >= e->lblk + e->len)
			lo = mid + 1;
		else
			return mid;
	}
	return ei->nr_extents;
}

/* Read logical blocks [@lblk, @lblk + @nr) of the raw file into @buf. */
static int read_blocks(struct ext4dec_inode *ei, u64 lblk, u64 nr, u8 *buf)
{
	unsigned int bits = ei->inode->i_blkbits;
	struct raw_read rr = { .pending = ATOMIC_INIT(1) };
	struct blk_plug plug;
	u8 *start = buf;
	size_t bytes = nr << bits;
	int err = 0;

	init_completion(&rr.done);
	if (is_vmalloc_addr(start))
		flush_kernel_vmap_range(start, bytes);
	blk_start_plug(&plug);
	while (nr) {
		u32 i = find_extent(ei, lblk);
		const struct ext4dec_extent *e;
		u64 n;

		if (i == ei->nr_extents) {
			err = -EIO;
			break;
		}
		e = &ei->extents[i];
		n = min(nr, e->lblk + e->len - lblk);
		if (e->pblk)
			submit_blocks(ei, e->pblk + (lblk - e->lblk), n, buf, &rr);
		else
			memset(buf, 0, n << bits);
		buf += n << bits;
		lblk += n;
		nr -= n;
	}
	blk_finish_plug(&plug);
	if (!atomic_dec_and_test(&rr.pending))
		wait_for_completion_io(&rr.done);
	if (is_vmalloc_addr(start))
		invalidate_kernel_vmap_range(start, bytes);
	if (!err)
		err = blk_status_to_errno(READ_ONCE(rr.status));
	if (!err)
		atomic64_add(bytes, &ext4dec_stats.compressed_bytes);
	return err;
}

/*
 * Read raw bytes [@pos, @pos + @len) into a new buffer (*@buf, to kvfree);
 * *@data points at @pos inside it.  -ENOMEM is the caller's to report.
 */
static int read_raw(struct ext4dec_inode *ei, loff_t pos, size_t len,
		    u8 **buf, const u8 **data)
{
	unsigned int bits = ei->inode->i_blkbits;
	u64 first = pos >> bits, last = (pos + len - 1) >> bits;
	size_t bytes = (last - first + 1) << bits;
	int err;

	/* power-of-two sizes are naturally aligned, as bios want */
	*buf = kvmalloc(roundup_pow_of_two(max_t(size_t, bytes, PAGE_SIZE)),
			GFP_KERNEL | __GFP_NOWARN);
	if (!*buf)
		return -ENOMEM;
	err = read_blocks(ei, first, last - first + 1, *buf);
	if (err) {
		kvfree(*buf);
		*buf = NULL;
		return err;
	}
	*data = *buf + (pos - (first << bits));
	return 0;
}

static loff_t chunk_pos(const struct ext4dec_inode *ei, u32 chunk)
{
	return (loff_t)chunk * ei->sf.info.chunk_size;
}

static void chunk_error(struct ext4dec_inode *ei, u32 chunk, const char *what)
{
	atomic64_inc(&ext4dec_stats.read_errors);
	if (!test_and_set_bit(EXT4DEC_WARNED, &ei->flags))
		ext4dec_err(ei->inode, "chunk %u: %s", chunk, what);
}

/* Inflate @chunk from its compressed bytes @in into @ws->out. */
static int decode(struct ext4dec_inode *ei, struct ext4dec_ws *ws, u32 chunk,
		  const u8 *in)
{
	u32 clen = szip_chunk_clen(&ei->sf, chunk);
	int ret;

	ret = szip_decode_chunk(ws->dec, &ei->sf, chunk, in, clen, ws->out);
	if (ret) {
		chunk_error(ei, chunk, szip_strerror(ret));
		return -EFSCORRUPTED;
	}
	atomic64_inc(&ext4dec_stats.chunks_inflated);
	atomic64_add(szip_chunk_ulen(&ei->sf.info, chunk),
		     &ext4dec_stats.uncompressed_bytes);
	return 0;
}

/*
 * Fill @folio from inflated chunk @out (NULL: the chunk failed) and unlock
 * it.  Bytes past the end of the chunk, which can only be past EOF, read
 * as zeros.
 */
static void fill_folio(struct ext4dec_inode *ei, struct folio *folio,
		       const u8 *out, u32 chunk)
{
	loff_t start = chunk_pos(ei, chunk), pos = folio_pos(folio);
	size_t ulen = szip_chunk_ulen(&ei->sf.info, chunk), size = folio_size(folio);
	size_t off, n, done;

	if (!out || WARN_ON_ONCE(pos < start ||
				 pos + size > start + ei->sf.info.chunk_size)) {
		folio_unlock(folio);
		return;
	}
	off = pos - start;
	n = ulen > off ? min(ulen - off, size) : 0;
	for (done = 0; done < size; done += PAGE_SIZE) {
		size_t k = n > done ? min_t(size_t, n - done, PAGE_SIZE) : 0;
		void *kaddr = kmap_local_folio(folio, done);

		memcpy(kaddr, out + off + done, k);
		memset(kaddr + k, 0, PAGE_SIZE - k);
		kunmap_local(kaddr);
	}
	flush_dcache_folio(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

/* The last chunk of a batch starting at @first that ends by @limit. */
static u32 batch_end(const struct ext4dec_inode *ei, u32 first, u32 limit)
{
	u64 start = szip_chunk_offset(&ei->sf, first);
	u32 last = first;

	while (last < limit &&
	       szip_chunk_offset(&ei->sf, last + 1) +
	       szip_chunk_clen(&ei->sf, last + 1) - start <= BATCH_BYTES)
		last++;
	return last;
}

static void ext4dec_readahead(struct readahead_control *rac)
{
	struct ext4dec_inode *ei = ext4dec_get(rac->mapping->host);
	struct folio *folio;
	unsigned int nofs;
	loff_t start, end;
	u32 csize;

	if (!ei)
		return;		/* the caller drops the folios left */
	csize = ei->sf.info.chunk_size;

	/* whole chunks (of any multiple of 4 KiB), so each is inflated once */
	start = rounddown(readahead_pos(rac), csize);
	end = min_t(loff_t, roundup(readahead_pos(rac) + readahead_length(rac), csize),
		    round_up(ei->sf.info.size, PAGE_SIZE));
	if (end > start)
		readahead_expand(rac, start, end - start);

	nofs = memalloc_nofs_save();
	folio = readahead_folio(rac);
	while (folio) {
		u32 first = folio_pos(folio) / csize, last = first, c;
		struct ext4dec_ws *ws = NULL;
		const u8 *data = NULL;
		loff_t raw_start;
		u8 *buf = NULL;
		int err;

		if (folio_pos(folio) >= ei->sf.info.size) {
			/* past EOF: a reader that sampled the raw size */
			folio_unlock(folio);
			folio = readahead_folio(rac);
			continue;
		}
		if (readahead_count(rac))
			last = (readahead_pos(rac) + readahead_length(rac) - 1) / csize;
		last = batch_end(ei, first, min(last, ei->sf.info.nr_chunks - 1));
		raw_start = szip_chunk_offset(&ei->sf, first);
		err = read_raw(ei, raw_start,
			       szip_chunk_offset(&ei->sf, last) +
			       szip_chunk_clen(&ei->sf, last) - raw_start,
			       &buf, &data);
		/*
		 * Out of memory is no chunk error: readahead is opportunistic,
		 * read_folio() retries the folios left not uptodate.
		 */
		if (err && err != -ENOMEM)
			chunk_error(ei, first, "cannot read compressed data");
		else if (!err)
			ws = ext4dec_ws_get();

		for (c = first; c <= last; c++) {
			bool ok = !err &&
				  !decode(ei, ws, c, data + szip_chunk_offset(&ei->sf, c) -
					  raw_start);

			while (folio && folio_pos(folio) < chunk_pos(ei, c + 1)) {
				fill_folio(ei, folio, ok ? ws->out : NULL, c);
				folio = readahead_folio(rac);
			}
		}
		if (ws)
			ext4dec_ws_put(ws);
		kvfree(buf);
	}
	memalloc_nofs_restore(nofs);
	ext4dec_put(ei);
}

/* Fill the other pages of @chunk that are absent and lockable now. */
static void fill_neighbours(struct ext4dec_inode *ei, struct folio *done,
			    const u8 *out, u32 chunk)
{
	struct address_space *mapping = ei->inode->i_mapping;
	pgoff_t index = chunk_pos(ei, chunk) >> PAGE_SHIFT;
	pgoff_t end = DIV_ROUND_UP(chunk_pos(ei, chunk) +
				   szip_chunk_ulen(&ei->sf.info, chunk), PAGE_SIZE);

	for (; index < end; index++) {
		struct folio *folio;

		if (index == done->index)
			continue;
		folio = ext4dec_grab_folio_nowait(mapping, index);
		if (!folio)
			continue;
		if (folio_test_uptodate(folio))
			folio_unlock(folio);
		else
			fill_folio(ei, folio, out, chunk);
		folio_put(folio);
	}
}

static int ext4dec_read_folio(struct file *file, struct folio *folio)
{
	struct ext4dec_inode *ei = ext4dec_get(folio->mapping->host);
	struct ext4dec_ws *ws;
	const u8 *data;
	unsigned int nofs;
	u8 *buf;
	u32 chunk;
	int err;

	if (!ei) {
		folio_unlock(folio);
		return -EIO;
	}
	if (folio_pos(folio) >= ei->sf.info.size) {
		/* past EOF: a reader that sampled the raw size */
		folio_unlock(folio);
		ext4dec_put(ei);
		return -EIO;
	}
	chunk = folio_pos(folio) / ei->sf.info.chunk_size;
	nofs = memalloc_nofs_save();
	err = read_raw(ei, szip_chunk_offset(&ei->sf, chunk),
		       szip_chunk_clen(&ei->sf, chunk), &buf, &data);
	if (err) {
		if (err != -ENOMEM)
			chunk_error(ei, chunk, "cannot read compressed data");
		folio_unlock(folio);
		goto out;
	}
	ws = ext4dec_ws_get();
	err = decode(ei, ws, chunk, data);
	fill_folio(ei, folio, err ? NULL : ws->out, chunk);
	if (!err)
		fill_neighbours(ei, folio, ws->out, chunk);
	ext4dec_ws_put(ws);
	kvfree(buf);
out:
	memalloc_nofs_restore(nofs);
	ext4dec_put(ei);
	if (err && err != -ENOMEM)
		err = -EIO;
	return err;
}

const struct address_space_operations ext4dec_aops = {
	.read_folio	= ext4dec_read_folio,
	.readahead	= ext4dec_readahead,
	.dirty_folio	= noop_dirty_folio,
	.direct_IO	= noop_direct_IO,
	.migrate_folio	= filemap_migrate_folio,
	EXT4DEC_AOPS_ERROR_REMOVE,
};
