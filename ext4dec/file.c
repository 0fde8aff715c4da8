// SPDX-License-Identifier: GPL-2.0
/*
 * File operations of active inodes.
 *
 * Reads go through the page cache, which ext4dec's address space
 * operations fill with inflated chunks; O_DIRECT reads are served from it
 * too (the blocks on disk hold compressed data).  There is no write_iter
 * and no fallocate; write access is denied anyway.  Mappings are read-only
 * when shared.  Seeks use the uncompressed size, all of it data.
 *
 * Files get these operations from the ext4_file_open() hook (the inode's
 * i_fop stays ext4's).  Each open file holds a reference on the inode's
 * state in private_data.  If the inode is deactivated while the file stays
 * open (chattr -c run by the process holding it), the file reads as one
 * opened with ext4's operations.
 *
 * Files opened with ext4's operations (before activation, or while the
 * inode could not be served) read and seek through the hooks of
 * ext4_file_read_iter() and ext4_llseek(): an active inode decompressed,
 * an inactive one raw, and no read a mix of both (ext4dec_file_read()).
 */
#include "ext4dec.h"

#include <linux/fiemap.h>
#include <linux/module.h>
#include <linux/pipe_fs_i.h>
#include <linux/uio.h>

/* ext4's own FIEMAP flag (fs/ext4/ext4.h): read the extent tree in */
#define EXT4DEC_FIEMAP_FLAG_CACHE	0x00000004

static struct ext4dec_inode *ext4dec_file_state(struct file *file)
{
	return file->private_data;
}

/**
 * ext4dec_file_live() - whether a file uses ext4dec's operations on an
 *	inode that is still active
 * @file: an open file
 *
 * Return: false for files with other operations, and for files whose
 * inode was deactivated while they stayed open (they then fall back to
 * ext4's operations).
 */
bool ext4dec_file_live(struct file *file)
{
	return file->f_op == &ext4dec_fops &&
	       ext4dec_state(file_inode(file)) == file->private_data;
}

static int ext4dec_open(struct inode *inode, struct file *file)
{
	const struct file_operations *raw;
	struct ext4dec_inode *ei;
	int err;

	ei = ext4dec_open_get(inode);
	if (!ei) {
		/* deactivated since the open hook chose these operations */
		raw = fops_get(inode->i_fop);
		if (!raw)
			return -ENODEV;
		replace_fops(file, raw);
		return ext4dec_ext4_open(inode, file);
	}

	file->private_data = ei;
	err = ext4dec_ext4_open(inode, file);
	if (err) {
		file->private_data = NULL;
		ext4dec_open_put(ei);
		return err;
	}
	/* reads may block on I/O and inflation: no IOCB_NOWAIT promises */
	file->f_mode &= ~(FMODE_NOWAIT | EXT4DEC_FMODE_RASYNC);
	file->f_mode |= FMODE_CAN_ODIRECT;
	return 0;
}

static int ext4dec_release(struct inode *inode, struct file *file)
{
	struct ext4dec_inode *ei = ext4dec_file_state(file);

	/* ext4's release must not take private_data for its own */
	file->private_data = NULL;
	if (ei->orig_fop->release)
		ei->orig_fop->release(inode, file);
	ext4dec_open_put(ei);
	return 0;
}

/*
 * A readahead window of compressed bytes is a fraction of the uncompressed
 * one: grow the file's window to at least readahead_kb, so that each read
 * is worth its wait and the workers have chunks to share.  The open file's
 * window is set after ->open() (file_ra_state_init()), hence here.
 */
static void ext4dec_grow_readahead(struct file *file)
{
	unsigned int pages = READ_ONCE(ext4dec_readahead_kb) >> (PAGE_SHIFT - 10);

	if (READ_ONCE(file->f_ra.ra_pages) < pages)
		WRITE_ONCE(file->f_ra.ra_pages, pages);
}

/*
 * Read an active inode, direct reads from the page cache too.  A file
 * opened with ext4's operations has FMODE_NOWAIT (ext4dec's files do not):
 * a read of compressed data cannot keep that promise.  The pages read are
 * noted for readahead, which inflates them in this task (readahead.c).
 */
static ssize_t ext4dec_read_active(struct kiocb *iocb, struct iov_iter *to)
{
	struct ext4dec_reader *r;
	ssize_t ret;

	if (iocb->ki_flags & IOCB_NOWAIT)
		return -EAGAIN;
	if (!iov_iter_count(to))
		return 0;
	ext4dec_grow_readahead(iocb->ki_filp);
	iocb->ki_flags &= ~IOCB_DIRECT;
	r = ext4dec_reader_start(iocb->ki_filp->f_mapping, &iocb->ki_pos, iov_iter_count(to));
	ret = filemap_read(iocb, to, 0);
	ext4dec_reader_end(r);
	return ret;
}

static ssize_t ext4dec_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	if (!ext4dec_file_live(iocb->ki_filp))
		return ext4dec_file_read(iocb, to);
	return ext4dec_read_active(iocb, to);
}

/*
 * Read @inode with its view held still: decompressed if it is active, the
 * read counted as an open (deactivation waits); raw otherwise, under the
 * inode lock, which activation holds throughout, or, for the reads for
 * which ext4 takes that lock itself (direct, DAX), held raw
 * (ext4dec_hold_raw()).
 */
static ssize_t ext4dec_file_read_steady(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	bool nowait = iocb->ki_flags & IOCB_NOWAIT;
	struct ext4dec_raw_hold hold;
	struct ext4dec_inode *ei;
	ssize_t ret;
	int held;

	for (;;) {
		ei = ext4dec_open_get(inode);
		if (ei) {
			ret = ext4dec_read_active(iocb, to);
			ext4dec_open_put(ei);
			return ret;
		}
		if (!(iocb->ki_flags & IOCB_DIRECT) && !IS_DAX(inode)) {
			if (!nowait)
				inode_lock_shared(inode);
			else if (!inode_trylock_shared(inode))
				return -EAGAIN;
			held = !ext4dec_state(inode);
			if (held)
				ret = ext4dec_ext4_read_iter(iocb, to);
			inode_unlock_shared(inode);
			if (held)
				return ret;
		} else {
			held = ext4dec_hold_raw(inode, &hold, nowait);
			if (held < 0)
				return held;
			if (held) {
				ret = ext4dec_ext4_read_iter(iocb, to);
				ext4dec_release_raw(&hold);
				return ret;
			}
		}
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}

/**
 * ext4dec_file_read() - read through a file without live ext4dec operations
 * @iocb: the read
 * @to: where to
 *
 * For the hook of ext4_file_read_iter(), and for files with ext4dec's
 * operations whose inode was deactivated.  An inactive inode is read by
 * ext4, raw; an active one decompressed, direct reads included, while the
 * read holds off deactivation as an open file does.  A read of an
 * inactive inode that an activation or deactivation ran across is undone
 * (the iterator and the position put back, whatever ext4 returned) and
 * done again with the view held still.  A queued asynchronous direct read
 * cannot be done again, but none is queued after an activation: ext4
 * cannot map an active inode's blocks (the ext4_iomap_begin() hook), so
 * one that waited in ext4 for the activation fails here, undone.
 *
 * Context: process; may take the inode lock, shared.
 * Return: bytes read, or a negative errno (-EAGAIN for IOCB_NOWAIT on an
 * active inode, or when the view would have to be waited for).
 */
ssize_t ext4dec_file_read(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	size_t count = iov_iter_count(to);
	loff_t pos = iocb->ki_pos;
	unsigned int seq;
	ssize_t ret;

	/* most reads: no change under way, and an inactive inode */
	if (ext4dec_view_sample(inode, &seq) && !ext4dec_state(inode)) {
		ret = ext4dec_ext4_read_iter(iocb, to);
		if (likely(!ext4dec_view_changed(inode, seq)) || ret == -EIOCBQUEUED)
			return ret;
		iov_iter_revert(to, count - iov_iter_count(to));
		iocb->ki_pos = pos;
	}
	return ext4dec_file_read_steady(iocb, to);
}

/* Splice from an active inode, through the page cache as a read() */
static ssize_t ext4dec_splice_active(struct file *in, loff_t *ppos,
				     struct pipe_inode_info *pipe, size_t len,
				     unsigned int flags)
{
	struct ext4dec_reader *r;
	ssize_t ret;

	if (!len)
		return 0;
	ext4dec_grow_readahead(in);
	r = ext4dec_reader_start(in->f_mapping, ppos, len);
	ret = ext4dec_splice_read(in, ppos, pipe, len, flags);
	ext4dec_reader_end(r);
	return ret;
}

#ifdef EXT4DEC_HOOK_SPLICE_READ
/*
 * Take back what a splice put in @pipe after @head, as iov_iter_revert()
 * did for a pipe when splice went through read_iter: the caller holds
 * the pipe locked (or it is its own, sendfile's), so nobody has seen it.
 */
static void ext4dec_pipe_truncate(struct pipe_inode_info *pipe,
				  unsigned int head)
{
	unsigned int mask = pipe->ring_size - 1;

	while (pipe->head != head) {
		pipe->head--;
		pipe_buf_release(pipe, &pipe->bufs[pipe->head & mask]);
	}
}

/**
 * ext4dec_file_splice_read() - splice from a file without live ext4dec
 *	operations
 * @in: the file
 * @ppos: where to read, moved past what was spliced
 * @pipe: where to, locked by the caller or private to it
 * @len: bytes at most
 * @flags: SPLICE_F_*
 *
 * For the hook of ext4_file_splice_read() and for files with ext4dec's
 * operations whose inode was deactivated: as ext4dec_file_read(), an
 * inactive inode is spliced by ext4, raw, an active one decompressed, and
 * a splice that an activation or deactivation ran across is taken back
 * out of the pipe and done again with the view held still.
 *
 * Context: process; may take the inode lock, shared (after the pipe's).
 * Return: bytes spliced, or a negative errno.
 */
ssize_t ext4dec_file_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
	struct inode *inode = file_inode(in);
	unsigned int head = pipe->head;
	struct ext4dec_inode *ei;
	loff_t pos = *ppos;
	unsigned int seq;
	ssize_t ret;
	bool held;

	/* most splices: no change under way, and an inactive inode */
	if (ext4dec_view_sample(inode, &seq) && !ext4dec_state(inode)) {
		ret = ext4dec_ext4_splice_read(in, ppos, pipe, len, flags);
		if (likely(!ext4dec_view_changed(inode, seq)))
			return ret;
		ext4dec_pipe_truncate(pipe, head);
		*ppos = pos;
	}
	for (;;) {
		ei = ext4dec_open_get(inode);
		if (ei) {
			ret = ext4dec_splice_active(in, ppos, pipe, len, flags);
			ext4dec_open_put(ei);
			return ret;
		}
		/* activation holds the inode lock from start to end */
		inode_lock_shared(inode);
		held = !ext4dec_state(inode);
		if (held)
			ret = ext4dec_ext4_splice_read(in, ppos, pipe, len, flags);
		inode_unlock_shared(inode);
		if (held)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}
#endif

static ssize_t ext4dec_splice(struct file *in, loff_t *ppos,
			      struct pipe_inode_info *pipe, size_t len,
			      unsigned int flags)
{
	if (ext4dec_file_live(in))
		return ext4dec_splice_active(in, ppos, pipe, len, flags);
#ifdef EXT4DEC_HOOK_SPLICE_READ
	return ext4dec_file_splice_read(in, ppos, pipe, len, flags);
#else
	/* through read_iter: ext4dec_file_read() */
	return ext4dec_file_state(in)->orig_fop->splice_read(in, ppos, pipe, len,
							     flags);
#endif
}

static int ext4dec_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (!ext4dec_file_live(file))
		return ext4dec_file_state(file)->orig_fop->mmap(file, vma);
	ext4dec_grow_readahead(file);
	return ext4dec_file_mmap(file, vma);
}

static loff_t ext4dec_llseek(struct file *file, loff_t offset, int whence)
{
	if (!ext4dec_file_live(file))
		return ext4dec_file_llseek(file, offset, whence);
	/* SEEK_DATA/SEEK_HOLE: the whole uncompressed size is data */
	return generic_file_llseek(file, offset, whence);
}

/**
 * ext4dec_file_llseek() - seek in a file without live ext4dec operations
 * @file: the file
 * @offset: the offset
 * @whence: SEEK_*
 *
 * For the hook of ext4_llseek(), and for files with ext4dec's operations
 * whose inode was deactivated: in an active inode, SEEK_DATA and
 * SEEK_HOLE see the uncompressed size, all of it data, not the raw
 * blocks; everything else is ext4's.
 *
 * Return: the new position, or a negative errno.
 */
loff_t ext4dec_file_llseek(struct file *file, loff_t offset, int whence)
{
	if ((whence == SEEK_DATA || whence == SEEK_HOLE) &&
	    ext4dec_state(file_inode(file)))
		return generic_file_llseek(file, offset, whence);
	return ext4dec_ext4_llseek(file, offset, whence);
}

static int ext4dec_fsync(struct file *file, loff_t start, loff_t end,
			 int datasync)
{
	return ext4dec_file_state(file)->orig_fop->fsync(file, start, end, datasync);
}

static long ext4dec_unlocked_ioctl(struct file *file, unsigned int cmd,
				   unsigned long arg)
{
	return ext4dec_ioctl(file, cmd, arg, false);
}

#ifdef CONFIG_COMPAT
static long ext4dec_compat_ioctl(struct file *file, unsigned int cmd,
				 unsigned long arg)
{
	return ext4dec_ioctl(file, cmd, arg, true);
}
#endif

/**
 * ext4dec_fiemap() - FIEMAP of an ext4 file, for the hook of ext4_fiemap()
 * @inode: the inode
 * @fieinfo: the request
 * @start: first byte
 * @len: bytes
 *
 * An active inode's blocks hold compressed data, which no byte range of
 * the file maps to: it is reported as one extent over the whole file,
 * FIEMAP_EXTENT_ENCODED (as btrfs reports its compressed extents) and
 * FIEMAP_EXTENT_UNKNOWN (no physical address), all data and no hole, so
 * that a copier that trusts FIEMAP reads it all.  Extended attributes
 * (FIEMAP_FLAG_XATTR) and inactive inodes are ext4's.
 *
 * Return: 0 or a negative errno.
 */
int ext4dec_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
		   u64 start, u64 len)
{
	loff_t size;
	int err;

	if (fieinfo->fi_flags & FIEMAP_FLAG_XATTR || !ext4dec_state(inode))
		return ext4dec_ext4_fiemap(inode, fieinfo, start, len);
	/* ext4's FIEMAP_FLAG_CACHE reads the extent tree in: nothing to do */
	fieinfo->fi_flags &= ~EXT4DEC_FIEMAP_FLAG_CACHE;
	err = fiemap_prep(inode, fieinfo, start, &len, FIEMAP_FLAG_SYNC);
	if (err)
		return err;
	/* activation and deactivation hold it: the size goes with the view */
	inode_lock_shared(inode);
	if (!ext4dec_state(inode)) {
		inode_unlock_shared(inode);
		return ext4dec_ext4_fiemap(inode, fieinfo, start, len);
	}
	size = i_size_read(inode);
	err = start < size ?
	      fiemap_fill_next_extent(fieinfo, 0, 0, size, FIEMAP_EXTENT_ENCODED |
				      FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_LAST) : 0;
	inode_unlock_shared(inode);
	return err < 0 ? err : 0;
}

const struct file_operations ext4dec_fops = {
	.owner		= THIS_MODULE,
	.open		= ext4dec_open,
	.release	= ext4dec_release,
	.llseek		= ext4dec_llseek,
	.read_iter	= ext4dec_read_iter,
	.splice_read	= ext4dec_splice,
	.mmap		= ext4dec_mmap,
	.fsync		= ext4dec_fsync,
	.unlocked_ioctl	= ext4dec_unlocked_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl	= ext4dec_compat_ioctl,
#endif
};
