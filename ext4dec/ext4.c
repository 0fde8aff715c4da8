// SPDX-License-Identifier: GPL-2.0
/*
 * The ext4 side: which ext4 functions are wrapped, what the wrappers do,
 * and the little ext4 knowledge the rest of the module needs.
 *
 *   ext4_file_open      activate a +c inode on its first read-only open and
 *                       switch the file to ext4dec's file operations
 *   ext4_file_getattr   activate before stat, so sizes are right at once
 *   ext4_fileattr_set   chattr: +c activates (EINVAL if not szip), -c
 *                       deactivates (EBUSY while open elsewhere or mapped);
 *                       no switching the data path of an active inode
 *   ext4_ioctl          refuse ioctls that move or rewrite data of an
 *                       active inode, also on files opened before activation
 *   ext4_evict_inode    drop ext4dec's state before ext4 frees the inode
 *
 * The functions are found in ext4's own operation tables (ext4 exports
 * nothing; the tables are found by name), which gives their exact entry
 * points.  ext4 is pinned for as long as the module is loaded.
 */
#include "ext4dec.h"

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fileattr.h>
#include <linux/fsverity.h>
#include <linux/iomap.h>
#include <linux/module.h>

static int (*orig_file_open)(struct inode *inode, struct file *file);
static int (*orig_file_getattr)(struct mnt_idmap *idmap,
				const struct path *path, struct kstat *stat,
				u32 request_mask, unsigned int query_flags);
static int (*orig_fileattr_set)(struct mnt_idmap *idmap,
				struct dentry *dentry, struct fileattr *fa);
static long (*orig_ioctl)(struct file *file, unsigned int cmd,
			  unsigned long arg);
static void (*orig_evict_inode)(struct inode *inode);

static struct file_system_type *ext4_type;
static const struct iomap_ops *ext4_report_ops;
static const struct address_space_operations *ext4_journalled_aops;

/* +c, read through ext4's own fileattr_get (EXT4_I() is private to ext4) */
static bool get_flags(struct inode *inode, struct dentry *dentry, u32 *flags)
{
	struct fileattr fa = { .flags_valid = true };

	if (!inode->i_op->fileattr_get ||
	    inode->i_op->fileattr_get(dentry, &fa))
		return false;
	*flags = fa.flags;
	return true;
}

/**
 * ext4dec_ext4_check() - can ext4dec serve this kind of inode at all?
 * @inode: an ext4 regular file
 * @dentry: a dentry of it
 *
 * Return: an &enum ext4dec_refusal, or -1 if nothing stands in the way.
 */
int ext4dec_ext4_check(struct inode *inode, struct dentry *dentry)
{
	u32 flags = 0;

	if (IS_ENCRYPTED(inode))
		return EXT4DEC_REFUSED_ENCRYPTED;
	if (IS_VERITY(inode))
		return EXT4DEC_REFUSED_VERITY;
	if (IS_DAX(inode))
		return EXT4DEC_REFUSED_DAX;
	if (!get_flags(inode, dentry, &flags))
		return EXT4DEC_REFUSED_IO;
	if (flags & FS_INLINE_DATA_FL)
		return EXT4DEC_REFUSED_INLINE;
	/* a regular file flagged as an htree directory: ext4 would take
	 * file->private_data for its directory state at release
	 */
	if (flags & FS_INDEX_FL)
		return EXT4DEC_REFUSED_NOT_SZIP;
	/* per-inode +j or a data=journal mount: blocks may sit in the journal */
	if ((flags & FS_JOURNAL_DATA_FL) ||
	    (ext4_journalled_aops && inode->i_mapping->a_ops == ext4_journalled_aops))
		return EXT4DEC_REFUSED_JOURNAL_DATA;
	return -1;
}

/**
 * ext4dec_ext4_map() - ext4's block mapping of a range of a raw file
 * @inode: the inode, with write access denied
 * @pos: byte offset
 * @len: bytes wanted from @pos
 * @map: filled with the extent (mapped, unwritten or hole) at @pos
 *
 * Uses ext4's IOMAP_REPORT operation (as FIEMAP does), which takes no
 * inode lock.
 *
 * Return: 0, -EOPNOTSUPP for inline or delayed-allocation data, or the
 * error ext4 reported.
 */
int ext4dec_ext4_map(struct inode *inode, loff_t pos, loff_t len,
		     struct iomap *map)
{
	struct iomap srcmap = { .type = IOMAP_HOLE };
	int err;

	memset(map, 0, sizeof(*map));
	err = ext4_report_ops->iomap_begin(inode, pos, len, IOMAP_REPORT, map,
					   &srcmap);
	if (err)
		return err;
	switch (map->type) {
	case IOMAP_HOLE:
	case IOMAP_MAPPED:
	case IOMAP_UNWRITTEN:
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static bool has_compr_flag(struct inode *inode, struct dentry *dentry)
{
	u32 flags;

	return get_flags(inode, dentry, &flags) && (flags & FS_COMPR_FL);
}

static bool wants_activation(struct inode *inode, struct dentry *dentry)
{
	return S_ISREG(inode->i_mode) && !ext4dec_is_active(inode) &&
	       atomic_read(&inode->i_writecount) <= 0 && inode->i_nlink &&
	       has_compr_flag(inode, dentry);
}

/*
 * Activate @inode if it is a +c regular file that nobody is writing.  The
 * checks are repeated under the inode lock: a chattr -c may have run.
 * @trylock: do nothing if the lock is taken (getattr: nfsd calls it with
 * the inode lock held).
 *
 * Return: 0, also if the inode is not one ext4dec can serve (it is then
 * read raw), or -ENOMEM or -EIO if its activation failed for lack of
 * memory or an I/O error: the caller fails too, instead of letting the
 * szip file be read raw until the next attempt.
 */
static int maybe_activate(struct inode *inode, struct dentry *dentry,
			  bool trylock)
{
	int err = 0;

	if (!wants_activation(inode, dentry))
		return 0;
	if (trylock) {
		if (!inode_trylock(inode))
			return 0;
	} else {
		inode_lock(inode);
	}
	if (wants_activation(inode, dentry))
		err = ext4dec_activate(inode, dentry);
	inode_unlock(inode);
	return err == -ENOMEM || err == -EIO ? err : 0;
}

static int ext4dec_file_open(struct inode *inode, struct file *file)
{
	int ret = 0;

	ext4dec_hook_enter();
	if (!(file->f_mode & FMODE_WRITE))
		ret = maybe_activate(inode, file->f_path.dentry, false);
	if (ret)
		goto out;
	/* the reference fops_get() would take; the module is not going away */
	if (ext4dec_is_active(inode) && try_module_get(THIS_MODULE)) {
		replace_fops(file, &ext4dec_fops);
		ret = ext4dec_fops.open(inode, file);
		goto out;
	}
	ret = orig_file_open(inode, file);
out:
	ext4dec_hook_exit();
	return ret;
}

/**
 * ext4dec_ext4_open() - ext4's open, for ext4dec's own open
 * @inode: the inode
 * @file: the file being opened
 *
 * Return: what ext4_file_open() returns.
 */
int ext4dec_ext4_open(struct inode *inode, struct file *file)
{
	return orig_file_open(inode, file);
}

static int ext4dec_file_getattr(struct mnt_idmap *idmap,
				const struct path *path, struct kstat *stat,
				u32 request_mask, unsigned int query_flags)
{
	int ret;

	ext4dec_hook_enter();
	ret = maybe_activate(d_inode(path->dentry), path->dentry, true);
	if (!ret)
		ret = orig_file_getattr(idmap, path, stat, request_mask,
					query_flags);
	ext4dec_hook_exit();
	return ret;
}

struct own_files {
	struct inode *inode;
	unsigned int count;
	const struct file *seen[16];
};

/* Count each open file of the inode once, whatever its descriptors. */
static int count_own(const void *arg, struct file *file, unsigned int fd)
{
	struct own_files *own = (struct own_files *)arg;
	unsigned int i;

	if (file_inode(file) != own->inode || file->f_op != &ext4dec_fops ||
	    file->private_data != READ_ONCE(own->inode->i_private))
		return 0;
	for (i = 0; i < own->count && i < ARRAY_SIZE(own->seen); i++)
		if (own->seen[i] == file)
			return 0;
	if (own->count < ARRAY_SIZE(own->seen))
		own->seen[own->count++] = file;
	return 0;
}

/*
 * Files of @inode open in the calling task's file table: chattr itself
 * holds one while it changes the flags, and may deactivate nevertheless.
 */
static unsigned int own_opens(struct inode *inode)
{
	struct own_files own = { .inode = inode };

	if (current->files)
		iterate_fd(current->files, 0, count_own, &own);
	return own.count;
}

/*
 * chattr on an ext4 regular file; the VFS holds the inode lock.  Returns
 * true if the change was handled (*ret set), false to let ext4 do it.
 */
static bool fileattr_change(struct mnt_idmap *idmap, struct dentry *dentry,
			    struct fileattr *fa, int *ret)
{
	struct inode *inode = d_inode(dentry);
	bool active = ext4dec_is_active(inode);
	u32 old, changed;

	if (!S_ISREG(inode->i_mode) || !get_flags(inode, dentry, &old))
		return false;
	changed = old ^ fa->flags;

	if (active && (changed & (FS_JOURNAL_DATA_FL | FS_DAX_FL))) {
		ext4dec_warn(inode, "%pd: cannot change data journaling or DAX of a compressed file",
			     dentry);
		*ret = -EBUSY;
		return true;
	}
	if (active && (changed & FS_COMPR_FL)) {
		/* -c: back to the raw bytes, then let ext4 clear the flag */
		*ret = ext4dec_deactivate(inode, own_opens(inode));
		return *ret;
	}
	if (!active && (changed & FS_COMPR_FL) && (fa->flags & FS_COMPR_FL)) {
		/* +c: only an szip file that can be activated gets the flag */
		*ret = ext4dec_activate(inode, dentry);
		if (*ret)
			return true;
		*ret = orig_fileattr_set(idmap, dentry, fa);
		if (*ret)
			ext4dec_deactivate(inode, EXT4DEC_FORCE);
		return true;
	}
	return false;
}

static int ext4dec_fileattr_set(struct mnt_idmap *idmap, struct dentry *dentry,
				struct fileattr *fa)
{
	int ret = 0;

	ext4dec_hook_enter();
	if (!fileattr_change(idmap, dentry, fa, &ret))
		ret = orig_fileattr_set(idmap, dentry, fa);
	ext4dec_hook_exit();
	return ret;
}

/*
 * ioctls an active inode allows: reading attributes, and the flag changes
 * that ext4dec_fileattr_set() polices.  The others move, rewrite or
 * re-map data (EXT4_IOC_MOVE_EXT, SWAP_BOOT, MIGRATE, fs-verity, ...).
 */
static bool ioctl_allowed(unsigned int cmd)
{
	switch (cmd) {
	case FS_IOC_GETFLAGS:
	case FS_IOC_SETFLAGS:
	case FS_IOC_GETVERSION:
	case FS_IOC_FSGETXATTR:
	case FS_IOC_FSSETXATTR:
	case FS_IOC_GETFSLABEL:
	case FITRIM:
		return true;
	default:
		return false;
	}
}

/*
 * Inactive inodes with a refused ioctl in progress: activation waits for
 * none (fs-verity enabling, for one, writes through the address space
 * operations for a long time).  Under ext4dec_lock.
 */
struct busy_ioctl {
	struct list_head list;
	struct inode *inode;
};

static LIST_HEAD(busy_ioctls);

/**
 * ext4dec_ioctl_busy_locked() - is a data ioctl running on @inode?
 * @inode: an inode about to be activated
 *
 * Context: ext4dec_lock held.
 * Return: true if activation must be refused.
 */
bool ext4dec_ioctl_busy_locked(struct inode *inode)
{
	struct busy_ioctl *b;

	lockdep_assert_held(&ext4dec_lock);
	list_for_each_entry(b, &busy_ioctls, list)
		if (b->inode == inode)
			return true;
	return false;
}

/**
 * ext4dec_ext4_ioctl() - ext4's ioctl, filtered for active inodes
 * @file: the file
 * @cmd: ioctl number (native; ext4's compat_ioctl translates to these)
 * @arg: argument
 *
 * An ioctl outside the allowed list runs on an inactive inode only, and
 * keeps it inactive while it runs: the inode lock, which activation holds
 * from start to end, orders the check against activations.
 *
 * Return: -EOPNOTSUPP for an ioctl an active inode refuses, else what
 * ext4 returns.
 */
long ext4dec_ext4_ioctl(struct file *file, unsigned int cmd,
			unsigned long arg)
{
	struct inode *inode = file_inode(file);
	struct busy_ioctl busy = { .inode = inode };
	bool added = false;
	long ret;

	if (ioctl_allowed(cmd) || !S_ISREG(inode->i_mode))
		return orig_ioctl(file, cmd, arg);
	if (ext4dec_is_active(inode))
		return -EOPNOTSUPP;
	inode_lock(inode);
	spin_lock(&ext4dec_lock);
	if (!ext4dec_is_active(inode)) {
		list_add(&busy.list, &busy_ioctls);
		added = true;
	}
	spin_unlock(&ext4dec_lock);
	inode_unlock(inode);
	if (!added)
		return -EOPNOTSUPP;

	ret = orig_ioctl(file, cmd, arg);
	spin_lock(&ext4dec_lock);
	list_del(&busy.list);
	spin_unlock(&ext4dec_lock);
	return ret;
}

static long ext4dec_ioctl_hook(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	long ret;

	ext4dec_hook_enter();
	ret = ext4dec_ext4_ioctl(file, cmd, arg);
	ext4dec_hook_exit();
	return ret;
}

static void ext4dec_evict_inode(struct inode *inode)
{
	ext4dec_hook_enter();
	ext4dec_evict(inode);
	orig_evict_inode(inode);
	ext4dec_hook_exit();
}

enum { HOOK_OPEN, HOOK_GETATTR, HOOK_FILEATTR_SET, HOOK_IOCTL, HOOK_EVICT };

static struct ext4dec_hook hooks[] = {
	[HOOK_OPEN] = { .name = "ext4_file_open",
			.wrapper = ext4dec_file_open, .orig = &orig_file_open },
	[HOOK_GETATTR] = { .name = "ext4_file_getattr",
			   .wrapper = ext4dec_file_getattr,
			   .orig = &orig_file_getattr },
	[HOOK_FILEATTR_SET] = { .name = "ext4_fileattr_set",
				.wrapper = ext4dec_fileattr_set,
				.orig = &orig_fileattr_set },
	[HOOK_IOCTL] = { .name = "ext4_ioctl", .wrapper = ext4dec_ioctl_hook,
			 .orig = &orig_ioctl },
	[HOOK_EVICT] = { .name = "ext4_evict_inode",
			 .wrapper = ext4dec_evict_inode,
			 .orig = &orig_evict_inode },
};

static const void *lookup(const char *name)
{
	const void *p = (const void *)ext4dec_lookup_name(name);

	if (!p)
		pr_err("cannot find %s\n", name);
	return p;
}

/* Set hook @i to @fn after checking it is the function named. */
static int set_target(int i, const void *fn)
{
	char sym[KSYM_SYMBOL_LEN];

	snprintf(sym, sizeof(sym), "%ps", fn);
	if (!fn || strcmp(sym, hooks[i].name)) {
		pr_err("cannot hook %s: ext4's table points to %s\n",
		       hooks[i].name, fn ? sym : "nothing");
		return -ENOENT;
	}
	hooks[i].address = (unsigned long)fn;
	return 0;
}

/* Find the hooked functions through ext4's operation tables. */
static int resolve(void)
{
	const struct file_operations *fops = lookup("ext4_file_operations");
	const struct inode_operations *iops = lookup("ext4_file_inode_operations");
	const struct super_operations *sops = lookup("ext4_sops");

	ext4_report_ops = lookup("ext4_iomap_report_ops");
	/* optional: only used to recognise data=journal mounts */
	ext4_journalled_aops = (void *)ext4dec_lookup_name("ext4_journalled_aops");
	if (!fops || !iops || !sops || !ext4_report_ops)
		return -ENOENT;

	return set_target(HOOK_OPEN, fops->open) ?:
	       set_target(HOOK_GETATTR, iops->getattr) ?:
	       set_target(HOOK_FILEATTR_SET, iops->fileattr_set) ?:
	       set_target(HOOK_IOCTL, fops->unlocked_ioctl) ?:
	       set_target(HOOK_EVICT, sops->evict_inode);
}

/**
 * ext4dec_ext4_init() - pin ext4 and install the hooks
 *
 * Return: 0, or a negative errno with the reason logged.
 */
int ext4dec_ext4_init(void)
{
	int err;

	ext4_type = get_fs_type("ext4");
	if (!ext4_type) {
		pr_err("ext4 is not available\n");
		return -ENOENT;
	}
	err = resolve();
	if (!err)
		err = ext4dec_hooks_install(hooks, ARRAY_SIZE(hooks));
	if (err) {
		module_put(ext4_type->owner);
		return err;
	}
	return 0;
}

/**
 * ext4dec_ext4_exit() - remove the hooks and release ext4
 *
 * Every inode must have been deactivated first.
 */
void ext4dec_ext4_exit(void)
{
	ext4dec_hooks_remove(hooks, ARRAY_SIZE(hooks));
	module_put(ext4_type->owner);
}
