// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: the page cache filled with
 * inflated chunks.
 *
 * readahead() is readahead.c's.  read_folio() serves one chunk
 * synchronously and fills the chunk's other pages that it can lock
 * without waiting.  Nothing is ever dirty: write access is denied while
 * the inode is active.
 *
 * Context: process, called with folios locked, possibly under the
 * mapping's invalidate lock; allocations are GFP_NOFS through
 * memalloc_nofs_save().
 */
#include "ext4dec.h"

#include <linux/pagemap.h>
#include <linux/sched/mm.h>

/* Fill the other pages of @chunk that are absent and lockable now. */
static void ext4dec_fill_neighbours(struct ext4dec_inode *ei, struct folio *done,
				    const u8 *out, u32 chunk)
{
	struct address_space *mapping = ei->inode->i_mapping;
	pgoff_t index = ext4dec_chunk_pos(ei, chunk) >> PAGE_SHIFT;
	pgoff_t end = DIV_ROUND_UP(ext4dec_chunk_pos(ei, chunk) +
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
			ext4dec_fill_folio(ei, folio, out, chunk);
		folio_put(folio);
	}
}

/*
 * Read the chunk that holds @folio alone, synchronously, inflate it, fill
 * @folio and the chunk's other pages that can be locked without waiting.
 */
static int ext4dec_read_folio(struct file *file, struct folio *folio)
{
	struct ext4dec_inode *ei = ext4dec_get(folio->mapping->host);
	struct ext4dec_cached *kept;
	struct ext4dec_ws *ws;
	struct ext4dec_raw_buf rb;
	unsigned int nofs;
	const u8 *in;
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
	kept = ext4dec_cache_take(ei, chunk);
	if (kept) {
		ext4dec_raw_buf_kept(ei, chunk, kept, &rb);
		err = 0;
	} else {
		err = ext4dec_raw_buf_alloc(ei, szip_chunk_offset(&ei->sf, chunk),
					    szip_chunk_clen(&ei->sf, chunk), false, &rb);
		if (!err) {
			err = ext4dec_raw_read_sync(ei, &rb);
			if (err)
				ext4dec_chunk_error(ei, chunk, "cannot read compressed data");
		}
	}
	if (err) {
		folio_unlock(folio);
		goto out;
	}
	in = ext4dec_raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk));
	ws = ext4dec_ws_get();
	err = ext4dec_decode_chunk(ei, ws, chunk, in, ws->out);
	ext4dec_fill_folio(ei, folio, err ? NULL : ws->out, chunk);
	if (!err)
		ext4dec_fill_neighbours(ei, folio, ws->out, chunk);
	ext4dec_ws_put(ws);
out:
	ext4dec_raw_buf_free(&rb);
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

