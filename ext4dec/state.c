// SPDX-License-Identifier: GPL-2.0
/*
 * The lifetime of an active inode's state.
 *
 * @inode->i_private holds the active reference (dropped at deactivation);
 * each open file and each read in progress holds one more.  The read path
 * finds the state through i_private without a lock (ext4dec_get()), so the
 * structure is freed after an RCU grace period, and its kept compressed
 * bytes (cache.c) are dropped first.
 */
#include "ext4dec.h"

#include <linux/slab.h>
#include <linux/vmalloc.h>

/**
 * ext4dec_free_state() - free an inode's state
 * @ei: from ext4dec_load(), or being built by it; nobody else uses it
 */
void ext4dec_free_state(struct ext4dec_inode *ei)
{
	kvfree(ei->extents);
	szip_file_release(&ei->sf);
	kvfree(ei->meta);
	kfree(ei);
}

static void ext4dec_free_rcu(struct rcu_head *rcu)
{
	ext4dec_free_state(container_of(rcu, struct ext4dec_inode, rcu));
}

static void ext4dec_state_release(struct kref *ref)
{
	struct ext4dec_inode *ei = container_of(ref, struct ext4dec_inode, ref);

	/* nobody reads any more: no chunk's bytes can be added back */
	ext4dec_cache_drop(ei, 0, U32_MAX);
	call_rcu(&ei->rcu, ext4dec_free_rcu);
}

/**
 * ext4dec_get() - take a reference on an inode's state
 * @inode: an ext4 inode
 *
 * Context: any; does not sleep.
 * Return: the state, or NULL if the inode is not active.
 */
struct ext4dec_inode *ext4dec_get(struct inode *inode)
{
	struct ext4dec_inode *ei;

	rcu_read_lock();
	ei = ext4dec_state(inode);
	if (ei && !kref_get_unless_zero(&ei->ref))
		ei = NULL;
	rcu_read_unlock();
	return ei;
}

/**
 * ext4dec_hold() - take one more reference on an inode's state
 * @ei: the state, on which the caller holds a reference
 */
void ext4dec_hold(struct ext4dec_inode *ei)
{
	kref_get(&ei->ref);
}

/**
 * ext4dec_put() - drop a reference on an inode's state
 * @ei: the state
 *
 * For every reference: the active one (ext4dec_load()), and those of
 * ext4dec_get(), ext4dec_hold() and open files.  The last one frees the
 * state after an RCU grace period.
 */
void ext4dec_put(struct ext4dec_inode *ei)
{
	kref_put(&ei->ref, ext4dec_state_release);
}
