// SPDX-License-Identifier: GPL-2.0
/*
 * Inflating a chunk into page-cache folios.
 *
 * A chunk is inflated once, into a workspace's buffer from which its
 * folios are filled, or straight into its pages where they are base
 * pages in order (ext4dec_inflate_in_place()).  The folio contract is
 * followed: uptodate then unlock on success, unlock alone on failure.  A
 * chunk that cannot be read or decoded fails exactly its own folios, and
 * is counted and logged once per inode (ext4dec_chunk_error()).
 */
#include "ext4dec.h"

#include <linux/highmem.h>
#include <linux/vmalloc.h>

/**
 * ext4dec_chunk_error() - count a chunk that could not be read or decoded
 * @ei: the inode's state
 * @chunk: the chunk
 * @what: what went wrong, logged once per inode
 */
void ext4dec_chunk_error(struct ext4dec_inode *ei, u32 chunk, const char *what)
{
	atomic64_inc(&ext4dec_stats.read_errors);
	if (!test_and_set_bit(EXT4DEC_WARNED, &ei->flags))
		ext4dec_err(ei->inode, "chunk %u: %s", chunk, what);
}

/**
 * ext4dec_decode_chunk() - inflate a chunk
 * @ei: the inode's state
 * @ws: the workspace whose decoder is used
 * @chunk: the chunk
 * @in: its compressed bytes
 * @out: room for its uncompressed bytes (a chunk's size)
 *
 * Return: 0, or -EFSCORRUPTED (the chunk is reported).
 */
int ext4dec_decode_chunk(struct ext4dec_inode *ei, struct ext4dec_ws *ws, u32 chunk,
			 const u8 *in, u8 *out)
{
	u32 clen = szip_chunk_clen(&ei->sf, chunk);
	enum szip_ret ret;

	ret = szip_decode_chunk(ws->dec, &ei->sf, chunk, in, clen, out);
	if (ret) {
		ext4dec_chunk_error(ei, chunk, szip_strerror(ret));
		return -EFSCORRUPTED;
	}
	atomic64_inc(&ext4dec_stats.chunks_inflated);
	atomic64_add(szip_chunk_ulen(&ei->sf.info, chunk),
		     &ext4dec_stats.uncompressed_bytes);
	return 0;
}

/* @folio holds its bytes: publish and unlock it. */
static void ext4dec_folio_done(struct folio *folio)
{
	flush_dcache_folio(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
}

/**
 * ext4dec_fill_folio() - fill a folio from an inflated chunk and unlock it
 * @ei: the inode's state
 * @folio: a locked folio within @chunk
 * @out: the chunk's uncompressed bytes, or NULL if the chunk failed (the
 *	folio is unlocked, not uptodate)
 * @chunk: the chunk
 *
 * Bytes past the end of the chunk, which can only be past EOF, read as
 * zeros.
 */
void ext4dec_fill_folio(struct ext4dec_inode *ei, struct folio *folio,
			const u8 *out, u32 chunk)
{
	loff_t start = ext4dec_chunk_pos(ei, chunk), pos = folio_pos(folio);
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
	ext4dec_folio_done(folio);
}

/**
 * ext4dec_inflate_in_place() - inflate a chunk straight into its folios
 * @ei: the inode's state
 * @ws: the workspace whose decoder is used
 * @chunk: the chunk
 * @in: its compressed bytes
 * @folio: locked folios, in order, from the first of @chunk
 * @end: the end of the @folio array
 *
 * When @folio[0..] starts with exactly the chunk's pages as base pages,
 * the chunk is inflated into them through a temporary kernel mapping: no
 * copy from a workspace.
 *
 * Return: the number of folios filled (or failed) and unlocked; 0 when
 * the chunk is to be inflated into @ws->out instead.
 */
unsigned int ext4dec_inflate_in_place(struct ext4dec_inode *ei,
				      struct ext4dec_ws *ws, u32 chunk,
				      const u8 *in, struct folio **folio,
				      struct folio **end)
{
	struct page *pages[EXT4DEC_MAX_CHUNK / PAGE_SIZE];
	size_t ulen = szip_chunk_ulen(&ei->sf.info, chunk);
	unsigned int i, n = DIV_ROUND_UP(ulen, PAGE_SIZE);
	pgoff_t index = ext4dec_chunk_pos(ei, chunk) >> PAGE_SHIFT;
	u8 *dst;
	int err;

	if (n < 2 || n > ARRAY_SIZE(pages) || end - folio < n)
		return 0;
	/* folios past EOF in the chunk (a reader of the raw size) */
	if (end - folio > n && folio_pos(folio[n]) < ext4dec_chunk_pos(ei, chunk + 1))
		return 0;
	for (i = 0; i < n; i++) {
		if (folio_test_large(folio[i]) || folio[i]->index != index + i)
			return 0;
		pages[i] = folio_page(folio[i], 0);
	}
	dst = vm_map_ram(pages, n, NUMA_NO_NODE);
	if (!dst)
		return 0;
	err = ext4dec_decode_chunk(ei, ws, chunk, in, dst);
	if (!err)
		memset(dst + ulen, 0, n * PAGE_SIZE - ulen);
	/* where caches alias, write back what went through this mapping */
	flush_kernel_vmap_range(dst, n * PAGE_SIZE);
	vm_unmap_ram(dst, n);
	for (i = 0; i < n; i++) {
		if (err)
			folio_unlock(folio[i]);	/* not uptodate: read_folio() */
		else
			ext4dec_folio_done(folio[i]);
	}
	return n;
}

