// SPDX-License-Identifier: GPL-2.0
/*
 * Compressed bytes of chunks read ahead of a miss, kept for the next one.
 *
 * A program's start faults its libraries in one chunk at a time, in an
 * order that jumps around but keeps coming back near where it was.  On a
 * fast device, what such a start waits for is the number of synchronous
 * reads more than their size: each costs a round trip to the device.  So
 * a miss that reads one chunk (a page fault, a random read: a readahead
 * of a single chunk that the reader inflates) reads the compressed bytes
 * of the chunks after it in the same I/O, up to cache_ahead_kb, inflates
 * only its own chunk, and keeps the others' compressed bytes here.  A
 * later miss on one of those chunks (in readahead or read_folio()) takes
 * its bytes out and inflates them without I/O.  Reading ahead
 * continues while it pays: while at least one miss in eight of the file
 * finds its bytes kept (random reads over a big file stop it after a few
 * dozen misses; then one miss in AHEAD_PROBE reads ahead, to notice when
 * it pays again).
 *
 * Nothing is inflated that nobody asked for, and no chunk is cached twice:
 * bytes are kept only for chunks with no page in the page cache, and
 * leave this cache when their chunk is inflated (they are taken, or a
 * readahead that reads the chunk again drops them).  The cache holds at most
 * cache_kb of compressed bytes for all files together, oldest dropped
 * first; a shrinker gives it back under memory pressure; an inode's bytes
 * go when its state is released (deactivation, eviction, unload).
 *
 * Locking: ext4dec_cache_lock protects the LRU list, the byte count and every
 * inode's @cache xarray contents; it nests outside the xarray's own lock.
 * Entries are referenced from the xarray and the list, both under
 * ext4dec_cache_lock, and belong to whoever takes them out.  An entry's inode
 * state outlives it: the state's release empties the inode's xarray with
 * ext4dec_cache_drop() before the state is freed, after an RCU grace
 * period, which also waits for any shrinker or eviction that found the
 * xarray not yet empty.
 *
 * Memory: cache_kb bounds the bytes of the entries as allocated (their
 * kmalloc size), not the xarray's nodes.  Entries are not charged to a
 * memory cgroup: they are a global cache, like the page cache's
 * readahead of a file shared by every reader, and the shrinker is not
 * memcg-aware.  Lowering cache_kb takes effect as bytes are next kept.
 */
#include "ext4dec.h"

#include <linux/lockdep.h>
#include <linux/shrinker.h>
#include <linux/slab.h>

/**
 * struct ext4dec_cached - the compressed bytes of one chunk
 * @lru: entry in ext4dec_cache_lru, oldest first
 * @ei: the inode's state
 * @chunk: the chunk
 * @size: the entry's allocated size, counted against cache_kb
 * @data: the bytes, from the chunk's offset in the file
 */
struct ext4dec_cached {
	struct list_head lru;
	struct ext4dec_inode *ei;
	u32 chunk;
	u32 size;
	u8 data[];
};

/* Per inode, a score of recent misses: AHEAD_HIT for a hit, -1 otherwise */
#define AHEAD_HIT	7
#define AHEAD_START	32
#define AHEAD_MAX	64
#define AHEAD_PROBE	16

static DEFINE_SPINLOCK(ext4dec_cache_lock);
static LIST_HEAD(ext4dec_cache_lru);
static unsigned long ext4dec_cache_entries;
static struct shrinker *ext4dec_cache_shrinker;

/* Unlink @e from the cache (ext4dec_cache_lock held); the caller frees it. */
static void ext4dec_cache_unlink(struct ext4dec_cached *e)
{
	lockdep_assert_held(&ext4dec_cache_lock);
	xa_erase(&e->ei->cache, e->chunk);
	list_del(&e->lru);
	WRITE_ONCE(ext4dec_cache_entries, ext4dec_cache_entries - 1);
	atomic64_sub(e->size, &ext4dec_stats.cached_bytes);
}

static void ext4dec_cache_free_list(struct list_head *list)
{
	struct ext4dec_cached *e, *next;

	list_for_each_entry_safe(e, next, list, lru)
		kfree(e);
}

/**
 * ext4dec_cache_init_inode() - set up an inode's part of the cache
 * @ei: the inode's state, being prepared
 */
void ext4dec_cache_init_inode(struct ext4dec_inode *ei)
{
	xa_init(&ei->cache);
	atomic_set(&ei->ahead_score, AHEAD_START);
}

/* A miss of one chunk found its bytes kept, or not. */
static void ext4dec_cache_score(struct ext4dec_inode *ei, bool hit)
{
	int s = atomic_read(&ei->ahead_score);

	/* racing updates may lose one: it is an estimate */
	if (hit)
		atomic_set(&ei->ahead_score, min(s + AHEAD_HIT, AHEAD_MAX));
	else if (s > 0)
		atomic_set(&ei->ahead_score, s - 1);
}

/**
 * ext4dec_cache_failed() - a read ahead failed
 * @ei: the inode's state, referenced by the caller
 *
 * The failed bytes may be read again by every miss near them: stop reading
 * ahead until the kept bytes pay again.
 */
void ext4dec_cache_failed(struct ext4dec_inode *ei)
{
	atomic_set(&ei->ahead_score, 0);
}

/**
 * ext4dec_cache_ahead() - whether a miss should read ahead and keep
 * @ei: the inode's state, referenced by the caller
 *
 * Return: true while reading ahead pays for this inode (at least one miss
 * in eight finds its bytes kept), and for one miss in AHEAD_PROBE when it
 * does not.
 */
bool ext4dec_cache_ahead(struct ext4dec_inode *ei)
{
	return atomic_read(&ei->ahead_score) > 0 ||
	       !(atomic_inc_return(&ei->ahead_probe) % AHEAD_PROBE);
}

/**
 * ext4dec_cache_add() - keep the compressed bytes of a chunk
 * @ei: the inode's state, referenced by the caller
 * @chunk: a chunk none of whose pages is in the page cache
 * @bytes: its compressed bytes, szip_chunk_clen() of them
 *
 * Copies the bytes, unless they are kept already, the cache is disabled
 * or memory is short; drops the oldest bytes kept beyond cache_kb.
 *
 * Context: process, may sleep (GFP_KERNEL, in the caller's NOFS scope).
 */
void ext4dec_cache_add(struct ext4dec_inode *ei, u32 chunk, const u8 *bytes)
{
	u64 budget = (u64)READ_ONCE(ext4dec_cache_kb) << 10;
	u32 len = szip_chunk_clen(&ei->sf, chunk);
	struct ext4dec_cached *e;
	LIST_HEAD(dropped);
	size_t size;

	size = kmalloc_size_roundup(struct_size(e, data, len));

	if (size > budget || xa_load(&ei->cache, chunk))
		return;
	/* a cache: no effort to reclaim memory for it */
	e = kmalloc(size, GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN);
	if (!e)
		return;
	e->ei = ei;
	e->chunk = chunk;
	e->size = size;
	memcpy(e->data, bytes, len);

	spin_lock(&ext4dec_cache_lock);
	if (xa_insert(&ei->cache, chunk, e, GFP_NOWAIT | __GFP_NOWARN)) {
		/* kept meanwhile, or no memory for the index */
		spin_unlock(&ext4dec_cache_lock);
		kfree(e);
		return;
	}
	list_add_tail(&e->lru, &ext4dec_cache_lru);
	WRITE_ONCE(ext4dec_cache_entries, ext4dec_cache_entries + 1);
	atomic64_add(size, &ext4dec_stats.cached_bytes);
	while (atomic64_read(&ext4dec_stats.cached_bytes) > budget) {
		struct ext4dec_cached *old = list_first_entry(&ext4dec_cache_lru,
							      struct ext4dec_cached,
							      lru);

		ext4dec_cache_unlink(old);
		list_add(&old->lru, &dropped);
	}
	spin_unlock(&ext4dec_cache_lock);
	ext4dec_cache_free_list(&dropped);
}

/**
 * ext4dec_cache_take() - take the kept compressed bytes of a chunk
 * @ei: the inode's state, referenced by the caller
 * @chunk: a chunk that missed the page cache
 *
 * Counts a hit or a miss for ext4dec_cache_ahead().
 *
 * Context: process.
 * Return: the entry, now the caller's (ext4dec_cached_bytes() gives the
 * chunk's szip_chunk_clen() compressed bytes; free it with
 * ext4dec_cache_free()), or NULL if none is kept.
 */
struct ext4dec_cached *ext4dec_cache_take(struct ext4dec_inode *ei, u32 chunk)
{
	struct ext4dec_cached *e = NULL;

	if (!xa_empty(&ei->cache)) {
		spin_lock(&ext4dec_cache_lock);
		e = xa_load(&ei->cache, chunk);
		if (e)
			ext4dec_cache_unlink(e);
		spin_unlock(&ext4dec_cache_lock);
	}
	ext4dec_cache_score(ei, !!e);
	if (e)
		atomic64_inc(&ext4dec_stats.cache_hits);
	return e;
}

/**
 * ext4dec_cached_bytes() - the bytes of an entry
 * @e: an entry taken with ext4dec_cache_take()
 *
 * Return: its bytes, the compressed bytes of its chunk.
 */
u8 *ext4dec_cached_bytes(struct ext4dec_cached *e)
{
	return e->data;
}

/**
 * ext4dec_cache_free() - free an entry taken with ext4dec_cache_take()
 * @e: the entry, or NULL
 */
void ext4dec_cache_free(struct ext4dec_cached *e)
{
	kfree(e);
}

/**
 * ext4dec_cache_drop() - forget the kept bytes of a range of chunks
 * @ei: the inode's state
 * @first: first chunk
 * @last: last chunk
 *
 * For chunks about to be inflated from bytes read again (a readahead of
 * several chunks), and for the whole file when the state is released.
 *
 * Context: process.
 */
void ext4dec_cache_drop(struct ext4dec_inode *ei, u32 first, u32 last)
{
	struct ext4dec_cached *e;
	unsigned long index;
	LIST_HEAD(dropped);

	if (xa_empty(&ei->cache))
		return;
	spin_lock(&ext4dec_cache_lock);
	xa_for_each_range(&ei->cache, index, e, first, last) {
		ext4dec_cache_unlink(e);
		list_add(&e->lru, &dropped);
	}
	spin_unlock(&ext4dec_cache_lock);
	ext4dec_cache_free_list(&dropped);
}

static unsigned long ext4dec_cache_count(struct shrinker *s, struct shrink_control *sc)
{
	return READ_ONCE(ext4dec_cache_entries) ?: SHRINK_EMPTY;
}

static unsigned long ext4dec_cache_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed = 0;
	LIST_HEAD(dropped);

	spin_lock(&ext4dec_cache_lock);
	while (freed < sc->nr_to_scan && !list_empty(&ext4dec_cache_lru)) {
		struct ext4dec_cached *e = list_first_entry(&ext4dec_cache_lru,
							    struct ext4dec_cached,
							    lru);

		ext4dec_cache_unlink(e);
		list_add(&e->lru, &dropped);
		freed++;
	}
	spin_unlock(&ext4dec_cache_lock);
	ext4dec_cache_free_list(&dropped);
	return freed ?: SHRINK_STOP;
}

/**
 * ext4dec_cache_init() - register the cache's shrinker
 *
 * Return: 0 or -ENOMEM.
 */
int ext4dec_cache_init(void)
{
	ext4dec_cache_shrinker = ext4dec_shrinker_create(ext4dec_cache_count, ext4dec_cache_scan,
							 "ext4dec-cache");
	return ext4dec_cache_shrinker ? 0 : -ENOMEM;
}

/**
 * ext4dec_cache_exit() - unregister the shrinker
 *
 * At module exit, once every inode's state is released (the cache is
 * empty).
 */
void ext4dec_cache_exit(void)
{
	WARN_ON_ONCE(!list_empty(&ext4dec_cache_lru));
	ext4dec_shrinker_free(ext4dec_cache_shrinker);
}
