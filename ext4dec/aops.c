// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: the page cache filled with
 * inflated chunks.
 *
 * readahead() is readahead.c's.  read_folio() serves the chunks of one
 * folio synchronously; a folio within a chunk fills the chunk's other
 * folios that it can lock without waiting.  Nothing is ever dirty: write access is denied while
 * the inode is active.
 *
 * Context: process, called with folios locked, possibly under the
 * mapping's invalidate lock; allocations are GFP_NOFS through
 * memalloc_nofs_save().
 */
#include "ext4dec.h"

#include <linux/pagemap.h>
#include <linux/sched/mm.h>

/*
 * Fill the other folios of @chunk, which @done (file positions) lies in,
 * that are absent or not uptodate and lockable now, from its bytes @out.
 * A folio that goes on past the chunk is left alone.
 */
static void ext4dec_fill_neighbours(struct ext4dec_inode *ei, u32 chunk, const u8 *out,
				    loff_t done, loff_t done_end)
{
	struct address_space *mapping = ei->inode->i_mapping;
	loff_t start = ext4dec_chunk_pos(ei, chunk);
	loff_t end = start + szip_chunk_ulen(&ei->sf.info, chunk);
	pgoff_t index = start >> PAGE_SHIFT;

	while ((loff_t)index << PAGE_SHIFT < end) {
		struct ext4dec_fill f;
		struct folio *folio;
		loff_t pos;

		if ((loff_t)index << PAGE_SHIFT == done) {
			index = done_end >> PAGE_SHIFT;
			continue;
		}
		folio = ext4dec_grab_folio_nowait(mapping, index);
		if (!folio) {
			index++;
			continue;
		}
		pos = folio_pos(folio);
		index = folio->index + folio_nr_pages(folio);
		if (folio_test_uptodate(folio) || pos < start ||
		    pos + folio_size(folio) > start + ei->sf.info.chunk_size) {
			folio_unlock(folio);
		} else {
			ext4dec_fill_init(&f, &folio, 1);
			ext4dec_fill_chunk(ei, chunk, out, &f);
		}
		folio_put(folio);
	}
}

/*
 * Read the compressed bytes of @chunk alone, kept by an earlier miss or
 * from the disk, into @rb.
 */
static int ext4dec_read_one(struct ext4dec_inode *ei, u32 chunk,
			    struct ext4dec_raw_buf *rb)
{
	struct ext4dec_cached *kept = ext4dec_cache_take(ei, chunk);
	int err;

	if (kept) {
		ext4dec_raw_buf_kept(ei, chunk, kept, rb);
		return 0;
	}
	err = ext4dec_raw_buf_alloc(ei, szip_chunk_offset(&ei->sf, chunk),
				    szip_chunk_clen(&ei->sf, chunk), false, rb);
	if (err)
		return err;
	err = ext4dec_raw_read_sync(ei, rb);
	if (err) {
		ext4dec_chunk_error(ei, chunk, "cannot read compressed data");
		ext4dec_raw_buf_free(rb);
	}
	return err;
}

/*
 * Read the chunks that @folio holds, one at a time, synchronously, inflate
 * them and fill @folio; a folio within one chunk also fills the chunk's
 * other folios that can be locked without waiting.
 */
static int ext4dec_read_folio(struct file *file, struct folio *folio)
{
	struct ext4dec_inode *ei = ext4dec_get(folio->mapping->host);
	loff_t pos = folio_pos(folio), end = pos + folio_size(folio);
	struct ext4dec_raw_buf rb;
	struct ext4dec_fill f;
	unsigned int nofs;
	u32 chunk, last;
	int err = 0;

	if (!ei) {
		folio_unlock(folio);
		return -EIO;
	}
	if (pos >= ei->sf.info.size) {
		/* past EOF: a reader that sampled the raw size */
		folio_unlock(folio);
		ext4dec_put(ei);
		return -EIO;
	}
	ext4dec_fill_init(&f, &folio, 1);
	last = min_t(u64, (end - 1) / ei->sf.info.chunk_size, ei->sf.info.nr_chunks - 1);
	nofs = memalloc_nofs_save();
	for (chunk = pos / ei->sf.info.chunk_size; !err && chunk <= last; chunk++) {
		struct ext4dec_ws *ws;
		const u8 *in;

		err = ext4dec_read_one(ei, chunk, &rb);
		if (err)
			break;
		in = ext4dec_raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk));
		ws = ext4dec_ws_get();
		err = ext4dec_decode_chunk(ei, ws, chunk, in, ws->out);
		ext4dec_fill_chunk(ei, chunk, err ? NULL : ws->out, &f);
		if (!err && pos / ei->sf.info.chunk_size == last)
			ext4dec_fill_neighbours(ei, chunk, ws->out, pos, end);
		ext4dec_ws_put(ws);
		ext4dec_raw_buf_free(&rb);
	}
	if (f.folio < f.end)
		folio_unlock(folio);	/* a chunk before its last failed */
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

