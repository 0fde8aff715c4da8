// SPDX-License-Identifier: GPL-2.0
/*
 * Inflate workspaces and inflate workers.
 *
 * Workspaces: a fixed pool allocated at module load (one per possible CPU
 * unless the "workspaces" parameter says otherwise), taken under a
 * spinlock by the tasks that inflate inline (read_folio(), small
 * readahead); those that find it empty sleep until one is back.
 *
 * Workers: kernel threads (one per online CPU at load unless the "workers"
 * parameter says otherwise) at the lowest real-time priority, so that a
 * chunk read ahead is inflated as soon as its compressed bytes arrive and
 * not after the scheduler's time slice of whatever else runs.  They share
 * one FIFO of jobs, queued from bio completion, and each owns a workspace:
 * a job never waits for the pool, and nothing waits for a worker while
 * holding a pool workspace.
 *
 * No allocation per chunk and no preemption disabled while inflating.
 */
#include "ext4dec.h"

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

static LIST_HEAD(free_ws);
static DEFINE_SPINLOCK(ws_lock);
static DECLARE_WAIT_QUEUE_HEAD(ws_wait);
static struct ext4dec_ws *all_ws;
static unsigned int nr_ws;

static int ws_alloc(struct ext4dec_ws *ws)
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
		if (ws_alloc(&all_ws[i])) {
			nr_ws = i;
			ext4dec_pool_exit();
			return -ENOMEM;
		}
		list_add(&all_ws[i].list, &free_ws);
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

struct ext4dec_worker {
	struct task_struct *task;
	struct ext4dec_ws ws;
};

static LIST_HEAD(jobs);
static DEFINE_SPINLOCK(jobs_lock);
static DECLARE_WAIT_QUEUE_HEAD(jobs_wait);
static struct ext4dec_worker *workers;
static unsigned int nr_workers;

static struct ext4dec_job *take_job(void)
{
	struct ext4dec_job *job;

	spin_lock_irq(&jobs_lock);
	job = list_first_entry_or_null(&jobs, struct ext4dec_job, list);
	if (job)
		list_del(&job->list);
	spin_unlock_irq(&jobs_lock);
	return job;
}

static int worker_fn(void *data)
{
	struct ext4dec_worker *w = data;

	for (;;) {
		struct ext4dec_job *job = NULL;

		/* the queue is drained before the thread is stopped */
		wait_event_idle_exclusive(jobs_wait, (job = take_job()) ||
					  kthread_should_stop());
		if (!job)
			return 0;
		job->fn(job, &w->ws);
		cond_resched();
	}
}

/**
 * ext4dec_workers_init() - start the inflate workers
 * @count: number of workers; 0 for none (readahead then inflates inline)
 *
 * Return: 0, -ENOMEM, or the error of kthread_run().
 */
int ext4dec_workers_init(unsigned int count)
{
	unsigned int i;
	int err;

	if (!count)
		return 0;
	workers = kcalloc(count, sizeof(*workers), GFP_KERNEL);
	if (!workers)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct ext4dec_worker *w = &workers[i];
		struct task_struct *task;

		err = ws_alloc(&w->ws);
		if (err)
			goto out_exit;
		task = kthread_run(worker_fn, w, "ext4dec/%u", i);
		if (IS_ERR(task)) {
			ws_free(&w->ws);
			err = PTR_ERR(task);
			goto out_exit;
		}
		sched_set_fifo_low(task);
		w->task = task;
		nr_workers = i + 1;
	}
	return 0;

out_exit:
	ext4dec_workers_exit();
	return err;
}

/**
 * ext4dec_workers_exit() - stop the workers once their queue is empty
 *
 * Context: process; no job may be queued after this starts.
 */
void ext4dec_workers_exit(void)
{
	unsigned int i;

	for (i = 0; i < nr_workers; i++) {
		kthread_stop(workers[i].task);
		ws_free(&workers[i].ws);
	}
	WARN_ON_ONCE(!list_empty(&jobs));
	kfree(workers);
	workers = NULL;
	nr_workers = 0;
}

/**
 * ext4dec_nr_workers() - number of inflate workers running
 *
 * Return: 0 when readahead inflates inline.
 */
unsigned int ext4dec_nr_workers(void)
{
	return nr_workers;
}

/**
 * ext4dec_queue() - have a worker run @job->fn(@job, its workspace)
 * @job: the job, with @job->fn set; not queued already
 *
 * Context: any, including interrupt (bio completion).  Requires workers.
 */
void ext4dec_queue(struct ext4dec_job *job)
{
	unsigned long flags;

	spin_lock_irqsave(&jobs_lock, flags);
	list_add_tail(&job->list, &jobs);
	spin_unlock_irqrestore(&jobs_lock, flags);
	wake_up(&jobs_wait);
}
