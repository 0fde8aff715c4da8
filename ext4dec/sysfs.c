// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/ext4dec: counters (read-only, one value per file).
 *
 *   version              module version
 *   workspaces           inflate workspaces in the pool now (it grows on
 *                        demand up to the "workspaces" parameter, and
 *                        shrinks to one when idle)
 *   workers              inflate workers for readahead
 *   active_inodes        inodes served decompressed now
 *   chunks_inflated      chunks decoded successfully
 *   compressed_bytes     compressed bytes read from disk (whole device sectors)
 *   uncompressed_bytes   bytes produced by inflation
 *   read_errors          chunks that failed (I/O or corrupt data)
 *   cache_hits           chunks inflated from compressed bytes kept by an
 *                        earlier miss (no I/O)
 *   cached_bytes         compressed bytes kept for later misses now
 *   reserve_reads        chunks read through the reserve buffer, for
 *                        lack of memory for their compressed bytes
 *   worker_chunks        chunks inflated (or failed) by the inflate
 *                        workers; the reading tasks inflated the rest
 *   refusals/<reason>    activations refused, by reason
 */
#include "ext4dec.h"

#include <linux/kobject.h>
#include <linux/sysfs.h>

static struct kobject *ext4dec_kobj, *refusals_kobj;

struct counter_attr {
	struct kobj_attribute attr;
	atomic64_t *value;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct counter_attr *c = container_of(attr, struct counter_attr, attr);

	return sysfs_emit(buf, "%lld\n", atomic64_read(c->value));
}

#define COUNTER(_name, _value) \
	{ .attr = __ATTR(_name, 0444, counter_show, NULL), .value = _value }

static struct counter_attr counters[] = {
	COUNTER(active_inodes, &ext4dec_stats.active_inodes),
	COUNTER(chunks_inflated, &ext4dec_stats.chunks_inflated),
	COUNTER(compressed_bytes, &ext4dec_stats.compressed_bytes),
	COUNTER(uncompressed_bytes, &ext4dec_stats.uncompressed_bytes),
	COUNTER(read_errors, &ext4dec_stats.read_errors),
	COUNTER(cache_hits, &ext4dec_stats.cache_hits),
	COUNTER(cached_bytes, &ext4dec_stats.cached_bytes),
	COUNTER(reserve_reads, &ext4dec_stats.reserve_reads),
	COUNTER(worker_chunks, &ext4dec_stats.worker_chunks),
};

static struct counter_attr refusals[EXT4DEC_NR_REFUSALS] = {
	COUNTER(not_szip, &ext4dec_stats.refused[EXT4DEC_REFUSED_NOT_SZIP]),
	COUNTER(unsupported,
		&ext4dec_stats.refused[EXT4DEC_REFUSED_UNSUPPORTED]),
	COUNTER(writers, &ext4dec_stats.refused[EXT4DEC_REFUSED_WRITERS]),
	COUNTER(mapped, &ext4dec_stats.refused[EXT4DEC_REFUSED_MAPPED]),
	COUNTER(encrypted, &ext4dec_stats.refused[EXT4DEC_REFUSED_ENCRYPTED]),
	COUNTER(verity, &ext4dec_stats.refused[EXT4DEC_REFUSED_VERITY]),
	COUNTER(dax, &ext4dec_stats.refused[EXT4DEC_REFUSED_DAX]),
	COUNTER(inline_data, &ext4dec_stats.refused[EXT4DEC_REFUSED_INLINE]),
	COUNTER(journal_data,
		&ext4dec_stats.refused[EXT4DEC_REFUSED_JOURNAL_DATA]),
	COUNTER(io_error, &ext4dec_stats.refused[EXT4DEC_REFUSED_IO]),
	COUNTER(no_memory, &ext4dec_stats.refused[EXT4DEC_REFUSED_NOMEM]),
	COUNTER(untrusted, &ext4dec_stats.refused[EXT4DEC_REFUSED_UNTRUSTED]),
};

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", EXT4DEC_VERSION);
}

static ssize_t workspaces_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", ext4dec_nr_workspaces_now());
}

static ssize_t workers_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", ext4dec_nr_workers());
}

static struct kobj_attribute version_attr = __ATTR_RO(version);
static struct kobj_attribute workspaces_attr = __ATTR_RO(workspaces);
static struct kobj_attribute workers_attr = __ATTR_RO(workers);

static struct attribute *main_attrs[ARRAY_SIZE(counters) + 4];
static struct attribute *refusal_attrs[ARRAY_SIZE(refusals) + 1];

static const struct attribute_group main_group = { .attrs = main_attrs };
static const struct attribute_group refusal_group = { .attrs = refusal_attrs };

static void ext4dec_sysfs_fill_attrs(void)
{
	size_t i, n = 0;

	main_attrs[n++] = &version_attr.attr;
	main_attrs[n++] = &workspaces_attr.attr;
	main_attrs[n++] = &workers_attr.attr;
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		main_attrs[n++] = &counters[i].attr.attr;
	for (i = 0; i < ARRAY_SIZE(refusals); i++)
		refusal_attrs[i] = &refusals[i].attr.attr;
}

/**
 * ext4dec_sysfs_init() - create /sys/kernel/ext4dec
 *
 * Return: 0 or a negative errno.
 */
int ext4dec_sysfs_init(void)
{
	int err;

	ext4dec_sysfs_fill_attrs();
	ext4dec_kobj = kobject_create_and_add("ext4dec", kernel_kobj);
	if (!ext4dec_kobj)
		return -ENOMEM;
	err = sysfs_create_group(ext4dec_kobj, &main_group);
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
