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
 * the page (every page of it, inflated once), and no more than
 * fault_around_kb after it (none by default, none for MADV_RANDOM), which
 * the inflate workers fill while the fault goes on: the chunk is the
 * read-around.  Like filemap_fault(), it drops the mmap lock (or the VMA
 * lock) while it reads when the fault may be retried, and the retry maps
 * the page.  Everything else, a page found in the cache (locked or not
 * uptodate), a page past EOF, mappings advised MADV_SEQUENTIAL and
 * mlock()ed ones, is filemap_fault()'s.  The memcg's pgmajfault does not
 * count these faults (its counting function is not exported).
 */
#include "ext4dec.h"

#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/vmstat.h>

static vm_fault_t ext4dec_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct file *file = vma->vm_file;
	struct inode *inode = file_inode(file);
	bool around = !(vma->vm_flags & VM_RAND_READ);
	struct file *fpin = NULL;
	struct folio *folio;

	/* mlock()ed and sequential mappings, past EOF: filemap_fault()'s */
	if ((vma->vm_flags & (VM_SEQ_READ | VM_LOCKED)) ||
	    (vmf->flags & FAULT_FLAG_RETRY_NOWAIT) ||
	    vmf->pgoff >= DIV_ROUND_UP(i_size_read(inode), PAGE_SIZE))
		return filemap_fault(vmf);
	folio = ext4dec_find_folio(file->f_mapping, vmf->pgoff);
	if (folio) {
		folio_put(folio);
		return filemap_fault(vmf);
	}

	count_vm_event(PGMAJFAULT);
	if (fault_flag_allow_retry_first(vmf->flags)) {
		/* as filemap_fault() does: no mmap or VMA lock held across I/O */
		fpin = get_file(file);
		ext4dec_release_fault_lock(vmf);
	}
	ext4dec_read_chunk(file, vmf->pgoff, around);
	if (!fpin)
		return filemap_fault(vmf) | VM_FAULT_MAJOR;
	/* not uptodate only if the chunk failed: read_folio() on the retry */
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
