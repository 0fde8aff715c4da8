// SPDX-License-Identifier: GPL-2.0
/*
 * Inflate workspaces: a decoder and a chunk-sized output buffer each.
 *
 * The pool of the tasks that inflate inline (read_folio(), small
 * readahead) grows on demand: a task that finds no free workspace makes
 * one, up to the "workspaces" parameter (default: one per possible CPU),
 * or, at the limit or out of memory, sleeps until one is given back.  One
 * workspace, made at load, is always there, so a reader always gets one
 * eventually.  After EXT4DEC_WS_IDLE without a workspace given back, all
 * the free ones but that one are freed.  Each inflate worker owns a
 * workspace of its own (workers.c).  No allocation per chunk and no
 * preemption disabled while inflating.
 *
 * ext4dec_ws_lock protects the free list and the counts.
 */
#include "ext4dec.h"

#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#define EXT4DEC_WS_IDLE		(5 * HZ)

static LIST_HEAD(ext4dec_free_ws);
static DEFINE_SPINLOCK(ext4dec_ws_lock);
static DECLARE_WAIT_QUEUE_HEAD(ext4dec_ws_wait);
/* workspaces in the pool, free or not, and being made; those being made */
static unsigned int ext4dec_nr_ws;
static unsigned int ext4dec_ws_growing;
static unsigned int ext4dec_max_ws;
/* when a workspace was last given back */
static unsigned long ext4dec_ws_last_put;

/**
 * ext4dec_ws_init() - allocate a workspace's decoder and buffer
 * @ws: the workspace, zeroed
 * @gfp: allocation flags
 *
 * Return: 0 or -ENOMEM (@ws is then left empty).
 */
int ext4dec_ws_init(struct ext4dec_ws *ws, gfp_t gfp)
{
	ws->dec = kvmalloc(szip_decoder_size(), gfp);
	ws->out = kvmalloc(EXT4DEC_MAX_CHUNK, gfp);
	if (!ws->dec || !ws->out || szip_decoder_init(ws->dec)) {
		kvfree(ws->dec);
		ws->dec = NULL;
		kvfree(ws->out);
		ws->out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * ext4dec_ws_destroy() - free what ext4dec_ws_init() allocated
 * @ws: the workspace
 */
void ext4dec_ws_destroy(struct ext4dec_ws *ws)
{
	if (ws->dec)
		szip_decoder_end(ws->dec);
	kvfree(ws->dec);
	kvfree(ws->out);
}

static struct ext4dec_ws *ext4dec_ws_alloc(gfp_t gfp)
{
	struct ext4dec_ws *ws = kzalloc(sizeof(*ws), gfp);

	if (ws && ext4dec_ws_init(ws, gfp)) {
		kfree(ws);
		ws = NULL;
	}
	return ws;
}

static void ext4dec_ws_free(struct ext4dec_ws *ws)
{
	ext4dec_ws_destroy(ws);
	kfree(ws);
}

static void ext4dec_ws_drain(struct work_struct *work);
static DECLARE_DELAYED_WORK(ext4dec_ws_drain_work, ext4dec_ws_drain);

/*
 * Free the free workspaces but one, once none was given back for
 * EXT4DEC_WS_IDLE.  One being made does not count: its allocation may
 * still fail.
 */
static void ext4dec_ws_drain(struct work_struct *work)
{
	unsigned long idle_at = READ_ONCE(ext4dec_ws_last_put) + EXT4DEC_WS_IDLE;
	unsigned long now = jiffies;
	struct ext4dec_ws *ws;
	LIST_HEAD(idle);

	if (time_before(now, idle_at)) {
		queue_delayed_work(system_wq, &ext4dec_ws_drain_work, idle_at - now);
		return;
	}
	spin_lock(&ext4dec_ws_lock);
	while (ext4dec_nr_ws - ext4dec_ws_growing > 1 && !list_empty(&ext4dec_free_ws)) {
		list_move(ext4dec_free_ws.prev, &idle);
		ext4dec_nr_ws--;
	}
	spin_unlock(&ext4dec_ws_lock);
	while ((ws = list_first_entry_or_null(&idle, struct ext4dec_ws, list))) {
		list_del(&ws->list);
		ext4dec_ws_free(ws);
	}
}

/**
 * ext4dec_workspaces_init() - make the pool's first workspace
 * @max: most workspaces in the pool, at least 1
 *
 * Return: 0 or -ENOMEM.
 */
int ext4dec_workspaces_init(unsigned int max)
{
	struct ext4dec_ws *ws = ext4dec_ws_alloc(GFP_KERNEL);

	if (!ws)
		return -ENOMEM;
	list_add(&ws->list, &ext4dec_free_ws);
	ext4dec_nr_ws = 1;
	ext4dec_max_ws = max;
	return 0;
}

/**
 * ext4dec_workspaces_exit() - free the workspaces; none may be in use
 */
void ext4dec_workspaces_exit(void)
{
	struct ext4dec_ws *ws;

	cancel_delayed_work_sync(&ext4dec_ws_drain_work);
	while ((ws = list_first_entry_or_null(&ext4dec_free_ws, struct ext4dec_ws, list))) {
		list_del(&ws->list);
		ext4dec_ws_free(ws);
	}
	ext4dec_nr_ws = 0;
}

/**
 * ext4dec_nr_workspaces_now() - workspaces in the pool now
 *
 * Return: the count, free or in use.
 */
unsigned int ext4dec_nr_workspaces_now(void)
{
	return READ_ONCE(ext4dec_nr_ws);
}

/* A free workspace; else, with @grow, leave room to make one (*@grow) */
static struct ext4dec_ws *ext4dec_ws_take(bool *grow)
{
	struct ext4dec_ws *ws;

	spin_lock(&ext4dec_ws_lock);
	ws = list_first_entry_or_null(&ext4dec_free_ws, struct ext4dec_ws, list);
	if (ws) {
		list_del(&ws->list);
	} else if (grow && ext4dec_nr_ws < ext4dec_max_ws) {
		ext4dec_nr_ws++;
		ext4dec_ws_growing++;
		*grow = true;
	}
	spin_unlock(&ext4dec_ws_lock);
	return ws;
}

/**
 * ext4dec_ws_get() - take a workspace, making one or waiting for one if
 *	all are busy
 *
 * Context: process, may sleep and allocate (callers are GFP_NOFS through
 * memalloc_nofs_save()).
 * Return: a workspace, to give back with ext4dec_ws_put().
 */
struct ext4dec_ws *ext4dec_ws_get(void)
{
	struct ext4dec_ws *ws;
	bool grow = false;

	ws = ext4dec_ws_take(&grow);
	if (ws)
		return ws;
	if (grow) {
		ws = ext4dec_ws_alloc(GFP_KERNEL | __GFP_NOWARN);
		spin_lock(&ext4dec_ws_lock);
		ext4dec_ws_growing--;
		if (!ws)
			ext4dec_nr_ws--;
		spin_unlock(&ext4dec_ws_lock);
		if (ws)
			return ws;
	}
	/* the pool's first workspace, at least, comes back */
	wait_event(ext4dec_ws_wait, (ws = ext4dec_ws_take(NULL)) != NULL);
	return ws;
}

/**
 * ext4dec_ws_put() - give a workspace back
 * @ws: from ext4dec_ws_get()
 */
void ext4dec_ws_put(struct ext4dec_ws *ws)
{
	bool more;

	WRITE_ONCE(ext4dec_ws_last_put, jiffies);
	spin_lock(&ext4dec_ws_lock);
	list_add(&ws->list, &ext4dec_free_ws);
	more = ext4dec_nr_ws > 1;
	spin_unlock(&ext4dec_ws_lock);
	wake_up(&ext4dec_ws_wait);
	/* does nothing while the drain is queued: it looks at the time */
	if (more)
		queue_delayed_work(system_wq, &ext4dec_ws_drain_work, EXT4DEC_WS_IDLE);
}
