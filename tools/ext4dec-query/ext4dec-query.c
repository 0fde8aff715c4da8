// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec-query - ask the ext4dec module what it makes of files.
 *
 * For each FILE: open it for reading (no symbolic link followed, nothing
 * but a regular file opened), check that it is on ext4, issue
 * EXT4DEC_IOC_GET_STATUS and print one line of key=value fields:
 *
 *   state=active refusal=- format=2 codec=zstd chunk_size=32768 \
 *   nr_chunks=166 size=5406000 raw_size=1810431 chunks_inflated=42 file=NAME
 *
 * The keys, their order and their values are stable (man ext4dec(8),
 * "STATUS"); new keys may be added before file=, which is always last.
 * ext4dec-status(8) runs it; it is installed in libexec as a helper.
 *
 * Opening the file is what an ordinary reader does: it activates a +c file
 * the module can serve, so the answer is what a program reading the file
 * gets.  Errors name the file on stderr; the module not loaded (ext4
 * answers ENOTTY) is told apart from a file that is not on ext4, which is
 * not asked at all.  Exit status: 0, 1 if a FILE could not be queried, 2
 * for a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "ext4dec_ioctl.h"
#include "szip_format.h"

#ifndef EXT4DEC_VERSION
#define EXT4DEC_VERSION	"unknown"
#endif

#define EXIT_ERROR	1
#define EXIT_USAGE	2

static const char *prog = "ext4dec-query";

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [--] FILE...\n"
"Ask the ext4dec module what it makes of each FILE (EXT4DEC_IOC_GET_STATUS);\n"
"print one line per FILE:\n"
"  state=plain|inactive|active|refused refusal=-|not_szip|unsupported|untrusted|errno_N\n"
"  format=N codec=-|deflate|zstd|lz4|codec_N chunk_size=N nr_chunks=N size=N\n"
"  raw_size=N chunks_inflated=N file=NAME\n"
"(one line; NAME last, with backslash and control characters as \\ooo).\n"
"  -h, --help        this text; --version: the version\n"
"Exit status: 0, 1 if a FILE could not be queried, 2 for a usage error.\n",
		prog);
}

static const char *const state_names[] = {
	[EXT4DEC_STATE_PLAIN] = "plain",
	[EXT4DEC_STATE_INACTIVE] = "inactive",
	[EXT4DEC_STATE_ACTIVE] = "active",
	[EXT4DEC_STATE_REFUSED] = "refused",
};

static const char *const codec_names[SZIP_NR_CODECS] = {
	[SZIP_CODEC_DEFLATE] = "deflate",
	[SZIP_CODEC_ZSTD] = "zstd",
	[SZIP_CODEC_LZ4] = "lz4",
};

/*
 * A refusal's errno as a word: those the module remembers carry the names
 * of their counters in /sys/kernel/ext4dec/refusals/.
 */
static void print_refusal(__u32 err)
{
	switch (err) {
	case 0:
		fputs("-", stdout);
		break;
	case EINVAL:
		fputs("not_szip", stdout);
		break;
	case EOPNOTSUPP:
		fputs("unsupported", stdout);
		break;
	case EPERM:
		fputs("untrusted", stdout);
		break;
	default:
		printf("errno_%u", err);
	}
}

/* A name on one line: backslash and control characters as \ooo */
static void print_name(const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++) {
		if (*p == '\\' || *p < 0x20 || *p == 0x7f)
			printf("\\%03o", *p);
		else
			putchar(*p);
	}
}

static void print_status(const struct ext4dec_status *st, const char *name)
{
	if (st->state < sizeof(state_names) / sizeof(state_names[0]))
		printf("state=%s refusal=", state_names[st->state]);
	else
		printf("state=state_%u refusal=", st->state);
	print_refusal(st->refusal);
	printf(" format=%u codec=", st->format);
	if (!st->codec)
		fputs("-", stdout);
	else if (st->codec < SZIP_NR_CODECS && codec_names[st->codec])
		fputs(codec_names[st->codec], stdout);
	else
		printf("codec_%u", st->codec);
	printf(" chunk_size=%u nr_chunks=%u size=%llu raw_size=%llu chunks_inflated=%llu file=",
	       st->chunk_size, st->nr_chunks, (unsigned long long)st->size,
	       (unsigned long long)st->raw_size,
	       (unsigned long long)st->chunks_inflated);
	print_name(name);
	putchar('\n');
}

static int fail(const char *name, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", prog, name, why);
	return -1;
}

/* Why ext4 did not answer EXT4DEC_IOC_GET_STATUS (errno @err) */
static int no_answer(const char *name, int err)
{
	char why[160];

	if ((err == ENOTTY || err == EINVAL) && access("/sys/kernel/ext4dec", F_OK))
		snprintf(why, sizeof(why), "the ext4dec module is not loaded (%s)",
			 err == ENOTTY ? "ENOTTY" : "EINVAL");
	else if (err == ENOTTY || err == EINVAL)
		snprintf(why, sizeof(why),
			 "ext4dec is loaded but did not answer (%s): being loaded or unloaded?",
			 err == ENOTTY ? "ENOTTY" : "EINVAL");
	else
		snprintf(why, sizeof(why), "EXT4DEC_IOC_GET_STATUS: %s",
			 strerror(err));
	return fail(name, why);
}

/*
 * Query one file.  lstat() first: a FIFO or a device is never opened (an
 * open may block or act); then the file opened must be the one seen.
 */
static int query(const char *name)
{
	struct ext4dec_status st;
	struct stat before, now;
	struct statfs fs;
	int fd, err;

	if (lstat(name, &before))
		return fail(name, strerror(errno));
	if (S_ISLNK(before.st_mode))
		return fail(name, "a symbolic link");
	if (!S_ISREG(before.st_mode))
		return fail(name, "not a regular file");
	fd = open(name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail(name, errno == ELOOP ? "a symbolic link" : strerror(errno));
	if (fstat(fd, &now) || !S_ISREG(now.st_mode) ||
	    now.st_dev != before.st_dev || now.st_ino != before.st_ino) {
		close(fd);
		return fail(name, "replaced while being opened");
	}
	if (fstatfs(fd, &fs)) {
		err = errno;
		close(fd);
		return fail(name, strerror(err));
	}
	if (fs.f_type != EXT4_SUPER_MAGIC) {
		close(fd);
		return fail(name, "not on ext4");
	}
	memset(&st, 0, sizeof(st));
	err = ioctl(fd, EXT4DEC_IOC_GET_STATUS, &st) ? errno : 0;
	close(fd);
	if (err)
		return no_answer(name, err);
	print_status(&st, name);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, ret = 0;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--version")) {
			printf("%s %s\n", prog, EXT4DEC_VERSION);
			return 0;
		}
		fprintf(stderr, "%s: %s: unknown option\n", prog, argv[i]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (i == argc) {
		fprintf(stderr, "%s: no FILE\n", prog);
		usage(stderr);
		return EXIT_USAGE;
	}
	for (; i < argc; i++)
		if (query(argv[i]))
			ret = EXIT_ERROR;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: standard output: %s\n", prog, strerror(errno));
		return EXIT_ERROR;
	}
	return ret;
}
