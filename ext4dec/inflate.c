// SPDX-License-Identifier: GPL-2.0
/*
 * Inflating a chunk into page-cache folios.
 *
 * A chunk is inflated once, into a workspace's buffer from which its
 * folios are filled, or straight into them where they hold all of its
 * pages (ext4dec_inflate_in_place()).  Folios and chunks need not line
 * up: a folio may hold part of a chunk, a whole chunk, several chunks or
 * parts of two, and EOF may fall anywhere in the last one.  Folios are
 * filled in file order, chunk by chunk, through a cursor (struct
 * ext4dec_fill), and a folio is done when its last chunk is.  The folio
 * contract is followed: uptodate then unlock on success, unlock alone on
 * failure.  A chunk that cannot be read or decoded fails exactly the
 * folios that hold part of it, and is counted and logged once per inode
 * (ext4dec_chunk_error()).
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
	atomic64_inc(&ei->inflated);
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

/*
 * Write file positions [@from, @to) of @folio: the bytes of @out, which
 * holds file positions [@start, @data_end), and zeros past them.
 */
static void ext4dec_folio_write(struct folio *folio, loff_t from, loff_t to,
				const u8 *out, loff_t start, loff_t data_end)
{
	loff_t pos = folio_pos(folio);

	while (from < to) {
		size_t off = from - pos;
		size_t n = min_t(loff_t, to - from, PAGE_SIZE - offset_in_page(off));
		size_t k = data_end > from ? min_t(loff_t, data_end - from, n) : 0;
		void *kaddr = kmap_local_folio(folio, off);

		if (k)
			memcpy(kaddr, out + (from - start), k);
		memset(kaddr + k, 0, n - k);
		kunmap_local(kaddr);
		from += n;
	}
}

/*
 * Fill the folios of @f that hold @chunk: file positions from the chunk's
 * start to @have are in them already (inflated in place), the rest of the
 * chunk's bytes are in @out, and past them, which can only be past EOF,
 * the folios read as zeros.  A folio that ends in the chunk is done:
 * uptodate and unlocked, or only unlocked if any chunk of it failed (@ok
 * false); one that goes on into the next chunk is left to it.
 */
static void ext4dec_fill_span(struct ext4dec_inode *ei, u32 chunk, const u8 *out,
			      loff_t have, bool ok, struct ext4dec_fill *f)
{
	loff_t start = ext4dec_chunk_pos(ei, chunk);
	loff_t data_end = start + szip_chunk_ulen(&ei->sf.info, chunk);
	/* the last chunk's folios end at EOF's, whatever their size */
	loff_t end = chunk + 1 < ei->sf.info.nr_chunks ?
		     ext4dec_chunk_pos(ei, chunk + 1) : LLONG_MAX;

	for (; f->folio < f->end; f->folio++) {
		struct folio *folio = *f->folio;
		loff_t pos = folio_pos(folio), folio_end = pos + folio_size(folio);

		if (pos >= end)
			break;
		if (!ok)
			f->failed = true;
		else if (!f->failed)
			ext4dec_folio_write(folio, max3(pos, start, have),
					    min(folio_end, end), out, start, data_end);
		if (folio_end > end)
			break;	/* the rest of it is the next chunk's */
		if (f->failed) {
			folio_unlock(folio);	/* not uptodate: read_folio() */
			f->nr_failed++;
		} else {
			ext4dec_folio_done(folio);
		}
		f->failed = false;
	}
}

/**
 * ext4dec_fill_chunk() - fill the folios that hold a chunk, from its bytes
 * @ei: the inode's state
 * @chunk: the chunk
 * @out: its uncompressed bytes, or NULL if it could not be read or
 *	inflated
 * @f: the folios, the first of which holds part of @chunk
 *
 * The folios that end within @chunk (or hold only EOF's zeros after it)
 * are done and @f moves past them: uptodate and unlocked, or unlocked
 * alone if @chunk or an earlier chunk of the folio failed.  A folio that
 * goes on into the next chunk stays locked, first in @f.
 */
void ext4dec_fill_chunk(struct ext4dec_inode *ei, u32 chunk, const u8 *out,
			struct ext4dec_fill *f)
{
	ext4dec_fill_span(ei, chunk, out, ext4dec_chunk_pos(ei, chunk), !!out, f);
}

/*
 * Where the folios of @f hold all @n pages of the file from @index, in
 * order: their pages in @pages, and the folio that holds the last one.
 */
static struct folio **ext4dec_fill_pages(struct ext4dec_fill *f, pgoff_t index,
					 unsigned int n, struct page **pages)
{
	struct folio **folio = f->folio;
	unsigned int i = 0;

	if (folio == f->end)
		return NULL;
	for (;;) {
		long at = (long)(index + i) - (long)(*folio)->index;

		if (at < 0)
			return NULL;
		for (; i < n && at < folio_nr_pages(*folio); i++, at++)
			pages[i] = folio_page(*folio, at);
		if (i == n)
			return folio;
		if (++folio == f->end)
			return NULL;
	}
}

/**
 * ext4dec_inflate_in_place() - inflate a chunk straight into its folios
 * @ei: the inode's state
 * @ws: the workspace whose decoder is used
 * @chunk: the chunk
 * @in: its compressed bytes
 * @f: locked folios, in order, the first of which holds part of @chunk
 *
 * When the folios of @f hold every page of @chunk, the chunk is inflated
 * into them: where one folio holds it all and is in the kernel's direct
 * map, at its address; else, if it is several pages, through a temporary
 * mapping of them.  No copy from a workspace either way.  The folios are
 * then done as ext4dec_fill_chunk() does them.
 *
 * Return: true if @chunk was inflated (or failed) into the folios; false
 * if it is to be inflated into @ws->out instead.
 */
bool ext4dec_inflate_in_place(struct ext4dec_inode *ei, struct ext4dec_ws *ws,
			      u32 chunk, const u8 *in, struct ext4dec_fill *f)
{
	struct page *pages[EXT4DEC_MAX_CHUNK / PAGE_SIZE];
	size_t ulen = szip_chunk_ulen(&ei->sf.info, chunk);
	unsigned int n = DIV_ROUND_UP(ulen, PAGE_SIZE);
	loff_t start = ext4dec_chunk_pos(ei, chunk);
	struct folio **last;
	bool mapped = false;
	u8 *dst;
	int err;

	if (n > ARRAY_SIZE(pages) || f->failed)
		return false;
	last = ext4dec_fill_pages(f, start >> PAGE_SHIFT, n, pages);
	if (!last)
		return false;
	if (last == f->folio && !folio_test_highmem(*last)) {
		dst = folio_address(*last) + (start - folio_pos(*last));
	} else {
		/* a page alone is copied as cheaply as it is mapped */
		if (n < 2)
			return false;
		dst = vm_map_ram(pages, n, NUMA_NO_NODE);
		if (!dst)
			return false;
		mapped = true;
	}
	err = ext4dec_decode_chunk(ei, ws, chunk, in, dst);
	if (!err)
		memset(dst + ulen, 0, n * PAGE_SIZE - ulen);
	if (mapped) {
		/* where caches alias, write back what went through this mapping */
		flush_kernel_vmap_range(dst, n * PAGE_SIZE);
		vm_unmap_ram(dst, n);
	}
	ext4dec_fill_span(ei, chunk, NULL, start + n * PAGE_SIZE, !err, f);
	return true;
}
