// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec-copy-xattrs - give DST exactly the extended attributes of SRC
 *
 * Usage: ext4dec-copy-xattrs SRC DST
 *
 * ext4dec-compress and ext4dec-decompress replace a file with a new one
 * (scripts/ext4dec-compress); this helper carries its extended attributes
 * over: every name the caller can list on SRC (user.*, trusted.* for
 * root, security.* with the SELinux label and file capabilities, the
 * POSIX ACLs in system.posix_acl_*) is set on DST with SRC's value, and
 * every name DST has that SRC has not (an ACL or a label DST inherited
 * when it was created) is removed.  Then both lists are read again and
 * compared, so that success means DST has SRC's attributes, byte for
 * byte.  Symbolic links are not followed.  It needs only the C library:
 * busybox systems have no getfattr/setfattr.
 *
 * Exit status: 0 when DST has SRC's attributes; 1 after a message naming
 * the file and the attribute; 2 for a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

static const char *prog = "ext4dec-copy-xattrs";

struct blob {
	char *data;
	ssize_t len;
};

static int fail(const char *file, const char *name, int err)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", prog, file, name ? ": " : "",
		name ? name : "", strerror(err));
	return -1;
}

/*
 * The names of @file's attributes, NUL-separated, in @list (malloc'ed).
 * A file system without extended attributes has none.  Return: 0 or -1.
 */
static int list_names(const char *file, struct blob *list)
{
	for (;;) {
		ssize_t len = llistxattr(file, NULL, 0);

		if (len < 0 && (errno == ENOTSUP || errno == ENODATA))
			len = 0;
		if (len < 0)
			return fail(file, NULL, errno);
		list->data = malloc(len + 1);
		if (!list->data)
			return fail(file, NULL, ENOMEM);
		list->len = len ? llistxattr(file, list->data, len) : 0;
		if (list->len >= 0)
			return 0;
		free(list->data);
		/* it grew between the two calls: again */
		if (errno != ERANGE)
			return fail(file, NULL, errno);
	}
}

/* The value of @name on @file in @val (malloc'ed).  Return: 0 or -1. */
static int get_value(const char *file, const char *name, struct blob *val)
{
	for (;;) {
		ssize_t len = lgetxattr(file, name, NULL, 0);

		if (len < 0)
			return fail(file, name, errno);
		val->data = malloc(len + 1);
		if (!val->data)
			return fail(file, name, ENOMEM);
		val->len = len ? lgetxattr(file, name, val->data, len) : 0;
		if (val->len >= 0)
			return 0;
		free(val->data);
		if (errno != ERANGE)
			return fail(file, name, errno);
	}
}

/* Each name @p of the NUL-separated names in the blob @list */
#define for_each_name(p, list) \
	for ((p) = (list)->data; (p) < (list)->data + (list)->len; (p) += strlen(p) + 1)

static bool in_list(const struct blob *list, const char *name)
{
	const char *p;

	for_each_name(p, list)
		if (!strcmp(p, name))
			return true;
	return false;
}

/* Remove @dst's names @src has not, then set each of @src's on @dst. */
static int copy(const char *src, const char *dst)
{
	struct blob src_list, dst_list, val;
	const char *name;
	int ret = -1;

	if (list_names(src, &src_list))
		return -1;
	if (list_names(dst, &dst_list))
		goto out_src;
	for_each_name(name, &dst_list) {
		if (!in_list(&src_list, name) && lremovexattr(dst, name)) {
			fail(dst, name, errno);
			goto out_dst;
		}
	}
	for_each_name(name, &src_list) {
		if (get_value(src, name, &val))
			goto out_dst;
		if (lsetxattr(dst, name, val.data, val.len, 0)) {
			fail(dst, name, errno);
			free(val.data);
			goto out_dst;
		}
		free(val.data);
	}
	ret = 0;
out_dst:
	free(dst_list.data);
out_src:
	free(src_list.data);
	return ret;
}

/* Has @dst the very names and values of @src?  Return: 0 or -1. */
static int compare(const char *src, const char *dst)
{
	struct blob src_list, dst_list, a, b;
	const char *name;
	int ret = -1;

	if (list_names(src, &src_list))
		return -1;
	if (list_names(dst, &dst_list))
		goto out_src;
	for_each_name(name, &dst_list) {
		if (!in_list(&src_list, name)) {
			fprintf(stderr, "%s: %s: %s: not on %s\n", prog, dst, name, src);
			goto out_dst;
		}
	}
	for_each_name(name, &src_list) {
		if (get_value(src, name, &a))
			goto out_dst;
		if (get_value(dst, name, &b)) {
			free(a.data);
			goto out_dst;
		}
		if (a.len != b.len || memcmp(a.data, b.data, a.len)) {
			fprintf(stderr, "%s: %s: %s: not the value it has on %s\n",
				prog, dst, name, src);
			free(a.data);
			free(b.data);
			goto out_dst;
		}
		free(a.data);
		free(b.data);
	}
	ret = 0;
out_dst:
	free(dst_list.data);
out_src:
	free(src_list.data);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("Usage: %s SRC DST\n"
		       "Give DST exactly SRC's extended attributes (ACLs, SELinux label,\n"
		       "capabilities included); symbolic links are not followed.\n", prog);
		return 0;
	}
	/* SRC and DST, or -- SRC DST */
	if (argc == 4 && !strcmp(argv[1], "--")) {
		argv++;
		argc--;
	} else if (argc == 3 && (argv[1][0] == '-' || argv[2][0] == '-')) {
		argc = 0;
	}
	if (argc != 3) {
		fprintf(stderr, "Usage: %s SRC DST\n", prog);
		return 2;
	}
	if (copy(argv[1], argv[2]) || compare(argv[1], argv[2]))
		return 1;
	return 0;
}
