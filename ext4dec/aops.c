// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: the page cache filled with
 * inflated chunks.
 *
 * readahead() is readahead.c's.  read_folio() serves the chunks of one
 * folio synchronously; a folio within a chunk fills the chunk's other
 * folios that it can lock without waiting.  Nothing is ever dirty: write
 * access is denied while the inode is active, and write_begin() fails
 * (compat.h).
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
 * Read the compressed bytes of chunks @first to @last into @rb, with one
 * read, or take those an earlier miss kept of a chunk alone.
 */
static int ext4dec_read_chunks(struct ext4dec_inode *ei, u32 first, u32 last,
			       struct ext4dec_raw_buf *rb)
{
	struct ext4dec_cached *kept = first == last ? ext4dec_cache_take(ei, first) : NULL;
	loff_t pos = szip_chunk_offset(&ei->sf, first);
	int err;

	if (kept) {
		ext4dec_raw_buf_kept(ei, first, kept, rb);
		return 0;
	}
	err = ext4dec_raw_buf_alloc(ei, pos, szip_chunk_offset(&ei->sf, last) +
				    szip_chunk_clen(&ei->sf, last) - pos, false, rb);
	if (err)
		return err;
	err = ext4dec_raw_read_sync(ei, rb);
	if (err) {
		ext4dec_chunk_error(ei, first, "cannot read compressed data");
		ext4dec_raw_buf_free(rb);
	}
	return err;
}

/*
 * Read the chunks that @folio holds, synchronously, with one read,
 * inflate them and fill @folio; a folio within one chunk also fills the
 * chunk's other folios that can be locked without waiting.
 */
static int ext4dec_read_folio(struct file *file, struct folio *folio)
{
	struct ext4dec_inode *ei = ext4dec_get(folio->mapping->host);
	loff_t pos = folio_pos(folio), end = pos + folio_size(folio);
	struct ext4dec_raw_buf rb;
	struct ext4dec_fill f;
	struct ext4dec_ws *ws;
	unsigned int nofs;
	u32 chunk, first, last;
	bool ok;
	int err;

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
	first = pos / ei->sf.info.chunk_size;
	last = ext4dec_folio_last_chunk(ei, folio);
	nofs = memalloc_nofs_save();
	err = ext4dec_read_chunks(ei, first, last, &rb);
	if (err)
		goto out;
	ws = ext4dec_ws_get();
	for (chunk = first; chunk <= last; chunk++) {
		const u8 *in = ext4dec_raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk));

		/* the neighbours of a folio within a chunk are filled from ws->out */
		if (first < last && ext4dec_inflate_in_place(ei, ws, chunk, in, &f))
			continue;
		ok = !ext4dec_decode_chunk(ei, ws, chunk, in, ws->out);
		ext4dec_fill_chunk(ei, chunk, ok ? ws->out : NULL, &f);
		if (ok && first == last)
			ext4dec_fill_neighbours(ei, chunk, ws->out, pos, end);
	}
	ext4dec_ws_put(ws);
	ext4dec_raw_buf_free(&rb);
	err = f.nr_failed ? -EIO : 0;
out:
	if (f.folio < f.end)
		folio_unlock(folio);	/* not reached its last chunk */
	memalloc_nofs_restore(nofs);
	ext4dec_put(ei);
	if (err && err != -ENOMEM)
		err = -EIO;
	return err;
}

const struct address_space_operations ext4dec_aops = {
	.read_folio	= ext4dec_read_folio,
	.readahead	= ext4dec_readahead,
	.write_begin	= ext4dec_write_begin,
	.dirty_folio	= noop_dirty_folio,
	.direct_IO	= noop_direct_IO,
	.migrate_folio	= filemap_migrate_folio,
	EXT4DEC_AOPS_ERROR_REMOVE,
};

