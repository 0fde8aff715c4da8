// SPDX-License-Identifier: GPL-2.0
/*
 * What ext4dec knows of ext4, and its only way into it.
 *
 * ext4 exports nothing, so its operation tables are found by name (data
 * symbols, looked up through kprobes), and the functions that hooks.c
 * wraps are read out of those tables: they are then the exact entry
 * points, with the type the caller expects.  Each is checked to be the
 * function of that name before anything is hooked; where one is not (its
 * table not found, its slot empty, another function there), the log names
 * the target and the reason, and the module refuses to load.  ext4 is
 * pinned for as long as the module is loaded.
 *
 * The rest of the module calls the wrapped functions through the functions
 * here (a call from inside the module runs the original, see ftrace.c),
 * and reads ext4's flags of an inode and its block map here.  The file
 * operations of a file left open across a deactivation call ext4's own
 * table (file.c), none of whose functions is wrapped.  Nothing here calls
 * back into the rest of the module.
 */
#include "ext4dec.h"

#include <linux/fileattr.h>
#include <linux/iomap.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/stringify.h>

/* the operation tables of ext4 that hold the functions ext4dec wraps */
enum ext4dec_table {
	EXT4DEC_FOPS,
	EXT4DEC_IOPS,
	EXT4DEC_SOPS,
	EXT4DEC_IOMAP_OPS,
	EXT4DEC_NR_TABLES
};

static const char *const ext4dec_table_names[EXT4DEC_NR_TABLES] = {
	[EXT4DEC_FOPS] = "ext4_file_operations",
	[EXT4DEC_IOPS] = "ext4_file_inode_operations",
	[EXT4DEC_SOPS] = "ext4_sops",
	[EXT4DEC_IOMAP_OPS] = "ext4_iomap_ops",
};

/* Each target: the function's name, and where ext4 keeps its address */
static const struct ext4dec_target_info {
	const char *name;
	enum ext4dec_table table;
	const char *member;
} ext4dec_targets[EXT4DEC_NR_TARGETS] = {
	[EXT4DEC_FILE_OPEN] = { "ext4_file_open", EXT4DEC_FOPS, "open" },
	[EXT4DEC_FILE_GETATTR] = { "ext4_file_getattr", EXT4DEC_IOPS, "getattr" },
	[EXT4DEC_FILEATTR_SET] = { "ext4_fileattr_set", EXT4DEC_IOPS, "fileattr_set" },
	[EXT4DEC_IOCTL] = { "ext4_ioctl", EXT4DEC_FOPS, "unlocked_ioctl" },
#ifdef CONFIG_COMPAT
	[EXT4DEC_COMPAT_IOCTL] = { "ext4_compat_ioctl", EXT4DEC_FOPS, "compat_ioctl" },
#endif
	[EXT4DEC_READ_ITER] = { "ext4_file_read_iter", EXT4DEC_FOPS, "read_iter" },
#ifdef EXT4DEC_HOOK_SPLICE_READ
	[EXT4DEC_SPLICE_READ] = { "ext4_file_splice_read", EXT4DEC_FOPS, "splice_read" },
#endif
#ifdef EXT4DEC_IOMAP_BEGIN_BY_NAME
	/* in no table: found by its name (compat.h) */
	[EXT4DEC_IOMAP_BEGIN] = { "ext4_iomap_begin", EXT4DEC_IOMAP_OPS, NULL },
#else
	[EXT4DEC_IOMAP_BEGIN] = { "ext4_iomap_begin", EXT4DEC_IOMAP_OPS, "iomap_begin" },
#endif
	[EXT4DEC_FIEMAP] = { "ext4_fiemap", EXT4DEC_IOPS, "fiemap" },
	[EXT4DEC_LLSEEK] = { "ext4_llseek", EXT4DEC_FOPS, "llseek" },
	[EXT4DEC_EVICT_INODE] = { "ext4_evict_inode", EXT4DEC_SOPS, "evict_inode" },
};

/* ext4's functions and tables, found at init and never changed */
static struct {
	int (*file_open)(struct inode *inode, struct file *file);
	int (*file_getattr)(struct mnt_idmap *idmap, const struct path *path,
			    struct kstat *stat, u32 request_mask,
			    unsigned int query_flags);
	int (*fileattr_set)(struct mnt_idmap *idmap, struct dentry *dentry,
			    struct fileattr *fa);
	long (*ioctl)(struct file *file, unsigned int cmd, unsigned long arg);
	long (*compat_ioctl)(struct file *file, unsigned int cmd, unsigned long arg);
	ssize_t (*read_iter)(struct kiocb *iocb, struct iov_iter *to);
	ssize_t (*splice_read)(struct file *in, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags);
	int (*fiemap)(struct inode *inode, struct fiemap_extent_info *fieinfo,
		      u64 start, u64 len);
	loff_t (*llseek)(struct file *file, loff_t offset, int whence);
	void (*evict_inode)(struct inode *inode);
	const void *iomap_begin;
	const struct iomap_ops *report_ops;
	const struct address_space_operations *journalled_aops;
} ext4dec_ext4_fns __ro_after_init;

static struct file_system_type *ext4dec_ext4_type;

/*
 * Address of a kernel data symbol (needs CONFIG_KALLSYMS_ALL), or NULL.
 *
 * kallsyms_lookup_name() is not exported, and calling it through a pointer
 * faults on kernels with IBT, where it has no ENDBR.  register_kprobe()
 * resolves the name before refusing a probe on data, and leaves the address
 * in the kprobe.  Only data symbols are looked up this way: function
 * addresses come from the operation tables that hold them (the one that
 * none holds: ext4dec_lookup_text()).
 */
static const void *ext4dec_lookup_data(const char *name)
{
	struct kprobe kp = { .symbol_name = name };

#ifdef EXT4DEC_TEST_SYMBOL
	/* test builds: another name for one symbol (Kbuild) */
	if (!strcmp(name, __stringify(EXT4DEC_TEST_SYMBOL)))
		kp.symbol_name = __stringify(EXT4DEC_TEST_SYMBOL_NAME);
#endif

	if (!register_kprobe(&kp)) {
		/* a text symbol: not what this is for */
		unregister_kprobe(&kp);
		kp.addr = NULL;
	}
	return kp.addr;
}

/*
 * Address of a kernel function that none of ext4's tables holds, or NULL.
 * The kprobe is registered disabled, only to resolve the name: it is
 * never armed.
 */
static __maybe_unused void *ext4dec_lookup_text(const char *name)
{
	struct kprobe kp = { .symbol_name = name, .flags = KPROBE_FLAG_DISABLED };
	void *addr;

	if (register_kprobe(&kp))
		return NULL;
	addr = kp.addr;
	unregister_kprobe(&kp);
	return addr;
}

/*
 * The name target @t must have.  Test builds expect another name for one
 * target (EXT4DEC_TEST_TARGET, see Kbuild).
 */
static const char *ext4dec_target_name(enum ext4dec_target t)
{
#ifdef EXT4DEC_TEST_TARGET
	if (!strcmp(ext4dec_targets[t].name, __stringify(EXT4DEC_TEST_TARGET)))
		return __stringify(EXT4DEC_TEST_NAME);
#endif
	return ext4dec_targets[t].name;
}

/* The function of ext4 that target @t stands for */
static const void *ext4dec_target_fn(enum ext4dec_target t)
{
	switch (t) {
	case EXT4DEC_FILE_OPEN:
		return ext4dec_ext4_fns.file_open;
	case EXT4DEC_FILE_GETATTR:
		return ext4dec_ext4_fns.file_getattr;
	case EXT4DEC_FILEATTR_SET:
		return ext4dec_ext4_fns.fileattr_set;
	case EXT4DEC_IOCTL:
		return ext4dec_ext4_fns.ioctl;
#ifdef CONFIG_COMPAT
	case EXT4DEC_COMPAT_IOCTL:
		return ext4dec_ext4_fns.compat_ioctl;
#endif
	case EXT4DEC_READ_ITER:
		return ext4dec_ext4_fns.read_iter;
#ifdef EXT4DEC_HOOK_SPLICE_READ
	case EXT4DEC_SPLICE_READ:
		return ext4dec_ext4_fns.splice_read;
#endif
	case EXT4DEC_FIEMAP:
		return ext4dec_ext4_fns.fiemap;
	case EXT4DEC_LLSEEK:
		return ext4dec_ext4_fns.llseek;
	case EXT4DEC_EVICT_INODE:
		return ext4dec_ext4_fns.evict_inode;
	case EXT4DEC_IOMAP_BEGIN:
		return ext4dec_ext4_fns.iomap_begin;
	default:
		return NULL;
	}
}

/*
 * Check that target @t, read from @table (NULL if that table was not
 * found), is the function of its name; log why not.
 */
static int ext4dec_check_target(enum ext4dec_target t, const void *table)
{
	const char *tname = ext4dec_table_names[ext4dec_targets[t].table];
	const char *member = ext4dec_targets[t].member;
	const char *name = ext4dec_target_name(t);
	const void *fn = ext4dec_target_fn(t);
	char sym[KSYM_SYMBOL_LEN];

	if (!member) {		/* found by its name */
		if (!fn) {
			pr_err("hook %s: not found\n", name);
			return -ENOENT;
		}
	} else if (!table) {
		pr_err("hook %s: %s not found\n", name, tname);
		return -ENOENT;
	} else if (!fn) {
		pr_err("hook %s: %s.%s is NULL\n", name, tname, member);
		return -ENOENT;
	}
	/* without the " [ext4]" of a modular ext4 */
	snprintf(sym, sizeof(sym), "%ps", fn);
	*strchrnul(sym, ' ') = '\0';
	if (strcmp(sym, name)) {
		if (member)
			pr_err("hook %s: %s.%s is %s, not %s\n", name, tname,
			       member, sym, name);
		else
			pr_err("hook %s: the name gives %s\n", name, sym);
		return -ENOENT;
	}
	return 0;
}

/*
 * Find ext4's functions through its operation tables, and its other
 * tables.  Every target is checked, so that the log names all that are
 * not as expected; any of them refuses the load.
 */
static int ext4dec_ext4_resolve(void)
{
	const void *tables[EXT4DEC_NR_TABLES];
	const struct file_operations *fops;
	const struct inode_operations *iops;
	const struct super_operations *sops;
	unsigned int i;
	int err = 0;

	for (i = 0; i < EXT4DEC_NR_TABLES; i++)
		tables[i] = ext4dec_lookup_data(ext4dec_table_names[i]);
	fops = tables[EXT4DEC_FOPS];
	iops = tables[EXT4DEC_IOPS];
	sops = tables[EXT4DEC_SOPS];
	if (fops) {
		ext4dec_ext4_fns.file_open = fops->open;
		ext4dec_ext4_fns.ioctl = fops->unlocked_ioctl;
#ifdef CONFIG_COMPAT
		ext4dec_ext4_fns.compat_ioctl = fops->compat_ioctl;
#endif
		ext4dec_ext4_fns.read_iter = fops->read_iter;
		ext4dec_ext4_fns.splice_read = fops->splice_read;
		ext4dec_ext4_fns.llseek = fops->llseek;
	}
	if (iops) {
		ext4dec_ext4_fns.file_getattr = iops->getattr;
		ext4dec_ext4_fns.fileattr_set = iops->fileattr_set;
		ext4dec_ext4_fns.fiemap = iops->fiemap;
	}
	if (sops)
		ext4dec_ext4_fns.evict_inode = sops->evict_inode;
#ifdef EXT4DEC_IOMAP_BEGIN_BY_NAME
	ext4dec_ext4_fns.iomap_begin =
		ext4dec_lookup_text(ext4dec_target_name(EXT4DEC_IOMAP_BEGIN));
#else
	if (tables[EXT4DEC_IOMAP_OPS])
		ext4dec_ext4_fns.iomap_begin = ((const struct iomap_ops *)
						tables[EXT4DEC_IOMAP_OPS])->iomap_begin;
#endif
	for (i = 0; i < EXT4DEC_NR_TARGETS; i++) {
		int e = ext4dec_check_target(i, tables[ext4dec_targets[i].table]);

		if (!err)
			err = e;
	}

	ext4dec_ext4_fns.report_ops = ext4dec_lookup_data("ext4_iomap_report_ops");
	if (!ext4dec_ext4_fns.report_ops) {
		pr_err("ext4_iomap_report_ops not found: no block map of compressed files\n");
		err = -ENOENT;
	}
	/*
	 * Without it, files of a data=journal mount would be activated, and
	 * their chunks read from the device before the journal wrote them
	 * there.
	 */
	ext4dec_ext4_fns.journalled_aops = ext4dec_lookup_data("ext4_journalled_aops");
	if (!ext4dec_ext4_fns.journalled_aops) {
		pr_err("ext4_journalled_aops not found: data=journal files cannot be recognised\n");
		err = -ENOENT;
	}
	return err;
}

/**
 * ext4dec_ext4_init() - pin ext4 and find the functions ext4dec uses
 *
 * Return: 0, or -ENOENT with each reason logged.
 */
int ext4dec_ext4_init(void)
{
	int err;

	ext4dec_ext4_type = get_fs_type("ext4");
	if (!ext4dec_ext4_type) {
		pr_err("ext4 is not available\n");
		return -ENOENT;
	}
	err = ext4dec_ext4_resolve();
	if (err)
		module_put(ext4dec_ext4_type->owner);
	return err;
}

/**
 * ext4dec_ext4_exit() - release ext4; nothing of it may be in use
 */
void ext4dec_ext4_exit(void)
{
	module_put(ext4dec_ext4_type->owner);
}

/**
 * ext4dec_ext4_target() - a function of ext4 that ext4dec wraps
 * @t: which
 * @name: set to its name
 *
 * Return: its entry point, checked by ext4dec_ext4_init().
 */
unsigned long ext4dec_ext4_target(enum ext4dec_target t, const char **name)
{
	*name = ext4dec_target_name(t);
	return (unsigned long)ext4dec_target_fn(t);
}

/**
 * ext4dec_ext4_open() - ext4_file_open()
 * @inode: the inode
 * @file: the file being opened
 *
 * Return: what ext4 returns.
 */
int ext4dec_ext4_open(struct inode *inode, struct file *file)
{
	return ext4dec_ext4_fns.file_open(inode, file);
}

/**
 * ext4dec_ext4_getattr() - ext4_file_getattr()
 * @idmap: idmap of the mount
 * @path: the file
 * @stat: filled in
 * @request_mask: the STATX_ fields wanted
 * @query_flags: AT_ flags of the query
 *
 * Return: what ext4 returns.
 */
int ext4dec_ext4_getattr(struct mnt_idmap *idmap, const struct path *path,
			 struct kstat *stat, u32 request_mask,
			 unsigned int query_flags)
{
	return ext4dec_ext4_fns.file_getattr(idmap, path, stat, request_mask, query_flags);
}

/**
 * ext4dec_ext4_fileattr_set() - ext4_fileattr_set()
 * @idmap: idmap of the mount
 * @dentry: the file
 * @fa: the new attributes
 *
 * Context: the inode lock held, as by the VFS.
 * Return: what ext4 returns.
 */
int ext4dec_ext4_fileattr_set(struct mnt_idmap *idmap, struct dentry *dentry,
			      struct fileattr *fa)
{
	return ext4dec_ext4_fns.fileattr_set(idmap, dentry, fa);
}

/**
 * ext4dec_ext4_ioctl() - ext4_ioctl(), or ext4_compat_ioctl()
 * @file: the file
 * @cmd: ioctl number
 * @arg: its argument
 * @compat: a 32-bit caller's ioctl
 *
 * Return: what ext4 returns.
 */
long ext4dec_ext4_ioctl(struct file *file, unsigned int cmd, unsigned long arg,
			bool compat)
{
#ifdef CONFIG_COMPAT
	if (compat)
		return ext4dec_ext4_fns.compat_ioctl(file, cmd, arg);
#endif
	return ext4dec_ext4_fns.ioctl(file, cmd, arg);
}

/**
 * ext4dec_ext4_read_iter() - ext4_file_read_iter()
 * @iocb: the read
 * @to: where to
 *
 * Return: what ext4 returns.
 */
ssize_t ext4dec_ext4_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	return ext4dec_ext4_fns.read_iter(iocb, to);
}

/**
 * ext4dec_ext4_splice_read() - ext4's splice_read
 * @in: the file
 * @ppos: where to read, moved past what was spliced
 * @pipe: where to, locked by the caller or private to it
 * @len: bytes at most
 * @flags: SPLICE_F_*
 *
 * Return: what ext4 returns.
 */
ssize_t ext4dec_ext4_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
	return ext4dec_ext4_fns.splice_read(in, ppos, pipe, len, flags);
}

/**
 * ext4dec_ext4_fiemap() - ext4_fiemap()
 * @inode: the inode
 * @fieinfo: the request
 * @start: first byte
 * @len: bytes
 *
 * Return: what ext4 returns.
 */
int ext4dec_ext4_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
			u64 start, u64 len)
{
	return ext4dec_ext4_fns.fiemap(inode, fieinfo, start, len);
}

/**
 * ext4dec_ext4_llseek() - ext4_llseek()
 * @file: the file
 * @offset: the offset
 * @whence: SEEK_*
 *
 * Return: what ext4 returns.
 */
loff_t ext4dec_ext4_llseek(struct file *file, loff_t offset, int whence)
{
	return ext4dec_ext4_fns.llseek(file, offset, whence);
}

/**
 * ext4dec_ext4_evict_inode() - ext4_evict_inode()
 * @inode: the inode being evicted
 */
void ext4dec_ext4_evict_inode(struct inode *inode)
{
	ext4dec_ext4_fns.evict_inode(inode);
}

/**
 * ext4dec_ext4_flags() - the inode's FS_*_FL flags, as FS_IOC_GETFLAGS
 * @inode: an ext4 inode
 * @dentry: a dentry of it
 * @flags: set to the flags
 *
 * Read through ext4's own fileattr_get: EXT4_I() is private to ext4.
 *
 * Return: 0 or a negative errno.
 */
int ext4dec_ext4_flags(struct inode *inode, struct dentry *dentry, u32 *flags)
{
	struct fileattr fa = { .flags_valid = true };
	int err;

	if (!inode->i_op->fileattr_get)
		return -ENOTTY;
	err = inode->i_op->fileattr_get(dentry, &fa);
	if (!err)
		*flags = fa.flags;
	return err;
}

/**
 * ext4dec_ext4_journalled() - whether the inode's data goes through the
 *	journal because of the mount (data=journal)
 * @inode: an ext4 regular file
 *
 * The inode's own +j flag is ext4dec_ext4_flags()'s FS_JOURNAL_DATA_FL.
 *
 * Return: true if its address space operations are ext4's journalled ones.
 */
bool ext4dec_ext4_journalled(const struct inode *inode)
{
	return inode->i_mapping->a_ops == ext4dec_ext4_fns.journalled_aops;
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
	err = ext4dec_iomap_begin(ext4dec_ext4_fns.report_ops, inode, pos, len,
				  IOMAP_REPORT, map, &srcmap);
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
