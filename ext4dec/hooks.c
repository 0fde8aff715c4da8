// SPDX-License-Identifier: GPL-2.0
/*
 * The wrappers of ext4's functions, which make ext4 hand +c files to
 * ext4dec:
 *
 *   ext4_file_open      activate a +c inode on its first read-only open and
 *                       switch the file to ext4dec's file operations
 *   ext4_file_getattr   activate before stat by a caller who may read the
 *                       file, so sizes are right at once
 *   ext4_fileattr_set   chattr: +c activates (EINVAL if not szip), -c
 *                       deactivates (EBUSY while open elsewhere or mapped);
 *                       no switching the data path of an active inode
 *   ext4_fiemap         FIEMAP of an active inode: one encoded extent, not
 *                       the compressed blocks
 *   ext4_llseek         SEEK_DATA/SEEK_HOLE in files opened before
 *                       activation: the uncompressed size
 *   ext4_file_read_iter reads through such files: decompressed once the
 *                       inode is active, never a mix
 *   ext4_file_splice_read  and splices (6.5 and later: before, ext4
 *                       spliced through ext4_file_read_iter)
 *   ext4_iomap_begin    no block of an active inode mapped for direct I/O
 *                       (ext4dec_iomap_want())
 *   ext4_compat_ioctl   refuse ioctls that move or rewrite data of an
 *   ext4_ioctl          active inode, also on files opened before
 *                       activation; the others never reach the wrapper
 *                       (ext4dec_ioctl_want())
 *   ext4_evict_inode    drop ext4dec's state before ext4 frees the inode
 *
 * They are installed in that order from the bottom up (enum
 * ext4dec_target), and no inode is activated before all are in
 * (ext4dec_activations_start()).  Each wrapper runs in place of the
 * function (ftrace.c) and calls the original through ext4.c.  This is the
 * top of the module's calls: the wrappers call activation (activate.c)
 * and the file operations (file.c), neither of which calls back here.
 */
#include "ext4dec.h"

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fileattr.h>
#include <linux/module.h>

/*
 * A +c regular file that is not active, that nobody is writing, and that
 * was not refused before (unless it changed since: policy.c).
 */
static bool ext4dec_wants_activation(struct inode *inode,
				     struct dentry *dentry)
{
	u32 flags;

	return S_ISREG(inode->i_mode) && !ext4dec_state(inode) &&
	       atomic_read(&inode->i_writecount) <= 0 && inode->i_nlink &&
	       !ext4dec_ext4_flags(inode, dentry, &flags) &&
	       (flags & FS_COMPR_FL) && !ext4dec_refusal_remembered(inode);
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
static int ext4dec_maybe_activate(struct inode *inode, struct dentry *dentry,
				  bool trylock)
{
	int err = 0;

	if (!ext4dec_wants_activation(inode, dentry))
		return 0;
	if (trylock) {
		if (!inode_trylock(inode))
			return 0;
	} else {
		inode_lock(inode);
	}
	if (ext4dec_wants_activation(inode, dentry))
		err = ext4dec_activate(inode, dentry);
	inode_unlock(inode);
	return err == -ENOMEM || err == -EIO ? err : 0;
}

static int ext4dec_file_open_hook(struct inode *inode, struct file *file)
{
	int ret = 0, idx;

	idx = ext4dec_hook_enter();
	if (!(file->f_mode & FMODE_WRITE))
		ret = ext4dec_maybe_activate(inode, file->f_path.dentry, false);
	if (ret)
		goto out;
	/* the reference fops_get() would take; the module is not going away */
	if (ext4dec_state(inode) && try_module_get(THIS_MODULE)) {
		replace_fops(file, &ext4dec_fops);
		ret = ext4dec_fops.open(inode, file);
		goto out;
	}
	ret = ext4dec_ext4_open(inode, file);
out:
	ext4dec_hook_exit(idx);
	return ret;
}

static int ext4dec_getattr_hook(struct mnt_idmap *idmap,
				const struct path *path, struct kstat *stat,
				u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	int ret = 0, idx;

	idx = ext4dec_hook_enter();
	/*
	 * Only for a caller who could open it to read: activation denies
	 * writes, and a stat, which needs no permission on the file, must
	 * not change what its owner can do.
	 */
	if (ext4dec_wants_activation(inode, path->dentry) &&
	    !inode_permission(idmap, inode, MAY_READ))
		ret = ext4dec_maybe_activate(inode, path->dentry, true);
	if (!ret)
		ret = ext4dec_ext4_getattr(idmap, path, stat, request_mask,
					   query_flags);
	ext4dec_hook_exit(idx);
	return ret;
}

struct ext4dec_own_files {
	struct inode *inode;
	unsigned int count;
	const struct file *seen[16];
};

/* Count each open file of the inode once, whatever its descriptors. */
static int ext4dec_count_own(const void *arg, struct file *file,
			     unsigned int fd)
{
	struct ext4dec_own_files *own = (struct ext4dec_own_files *)arg;
	unsigned int i;

	if (file_inode(file) != own->inode || !ext4dec_file_live(file))
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
static unsigned int ext4dec_own_opens(struct inode *inode)
{
	struct ext4dec_own_files own = { .inode = inode };

	if (current->files)
		iterate_fd(current->files, 0, ext4dec_count_own, &own);
	return own.count;
}

/*
 * chattr on an ext4 file; the VFS holds the inode lock.  +c activates
 * first, so that only an szip file that can be served gets the flag; -c
 * deactivates first, so that ext4 clears the flag of a raw file.
 */
static int ext4dec_fileattr_change(struct mnt_idmap *idmap,
				   struct dentry *dentry, struct fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	u32 old, changed;
	int err;

	if (!S_ISREG(inode->i_mode) || ext4dec_ext4_flags(inode, dentry, &old))
		return ext4dec_ext4_fileattr_set(idmap, dentry, fa);
	changed = old ^ fa->flags;

	if (ext4dec_state(inode)) {
		if (changed & (FS_JOURNAL_DATA_FL | FS_DAX_FL | FS_EXTENT_FL)) {
			ext4dec_warn(inode, "%pd: cannot change data journaling, DAX or the block map of a compressed file",
				     dentry);
			return -EBUSY;
		}
		if (changed & FS_COMPR_FL) {
			err = ext4dec_deactivate(inode,
						 ext4dec_own_opens(inode));
			if (err)
				return err;
		}
		return ext4dec_ext4_fileattr_set(idmap, dentry, fa);
	}
	if (changed & fa->flags & FS_COMPR_FL) {
		err = ext4dec_activate(inode, dentry);
		if (err)
			return err;
		err = ext4dec_ext4_fileattr_set(idmap, dentry, fa);
		if (err)
			ext4dec_deactivate_force(inode);
		return err;
	}
	return ext4dec_ext4_fileattr_set(idmap, dentry, fa);
}

static int ext4dec_fileattr_set_hook(struct mnt_idmap *idmap,
				     struct dentry *dentry,
				     struct fileattr *fa)
{
	int ret, idx;

	idx = ext4dec_hook_enter();
	ret = ext4dec_fileattr_change(idmap, dentry, fa);
	ext4dec_hook_exit(idx);
	return ret;
}

static long ext4dec_ioctl_hook(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	int idx = ext4dec_hook_enter();
	long ret;

	ret = ext4dec_ioctl(file, cmd, arg, false);
	ext4dec_hook_exit(idx);
	return ret;
}

/*
 * Only the ioctls that move or rewrite data, report the raw block map or
 * ask ext4dec's status go to the wrapper: the others
 * (every ioctl on every ext4 file, isatty()'s included) run ext4's alone,
 * and may wait as long as they like (on user memory, for one) without
 * holding up unload.
 */
static bool notrace ext4dec_ioctl_want(struct ftrace_regs *fregs)
{
	return ext4dec_ioctl_hooked(ext4dec_ftrace_arg(fregs, 1));
}

#ifdef CONFIG_COMPAT
static long ext4dec_compat_ioctl_hook(struct file *file, unsigned int cmd,
				      unsigned long arg)
{
	int idx = ext4dec_hook_enter();
	long ret;

	ret = ext4dec_ioctl(file, cmd, arg, true);
	ext4dec_hook_exit(idx);
	return ret;
}
#endif

static ssize_t ext4dec_read_iter_hook(struct kiocb *iocb, struct iov_iter *to)
{
	int idx;
	ssize_t ret;

	idx = ext4dec_hook_enter();
	ret = ext4dec_file_read(iocb, to);
	ext4dec_hook_exit(idx);
	return ret;
}

#ifdef EXT4DEC_HOOK_SPLICE_READ
static ssize_t ext4dec_splice_read_hook(struct file *in, loff_t *ppos,
					struct pipe_inode_info *pipe,
					size_t len, unsigned int flags)
{
	int idx = ext4dec_hook_enter();
	ssize_t ret;

	ret = ext4dec_file_splice_read(in, ppos, pipe, len, flags);
	ext4dec_hook_exit(idx);
	return ret;
}
#endif

/*
 * Direct I/O maps an inode's blocks through ext4_iomap_ops.  The only way
 * there for an active inode is a direct read through a file opened before
 * activation that passed the read hook's check while the inode was
 * inactive, then waited in ext4 for the inode lock that the activation
 * held: its blocks hold compressed data.  Asynchronous (aio, io_uring),
 * it would be queued and read them.  Mapping fails instead, before any
 * I/O, so ext4 returns the error at once, and the read hook, which sees
 * the view changed, does the read again decompressed.  Every other call
 * goes straight to ext4: this filter is all that runs for them.
 */
static bool notrace ext4dec_iomap_want(struct ftrace_regs *fregs)
{
	return ext4dec_state((struct inode *)ext4dec_ftrace_arg(fregs, 0));
}

static int ext4dec_iomap_begin_hook(struct inode *inode, loff_t pos, loff_t length,
				    unsigned int flags, struct iomap *iomap,
				    struct iomap *srcmap)
{
	int idx = ext4dec_hook_enter();

	ext4dec_hook_exit(idx);
	return -EIO;
}

static loff_t ext4dec_llseek_hook(struct file *file, loff_t offset, int whence)
{
	int idx;
	loff_t ret;

	idx = ext4dec_hook_enter();
	ret = ext4dec_file_llseek(file, offset, whence);
	ext4dec_hook_exit(idx);
	return ret;
}

static int ext4dec_fiemap_hook(struct inode *inode, struct fiemap_extent_info *fieinfo,
			       u64 start, u64 len)
{
	int idx = ext4dec_hook_enter();
	int ret;

	ret = ext4dec_fiemap(inode, fieinfo, start, len);
	ext4dec_hook_exit(idx);
	return ret;
}

static void ext4dec_evict_inode_hook(struct inode *inode)
{
	int idx = ext4dec_hook_enter();

	ext4dec_evict(inode);
	ext4dec_ext4_evict_inode(inode);
	ext4dec_hook_exit(idx);
}

static struct ext4dec_hook ext4dec_hooks[EXT4DEC_NR_TARGETS] = {
	[EXT4DEC_FILE_OPEN] = { .wrapper = ext4dec_file_open_hook },
	[EXT4DEC_FILE_GETATTR] = { .wrapper = ext4dec_getattr_hook },
	[EXT4DEC_FILEATTR_SET] = { .wrapper = ext4dec_fileattr_set_hook },
	[EXT4DEC_IOCTL] = { .wrapper = ext4dec_ioctl_hook,
			    .want = ext4dec_ioctl_want },
#ifdef CONFIG_COMPAT
	[EXT4DEC_COMPAT_IOCTL] = { .wrapper = ext4dec_compat_ioctl_hook,
				   .want = ext4dec_ioctl_want },
#endif
	[EXT4DEC_READ_ITER] = { .wrapper = ext4dec_read_iter_hook },
#ifdef EXT4DEC_HOOK_SPLICE_READ
	[EXT4DEC_SPLICE_READ] = { .wrapper = ext4dec_splice_read_hook },
#endif
	[EXT4DEC_IOMAP_BEGIN] = { .wrapper = ext4dec_iomap_begin_hook,
				  .want = ext4dec_iomap_want },
	[EXT4DEC_LLSEEK] = { .wrapper = ext4dec_llseek_hook },
	[EXT4DEC_FIEMAP] = { .wrapper = ext4dec_fiemap_hook },
	[EXT4DEC_EVICT_INODE] = { .wrapper = ext4dec_evict_inode_hook },
};

/**
 * ext4dec_hooks_init() - find ext4's functions and wrap them
 *
 * Return: 0, or a negative errno with the reason logged.
 */
int ext4dec_hooks_init(void)
{
	unsigned int t;
	int err;

	err = ext4dec_ext4_init();
	if (err)
		return err;
	for (t = 0; t < EXT4DEC_NR_TARGETS; t++)
		ext4dec_hooks[t].address =
			ext4dec_ext4_target(t, &ext4dec_hooks[t].name);
	err = ext4dec_hooks_install(ext4dec_hooks, ARRAY_SIZE(ext4dec_hooks));
	if (err)
		ext4dec_ext4_exit();
	return err;
}

/**
 * ext4dec_hooks_names() - the functions wrapped, for the log
 * @buf: filled with their names, separated by ", "
 * @size: size of @buf
 */
void ext4dec_hooks_names(char *buf, size_t size)
{
	size_t t, len = 0;

	buf[0] = '\0';
	for (t = 0; t < ARRAY_SIZE(ext4dec_hooks) && len < size; t++)
		len += scnprintf(buf + len, size - len, "%s%s", t ? ", " : "",
				 ext4dec_hooks[t].name);
}

/**
 * ext4dec_hooks_exit() - unwrap ext4's functions and release ext4
 *
 * Every inode must have been deactivated first.
 */
void ext4dec_hooks_exit(void)
{
	ext4dec_hooks_remove(ext4dec_hooks, ARRAY_SIZE(ext4dec_hooks));
	ext4dec_ext4_exit();
}
