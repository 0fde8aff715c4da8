// SPDX-License-Identifier: GPL-2.0
/*
 * Inflate workspaces: a fixed pool allocated at module load (one per
 * possible CPU unless the "workspaces" parameter says otherwise), taken
 * under a spinlock; readers that find it empty sleep until one is back.
 * No allocation per chunk and no preemption disabled while inflating.
 */
#include "ext4dec.h"

#include <linux/slab.h>
#include <linux/wait.h>

static LIST_HEAD(free_ws);
static DEFINE_SPINLOCK(ws_lock);
static DECLARE_WAIT_QUEUE_HEAD(ws_wait);
static struct ext4dec_ws *all_ws;
static unsigned int nr_ws;

static void ws_free(struct ext4dec_ws *ws)
{
	if (ws->dec)
		szip_decoder_end(ws->dec);
	kvfree(ws->dec);
	kvfree(ws->out);
}

/**
 * ext4dec_pool_init() - allocate the workspaces
 * @count: number of workspaces, at least 1
 *
 * Return: 0 or -ENOMEM.
 */
int ext4dec_pool_init(unsigned int count)
{
	unsigned int i;

	all_ws = kcalloc(count, sizeof(*all_ws), GFP_KERNEL);
	if (!all_ws)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct ext4dec_ws *ws = &all_ws[i];

		ws->dec = kvmalloc(szip_decoder_size(), GFP_KERNEL);
		ws->out = kvmalloc(EXT4DEC_MAX_CHUNK, GFP_KERNEL);
		if (!ws->dec || !ws->out || szip_decoder_init(ws->dec)) {
			kvfree(ws->dec);
			ws->dec = NULL;
			nr_ws = i + 1;
			ext4dec_pool_exit();
			return -ENOMEM;
		}
		list_add(&ws->list, &free_ws);
	}
	nr_ws = count;
	return 0;
}

/**
 * ext4dec_pool_exit() - free the workspaces; none may be in use
 */
void ext4dec_pool_exit(void)
{
	unsigned int i;

	for (i = 0; i < nr_ws; i++)
		ws_free(&all_ws[i]);
	kfree(all_ws);
	all_ws = NULL;
	nr_ws = 0;
	INIT_LIST_HEAD(&free_ws);
}

static struct ext4dec_ws *take(void)
{
	struct ext4dec_ws *ws;

	spin_lock(&ws_lock);
	ws = list_first_entry_or_null(&free_ws, struct ext4dec_ws, list);
	if (ws)
		list_del(&ws->list);
	spin_unlock(&ws_lock);
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

	wait_event(ws_wait, (ws = take()) != NULL);
	return ws;
}

/**
 * ext4dec_ws_put() - give a workspace back
 * @ws: from ext4dec_ws_get()
 */
void ext4dec_ws_put(struct ext4dec_ws *ws)
{
	spin_lock(&ws_lock);
	list_add(&ws->list, &free_ws);
	spin_unlock(&ws_lock);
	wake_up(&ws_wait);
}
