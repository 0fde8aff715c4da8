// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/ext4dec: counters (read-only, one value per file).
 *
 *   version              module version
 *   workspaces           inflate workspaces in the pool
 *   active_inodes        inodes served decompressed now
 *   chunks_inflated      chunks decoded successfully
 *   compressed_bytes     compressed bytes read from disk (whole blocks)
 *   uncompressed_bytes   bytes produced by inflation
 *   read_errors          chunks that failed (I/O or corrupt data)
 *   refusals/<reason>    activations refused, by reason
 */
#include "ext4dec.h"

#include <linux/kobject.h>
#include <linux/sysfs.h>

static struct kobject *ext4dec_kobj, *refusals_kobj;
extern unsigned int ext4dec_nr_workspaces;

static ssize_t show_u64(char *buf, atomic64_t *v)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(v));
}

#define COUNTER(name)							\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	return show_u64(buf, &ext4dec_stats.name);			\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

COUNTER(active_inodes);
COUNTER(chunks_inflated);
COUNTER(compressed_bytes);
COUNTER(uncompressed_bytes);
COUNTER(read_errors);

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", EXT4DEC_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

static ssize_t workspaces_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", ext4dec_nr_workspaces);
}
static struct kobj_attribute workspaces_attr = __ATTR_RO(workspaces);

static struct attribute *ext4dec_attrs[] = {
	&version_attr.attr,
	&workspaces_attr.attr,
	&active_inodes_attr.attr,
	&chunks_inflated_attr.attr,
	&compressed_bytes_attr.attr,
	&uncompressed_bytes_attr.attr,
	&read_errors_attr.attr,
	NULL,
};

static const struct attribute_group ext4dec_group = {
	.attrs = ext4dec_attrs,
};

#define REFUSAL(name, reason)						\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	return show_u64(buf, &ext4dec_stats.refused[reason]);		\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

REFUSAL(not_szip, EXT4DEC_REFUSED_NOT_SZIP);
REFUSAL(writers, EXT4DEC_REFUSED_WRITERS);
REFUSAL(mapped, EXT4DEC_REFUSED_MAPPED);
REFUSAL(encrypted, EXT4DEC_REFUSED_ENCRYPTED);
REFUSAL(verity, EXT4DEC_REFUSED_VERITY);
REFUSAL(dax, EXT4DEC_REFUSED_DAX);
REFUSAL(inline_data, EXT4DEC_REFUSED_INLINE);
REFUSAL(journal_data, EXT4DEC_REFUSED_JOURNAL_DATA);
REFUSAL(io_error, EXT4DEC_REFUSED_IO);
REFUSAL(no_memory, EXT4DEC_REFUSED_NOMEM);

static struct attribute *refusal_attrs[] = {
	&not_szip_attr.attr,
	&writers_attr.attr,
	&mapped_attr.attr,
	&encrypted_attr.attr,
	&verity_attr.attr,
	&dax_attr.attr,
	&inline_data_attr.attr,
	&journal_data_attr.attr,
	&io_error_attr.attr,
	&no_memory_attr.attr,
	NULL,
};

static const struct attribute_group refusal_group = {
	.attrs = refusal_attrs,
};

/**
 * ext4dec_sysfs_init() - create /sys/kernel/ext4dec
 *
 * Return: 0 or a negative errno.
 */
int ext4dec_sysfs_init(void)
{
	int err;

	ext4dec_kobj = kobject_create_and_add("ext4dec", kernel_kobj);
	if (!ext4dec_kobj)
		return -ENOMEM;
	err = sysfs_create_group(ext4dec_kobj, &ext4dec_group);
	if (err)
		goto out_put;
	refusals_kobj = kobject_create_and_add("refusals", ext4dec_kobj);
	if (!refusals_kobj) {
		err = -ENOMEM;
		goto out_put;
	}
	err = sysfs_create_group(refusals_kobj, &refusal_group);
	if (err)
		goto out_put_refusals;
	return 0;

out_put_refusals:
	kobject_put(refusals_kobj);
out_put:
	kobject_put(ext4dec_kobj);
	return err;
}

/**
 * ext4dec_sysfs_exit() - remove /sys/kernel/ext4dec
 */
void ext4dec_sysfs_exit(void)
{
	kobject_put(refusals_kobj);
	kobject_put(ext4dec_kobj);
}
