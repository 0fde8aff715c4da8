// SPDX-License-Identifier: GPL-2.0
/*
 * Inflate workspaces: a decoder and a chunk-sized output buffer each.
 *
 * A fixed pool is allocated at module load (one per possible CPU unless
 * the "workspaces" parameter says otherwise), taken under ext4dec_ws_lock
 * by the tasks that inflate inline (read_folio(), small readahead); those
 * that find it empty sleep until one is back.  Each inflate worker owns a
 * workspace of its own (workers.c).  No allocation per chunk and no
 * preemption disabled while inflating.
 */
#include "ext4dec.h"

#include <linux/slab.h>
#include <linux/wait.h>

static LIST_HEAD(ext4dec_free_ws);
static DEFINE_SPINLOCK(ext4dec_ws_lock);
static DECLARE_WAIT_QUEUE_HEAD(ext4dec_ws_wait);
static struct ext4dec_ws *ext4dec_all_ws;
static unsigned int ext4dec_nr_ws;

/**
 * ext4dec_ws_init() - allocate a workspace's decoder and buffer
 * @ws: the workspace, zeroed
 *
 * Return: 0 or -ENOMEM (@ws is then left empty).
 */
int ext4dec_ws_init(struct ext4dec_ws *ws)
{
	ws->dec = kvmalloc(szip_decoder_size(), GFP_KERNEL);
	ws->out = kvmalloc(EXT4DEC_MAX_CHUNK, GFP_KERNEL);
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

/**
 * ext4dec_workspaces_init() - allocate the workspaces
 * @count: number of workspaces, at least 1
 *
 * Return: 0 or -ENOMEM.
 */
int ext4dec_workspaces_init(unsigned int count)
{
	unsigned int i;

	ext4dec_all_ws = kcalloc(count, sizeof(*ext4dec_all_ws), GFP_KERNEL);
	if (!ext4dec_all_ws)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		if (ext4dec_ws_init(&ext4dec_all_ws[i])) {
			ext4dec_nr_ws = i;
			ext4dec_workspaces_exit();
			return -ENOMEM;
		}
		list_add(&ext4dec_all_ws[i].list, &ext4dec_free_ws);
	}
	ext4dec_nr_ws = count;
	return 0;
}

/**
 * ext4dec_workspaces_exit() - free the workspaces; none may be in use
 */
void ext4dec_workspaces_exit(void)
{
	unsigned int i;

	for (i = 0; i < ext4dec_nr_ws; i++)
		ext4dec_ws_destroy(&ext4dec_all_ws[i]);
	kfree(ext4dec_all_ws);
	ext4dec_all_ws = NULL;
	ext4dec_nr_ws = 0;
	INIT_LIST_HEAD(&ext4dec_free_ws);
}

static struct ext4dec_ws *ext4dec_ws_take(void)
{
	struct ext4dec_ws *ws;

	spin_lock(&ext4dec_ws_lock);
	ws = list_first_entry_or_null(&ext4dec_free_ws, struct ext4dec_ws, list);
	if (ws)
		list_del(&ws->list);
	spin_unlock(&ext4dec_ws_lock);
	return ws;
}

/**
 * ext4dec_ws_get() - take a workspace, waiting for one if all are busy
 *
 * Context: process, may sleep.
 * Return: a workspace, to give back with ext4dec_ws_put().
 */
struct ext4dec_ws *ext4dec_ws_get(void)
{
	struct ext4dec_ws *ws;

	wait_event(ext4dec_ws_wait, (ws = ext4dec_ws_take()) != NULL);
	return ws;
}

/**
 * ext4dec_ws_put() - give a workspace back
 * @ws: from ext4dec_ws_get()
 */
void ext4dec_ws_put(struct ext4dec_ws *ws)
{
	spin_lock(&ext4dec_ws_lock);
	list_add(&ws->list, &ext4dec_free_ws);
	spin_unlock(&ext4dec_ws_lock);
	wake_up(&ext4dec_ws_wait);
}
