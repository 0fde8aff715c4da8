// SPDX-License-Identifier: GPL-2.0
/*
 * Raw block I/O: the compressed bytes of chunks, read from the device with
 * bios through the block map taken at activation (not through any page
 * cache), into buffers of whole device sectors.
 *
 * A read completes in any context (ext4dec_raw_read's @done runs from the
 * last bio's completion); ext4dec_raw_read_sync() waits for one.  Big
 * buffers for readahead are kept between requests (the spare buffers
 * below); the compressed bytes kept by cache.c can stand in for a read.
 * When no buffer can be allocated, read_folio() reads one chunk at a time
 * into the reserve (below), so that it never fails for lack of memory.
 */
#include "ext4dec.h"

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/vmalloc.h>

/**
 * ext4dec_raw_read_put() - drop a count of @rr->pending
 * @rr: the read; its @done runs when the last count is dropped
 */
void ext4dec_raw_read_put(struct ext4dec_raw_read *rr)
{
	if (atomic_dec_and_test(&rr->pending))
		rr->done(rr);
}

static void ext4dec_raw_end_io(struct bio *bio)
{
	struct ext4dec_raw_read *rr = bio->bi_private;

	if (bio->bi_status)
		WRITE_ONCE(rr->status, bio->bi_status);
	bio_put(bio);
	ext4dec_raw_read_put(rr);
}

static struct page *ext4dec_buf_page(const u8 *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

/* Submit reads of @len bytes at @sector of the device into @buf. */
static void ext4dec_submit_range(struct ext4dec_inode *ei, sector_t sector, size_t len,
				 u8 *buf, struct ext4dec_raw_read *rr)
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
			bio->bi_end_io = ext4dec_raw_end_io;
			bio->bi_private = rr;
		}
		if (bio_add_page(bio, ext4dec_buf_page(buf), n, offset_in_page(buf)) < n) {
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
static u32 ext4dec_find_extent(const struct ext4dec_inode *ei, u64 lblk)
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
 * inflating LZ4.  Up to EXT4DEC_RAW_SPARE_MAX are kept while reads go on,
 * none after EXT4DEC_RAW_SPARE_IDLE without one.  A request's bytes,
 * sector-aligned, fit in EXT4DEC_RAW_SPARE_BYTES.
 */
#define EXT4DEC_RAW_SPARE_BYTES	(EXT4DEC_RA_BYTES + 2 * PAGE_SIZE)
#define EXT4DEC_RAW_SPARE_MAX	4
#define EXT4DEC_RAW_SPARE_IDLE	(5 * HZ)

static DEFINE_SPINLOCK(ext4dec_raw_spare_lock);
static void *ext4dec_raw_spare[EXT4DEC_RAW_SPARE_MAX];
static unsigned int ext4dec_raw_spare_nr;

static void ext4dec_raw_spare_drain(struct work_struct *work)
{
	void *bufs[EXT4DEC_RAW_SPARE_MAX];
	unsigned int n;

	spin_lock(&ext4dec_raw_spare_lock);
	n = ext4dec_raw_spare_nr;
	memcpy(bufs, ext4dec_raw_spare, n * sizeof(*bufs));
	ext4dec_raw_spare_nr = 0;
	spin_unlock(&ext4dec_raw_spare_lock);
	while (n)
		vfree(bufs[--n]);
}

static DECLARE_DELAYED_WORK(ext4dec_raw_spare_work, ext4dec_raw_spare_drain);

/* A spare buffer, or NULL if there is none */
static void *ext4dec_raw_spare_get(void)
{
	void *buf = NULL;

	spin_lock(&ext4dec_raw_spare_lock);
	if (ext4dec_raw_spare_nr)
		buf = ext4dec_raw_spare[--ext4dec_raw_spare_nr];
	spin_unlock(&ext4dec_raw_spare_lock);
	return buf;
}

static void ext4dec_raw_spare_put(void *buf)
{
	spin_lock(&ext4dec_raw_spare_lock);
	if (ext4dec_raw_spare_nr < EXT4DEC_RAW_SPARE_MAX) {
		ext4dec_raw_spare[ext4dec_raw_spare_nr++] = buf;
		buf = NULL;
	}
	spin_unlock(&ext4dec_raw_spare_lock);
	vfree(buf);
	mod_delayed_work(system_wq, &ext4dec_raw_spare_work, EXT4DEC_RAW_SPARE_IDLE);
}

/* Set @rb to the sectors that hold raw bytes [@pos, @pos + @len), no buffer yet */
static void ext4dec_raw_buf_span(const struct ext4dec_inode *ei, loff_t pos, size_t len,
				 struct ext4dec_raw_buf *rb)
{
	unsigned int lbs = bdev_logical_block_size(ei->inode->i_sb->s_bdev);

	rb->pos = round_down(pos, lbs);
	rb->len = round_up(pos + len, lbs) - rb->pos;
	rb->buf = NULL;
	rb->spare = false;
	rb->kept = NULL;
}

/*
 * Allocate @rb for the sectors that hold raw bytes [@pos, @pos + @len).
 * If @spare and they fit, take a spare buffer, or make one to be kept
 * when they are many; a small read finding none allocates its own.
 * -ENOMEM is the caller's to handle: readahead leaves its folios to
 * read_folio(), which reads through the reserve.
 */
int ext4dec_raw_buf_alloc(const struct ext4dec_inode *ei, loff_t pos, size_t len,
			  bool spare, struct ext4dec_raw_buf *rb)
{
	ext4dec_raw_buf_span(ei, pos, len, rb);
	rb->spare = spare && rb->len <= EXT4DEC_RAW_SPARE_BYTES;
	if (rb->spare) {
		rb->buf = ext4dec_raw_spare_get();
		if (!rb->buf && rb->len > EXT4DEC_RAW_SPARE_BYTES / 8)
			rb->buf = __vmalloc(EXT4DEC_RAW_SPARE_BYTES, GFP_KERNEL | __GFP_NOWARN);
		rb->spare = !!rb->buf;
	}
	/* power-of-two sizes are naturally aligned, as bios want */
	if (!rb->spare)
		rb->buf = kvmalloc(roundup_pow_of_two(max_t(size_t, rb->len, PAGE_SIZE)),
				   GFP_KERNEL | __GFP_NOWARN);
	return rb->buf ? 0 : -ENOMEM;
}

/*
 * The reserve: a buffer for the compressed bytes of any one chunk, made
 * at load, for read_folio() when none can be allocated.  Without it, a
 * page fault that found no memory for them would kill its process with
 * SIGBUS (a compressed library refaulted under memory pressure), and a
 * read would fail with ENOMEM.  With it they get through, one chunk at a
 * time and one reader at a time: ext4dec_raw_reserve_lock is held across
 * the read of each chunk into the reserve and its inflation.  A chunk's
 * sectors fit unless the device's logical blocks are larger than a page.
 */
#define EXT4DEC_RAW_RESERVE_BYTES	(EXT4DEC_MAX_CLEN + 2 * PAGE_SIZE)

/* one user of the reserve at a time */
DEFINE_MUTEX(ext4dec_raw_reserve_lock);
static u8 *ext4dec_raw_reserve;

/**
 * ext4dec_raw_init() - allocate the reserve
 *
 * Return: 0 or -ENOMEM.
 */
int ext4dec_raw_init(void)
{
	ext4dec_raw_reserve = vmalloc(EXT4DEC_RAW_RESERVE_BYTES);
	return ext4dec_raw_reserve ? 0 : -ENOMEM;
}

/**
 * ext4dec_raw_exit() - free the spare readahead buffers and the reserve
 *
 * At module exit, once no read can be in flight.
 */
void ext4dec_raw_exit(void)
{
	cancel_delayed_work_sync(&ext4dec_raw_spare_work);
	ext4dec_raw_spare_drain(NULL);
	vfree(ext4dec_raw_reserve);
	ext4dec_raw_reserve = NULL;
}

/**
 * ext4dec_raw_read_reserve() - read a chunk's compressed bytes into the
 *	reserve
 * @ei: the inode's state
 * @chunk: the chunk
 * @rb: set to the reserve, which holds the chunk's bytes on success;
 *	not to be freed
 *
 * For read_folio() when ext4dec_raw_buf_alloc() finds no memory: this
 * allocates nothing but bios, which the block layer's mempools guarantee.
 *
 * Context: process, may sleep; ext4dec_raw_reserve_lock held until the
 * bytes are inflated.
 * Return: 0; the error of the read (the chunk is not reported); or
 * -ENOMEM if the chunk's sectors do not fit.
 */
int ext4dec_raw_read_reserve(struct ext4dec_inode *ei, u32 chunk,
			     struct ext4dec_raw_buf *rb)
{
	lockdep_assert_held(&ext4dec_raw_reserve_lock);
	ext4dec_raw_buf_span(ei, szip_chunk_offset(&ei->sf, chunk),
			     szip_chunk_clen(&ei->sf, chunk), rb);
	if (rb->len > EXT4DEC_RAW_RESERVE_BYTES)
		return -ENOMEM;
	rb->buf = ext4dec_raw_reserve;
	return ext4dec_raw_read_sync(ei, rb);
}

/* Point @rb at the kept compressed bytes of @chunk, in @kept. */
void ext4dec_raw_buf_kept(const struct ext4dec_inode *ei, u32 chunk,
			  struct ext4dec_cached *kept, struct ext4dec_raw_buf *rb)
{
	rb->buf = ext4dec_cached_bytes(kept);
	rb->pos = szip_chunk_offset(&ei->sf, chunk);
	rb->len = szip_chunk_clen(&ei->sf, chunk);
	rb->spare = false;
	rb->kept = kept;
}

/* Free @rb, whichever kind of buffer it is. */
void ext4dec_raw_buf_free(struct ext4dec_raw_buf *rb)
{
	if (rb->kept)
		ext4dec_cache_free(rb->kept);
	else if (rb->spare)
		ext4dec_raw_spare_put(rb->buf);
	else
		kvfree(rb->buf);
}

/*
 * Start reading @rb; @rr->done() runs once all of it is read.  The caller
 * holds one count of @rr->pending, to drop with ext4dec_raw_read_put()
 * after this returns.
 */
void ext4dec_raw_start(struct ext4dec_inode *ei, struct ext4dec_raw_buf *rb,
		       struct ext4dec_raw_read *rr)
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
		u32 i = ext4dec_find_extent(ei, lblk);
		const struct ext4dec_extent *e;
		size_t n;

		if (i == ei->nr_extents) {
			rr->err = -EIO;
			break;
		}
		e = &ei->extents[i];
		n = min_t(u64, left, ((e->lblk + e->len) << bits) - pos);
		if (e->pblk) {
			sector_t sector = (((e->pblk + lblk - e->lblk) << bits) +
					   (pos & ((1 << bits) - 1))) >> SECTOR_SHIFT;

			ext4dec_submit_range(ei, sector, n, buf, rr);
		} else {
			memset(buf, 0, n);
		}
		buf += n;
		pos += n;
		left -= n;
	}
	blk_finish_plug(&plug);
}

/* Once @rr is done (in any context): its error, with @rb made readable. */
int ext4dec_raw_finish(struct ext4dec_raw_buf *rb, struct ext4dec_raw_read *rr)
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

struct ext4dec_raw_sync {
	struct ext4dec_raw_read rr;
	struct completion done;
};

static void ext4dec_raw_sync_done(struct ext4dec_raw_read *rr)
{
	complete(&container_of(rr, struct ext4dec_raw_sync, rr)->done);
}

/* Read the blocks of @rb and wait for them. */
int ext4dec_raw_read_sync(struct ext4dec_inode *ei, struct ext4dec_raw_buf *rb)
{
	struct ext4dec_raw_sync rs = {
		.rr = { .pending = ATOMIC_INIT(1), .done = ext4dec_raw_sync_done },
	};

	init_completion(&rs.done);
	ext4dec_raw_start(ei, rb, &rs.rr);
	ext4dec_raw_read_put(&rs.rr);
	wait_for_completion_io(&rs.done);
	return ext4dec_raw_finish(rb, &rs.rr);
}

