// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: the page cache filled with
 * inflated chunks.
 *
 * readahead() is readahead.c's.  read_folio() serves the chunks of one
 * folio synchronously; a folio within a chunk fills the chunk's other
 * folios that it can lock without waiting.  It does not fail for lack of
 * memory, which a page fault would turn into SIGBUS: without a buffer for
 * the compressed bytes, it reads them one chunk at a time into raw.c's
 * reserve.  Nothing is ever dirty: write access is denied while the inode
 * is active, and write_begin() fails (compat.h).
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
 * Inflate @chunk, one of the chunks of @f's folio, from its compressed
 * bytes @in with @ws, and fill the folio.  @alone is the folio if it lies
 * within @chunk: the chunk's other folios are filled too, from @ws->out.
 * NULL for a folio of several chunks, each inflated straight into it
 * where it can be.
 */
static void ext4dec_inflate_folio_chunk(struct ext4dec_inode *ei, struct ext4dec_ws *ws,
					u32 chunk, const u8 *in, struct ext4dec_fill *f,
					struct folio *alone)
{
	/* before the fill unlocks it */
	loff_t pos = alone ? folio_pos(alone) : 0;
	loff_t end = alone ? pos + folio_size(alone) : 0;
	bool ok;

	if (!alone && ext4dec_inflate_in_place(ei, ws, chunk, in, f))
		return;
	ok = !ext4dec_decode_chunk(ei, ws, chunk, in, ws->out);
	ext4dec_fill_chunk(ei, chunk, ok ? ws->out : NULL, f);
	if (ok && alone)
		ext4dec_fill_neighbours(ei, chunk, ws->out, pos, end);
}

/*
 * No memory for the compressed bytes of chunks @first to @last, which
 * @f's folio holds: read and inflate them one at a time through raw.c's
 * reserve, one reader at a time.  The reserve is taken before the
 * workspace, which ext4dec_ws_get() may wait for: no holder of a
 * workspace waits for the reserve.
 */
static void ext4dec_read_folio_reserve(struct ext4dec_inode *ei, u32 first, u32 last,
				       struct ext4dec_fill *f, struct folio *alone)
{
	struct ext4dec_raw_buf rb;
	struct ext4dec_ws *ws;
	const u8 *in;
	u32 chunk;

	mutex_lock(&ext4dec_raw_reserve_lock);
	ws = ext4dec_ws_get();
	for (chunk = first; chunk <= last; chunk++) {
		if (ext4dec_raw_read_reserve(ei, chunk, &rb)) {
			ext4dec_chunk_error(ei, chunk, "cannot read compressed data");
			ext4dec_fill_chunk(ei, chunk, NULL, f);
			continue;
		}
		atomic64_inc(&ext4dec_stats.reserve_reads);
		in = ext4dec_raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk));
		ext4dec_inflate_folio_chunk(ei, ws, chunk, in, f, alone);
	}
	ext4dec_ws_put(ws);
	mutex_unlock(&ext4dec_raw_reserve_lock);
}

/*
 * Read the chunks that @folio holds, synchronously, with one read,
 * inflate them and fill @folio; a folio within one chunk also fills the
 * chunk's other folios that can be locked without waiting.  Without
 * memory for the read, the chunks go one by one through the reserve.
 */
static int ext4dec_read_folio(struct file *file, struct folio *folio)
{
	struct ext4dec_inode *ei = ext4dec_get(folio->mapping->host);
	struct ext4dec_raw_buf rb;
	struct ext4dec_fill f;
	struct ext4dec_ws *ws;
	struct folio *alone;
	unsigned int nofs;
	u32 chunk, first, last;
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
	ext4dec_fill_init(&f, &folio, 1);
	first = folio_pos(folio) / ei->sf.info.chunk_size;
	last = ext4dec_folio_last_chunk(ei, folio);
	alone = first == last ? folio : NULL;
	nofs = memalloc_nofs_save();
	err = ext4dec_read_chunks(ei, first, last, &rb);
	if (!err) {
		ws = ext4dec_ws_get();
		for (chunk = first; chunk <= last; chunk++) {
			const u8 *in = ext4dec_raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk));

			ext4dec_inflate_folio_chunk(ei, ws, chunk, in, &f, alone);
		}
		ext4dec_ws_put(ws);
		ext4dec_raw_buf_free(&rb);
	} else if (err == -ENOMEM) {
		ext4dec_read_folio_reserve(ei, first, last, &f, alone);
		err = 0;
	}
	if (f.folio < f.end)
		folio_unlock(folio);	/* a read error, or not reached its last chunk */
	memalloc_nofs_restore(nofs);
	ext4dec_put(ei);
	return err || f.nr_failed ? -EIO : 0;
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

