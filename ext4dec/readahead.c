// SPDX-License-Identifier: GPL-2.0
/*
 * Readahead of active inodes, and the read of one chunk for a page fault.
 *
 * ext4dec_readahead() first grows the request to whole chunks, then cuts
 * it into batches of chunks and reads the compressed bytes of each at once
 * (raw.c).  Each chunk is inflated once, filling all of its folios
 * (inflate.c).  The chunks a reading task waits for (those of its read()
 * from a miss where it is, noted by ext4dec_reader_start(), and a single
 * chunk read ahead alone) are inflated by that task, charged to it and
 * to its cgroup.  The rest, which nobody waits for yet (the window ahead
 * of the reader, a fault's read-around), is inflated by the inflate
 * workers (workers.c) once its compressed bytes are in, while the reader
 * goes on and the next batches' I/O is in flight; with the
 * "reader_inflates" parameter, by the reading task too.  A miss of a
 * single chunk may read the compressed bytes of the next chunks for
 * cache.c.  Running out of memory for the compressed bytes is no chunk
 * error: readahead leaves the folios to read_folio(), which gets through
 * without (aops.c).
 *
 * Context: process, called with folios locked, possibly under the mapping's
 * invalidate lock; allocations are GFP_NOFS through memalloc_nofs_save().
 * A batch holds its folios locked and a reference on the inode's state
 * until a worker is done with it; truncation, deactivation and eviction
 * wait for those folio locks.
 */
#include "ext4dec.h"

#include <linux/hash.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>

/* Uncompressed bytes inflated by one worker at a time, at most */
#define BATCH_UBYTES	SZ_256K

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
	struct ext4dec_raw_read rr;
	int err;
	atomic_t left;
	struct completion *wait;
	struct ext4dec_inode *ei;
	struct ext4dec_raw_buf rb;
	struct ra_batch *batch;
	unsigned int nr_batches;
	unsigned int nr_folios;
	struct folio *folios[];
};

static void ext4dec_ra_req_free(struct ra_req *req)
{
	ext4dec_put(req->ei);
	ext4dec_raw_buf_free(&req->rb);
	kfree(req->batch);
	kfree(req);
}

/*
 * Inflate the chunks of @b with @ws and fill and unlock its folios; the
 * last batch of the request frees it.  The inode may go as soon as the
 * request's last folio is unlocked: nothing uses it after that.
 * Return: the number of chunks inflated or failed.
 */
static unsigned int ext4dec_ra_batch_finish(struct ra_batch *b, struct ext4dec_ws *ws)
{
	struct ra_req *req = b->req;
	struct ext4dec_inode *ei = req->ei;
	struct ext4dec_fill f;
	unsigned int done = 0;
	int err = req->err;
	u32 c;

	ext4dec_fill_init(&f, req->folios + b->folio, b->nr_folios);
	for (c = b->first; c <= b->last && f.folio < f.end; c++) {
		const u8 *in = ext4dec_raw_buf_at(&req->rb, szip_chunk_offset(&ei->sf, c));

		if (folio_pos(*f.folio) >= ext4dec_chunk_pos(ei, c + 1))
			continue;	/* no folio of @c left to fill */
		done++;
		if (err) {
			/* -EAGAIN: read_folio() reads the chunk again, alone */
			if (err != -EAGAIN)
				ext4dec_chunk_error(ei, c, "cannot read compressed data");
			ext4dec_fill_chunk(ei, c, NULL, &f);
		} else if (!ext4dec_inflate_in_place(ei, ws, c, in, &f)) {
			bool ok = !ext4dec_decode_chunk(ei, ws, c, in, ws->out);

			ext4dec_fill_chunk(ei, c, ok ? ws->out : NULL, &f);
		}
	}
	if (atomic_dec_and_test(&req->left))
		ext4dec_ra_req_free(req);
	return done;
}

static void ext4dec_ra_batch_work(struct ext4dec_job *job, struct ext4dec_ws *ws)
{
	struct ra_batch *b = container_of(job, struct ra_batch, job);
	/* as in readahead: no reclaim into filesystems while folios are locked */
	unsigned int nofs = memalloc_nofs_save();

	atomic64_add(ext4dec_ra_batch_finish(b, ws), &ext4dec_stats.worker_chunks);
	memalloc_nofs_restore(nofs);
}

static void ext4dec_ra_io_done(struct ext4dec_raw_read *rr)
{
	struct ra_req *req = container_of(rr, struct ra_req, rr);
	unsigned int i, n = req->nr_batches;

	req->err = ext4dec_raw_finish(&req->rb, rr);
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
 * EXT4DEC_RA_BYTES of compressed bytes.
 */
static u32 ext4dec_ra_req_end(const struct ext4dec_inode *ei, u32 first, u32 limit)
{
	u64 start = szip_chunk_offset(&ei->sf, first);
	u32 last = first;

	while (last < limit &&
	       szip_chunk_offset(&ei->sf, last + 1) +
	       szip_chunk_clen(&ei->sf, last + 1) - start <= EXT4DEC_RA_BYTES)
		last++;
	return last;
}

/* Whether any page of @chunk is in the page cache */
static bool ext4dec_chunk_has_pages(struct ext4dec_inode *ei, u32 chunk)
{
	return filemap_range_has_page(ei->inode->i_mapping, ext4dec_chunk_pos(ei, chunk),
				      ext4dec_chunk_pos(ei, chunk + 1) - 1);
}

/*
 * The last chunk whose compressed bytes a miss of @chunk alone reads: the
 * chunks after it within cache_ahead_kb of compressed bytes (at most
 * EXT4DEC_RA_BYTES and half of cache_kb), up to the first one that has
 * pages in the page cache or bytes kept already.
 */
static u32 ext4dec_ra_ahead_end(struct ext4dec_inode *ei, u32 chunk)
{
	/* no more than a readahead request, half the cache */
	u64 ahead = min3((u64)READ_ONCE(ext4dec_cache_ahead_kb) << 10,
			 (u64)EXT4DEC_RA_BYTES, (u64)READ_ONCE(ext4dec_cache_kb) << 9);
	u64 limit = szip_chunk_offset(&ei->sf, chunk) +
		    szip_chunk_clen(&ei->sf, chunk) + ahead;
	u32 last = chunk;

	while (last + 1 < ei->sf.info.nr_chunks &&
	       szip_chunk_offset(&ei->sf, last + 1) +
	       szip_chunk_clen(&ei->sf, last + 1) <= limit &&
	       !xa_load(&ei->cache, last + 1) && !ext4dec_chunk_has_pages(ei, last + 1))
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
static void ext4dec_ra_keep_ahead(struct ra_req *req, u32 first, u32 last)
{
	struct ext4dec_inode *ei = req->ei;
	u32 c;

	if (req->err) {
		req->err = -EAGAIN;
		ext4dec_cache_failed(ei);
		return;
	}
	for (c = first; c <= last; c++) {
		if (!ext4dec_chunk_has_pages(ei, c))
			ext4dec_cache_add(ei, c, ext4dec_raw_buf_at(&req->rb,
								    szip_chunk_offset(&ei->sf, c)));
	}
}

/*
 * Allocate a request for chunks @first to @last, take their folios from
 * @rac, starting with *@folio (the next one is left in *@folio), cut it
 * into batches of at most @per chunks and start reading the compressed
 * bytes of chunks @first to @ahead, unless @kept holds them (then @first
 * is @last is @ahead, and the request owns @kept).  A folio that goes on
 * past @last takes the request, and its batch, to the folio's last chunk.
 * NULL without memory: the folios taken are unlocked, not uptodate, and
 * @kept is freed.
 */
static struct ra_req *ext4dec_ra_req_start(struct ext4dec_inode *ei,
					   struct readahead_control *rac,
					   struct folio **folio, u32 first, u32 last,
					   u32 ahead, struct ext4dec_cached *kept,
					   u32 per, struct completion *wait)
{
	/* every folio starts in the chunks, at a page of its own */
	size_t max_folios = DIV_ROUND_UP((u64)(last - first + 1) * ei->sf.info.chunk_size,
					 PAGE_SIZE);
	loff_t raw = szip_chunk_offset(&ei->sf, first);
	loff_t stop = min_t(loff_t, ext4dec_chunk_pos(ei, last + 1), ei->sf.info.size);
	struct ra_batch *b = NULL;
	struct ra_req *req;
	unsigned int i;

	req = kmalloc(struct_size(req, folios, max_folios), GFP_KERNEL | __GFP_NOWARN);
	if (!req)
		goto nomem;
	req->batch = kmalloc_array(DIV_ROUND_UP(last - first + 1, per),
				   sizeof(*req->batch), GFP_KERNEL | __GFP_NOWARN);
	if (!req->batch)
		goto nomem_req;
	req->nr_folios = 0;
	req->nr_batches = 0;
	while (*folio && folio_pos(*folio) < stop && req->nr_folios < max_folios) {
		u32 c = folio_pos(*folio) / ei->sf.info.chunk_size;

		if (!b || c > b->last) {
			b = &req->batch[req->nr_batches++];
			b->job.fn = ext4dec_ra_batch_work;
			b->req = req;
			b->first = c;
			b->last = min(c + per - 1, last);
			b->folio = req->nr_folios;
			b->nr_folios = 0;
		}
		b->last = max(b->last, ext4dec_folio_last_chunk(ei, *folio));
		b->nr_folios++;
		req->folios[req->nr_folios++] = *folio;
		*folio = readahead_folio(rac);
	}
	if (WARN_ON_ONCE(!b))
		goto no_folio;
	last = max(last, b->last);
	if (kept && last > first) {
		/* a folio holds more than the kept chunk: read them all */
		ext4dec_cache_free(kept);
		kept = NULL;
	}
	if (kept) {
		ext4dec_raw_buf_kept(ei, first, kept, &req->rb);
	} else {
		ahead = max(ahead, last);
		if (ext4dec_raw_buf_alloc(ei, raw, szip_chunk_offset(&ei->sf, ahead) +
					  szip_chunk_clen(&ei->sf, ahead) - raw, true,
					  &req->rb))
			goto nomem_folios;
		/* chunks inflated from bytes read again keep none */
		ext4dec_cache_drop(ei, first, last);
	}
	ext4dec_hold(ei);
	req->ei = ei;
	req->wait = wait;
	req->rr = (struct ext4dec_raw_read){ .pending = ATOMIC_INIT(1),
				     .done = ext4dec_ra_io_done };
	atomic_set(&req->left, req->nr_batches);
	if (!kept)
		ext4dec_raw_start(ei, &req->rb, &req->rr);
	return req;

nomem_folios:
	/* not a chunk error: read_folio() retries them */
	for (i = 0; i < req->nr_folios; i++)
		folio_unlock(req->folios[i]);
	kfree(req->batch);
	kfree(req);
	ext4dec_cache_free(kept);
	return NULL;

no_folio:
	kfree(req->batch);
nomem_req:
	kfree(req);
nomem:
	/* the folio the request was to start with */
	folio_unlock(*folio);
	*folio = readahead_folio(rac);
	ext4dec_cache_free(kept);
	return NULL;
}

/*
 * The reading tasks: each read() or splice of an active inode notes, in
 * the slot of its task, where it is reading (its position, which moves as
 * it copies) and where it stops, so that the readahead it starts at a
 * miss where it is, a synchronous one, inflates itself what it is going
 * to wait for (a task's readahead runs in the task).  Readahead started
 * ahead of it (PG_readahead) is left to the workers.  A slot belongs to
 * the task that claimed it until it clears @task; only that task reads or
 * writes the rest, so a slot needs no lock.  A task whose slot is taken
 * by another (64 slots, hashed by task) reads as one that noted nothing:
 * its readahead goes to the workers, as before reads were noted.
 */
#define EXT4DEC_READER_BITS	6

struct ext4dec_reader {
	struct task_struct *task;
	const struct address_space *mapping;
	const loff_t *pos;
	pgoff_t last;
} ____cacheline_aligned_in_smp;

static struct ext4dec_reader ext4dec_readers[1 << EXT4DEC_READER_BITS];

static struct ext4dec_reader *ext4dec_reader_slot(void)
{
	return &ext4dec_readers[hash_ptr(current, EXT4DEC_READER_BITS)];
}

/**
 * ext4dec_reader_start() - note the pages a read() is going to wait for
 * @mapping: the active inode's mapping
 * @pos: the read's position, which the read moves on as it goes
 * @count: its length, not 0
 *
 * Context: process; the caller calls ext4dec_reader_end() before it
 * returns to user space.
 * Return: the slot to end, or NULL if another task holds it.
 */
struct ext4dec_reader *ext4dec_reader_start(struct address_space *mapping,
					    const loff_t *pos, size_t count)
{
	struct ext4dec_reader *r = ext4dec_reader_slot();

	if (cmpxchg(&r->task, NULL, current))
		return NULL;
	r->mapping = mapping;
	r->pos = pos;
	r->last = (*pos + count - 1) >> PAGE_SHIFT;
	return r;
}

/**
 * ext4dec_reader_end() - the read noted by ext4dec_reader_start() is over
 * @r: its slot, or NULL
 */
void ext4dec_reader_end(struct ext4dec_reader *r)
{
	if (!r)
		return;
	/* the slot's fields are the next owner's once @task is clear */
	smp_store_release(&r->task, NULL);
}

/*
 * The chunks of @ei in [*@first, *@last] that the task reading ahead
 * through @rac waits for: those of the request from the page where its
 * read is now to where it stops, if the request holds that page (a miss
 * there: synchronous readahead); false if none.  Read before the request
 * grows.
 */
static bool ext4dec_ra_waited(struct ext4dec_inode *ei, struct readahead_control *rac,
			      u32 *first, u32 *last)
{
	struct ext4dec_reader *r = ext4dec_reader_slot();
	pgoff_t start = readahead_index(rac);
	pgoff_t end = start + readahead_count(rac) - 1;
	pgoff_t at;

	if (READ_ONCE(r->task) != current || r->mapping != rac->mapping)
		return false;
	at = *r->pos >> PAGE_SHIFT;
	if (at < start || at > end || at > r->last)
		return false;
	*first = ((loff_t)at << PAGE_SHIFT) / ei->sf.info.chunk_size;
	*last = ((((loff_t)min(r->last, end) + 1) << PAGE_SHIFT) - 1) / ei->sf.info.chunk_size;
	return true;
}

/*
 * Inflate the batches of @req that hold chunks @first to @last (all of
 * them if @all) with a pool workspace, once its compressed bytes are in,
 * and leave the others to the workers.
 */
static void ext4dec_ra_req_finish(struct ra_req *req, bool all, u32 first, u32 last)
{
	unsigned int i, lo = req->nr_batches, hi = 0, n = req->nr_batches;
	struct ra_batch *batch = req->batch;
	struct ext4dec_ws *ws;

	for (i = 0; i < n; i++) {
		if (all || (batch[i].first <= last && batch[i].last >= first)) {
			lo = min(lo, i);
			hi = i;
		}
	}
	/* the caller's batches are a run; the others may go first */
	for (i = 0; i < n; i++) {
		if (i < lo || i > hi)
			ext4dec_queue(&batch[i].job);
	}
	if (lo > hi)
		return;
	ws = ext4dec_ws_get();
	/* the last batch frees the request: nothing of it is read after */
	for (i = lo; i <= hi; i++)
		ext4dec_ra_batch_finish(&batch[i], ws);
	ext4dec_ws_put(ws);
}

/*
 * Wait for the compressed bytes of @req, keep those of its chunks after
 * its own up to @ahead, then inflate its batches that hold chunks @first
 * to @last (all of them if @all) and leave the others to the workers.
 */
static void ext4dec_ra_req_wait(struct ra_req *req, struct completion *done, u32 ahead,
				bool all, u32 first, u32 last)
{
	/* where a folio took the request past its last chunk */
	u32 req_last = req->batch[req->nr_batches - 1].last;

	wait_for_completion_io(done);
	if (ahead > req_last)
		ext4dec_ra_keep_ahead(req, req_last + 1, ahead);
	ext4dec_ra_req_finish(req, all, first, last);
}

/*
 * Marks the readahead state of a fault's read-around: ext4dec_readahead()
 * leaves all of it to the workers, even a single chunk, since nobody
 * waits for it.  prev_pos is the ondemand algorithm's;
 * page_cache_ra_unbounded() neither reads nor changes it.
 */
#define FAULT_AROUND_POS	((loff_t)-2)

static bool ext4dec_ra_fault_around(const struct readahead_control *rac)
{
	return rac->ra && rac->ra->prev_pos == FAULT_AROUND_POS;
}

/**
 * ext4dec_readahead() - the address space operation: read ahead whole chunks
 * @rac: the readahead request
 *
 * The compressed bytes of the request are read at once (in runs of at
 * most EXT4DEC_RA_BYTES); a request of several chunks is cut into
 * batches, one per worker.  The batches of the first run that hold chunks
 * the calling task waits for (ext4dec_ra_waited()) are inflated here,
 * once the I/O of the other runs is started; so is a single chunk, which
 * a reader is most likely waiting for, and everything without workers or
 * with reader_inflates.  The workers inflate the others when their bytes
 * are in, while the caller goes on (and starts the next readahead).
 */
void ext4dec_readahead(struct readahead_control *rac)
{
	struct ext4dec_inode *ei = ext4dec_get(rac->mapping->host);
	unsigned int nofs, workers = ext4dec_nr_workers();
	u32 csize, req_first, req_last, per, wait_first = 0, wait_last = 0;
	DECLARE_COMPLETION_ONSTACK(own_done);
	struct ra_req *own = NULL;
	bool in_caller, waited;
	struct folio *folio;
	loff_t start, end;

	if (!ei)
		return;		/* the caller drops the folios left */
	csize = ei->sf.info.chunk_size;
	waited = ext4dec_ra_waited(ei, rac, &wait_first, &wait_last);

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
	in_caller = !workers || READ_ONCE(ext4dec_reader_inflates) ||
		    (req_last <= req_first && !ext4dec_ra_fault_around(rac));

	nofs = memalloc_nofs_save();
	folio = readahead_folio(rac);
	while (folio) {
		u32 first = folio_pos(folio) / csize;
		DECLARE_COMPLETION_ONSTACK(done);
		struct ext4dec_cached *kept = NULL;
		struct completion *wait = NULL;
		u32 last, ahead;
		struct ra_req *req;

		if (folio_pos(folio) >= ei->sf.info.size) {
			/* past EOF: a reader that sampled the raw size */
			folio_unlock(folio);
			folio = readahead_folio(rac);
			continue;
		}
		last = ext4dec_ra_req_end(ei, first, req_last);
		ahead = last;
		/* a miss of one chunk: bytes kept by an earlier miss, or keep */
		if (in_caller && last == first) {
			kept = ext4dec_cache_take(ei, first);
			if (!kept && ext4dec_cache_ahead(ei))
				ahead = ext4dec_ra_ahead_end(ei, first);
		}
		if (in_caller)
			wait = &done;
		else if (waited && !own && first <= wait_last && last >= wait_first)
			wait = &own_done;
		req = ext4dec_ra_req_start(ei, rac, &folio, first, last, ahead, kept, per,
					   wait);
		if (!req)
			continue;	/* out of memory: read_folio() retries */
		ext4dec_raw_read_put(&req->rr);
		if (wait == &own_done)
			own = req;	/* finished once the next runs' I/O is started */
		else if (wait)
			ext4dec_ra_req_wait(req, wait, ahead, true, 0, 0);
	}
	if (own)
		ext4dec_ra_req_wait(own, &own_done, 0, false, wait_first, wait_last);
	memalloc_nofs_restore(nofs);
out:
	ext4dec_put(ei);
}

/*
 * Read ahead the pages of [@start, @end) of the file that are not cached,
 * with a readahead state of its own (the open file's is the read path's).
 */
static void ext4dec_read_range(struct file *file, loff_t start, loff_t end, bool around)
{
	struct file_ra_state ra = { .prev_pos = around ? FAULT_AROUND_POS : -1 };
	DEFINE_READAHEAD(ractl, file, &ra, file->f_mapping, start >> PAGE_SHIFT);

	if (start < end)
		ext4dec_ra_unbounded(&ractl, DIV_ROUND_UP(end - start, PAGE_SIZE));
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
 * read_folio() reads it again, through the reserve without memory, or
 * reports the error).  A chunk none of whose pages is cached is read
 * ahead whole (ext4dec_readahead()); one with some pages cached (left by
 * reclaim) through read_folio(), which fills every absent page of it
 * with one inflation.  Then, if @around, the chunks in the next
 * fault_around_kb are read ahead: their I/O is started and the inflate
 * workers fill them while the caller goes on with its page.
 *
 * Context: process, may sleep; no mmap or VMA lock needs to be held, and
 * not the mapping's invalidate lock: the read takes it, shared.
 */
void ext4dec_read_chunk(struct file *file, pgoff_t index, bool around)
{
	struct address_space *mapping = file->f_mapping;
	struct ext4dec_inode *ei = ext4dec_get(mapping->host);
	loff_t start, end, size, around_bytes;
	struct folio *folio;
	u32 csize;

	if (!ei)
		return;
	csize = ei->sf.info.chunk_size;
	size = ei->sf.info.size;
	start = rounddown((loff_t)index << PAGE_SHIFT, csize);
	end = min_t(loff_t, start + csize, size);
	if (!filemap_range_has_page(mapping, start, end - 1)) {
		ext4dec_read_range(file, start, end, false);
	} else {
		folio = read_cache_folio(mapping, index, NULL, file);
		if (!IS_ERR(folio))
			folio_put(folio);
	}
	around_bytes = (loff_t)READ_ONCE(ext4dec_fault_around_kb) << 10;
	if (around && around_bytes)
		ext4dec_read_range(file, end,
				   min(size, end + roundup(around_bytes, csize)),
				   true);
	ext4dec_put(ei);
}

