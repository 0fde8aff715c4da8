// SPDX-License-Identifier: GPL-2.0
/*
 * Address space operations of active inodes: fill the page cache with
 * inflated chunks.
 *
 * readahead() first grows the request to whole chunks, then cuts it into
 * batches of chunks and reads the compressed bytes of each with bios
 * through the block map taken at activation (into a private buffer, not
 * through any page cache).  When a batch's bytes are in, an inflate worker
 * (pool.c) inflates each chunk once and fills all of its folios, while the
 * reader goes on and the next batches' I/O is in flight; a single chunk is
 * inflated by the caller itself.  read_folio() serves one chunk
 * synchronously and fills the chunk's other pages that it can lock
 * without waiting.  A chunk that cannot be read or decoded fails exactly
 * its own folios; the folio contract is followed: uptodate then unlock on
 * success, unlock alone on failure.  Running out of memory for the
 * compressed bytes is no chunk error: readahead leaves the folios to
 * read_folio(), which fails with ENOMEM.
 *
 * Context: process, called with folios locked, possibly under the mapping's
 * invalidate lock; allocations are GFP_NOFS through memalloc_nofs_save().
 * A batch holds its folios locked and a reference on the inode's state
 * until a worker is done with it; truncation, deactivation and eviction
 * wait for those folio locks.
 */
#include "ext4dec.h"

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

/* Compressed bytes readahead reads at once, at most */
#define REQ_BYTES	SZ_2M
/* Uncompressed bytes inflated by one worker at a time, at most */
#define BATCH_UBYTES	SZ_256K

/*
 * A read of raw blocks in flight: @pending counts the bios plus one for
 * the submitter; @done runs when it drops to zero, possibly in interrupt
 * context.
 */
struct raw_read {
	atomic_t pending;
	int err;
	blk_status_t status;
	void (*done)(struct raw_read *rr);
};

static void raw_read_put(struct raw_read *rr)
{
	if (atomic_dec_and_test(&rr->pending))
		rr->done(rr);
}

static void raw_end_io(struct bio *bio)
{
	struct raw_read *rr = bio->bi_private;

	if (bio->bi_status)
		WRITE_ONCE(rr->status, bio->bi_status);
	bio_put(bio);
	raw_read_put(rr);
}

static struct page *buf_page(const u8 *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

/* Submit reads of @len bytes at @sector of the device into @buf. */
static void submit_range(struct ext4dec_inode *ei, sector_t sector, size_t len,
			 u8 *buf, struct raw_read *rr)
{
	struct block_device *bdev = ei->inode->i_sb->s_bdev;
	struct bio *bio = NULL;

	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - offset_in_page(buf));

		if (!bio) {
			bio = bio_alloc(bdev,
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

/*
 * Spare buffers for readahead's compressed bytes, kept between requests:
 * a new one would be zeroed (init_on_alloc, the default of common
 * kernels) and mapped each time, which costs about as much CPU as
 * inflating LZ4.  Up to RAW_SPARE_MAX are kept while reads go on, none
 * after RAW_SPARE_IDLE without one.  A request's bytes, sector-aligned,
 * fit in RAW_SPARE_BYTES.
 */
#define RAW_SPARE_BYTES	(REQ_BYTES + 2 * PAGE_SIZE)
#define RAW_SPARE_MAX	4
#define RAW_SPARE_IDLE	(5 * HZ)

static DEFINE_SPINLOCK(raw_spare_lock);
static void *raw_spare[RAW_SPARE_MAX];
static unsigned int raw_spare_nr;

static void raw_spare_drain(struct work_struct *work)
{
	void *bufs[RAW_SPARE_MAX];
	unsigned int n;

	spin_lock(&raw_spare_lock);
	n = raw_spare_nr;
	memcpy(bufs, raw_spare, n * sizeof(*bufs));
	raw_spare_nr = 0;
	spin_unlock(&raw_spare_lock);
	while (n)
		vfree(bufs[--n]);
}

static DECLARE_DELAYED_WORK(raw_spare_work, raw_spare_drain);

/* A spare buffer, or NULL if there is none */
static void *raw_spare_get(void)
{
	void *buf = NULL;

	spin_lock(&raw_spare_lock);
	if (raw_spare_nr)
		buf = raw_spare[--raw_spare_nr];
	spin_unlock(&raw_spare_lock);
	return buf;
}

static void raw_spare_put(void *buf)
{
	spin_lock(&raw_spare_lock);
	if (raw_spare_nr < RAW_SPARE_MAX) {
		raw_spare[raw_spare_nr++] = buf;
		buf = NULL;
	}
	spin_unlock(&raw_spare_lock);
	vfree(buf);
	mod_delayed_work(system_wq, &raw_spare_work, RAW_SPARE_IDLE);
}

/**
 * ext4dec_read_exit() - free the spare readahead buffers
 *
 * At module exit, once no request can be in flight.
 */
void ext4dec_read_exit(void)
{
	cancel_delayed_work_sync(&raw_spare_work);
	raw_spare_drain(NULL);
}

/**
 * struct raw_buf - a buffer of raw bytes, in whole device sectors
 * @buf: the buffer (kvmalloc'ed, a spare one, or @kept's)
 * @pos: position in the raw file of its first byte
 * @len: its length
 * @spare: @buf comes from raw_spare_get()
 * @kept: the bytes of one chunk, kept by cache.c, which are in already
 *
 * The device's logical blocks (usually 512 bytes), not the filesystem's,
 * are the unit: a random read of a small chunk reads little more than the
 * chunk.
 */
struct raw_buf {
	u8 *buf;
	loff_t pos;
	size_t len;
	bool spare;
	struct ext4dec_cached *kept;
};

/*
 * Allocate @rb for the sectors that hold raw bytes [@pos, @pos + @len).
 * If @spare and they fit, take a spare buffer, or make one to be kept
 * when they are many; a small read finding none allocates its own.
 * -ENOMEM is the caller's to report.
 */
static int raw_buf_alloc(const struct ext4dec_inode *ei, loff_t pos, size_t len,
			 bool spare, struct raw_buf *rb)
{
	unsigned int lbs = bdev_logical_block_size(ei->inode->i_sb->s_bdev);

	rb->pos = round_down(pos, lbs);
	rb->len = round_up(pos + len, lbs) - rb->pos;
	rb->buf = NULL;
	rb->kept = NULL;
	rb->spare = spare && rb->len <= RAW_SPARE_BYTES;
	if (rb->spare) {
		rb->buf = raw_spare_get();
		if (!rb->buf && rb->len > RAW_SPARE_BYTES / 8)
			rb->buf = __vmalloc(RAW_SPARE_BYTES, GFP_KERNEL | __GFP_NOWARN);
		rb->spare = !!rb->buf;
	}
	/* power-of-two sizes are naturally aligned, as bios want */
	if (!rb->spare)
		rb->buf = kvmalloc(roundup_pow_of_two(max_t(size_t, rb->len, PAGE_SIZE)),
				   GFP_KERNEL | __GFP_NOWARN);
	return rb->buf ? 0 : -ENOMEM;
}

/* Point @rb at the kept compressed bytes of @chunk, in @kept. */
static void raw_buf_kept(const struct ext4dec_inode *ei, u32 chunk,
			 struct ext4dec_cached *kept, struct raw_buf *rb)
{
	rb->buf = ext4dec_cached_bytes(kept);
	rb->pos = szip_chunk_offset(&ei->sf, chunk);
	rb->len = szip_chunk_clen(&ei->sf, chunk);
	rb->spare = false;
	rb->kept = kept;
}

static void raw_buf_free(struct raw_buf *rb)
{
	if (rb->kept)
		ext4dec_cache_free(rb->kept);
	else if (rb->spare)
		raw_spare_put(rb->buf);
	else
		kvfree(rb->buf);
}

/* Where raw byte @pos is in @rb */
static const u8 *raw_buf_at(const struct raw_buf *rb, loff_t pos)
{
	return rb->buf + (pos - rb->pos);
}

/*
 * Start reading @rb; @rr->done() runs once all of it is read.  The caller
 * holds one count of @rr->pending, to drop with raw_read_put() after this
 * returns.
 */
static void raw_start(struct ext4dec_inode *ei, struct raw_buf *rb,
		      struct raw_read *rr)
{
	unsigned int bits = ei->inode->i_blkbits;
	loff_t pos = rb->pos;
	size_t left = rb->len;
	u8 *buf = rb->buf;
	struct blk_plug plug;

	if (is_vmalloc_addr(buf))
		flush_kernel_vmap_range(buf, left);
	blk_start_plug(&plug);
	while (left) {
		u64 lblk = pos >> bits;
		u32 i = find_extent(ei, lblk);
		const struct ext4dec_extent *e;
		size_t n;

		if (i == ei->nr_extents) {
			rr->err = -EIO;
			break;
		}
		e = &ei->extents[i];
		n = min_t(u64, left, ((e->lblk + e->len) << bits) - pos);
		if (e->pblk)
			submit_range(ei, (((e->pblk + lblk - e->lblk) << bits) +
					  (pos & ((1 << bits) - 1))) >> SECTOR_SHIFT,
				     n, buf, rr);
		else
			memset(buf, 0, n);
		buf += n;
		pos += n;
		left -= n;
	}
	blk_finish_plug(&plug);
}

/* Once @rr is done (in any context): its error, with @rb made readable. */
static int raw_finish(struct raw_buf *rb, struct raw_read *rr)
{
	int err;

	if (rb->kept)
		return 0;	/* nothing was read */
	if (is_vmalloc_addr(rb->buf))
		invalidate_kernel_vmap_range(rb->buf, rb->len);
	err = rr->err ?: blk_status_to_errno(READ_ONCE(rr->status));
	if (!err)
		atomic64_add(rb->len, &ext4dec_stats.compressed_bytes);
	return err;
}

struct raw_sync {
	struct raw_read rr;
	struct completion done;
};

static void raw_sync_done(struct raw_read *rr)
{
	complete(&container_of(rr, struct raw_sync, rr)->done);
}

/* Read the blocks of @rb and wait for them. */
static int raw_read_sync(struct ext4dec_inode *ei, struct raw_buf *rb)
{
	struct raw_sync rs = {
		.rr = { .pending = ATOMIC_INIT(1), .done = raw_sync_done },
	};

	init_completion(&rs.done);
	raw_start(ei, rb, &rs.rr);
	raw_read_put(&rs.rr);
	wait_for_completion_io(&rs.done);
	return raw_finish(rb, &rs.rr);
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

/* Inflate @chunk from its compressed bytes @in into @out, with @ws's decoder. */
static int decode(struct ext4dec_inode *ei, struct ext4dec_ws *ws, u32 chunk,
		  const u8 *in, u8 *out)
{
	u32 clen = szip_chunk_clen(&ei->sf, chunk);
	enum szip_ret ret;

	ret = szip_decode_chunk(ws->dec, &ei->sf, chunk, in, clen, out);
	if (ret) {
		chunk_error(ei, chunk, szip_strerror(ret));
		return -EFSCORRUPTED;
	}
	atomic64_inc(&ext4dec_stats.chunks_inflated);
	atomic64_add(szip_chunk_ulen(&ei->sf.info, chunk),
		     &ext4dec_stats.uncompressed_bytes);
	return 0;
}

/* @folio holds its bytes: publish and unlock it. */
static void folio_done(struct folio *folio)
{
	flush_dcache_folio(folio);
	folio_mark_uptodate(folio);
	folio_unlock(folio);
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
	folio_done(folio);
}

/*
 * Inflate @chunk straight into its page-cache pages, through a temporary
 * kernel mapping of them, when @folio[0..] (before @end) starts with
 * exactly the chunk's pages as base pages: no copy from a workspace.
 * Return: the number of folios filled (or failed) and unlocked; 0 when
 * the chunk is to be inflated into @ws->out instead.
 */
static unsigned int inflate_in_place(struct ext4dec_inode *ei,
				     struct ext4dec_ws *ws, u32 chunk,
				     const u8 *in, struct folio **folio,
				     struct folio **end)
{
	struct page *pages[EXT4DEC_MAX_CHUNK / PAGE_SIZE];
	size_t ulen = szip_chunk_ulen(&ei->sf.info, chunk);
	unsigned int i, n = DIV_ROUND_UP(ulen, PAGE_SIZE);
	pgoff_t index = chunk_pos(ei, chunk) >> PAGE_SHIFT;
	u8 *dst;
	int err;

	if (n < 2 || n > ARRAY_SIZE(pages) || end - folio < n)
		return 0;
	/* folios past EOF in the chunk (a reader of the raw size): fill_folio() */
	if (end - folio > n && folio_pos(folio[n]) < chunk_pos(ei, chunk + 1))
		return 0;
	for (i = 0; i < n; i++) {
		if (folio_test_large(folio[i]) || folio[i]->index != index + i)
			return 0;
		pages[i] = folio_page(folio[i], 0);
	}
	dst = vm_map_ram(pages, n, NUMA_NO_NODE);
	if (!dst)
		return 0;
	err = decode(ei, ws, chunk, in, dst);
	if (!err)
		memset(dst + ulen, 0, n * PAGE_SIZE - ulen);
	/* where caches alias, write back what went through this mapping */
	flush_kernel_vmap_range(dst, n * PAGE_SIZE);
	vm_unmap_ram(dst, n);
	for (i = 0; i < n; i++) {
		if (err)
			folio_unlock(folio[i]);	/* not uptodate: read_folio() */
		else
			folio_done(folio[i]);
	}
	return n;
}

struct ra_req;

/**
 * struct ra_batch - chunks of a readahead request inflated together
 * @job: the inflate job, when a worker inflates the batch
 * @req: the request
 * @first: first chunk
 * @last: last chunk
 * @folio: index of the batch's first folio in @req->folios
 * @nr_folios: number of its folios (at least one)
 */
struct ra_batch {
	struct ext4dec_job job;
	struct ra_req *req;
	u32 first;
	u32 last;
	unsigned int folio;
	unsigned int nr_folios;
};

/**
 * struct ra_req - a run of chunks read ahead with one read
 * @rr: the read of the compressed bytes
 * @err: its outcome, once it is done
 * @left: batches not finished; the last one frees the request
 * @wait: when the readahead caller inflates the request itself, completed
 *	once the compressed bytes are in
 * @ei: the inode's state; the request holds a reference
 * @rb: the compressed bytes of all the chunks
 * @batch: the batches (kmalloc'ed)
 * @nr_batches: entries in @batch
 * @nr_folios: entries in @folios
 * @folios: the locked folios of the chunks, in order
 */
struct ra_req {
	struct raw_read rr;
	int err;
	atomic_t left;
	struct completion *wait;
	struct ext4dec_inode *ei;
	struct raw_buf rb;
	struct ra_batch *batch;
	unsigned int nr_batches;
	unsigned int nr_folios;
	struct folio *folios[];
};

static void req_free(struct ra_req *req)
{
	ext4dec_put(req->ei);
	raw_buf_free(&req->rb);
	kfree(req->batch);
	kfree(req);
}

/*
 * Inflate the chunks of @b with @ws and fill and unlock its folios; the
 * last batch of the request frees it.  The inode may go as soon as the
 * request's last folio is unlocked: nothing uses it after that.
 */
static void batch_finish(struct ra_batch *b, struct ext4dec_ws *ws)
{
	struct ra_req *req = b->req;
	struct ext4dec_inode *ei = req->ei;
	struct folio **folio = req->folios + b->folio;
	struct folio **end = folio + b->nr_folios;
	int err = req->err;
	u32 c;

	for (c = b->first; c <= b->last && folio < end; c++) {
		const u8 *in = raw_buf_at(&req->rb, szip_chunk_offset(&ei->sf, c));
		bool ok;

		if (folio_pos(*folio) >= chunk_pos(ei, c + 1))
			continue;	/* no folio of @c left to fill */
		if (err) {
			/* -EAGAIN: read_folio() reads the chunk again, alone */
			if (err != -EAGAIN)
				chunk_error(ei, c, "cannot read compressed data");
		} else {
			unsigned int n = inflate_in_place(ei, ws, c, in, folio, end);

			if (n) {
				folio += n;
				continue;
			}
		}
		ok = !err && !decode(ei, ws, c, in, ws->out);
		for (; folio < end && folio_pos(*folio) < chunk_pos(ei, c + 1); folio++)
			fill_folio(ei, *folio, ok ? ws->out : NULL, c);
	}
	if (atomic_dec_and_test(&req->left))
		req_free(req);
}

static void batch_work(struct ext4dec_job *job, struct ext4dec_ws *ws)
{
	/* as in readahead: no reclaim into filesystems while folios are locked */
	unsigned int nofs = memalloc_nofs_save();

	batch_finish(container_of(job, struct ra_batch, job), ws);
	memalloc_nofs_restore(nofs);
}

static void req_io_done(struct raw_read *rr)
{
	struct ra_req *req = container_of(rr, struct ra_req, rr);
	unsigned int i, n = req->nr_batches;

	req->err = raw_finish(&req->rb, rr);
	if (req->wait) {
		complete(req->wait);
		return;
	}
	/* @req may be freed once its last batch is queued */
	for (i = 0; i < n; i++)
		ext4dec_queue(&req->batch[i].job);
}

/*
 * The last chunk of a run starting at @first, at most @limit, within
 * REQ_BYTES of compressed bytes.
 */
static u32 req_end(const struct ext4dec_inode *ei, u32 first, u32 limit)
{
	u64 start = szip_chunk_offset(&ei->sf, first);
	u32 last = first;

	while (last < limit &&
	       szip_chunk_offset(&ei->sf, last + 1) +
	       szip_chunk_clen(&ei->sf, last + 1) - start <= REQ_BYTES)
		last++;
	return last;
}

/* Whether any page of @chunk is in the page cache */
static bool chunk_has_pages(struct ext4dec_inode *ei, u32 chunk)
{
	return filemap_range_has_page(ei->inode->i_mapping, chunk_pos(ei, chunk),
				      chunk_pos(ei, chunk + 1) - 1);
}

/*
 * The last chunk whose compressed bytes a miss of @chunk alone reads: the
 * chunks after it within cache_ahead_kb of compressed bytes (at most
 * REQ_BYTES and half of cache_kb), up to the first one that has pages in
 * the page cache or bytes kept already.
 */
static u32 ahead_end(struct ext4dec_inode *ei, u32 chunk)
{
	/* no more than a readahead request, half the cache */
	u64 ahead = min3((u64)READ_ONCE(ext4dec_cache_ahead_kb) << 10,
			 (u64)REQ_BYTES, (u64)READ_ONCE(ext4dec_cache_kb) << 9);
	u64 limit = szip_chunk_offset(&ei->sf, chunk) +
		    szip_chunk_clen(&ei->sf, chunk) + ahead;
	u32 last = chunk;

	while (last + 1 < ei->sf.info.nr_chunks &&
	       szip_chunk_offset(&ei->sf, last + 1) +
	       szip_chunk_clen(&ei->sf, last + 1) <= limit &&
	       !xa_load(&ei->cache, last + 1) && !chunk_has_pages(ei, last + 1))
		last++;
	return last;
}

/*
 * Keep the compressed bytes of chunks @first to @last, which @req read
 * after its own chunks, for those still absent from the page cache.  If
 * the read failed, the request's own chunk may be sound: its folios are
 * left to read_folio(), which reads the chunk alone and reports it if it
 * fails, and the inode stops reading ahead for a while
 * (ext4dec_cache_failed()).
 */
static void keep_ahead(struct ra_req *req, u32 first, u32 last)
{
	struct ext4dec_inode *ei = req->ei;
	u32 c;

	if (req->err) {
		req->err = -EAGAIN;
		ext4dec_cache_failed(ei);
		return;
	}
	for (c = first; c <= last; c++) {
		if (!chunk_has_pages(ei, c))
			ext4dec_cache_add(ei, c, raw_buf_at(&req->rb,
							    szip_chunk_offset(&ei->sf, c)));
	}
}

/*
 * Allocate a request for chunks @first to @last, take their folios from
 * @rac, starting with *@folio (the next one is left in *@folio), cut it
 * into batches of at most @per chunks and start reading the compressed
 * bytes of chunks @first to @ahead, unless @kept holds them (then @first
 * is @last is @ahead, and the request owns @kept).  NULL without memory,
 * *@folio untouched, @kept freed.
 */
static struct ra_req *req_start(struct ext4dec_inode *ei,
				struct readahead_control *rac,
				struct folio **folio, u32 first, u32 last,
				u32 ahead, struct ext4dec_cached *kept,
				u32 per, struct completion *wait)
{
	unsigned int max = DIV_ROUND_UP((last - first + 1) * ei->sf.info.chunk_size,
					PAGE_SIZE);
	loff_t raw = szip_chunk_offset(&ei->sf, first);
	struct ra_batch *b = NULL;
	struct ra_req *req;

	req = kmalloc(struct_size(req, folios, max), GFP_KERNEL | __GFP_NOWARN);
	if (!req)
		goto nomem;
	req->batch = kmalloc_array(DIV_ROUND_UP(last - first + 1, per),
				   sizeof(*req->batch), GFP_KERNEL | __GFP_NOWARN);
	if (!req->batch)
		goto nomem_req;
	if (kept) {
		raw_buf_kept(ei, first, kept, &req->rb);
	} else {
		if (raw_buf_alloc(ei, raw, szip_chunk_offset(&ei->sf, ahead) +
				  szip_chunk_clen(&ei->sf, ahead) - raw, true,
				  &req->rb))
			goto nomem_req;
		/* chunks inflated from bytes read again keep none */
		ext4dec_cache_drop(ei, first, last);
	}
	kref_get(&ei->ref);
	req->ei = ei;
	req->wait = wait;
	req->rr = (struct raw_read){ .pending = ATOMIC_INIT(1),
				     .done = req_io_done };
	req->nr_folios = 0;
	req->nr_batches = 0;
	while (*folio && folio_pos(*folio) < chunk_pos(ei, last + 1) &&
	       req->nr_folios < max) {
		u32 c = folio_pos(*folio) / ei->sf.info.chunk_size;

		if (!b || c > b->last) {
			b = &req->batch[req->nr_batches++];
			b->job.fn = batch_work;
			b->req = req;
			b->first = c;
			b->last = min(c + per - 1, last);
			b->folio = req->nr_folios;
			b->nr_folios = 0;
		}
		b->nr_folios++;
		req->folios[req->nr_folios++] = *folio;
		*folio = readahead_folio(rac);
	}
	atomic_set(&req->left, req->nr_batches);
	if (!kept)
		raw_start(ei, &req->rb, &req->rr);
	return req;

nomem_req:
	kfree(req->batch);
	kfree(req);
nomem:
	ext4dec_cache_free(kept);
	return NULL;
}

/*
 * Marks the readahead state of a fault's read-around: ext4dec_readahead()
 * leaves all of it to the workers, even a single chunk, since nobody
 * waits for it.  prev_pos is the ondemand algorithm's; page_cache_ra_unbounded()
 * neither reads nor changes it.
 */
#define FAULT_AROUND_POS	((loff_t)-2)

static bool ra_fault_around(const struct readahead_control *rac)
{
	return rac->ra && rac->ra->prev_pos == FAULT_AROUND_POS;
}

/*
 * Read ahead whole chunks.  The compressed bytes of the request are read
 * at once (in runs of at most REQ_BYTES); a request of several chunks is
 * cut into batches, one per worker, which the workers inflate when the
 * bytes are in, while the caller goes on (and starts the next readahead).
 * A single chunk, which a reader is most likely waiting for, is inflated
 * here, as everything is without workers.
 */
static void ext4dec_readahead(struct readahead_control *rac)
{
	struct ext4dec_inode *ei = ext4dec_get(rac->mapping->host);
	unsigned int nofs, workers = ext4dec_nr_workers();
	u32 csize, req_first, req_last, per;
	struct folio *folio;
	loff_t start, end;
	bool in_caller;

	if (!ei)
		return;		/* the caller drops the folios left */
	csize = ei->sf.info.chunk_size;

	/* whole chunks (of any multiple of 4 KiB), so each is inflated once */
	start = rounddown(readahead_pos(rac), csize);
	end = min_t(loff_t, roundup(readahead_pos(rac) + readahead_length(rac), csize),
		    round_up(ei->sf.info.size, PAGE_SIZE));
	if (end > start)
		readahead_expand(rac, start, end - start);
	if (!readahead_count(rac))
		goto out;

	/* chunks per batch: the request shared among the workers */
	req_first = readahead_pos(rac) / csize;
	req_last = min_t(u64, (readahead_pos(rac) + readahead_length(rac) - 1) / csize,
			 ei->sf.info.nr_chunks - 1);
	per = DIV_ROUND_UP(req_last - req_first + 1, max(workers, 1U));
	per = clamp_t(u32, per, 1, max(BATCH_UBYTES / csize, 1U));
	/* a fault's read-around: nobody waits for it */
	in_caller = !workers || (req_last <= req_first && !ra_fault_around(rac));

	nofs = memalloc_nofs_save();
	folio = readahead_folio(rac);
	while (folio) {
		u32 first = folio_pos(folio) / csize;
		DECLARE_COMPLETION_ONSTACK(done);
		struct ext4dec_cached *kept = NULL;
		struct ext4dec_ws *ws;
		u32 last, ahead;
		struct ra_req *req;
		unsigned int i, n;

		if (folio_pos(folio) >= ei->sf.info.size) {
			/* past EOF: a reader that sampled the raw size */
			folio_unlock(folio);
			folio = readahead_folio(rac);
			continue;
		}
		last = req_end(ei, first, req_last);
		ahead = last;
		/* a miss of one chunk: bytes kept by an earlier miss, or keep */
		if (in_caller && last == first) {
			kept = ext4dec_cache_take(ei, first);
			if (!kept && ext4dec_cache_ahead(ei))
				ahead = ahead_end(ei, first);
		}
		req = req_start(ei, rac, &folio, first, last, ahead, kept, per,
				in_caller ? &done : NULL);
		if (!req) {
			/*
			 * Out of memory is no chunk error: readahead is
			 * opportunistic, read_folio() retries the folios left
			 * not uptodate.
			 */
			folio_unlock(folio);
			folio = readahead_folio(rac);
			continue;
		}
		raw_read_put(&req->rr);
		if (!in_caller)
			continue;
		wait_for_completion_io(&done);
		if (ahead > last)
			keep_ahead(req, last + 1, ahead);
		ws = ext4dec_ws_get();
		/* the last batch frees the request */
		for (i = 0, n = req->nr_batches; i < n; i++)
			batch_finish(&req->batch[i], ws);
		ext4dec_ws_put(ws);
	}
	memalloc_nofs_restore(nofs);
out:
	ext4dec_put(ei);
}

/*
 * Read ahead the pages of [@start, @end) of the file that are not cached,
 * with a readahead state of its own (the open file's is the read path's).
 */
static void read_range(struct file *file, loff_t start, loff_t end, bool around)
{
	struct file_ra_state ra = { .prev_pos = around ? FAULT_AROUND_POS : -1 };
	DEFINE_READAHEAD(ractl, file, &ra, file->f_mapping, start >> PAGE_SHIFT);

	if (start < end)
		page_cache_ra_unbounded(&ractl, DIV_ROUND_UP(end - start, PAGE_SIZE), 0);
}

/**
 * ext4dec_read_chunk() - bring the chunk holding a page into the page cache
 * @file: an open file of an active inode
 * @index: the page, before the end of the file
 * @around: also read ahead fault_around_kb after the chunk
 *
 * For a page fault that missed @index: reads and inflates the chunk that
 * holds it, in the caller, so the page is uptodate on return unless the
 * chunk failed or memory ran out (either way the fault finds it and
 * read_folio() reports the error).  A chunk none of whose pages is cached
 * is read ahead whole (ext4dec_readahead()); one with some pages cached
 * (left by reclaim) through read_folio(), which fills every absent page
 * of it with one inflation.  Then, if @around, the chunks in the next
 * fault_around_kb are read ahead: their I/O is started and the inflate
 * workers fill them while the caller goes on with its page.
 *
 * Context: process, may sleep; no mmap or VMA lock needs to be held.
 */
void ext4dec_read_chunk(struct file *file, pgoff_t index, bool around)
{
	struct address_space *mapping = file->f_mapping;
	struct ext4dec_inode *ei = ext4dec_get(mapping->host);
	loff_t start, end, size;
	struct folio *folio;
	u32 csize;

	if (!ei)
		return;
	csize = ei->sf.info.chunk_size;
	size = ei->sf.info.size;
	start = rounddown((loff_t)index << PAGE_SHIFT, csize);
	end = min_t(loff_t, start + csize, size);
	if (!filemap_range_has_page(mapping, start, end - 1)) {
		read_range(file, start, end, false);
	} else {
		folio = read_cache_folio(mapping, index, NULL, file);
		if (!IS_ERR(folio))
			folio_put(folio);
	}
	if (around && READ_ONCE(ext4dec_fault_around_kb))
		read_range(file, end,
			   min_t(loff_t, size,
				 end + roundup((loff_t)READ_ONCE(ext4dec_fault_around_kb) << 10,
					       csize)), true);
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
	struct ext4dec_cached *kept;
	struct ext4dec_ws *ws;
	struct raw_buf rb;
	unsigned int nofs;
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
		raw_buf_kept(ei, chunk, kept, &rb);
		err = 0;
	} else {
		err = raw_buf_alloc(ei, szip_chunk_offset(&ei->sf, chunk),
				    szip_chunk_clen(&ei->sf, chunk), false, &rb);
		if (!err) {
			err = raw_read_sync(ei, &rb);
			if (err)
				chunk_error(ei, chunk, "cannot read compressed data");
		}
	}
	if (err) {
		folio_unlock(folio);
		goto out;
	}
	ws = ext4dec_ws_get();
	err = decode(ei, ws, chunk,
		     raw_buf_at(&rb, szip_chunk_offset(&ei->sf, chunk)), ws->out);
	fill_folio(ei, folio, err ? NULL : ws->out, chunk);
	if (!err)
		fill_neighbours(ei, folio, ws->out, chunk);
	ext4dec_ws_put(ws);
out:
	raw_buf_free(&rb);
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
