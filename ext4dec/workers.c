// SPDX-License-Identifier: GPL-2.0
/*
 * Inflate workers: kernel threads (one per online CPU at load unless the
 * "workers" parameter says otherwise) that inflate the chunks read ahead
 * as soon as their compressed bytes arrive.  They run at normal priority:
 * at a real-time one, a user reading a very compressible file over and
 * over (with POSIX_FADV_DONTNEED) would keep every CPU busy ahead of
 * everybody else's tasks.  The "workers_rt" parameter puts them at the
 * lowest real-time priority, for a system that wants its compressed files
 * read first (as EROFS's high-priority per-CPU workers are opt-in).
 *
 * They share one FIFO of jobs, queued from bio completion (so
 * ext4dec_jobs_lock is irq-safe), and each owns a workspace: a job never
 * waits for the workspace pool, and nothing waits for a worker while
 * holding a pool workspace.
 */
#include "ext4dec.h"

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

struct ext4dec_worker {
	struct task_struct *task;
	struct ext4dec_ws ws;
};

static LIST_HEAD(ext4dec_jobs);
static DEFINE_SPINLOCK(ext4dec_jobs_lock);
static DECLARE_WAIT_QUEUE_HEAD(ext4dec_jobs_wait);
static struct ext4dec_worker *ext4dec_workers;
static unsigned int ext4dec_workers_count;

static struct ext4dec_job *ext4dec_take_job(void)
{
	struct ext4dec_job *job;

	spin_lock_irq(&ext4dec_jobs_lock);
	job = list_first_entry_or_null(&ext4dec_jobs, struct ext4dec_job, list);
	if (job)
		list_del(&job->list);
	spin_unlock_irq(&ext4dec_jobs_lock);
	return job;
}

static int ext4dec_worker_fn(void *data)
{
	struct ext4dec_worker *w = data;

	for (;;) {
		struct ext4dec_job *job = NULL;

		/* the queue is drained before the thread is stopped */
		wait_event_idle_exclusive(ext4dec_jobs_wait, (job = ext4dec_take_job()) ||
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
 * @rt: at the lowest real-time priority, instead of normal priority
 *
 * Return: 0, -ENOMEM, or the error of kthread_run().
 */
int ext4dec_workers_init(unsigned int count, bool rt)
{
	unsigned int i;
	int err;

	if (!count)
		return 0;
	ext4dec_workers = kcalloc(count, sizeof(*ext4dec_workers), GFP_KERNEL);
	if (!ext4dec_workers)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct ext4dec_worker *w = &ext4dec_workers[i];
		struct task_struct *task;

		err = ext4dec_ws_init(&w->ws, GFP_KERNEL);
		if (err)
			goto out_exit;
		task = kthread_run(ext4dec_worker_fn, w, "ext4dec/%u", i);
		if (IS_ERR(task)) {
			ext4dec_ws_destroy(&w->ws);
			err = PTR_ERR(task);
			goto out_exit;
		}
		if (rt)
			sched_set_fifo_low(task);
		w->task = task;
		ext4dec_workers_count = i + 1;
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

	for (i = 0; i < ext4dec_workers_count; i++) {
		kthread_stop(ext4dec_workers[i].task);
		ext4dec_ws_destroy(&ext4dec_workers[i].ws);
	}
	WARN_ON_ONCE(!list_empty(&ext4dec_jobs));
	kfree(ext4dec_workers);
	ext4dec_workers = NULL;
	ext4dec_workers_count = 0;
}

/**
 * ext4dec_nr_workers() - number of inflate workers running
 *
 * Return: 0 when readahead inflates inline.
 */
unsigned int ext4dec_nr_workers(void)
{
	return ext4dec_workers_count;
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

	spin_lock_irqsave(&ext4dec_jobs_lock, flags);
	list_add_tail(&job->list, &ext4dec_jobs);
	spin_unlock_irqrestore(&ext4dec_jobs_lock, flags);
	wake_up(&ext4dec_jobs_wait);
}
