// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec: transparent decompression of szip files on ext4.
 *
 * Module load and unload, and what every file uses: parameters, counters
 * and messages.  Load order: raw.c's reserve, workspaces, workers, the
 * cache's shrinker, sysfs, then the ext4 hooks (after which inodes can
 * become active).  Unload reverses it after every inode is back to its
 * raw state (which waits for the folios that readahead batches hold);
 * open files and mappings of active inodes hold module references.
 */
#include "ext4dec.h"

#include <linux/cpumask.h>
#include <linux/module.h>

struct ext4dec_stats ext4dec_stats;

unsigned int ext4dec_nr_workspaces;

module_param_named(workspaces, ext4dec_nr_workspaces, uint, 0444);
MODULE_PARM_DESC(workspaces,
		 "Most inflate workspaces for inline reads, made on demand; 0 = one per possible CPU (default)");

static int ext4dec_workers_param = -1;

module_param_named(workers, ext4dec_workers_param, int, 0444);
MODULE_PARM_DESC(workers,
		 "Inflate workers for readahead; 0 = none (inflate inline), -1 = one per online CPU (default)");

static bool ext4dec_workers_rt;

module_param_named(workers_rt, ext4dec_workers_rt, bool, 0444);
MODULE_PARM_DESC(workers_rt,
		 "Run the inflate workers at the lowest real-time priority (default: normal priority)");

bool ext4dec_reader_inflates;

module_param_named(reader_inflates, ext4dec_reader_inflates, bool, 0644);
MODULE_PARM_DESC(reader_inflates,
		 "Inflate all readahead in the reading task, charged to its cgroup (default: the workers inflate what no reader waits for yet)");

unsigned int ext4dec_readahead_kb = 1024;

module_param_named(readahead_kb, ext4dec_readahead_kb, uint, 0644);
MODULE_PARM_DESC(readahead_kb,
		 "Readahead window of active files, at least (KiB of uncompressed data; default 1024, 0 = the device's)");

unsigned int ext4dec_fault_around_kb;

module_param_named(fault_around_kb, ext4dec_fault_around_kb, uint, 0644);
MODULE_PARM_DESC(fault_around_kb,
		 "Uncompressed data a page fault reads after its chunk (KiB, in whole chunks; default 0)");

unsigned int ext4dec_cache_kb = 16384;

module_param_named(cache_kb, ext4dec_cache_kb, uint, 0644);
MODULE_PARM_DESC(cache_kb,
		 "Compressed data kept for later misses, at most, all files together (KiB; default 16384, 0 = none)");

unsigned int ext4dec_cache_ahead_kb = 16;

module_param_named(cache_ahead_kb, ext4dec_cache_ahead_kb, uint, 0644);
MODULE_PARM_DESC(cache_ahead_kb,
		 "Compressed data a miss of one chunk reads after it and keeps for later misses (KiB; default 16, 0 = none)");

/**
 * ext4dec_msg() - log a rate-limited message about an inode
 * @rs: the rate limit of the message's class
 * @inode: the inode concerned
 * @error: true for an error, false for a warning
 * @fmt: printf format
 *
 * Messages name the filesystem's device and the inode number.  Each class
 * of message has a rate limit of its own (ext4dec_warn() and ext4dec_err()
 * one per call site), so that a burst of one class, refusals a user can
 * provoke at will, never hides another, such as a report of corrupt data.
 */
void ext4dec_msg(struct ratelimit_state *rs, const struct inode *inode,
		 bool error, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (!__ratelimit(rs))
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (error)
		pr_err("(%s, inode %llu): %pV\n", inode->i_sb->s_id,
		       (unsigned long long)inode->i_ino, &vaf);
	else
		pr_warn("(%s, inode %llu): %pV\n", inode->i_sb->s_id,
			(unsigned long long)inode->i_ino, &vaf);
	va_end(args);
}

static int __init ext4dec_init(void)
{
	char hooks[256];
	int err;

	ext4dec_policy_init();
	err = ext4dec_raw_init();
	if (err)
		return err;
	if (!ext4dec_nr_workspaces)
		ext4dec_nr_workspaces = num_possible_cpus();
	err = ext4dec_workspaces_init(ext4dec_nr_workspaces);
	if (err)
		goto out_raw_exit;
	err = ext4dec_workers_init(ext4dec_workers_param < 0 ?
				   num_online_cpus() : ext4dec_workers_param,
				   ext4dec_workers_rt);
	if (err)
		goto out_workspaces_exit;
	err = ext4dec_cache_init();
	if (err)
		goto out_workers_exit;
	err = ext4dec_sysfs_init();
	if (err)
		goto out_cache_exit;
	err = ext4dec_hooks_init();
	if (err)
		goto out_sysfs_exit;
	ext4dec_activations_start();
	ext4dec_hooks_names(hooks, sizeof(hooks));
	pr_info("version %s loaded: hooks on %s; up to %u workspaces, %u workers\n",
		EXT4DEC_VERSION, hooks, ext4dec_nr_workspaces, ext4dec_nr_workers());
	return 0;

out_sysfs_exit:
	ext4dec_sysfs_exit();
out_cache_exit:
	ext4dec_cache_exit();
out_workers_exit:
	ext4dec_workers_exit();
out_workspaces_exit:
	ext4dec_workspaces_exit();
out_raw_exit:
	ext4dec_raw_exit();
	return err;
}

static void __exit ext4dec_exit(void)
{
	ext4dec_deactivate_all();
	ext4dec_hooks_exit();
	/* the last batches may drop the last references (call_rcu) */
	ext4dec_workers_exit();
	rcu_barrier();
	ext4dec_raw_exit();
	ext4dec_sysfs_exit();
	ext4dec_cache_exit();
	ext4dec_workspaces_exit();
	pr_info("unloaded\n");
}

module_init(ext4dec_init);
module_exit(ext4dec_exit);

MODULE_DESCRIPTION("Transparent decompression of szip files on ext4");
MODULE_LICENSE("GPL");
MODULE_VERSION(EXT4DEC_VERSION);
MODULE_SOFTDEP("pre: ext4");
