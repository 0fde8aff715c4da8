// SPDX-License-Identifier: GPL-2.0
/*
 * Page faults on mappings of active inodes.
 *
 * The generic fault path (filemap_fault()) reads around a page it misses:
 * a window of the file's readahead size centred on it, and more behind
 * each readahead mark.  For a plain file a page read around and never
 * used costs a little I/O; for a compressed file it costs a page
 * allocation (zeroed, on kernels that initialise on allocation) and its
 * share of a chunk's inflation, and the window grows with readahead_kb.
 * A program's start touches its libraries scattered: Firefox's start
 * touches 5,300 of libxul.so's 44,860 pages, in 1,292 of its 5,608
 * chunks of 32 KiB, while the read-around inflated 3,697 of them.
 *
 * So a fault that misses the page cache reads the whole chunk that holds
 * the page (every page of it, inflated once), and no more: the chunk is
 * the read-around.  Like filemap_fault(), it drops the mmap lock (or the
 * VMA lock) while it reads when the fault may be retried, and the retry
 * maps the page.  Everything else, a page found in the cache, locked or
 * not uptodate, and mappings advised MADV_SEQUENTIAL, is filemap_fault()'s.
 */
#include "ext4dec.h"

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/vmstat.h>

static vm_fault_t ext4dec_fault(struct vm_fault *vmf)
{
	struct file *file = vmf->vma->vm_file;
	struct file *fpin = NULL;
	struct folio *folio;

	if ((vmf->vma->vm_flags & VM_SEQ_READ) ||
	    (vmf->flags & FAULT_FLAG_RETRY_NOWAIT))
		return filemap_fault(vmf);
	folio = ext4dec_find_folio(file->f_mapping, vmf->pgoff);
	if (folio) {
		folio_put(folio);
		return filemap_fault(vmf);
	}

	count_vm_event(PGMAJFAULT);
	if (fault_flag_allow_retry_first(vmf->flags)) {
		/* as filemap_fault() does: no mmap lock held across I/O */
		fpin = get_file(file);
		ext4dec_release_fault_lock(vmf);
	}
	ext4dec_read_chunk(file, vmf->pgoff);
	if (!fpin)
		return filemap_fault(vmf);
	/* workers may still be inflating it: wait here, without the lock */
	folio = ext4dec_find_folio(file->f_mapping, vmf->pgoff);
	if (folio) {
		folio_wait_locked_killable(folio);
		folio_put(folio);
	}
	fput(fpin);
	return VM_FAULT_RETRY | VM_FAULT_MAJOR;
}

static const struct vm_operations_struct ext4dec_vm_ops = {
	.fault		= ext4dec_fault,
	.map_pages	= filemap_map_pages,
};

/**
 * ext4dec_file_mmap() - map an active inode
 * @file: an open file of the inode, with ext4dec's file operations
 * @vma: the new mapping
 *
 * Read-only when shared, as generic_file_readonly_mmap() checks.
 *
 * Return: 0, or -EINVAL for a writable shared mapping.
 */
int ext4dec_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	int err = generic_file_readonly_mmap(file, vma);

	if (!err)
		vma->vm_ops = &ext4dec_vm_ops;
	return err;
}
