// SPDX-License-Identifier: GPL-2.0
/*
 * Activation and deactivation of inodes.
 *
 * Activation (inode lock held by the caller):
 *  1. refuse what cannot or may not be served: encrypted, verity, DAX,
 *     inline-data and data-journalled inodes, files the activation policy
 *     does not trust, files with no szip header (all before write access
 *     is taken away: no writer's open fails for them), writers, existing
 *     mappings;
 *  2. take write access away (i_writecount negative, as exec does), write
 *     back what is dirty, then load the szip header, offset table,
 *     dictionary and block map (load.c);
 *  3. under the mapping's invalidate lock, drop the raw page cache, install
 *     ext4dec's operations and the uncompressed i_size (in memory only:
 *     ext4 writes i_disksize, never i_size), mark the contents changed
 *     (ctime, i_version), then publish the state.
 * Deactivation (chattr -c, module unload, eviction) reverses step 3 and
 * gives write access back.  The on-disk inode is never modified.
 *
 * @inode->i_private holds the active reference (state.c has the state's
 * lifetime).  ext4dec_lock orders the publication against opens, so that
 * "no other open file" checked at deactivation stays true.
 *
 * ioctls that move or rewrite data run only on inactive inodes, and hold
 * activation off while they run (ext4dec_ioctl()); the others are ext4's
 * alone.  Reads through ext4's file operations that an activation or
 * deactivation runs across are done again (the view counters below, and
 * file.c).
 */
#include "ext4dec.h"

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/iversion.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

static DEFINE_SPINLOCK(ext4dec_lock);
static LIST_HEAD(ext4dec_active);
/* Activations allowed: from when every hook is in until unload starts */
static bool ext4dec_accepting;

/*
 * Inactive inodes held raw (ext4dec_hold_raw()): a data ioctl in progress
 * (fs-verity enabling, for one, writes through the address space
 * operations for a long time), or a read through ext4's file operations
 * that is not to see the inode change.  Activation fails with -EBUSY
 * while one is held; it waits for none.
 */
static LIST_HEAD(ext4dec_raw_holds);

/*
 * Changes of view.  Activation and deactivation change what a read of the
 * inode returns: raw bytes up to the raw size, or uncompressed ones up to
 * the uncompressed size.  A read through ext4's file operations that
 * started before may run across the change and return parts of both
 * (folios and size found on either side of it), so it samples the change
 * counters of the inode's slot before, checks them after, and is done
 * again if they moved (ext4dec_file_read()).  Inodes that hash to the same
 * slot share it: a change of another inode costs a needless second read,
 * never a missed one.  @begun is bumped before a change and @ended after:
 * they differ while one is under way.
 */
#define EXT4DEC_VIEW_BITS	6

static struct ext4dec_view_slot {
	atomic_t begun;
	atomic_t ended;
} ext4dec_view_slots[1 << EXT4DEC_VIEW_BITS];

static struct ext4dec_view_slot *ext4dec_view_slot(const struct inode *inode)
{
	return &ext4dec_view_slots[hash_ptr(inode, EXT4DEC_VIEW_BITS)];
}

static void ext4dec_view_change_begin(const struct inode *inode)
{
	atomic_inc(&ext4dec_view_slot(inode)->begun);
	/* the count before anything of the change */
	smp_mb__after_atomic();
}

static void ext4dec_view_change_end(const struct inode *inode)
{
	/* the whole change before the count */
	smp_mb__before_atomic();
	atomic_inc(&ext4dec_view_slot(inode)->ended);
}

/**
 * ext4dec_view_sample() - note the view of an inode before a read
 * @inode: the inode
 * @seq: set to what ext4dec_view_changed() compares with
 *
 * Return: false if the view of @inode may be changing now.
 */
bool ext4dec_view_sample(const struct inode *inode, unsigned int *seq)
{
	struct ext4dec_view_slot *slot = ext4dec_view_slot(inode);
	unsigned int ended = atomic_read(&slot->ended);

	smp_rmb();	/* @ended before @begun: equal, nothing was under way */
	*seq = atomic_read(&slot->begun);
	smp_rmb();	/* before the read's own loads */
	return *seq == ended;
}

/**
 * ext4dec_view_changed() - whether the view of an inode may have changed
 *	since ext4dec_view_sample()
 * @inode: the inode
 * @seq: from ext4dec_view_sample()
 *
 * Return: true if a change began since: what was read in between may mix
 * both views.
 */
bool ext4dec_view_changed(const struct inode *inode, unsigned int seq)
{
	smp_rmb();	/* after the read's own loads */
	return atomic_read(&ext4dec_view_slot(inode)->begun) != seq;
}

/*
 * Publish (or, with NULL, withdraw) @inode's state.  Whoever finds it
 * published also finds it filled in and installed (ext4dec_install()).
 */
static void ext4dec_set_state(struct inode *inode, struct ext4dec_inode *ei)
{
	lockdep_assert_held(&ext4dec_lock);
	/* pairs with smp_load_acquire() in ext4dec_state() */
	smp_store_release(&inode->i_private, ei);
}

/*
 * Remember that @inode was refused with @err (policy.c), if the refusal
 * holds until the file changes and nothing changed it since @fp was taken
 * and the checks began: no writer then or now, and the same fingerprint.
 * A writer that opened in between changed the fingerprint: its write
 * marked the inode changed (ctime, i_version seen by the fingerprint).
 */
static void ext4dec_remember_refusal(struct inode *inode, int err,
				     unsigned long fp)
{
	if (!ext4dec_refusal_lasts(err) ||
	    atomic_read(&inode->i_writecount) > 0 ||
	    ext4dec_fingerprint(inode) != fp)
		return;
	spin_lock(&ext4dec_lock);
	if (!ext4dec_state(inode)) {
		/* as ext4dec_set_state(): pairs with ext4dec_state() */
		smp_store_release(&inode->i_private,
				  (void *)ext4dec_refusal_word(err, fp));
	}
	spin_unlock(&ext4dec_lock);
}

/**
 * ext4dec_open_get() - count an open file of an active inode
 * @inode: the inode being opened
 *
 * Taken under ext4dec_lock, so that a deactivation that found no other
 * open file (ext4dec_deactivate()) has withdrawn the state before.
 *
 * Return: the state, with a reference for the file, or NULL if the inode
 * is not active.
 */
struct ext4dec_inode *ext4dec_open_get(struct inode *inode)
{
	struct ext4dec_inode *ei;

	spin_lock(&ext4dec_lock);
	ei = ext4dec_state(inode);
	if (ei) {
		kref_get(&ei->ref);
		atomic_inc(&ei->opens);
	}
	spin_unlock(&ext4dec_lock);
	return ei;
}

/**
 * ext4dec_open_put() - an open file of the inode is closed
 * @ei: from ext4dec_open_get()
 */
void ext4dec_open_put(struct ext4dec_inode *ei)
{
	atomic_dec(&ei->opens);
	ext4dec_put(ei);
}

/*
 * What a read of @inode returns changes (activation, deactivation): tell
 * whoever watches for changes, as a write would (IMA and NFS look at
 * i_version, backup and build tools at ctime).  In memory only, as the
 * rest of activation; ext4 writes them with the inode's next update.
 */
static void ext4dec_contents_changed(struct inode *inode)
{
	lockdep_assert_held_write(&inode->i_rwsem);
	inode_set_ctime_current(inode);
	inode_inc_iversion(inode);
}

/*
 * Point the inode at ext4dec's address space operations (invalidate lock
 * held).  i_fop stays ext4's: every open goes through ext4_file_open(),
 * whose hook gives the file ext4dec's file operations.
 */
static void ext4dec_install(struct ext4dec_inode *ei)
{
	struct inode *inode = ei->inode;

	lockdep_assert_held_write(&inode->i_mapping->invalidate_lock);
	truncate_inode_pages(inode->i_mapping, 0);
	ei->orig_aops = inode->i_mapping->a_ops;
	ei->orig_fop = inode->i_fop;
	/* no folio larger than a chunk, as far as the mapping allows */
	ei->orig_folios = ext4dec_mapping_limit_folios(inode->i_mapping,
						       __ffs(ei->sf.info.chunk_size >> PAGE_SHIFT));
	WRITE_ONCE(inode->i_mapping->a_ops, &ext4dec_aops);
	i_size_write(inode, ei->sf.info.size);
	ext4dec_contents_changed(inode);
}

/* Whether @inode is held raw: activation must wait. */
static bool ext4dec_held_raw_locked(struct inode *inode)
{
	struct ext4dec_raw_hold *h;

	lockdep_assert_held(&ext4dec_lock);
	list_for_each_entry(h, &ext4dec_raw_holds, list)
		if (h->inode == inode)
			return true;
	return false;
}

/**
 * ext4dec_hold_raw() - keep an inactive inode inactive
 * @inode: the inode
 * @hold: the caller's, until ext4dec_release_raw()
 * @nowait: fail with -EAGAIN rather than wait for the inode lock
 *
 * The inode lock, which activation holds from start to end, orders the
 * check against activations: none is under way once this returns.
 *
 * Context: process; takes the inode lock (shared), so the caller must not
 * hold it.
 * Return: 1 if @inode is held (its activations fail with -EBUSY until
 * ext4dec_release_raw()), 0 if it is active, -EAGAIN.
 */
int ext4dec_hold_raw(struct inode *inode, struct ext4dec_raw_hold *hold, bool nowait)
{
	int held = 0;

	hold->inode = inode;
	if (!nowait)
		inode_lock_shared(inode);
	else if (!inode_trylock_shared(inode))
		return -EAGAIN;
	spin_lock(&ext4dec_lock);
	if (!ext4dec_state(inode)) {
		list_add(&hold->list, &ext4dec_raw_holds);
		held = 1;
	}
	spin_unlock(&ext4dec_lock);
	inode_unlock_shared(inode);
	return held;
}

/**
 * ext4dec_release_raw() - let an inode held by ext4dec_hold_raw() go
 * @hold: the hold
 */
void ext4dec_release_raw(struct ext4dec_raw_hold *hold)
{
	spin_lock(&ext4dec_lock);
	list_del(&hold->list);
	spin_unlock(&ext4dec_lock);
}

/**
 * ext4dec_activate() - serve an szip inode decompressed
 * @inode: an ext4 regular file
 * @dentry: a dentry of @inode, for messages and ext4's fileattr_get
 *
 * Refusals that hold until the file changes are remembered (policy.c).
 *
 * Context: process; the caller holds the inode lock.
 * Return: 0 if the inode is active (now or already), else a negative
 * errno: -EINVAL not szip, -EPERM not trusted by the activation policy,
 * -ETXTBSY open for writing, -EBUSY mapped, -EOPNOTSUPP unsupported kind
 * of inode, -EIO, -ENOMEM, -ENODEV while the module loads or unloads.
 */
int ext4dec_activate(struct inode *inode, struct dentry *dentry)
{
	struct address_space *mapping = inode->i_mapping;
	struct ext4dec_inode *ei;
	unsigned long fp;
	bool quiet;
	int err;

	lockdep_assert_held_write(&inode->i_rwsem);
	if (ext4dec_state(inode))
		return 0;
	if (!READ_ONCE(ext4dec_accepting))
		return -ENODEV;	/* checked again under ext4dec_lock */
	/* what a writer would change, before the checks read the file */
	quiet = atomic_read(&inode->i_writecount) <= 0;
	smp_rmb();	/* a writer counts itself before it writes */
	fp = ext4dec_fingerprint(inode);
	err = ext4dec_check(inode, dentry);
	if (err) {
		if (quiet)
			ext4dec_remember_refusal(inode, err, fp);
		return err;
	}
	if (!atomic_dec_unless_positive(&inode->i_writecount))
		return ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_WRITERS, NULL);

	if (mapping_mapped(mapping)) {
		err = ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_MAPPED, NULL);
		goto out_allow_write;
	}
	err = filemap_write_and_wait(mapping);
	if (err) {
		err = ext4dec_refuse(inode, dentry, EXT4DEC_REFUSED_IO, "writeback");
		goto out_allow_write;
	}
	ei = ext4dec_load(inode, dentry);
	if (IS_ERR(ei)) {
		err = PTR_ERR(ei);
		if (quiet)
			ext4dec_remember_refusal(inode, err, fp);
		goto out_allow_write;
	}

	/*
	 * Publish only once installed: whoever sees the inode active must find
	 * the uncompressed size and no raw page left.
	 */
	filemap_invalidate_lock(mapping);
	spin_lock(&ext4dec_lock);
	err = ext4dec_accepting ? 0 : -ENODEV;
	if (!err && ext4dec_held_raw_locked(inode))
		err = -EBUSY;	/* e.g. fs-verity being enabled: it writes */
	if (!err)
		list_add(&ei->list, &ext4dec_active);
	spin_unlock(&ext4dec_lock);
	if (!err) {
		ext4dec_view_change_begin(inode);
		ext4dec_install(ei);
		spin_lock(&ext4dec_lock);
		ext4dec_set_state(inode, ei);
		spin_unlock(&ext4dec_lock);
		ext4dec_view_change_end(inode);
	}
	filemap_invalidate_unlock(mapping);
	if (err) {
		ext4dec_put(ei);
		goto out_allow_write;
	}
	atomic64_inc(&ext4dec_stats.active_inodes);
	return 0;

out_allow_write:
	atomic_inc(&inode->i_writecount);
	return err;
}

/*
 * The end of every deactivation, once @ei is withdrawn from its inode:
 * ext4's operations and the raw size back (the page cache holds
 * uncompressed data until then), write access back, the active reference
 * dropped.
 */
static void ext4dec_teardown(struct ext4dec_inode *ei)
{
	struct inode *inode = ei->inode;

	truncate_inode_pages(inode->i_mapping, 0);
	WRITE_ONCE(inode->i_mapping->a_ops, ei->orig_aops);
	ext4dec_mapping_restore_folios(inode->i_mapping, ei->orig_folios);
	i_size_write(inode, ei->raw_size);
	atomic_inc(&inode->i_writecount);
	atomic64_dec(&ext4dec_stats.active_inodes);
	ext4dec_put(ei);
}

/* Withdraw @inode's state, if any, and take it off the active list. */
static struct ext4dec_inode *ext4dec_withdraw_locked(struct inode *inode)
{
	struct ext4dec_inode *ei = ext4dec_state(inode);

	lockdep_assert_held(&ext4dec_lock);
	if (ei) {
		ext4dec_set_state(inode, NULL);
		list_del_init(&ei->list);
	}
	return ei;
}

static int __ext4dec_deactivate(struct inode *inode, unsigned int own_opens,
				bool force)
{
	struct address_space *mapping = inode->i_mapping;
	struct ext4dec_inode *ei;
	int err = 0;

	lockdep_assert_held_write(&inode->i_rwsem);
	filemap_invalidate_lock(mapping);
	ext4dec_view_change_begin(inode);
	spin_lock(&ext4dec_lock);
	ei = ext4dec_state(inode);
	if (ei && !force &&
	    (atomic_read(&ei->opens) > own_opens || mapping_mapped(mapping)))
		err = -EBUSY;
	else
		ei = ext4dec_withdraw_locked(inode);
	spin_unlock(&ext4dec_lock);
	if (!err && ei) {
		ext4dec_teardown(ei);
		ext4dec_contents_changed(inode);
	}
	ext4dec_view_change_end(inode);
	filemap_invalidate_unlock(mapping);
	return err;
}

/**
 * ext4dec_deactivate() - return an active inode to its raw bytes
 * @inode: an ext4 inode
 * @own_opens: open files of the inode held by the caller, which do not
 *	count as "open elsewhere"
 *
 * Context: process; the caller holds the inode lock.
 * Return: 0 (also if the inode was not active), or -EBUSY while the file
 * is open elsewhere or mapped.
 */
int ext4dec_deactivate(struct inode *inode, unsigned int own_opens)
{
	return __ext4dec_deactivate(inode, own_opens, false);
}

/**
 * ext4dec_deactivate_force() - deactivate even while open or mapped
 * @inode: an ext4 inode
 *
 * For module unload and for undoing a failed chattr +c.  Files open with
 * ext4dec's operations fall back to ext4's (file.c).
 *
 * Context: process; the caller holds the inode lock.
 */
void ext4dec_deactivate_force(struct inode *inode)
{
	__ext4dec_deactivate(inode, 0, true);
}

/**
 * ext4dec_evict() - forget an inode ext4 is about to free
 * @inode: the inode being evicted; nobody else can reach it
 */
void ext4dec_evict(struct inode *inode)
{
	struct ext4dec_inode *ei;

	/*
	 * Most evicted inodes were never active: nothing can activate one
	 * now (every activation holds a reference), so no lock is needed to
	 * see that.  Unload's ext4dec_deactivate_all() skips inodes being
	 * freed.
	 */
	if (!ext4dec_state(inode))
		return;
	spin_lock(&ext4dec_lock);
	ei = ext4dec_withdraw_locked(inode);
	spin_unlock(&ext4dec_lock);
	if (ei)
		ext4dec_teardown(ei);
}

/**
 * ext4dec_activations_start() - allow activations, once every hook is in
 *
 * Until then no inode is activated: an inode activated before the evict
 * hook is in could be freed with its state, and one activated while a
 * later hook fails to install would keep the operations of a module that
 * failed to load.
 */
void ext4dec_activations_start(void)
{
	spin_lock(&ext4dec_lock);
	WRITE_ONCE(ext4dec_accepting, true);
	spin_unlock(&ext4dec_lock);
}

/**
 * ext4dec_deactivate_all() - deactivate every inode, for module unload
 *
 * Refuses new activations from here on.  Files open with ext4dec's
 * operations hold module references, so none is left; a mapping made
 * through a file opened before activation may be, and is dropped (its next
 * faults read the raw bytes).  Each inode is handled with an active
 * reference on its superblock, so that a concurrent unmount waits; inodes
 * being evicted or unmounted meanwhile are left to the evict hook.
 */
void ext4dec_deactivate_all(void)
{
	struct ext4dec_inode *ei;
	struct super_block *sb;
	struct inode *inode;

	spin_lock(&ext4dec_lock);
	WRITE_ONCE(ext4dec_accepting, false);
	while ((ei = list_first_entry_or_null(&ext4dec_active,
					      struct ext4dec_inode, list))) {
		sb = ei->inode->i_sb;
		if (!atomic_inc_not_zero(&sb->s_active))
			sb = NULL;
		inode = sb ? igrab(ei->inode) : NULL;
		spin_unlock(&ext4dec_lock);
		if (inode) {
			inode_lock(inode);
			ext4dec_deactivate_force(inode);
			inode_unlock(inode);
			iput(inode);
		}
		if (sb)
			deactivate_super(sb);
		if (!inode)
			schedule_timeout_uninterruptible(1);
		spin_lock(&ext4dec_lock);
	}
	spin_unlock(&ext4dec_lock);
	rcu_barrier();
}

/*
 * EXT4DEC_IOC_GET_STATUS: what ext4dec makes of the file, for anyone who
 * could open it.
 */
static long ext4dec_get_status(struct file *file, void __user *arg)
{
	struct inode *inode = file_inode(file);
	struct ext4dec_status st = { };
	struct ext4dec_inode *ei;
	u32 flags;
	int err;

	ei = ext4dec_get(inode);
	err = ei ? 0 : ext4dec_refusal_remembered(inode);
	if (ei) {
		const struct szip_info *info = &ei->sf.info;

		st.state = EXT4DEC_STATE_ACTIVE;
		st.format = info->version;
		st.codec = info->codec;
		st.chunk_size = info->chunk_size;
		st.nr_chunks = info->nr_chunks;
		st.size = info->size;
		st.raw_size = ei->raw_size;
		st.chunks_inflated = atomic64_read(&ei->inflated);
		ext4dec_put(ei);
	} else if (err) {
		st.state = EXT4DEC_STATE_REFUSED;
		st.refusal = -err;
	} else {
		err = ext4dec_ext4_flags(inode, file->f_path.dentry, &flags);
		if (err)
			return err;
		st.state = flags & FS_COMPR_FL ? EXT4DEC_STATE_INACTIVE :
						 EXT4DEC_STATE_PLAIN;
	}
	if (st.state != EXT4DEC_STATE_ACTIVE) {
		st.raw_size = i_size_read(inode);
		st.size = st.raw_size;
	}
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

/**
 * ext4dec_ioctl() - ext4's ioctl, with the data ioctls (and the raw
 *	block map) kept off active inodes
 * @file: the file
 * @cmd: ioctl number
 * @arg: argument
 * @compat: a 32-bit caller's: ext4's compat_ioctl is called
 *
 * An ioctl that moves or rewrites data is refused on an active inode, and
 * keeps an inactive one inactive while it runs (ext4dec_hold_raw()).
 * EXT4DEC_IOC_GET_STATUS is ext4dec's own, on any regular file.  Any
 * other goes to ext4 untouched, whatever the inode.
 *
 * Return: -EOPNOTSUPP for a data ioctl or EXT4_IOC_GET_ES_CACHE on an
 * active inode, else what ext4 returns.
 */
long ext4dec_ioctl(struct file *file, unsigned int cmd, unsigned long arg,
		   bool compat)
{
	struct inode *inode = file_inode(file);
	struct ext4dec_raw_hold hold;
	long ret;

	if (!ext4dec_ioctl_hooked(cmd) || !S_ISREG(inode->i_mode))
		return ext4dec_ext4_ioctl(file, cmd, arg, compat);
	if (cmd == EXT4DEC_IOC_GET_STATUS)
		return ext4dec_get_status(file, compat ? compat_ptr(arg) :
						  (void __user *)arg);
	if (ext4dec_state(inode))
		return -EOPNOTSUPP;
	if (!ext4dec_ioctl_moves_data(cmd))
		return ext4dec_ext4_ioctl(file, cmd, arg, compat);
	if (ext4dec_hold_raw(inode, &hold, false) <= 0)
		return -EOPNOTSUPP;
	ret = ext4dec_ext4_ioctl(file, cmd, arg, compat);
	ext4dec_release_raw(&hold);
	return ret;
}
