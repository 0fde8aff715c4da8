// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec selftests: run as root inside the test VM, on an ext4 file system,
 * with ext4dec loaded and the szip tool in PATH.
 *
 * Usage: ext4dec_test DIR [-t TEST]... [other kselftest harness options]
 *
 * DIR is an empty directory on ext4.  The tests use the kernel's kselftest
 * harness (tools/testing/selftests/kselftest_harness.h, copied from the
 * kernel's source at build time): each TEST_F() is one behaviour of the
 * module, run in a process of its own with a time limit, and prints one
 * KTAP line ("ok N ext4dec.NAME"); "# " lines are diagnostics.  main()
 * makes the files the tests share, once; the fixture checks them before
 * each test and puts back, after it, the module parameters and mounts the
 * test may have changed.  Exit status 0 if nothing failed, 1 otherwise
 * (kselftest convention).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

/* diagnostics into the TAP stream, which the VM harness keeps */
#define TH_LOG_STREAM	stdout
#include "kselftest_harness.h"

#include "../lib/testlib.h"
#include "../../include/ext4dec_ioctl.h"

/* ext4's ioctls (<linux/ext4.h> is younger than bookworm's headers) */
struct move_extent {
	__u32 donor_fd, reserved;
	__u64 orig_start, donor_start, len, moved_len;
};

#define EXT4_IOC_MIGRATE	_IO('f', 9)
#define EXT4_IOC_MOVE_EXT	_IOWR('f', 15, struct move_extent)
#define EXT4_IOC_SWAP_BOOT	_IO('f', 17)
#define EXT4_IOC_GETSTATE	_IOW('f', 41, __u32)
#define EXT4_IOC_GET_ES_CACHE	_IOWR('f', 42, struct fiemap)

#define MiB		(1024 * 1024)
#define DATA_SIZE	(3 * MiB + 12345)
#define PARAMS		"/sys/module/ext4dec/parameters"

/*
 * Time limits, in seconds: about ten times the longest run seen on the
 * debug kernel under TCG.  Tests that took up to 2 s there have the
 * harness's default of 30 s (TEST_F); SLOW tests took up to 6 s, SLOWER
 * ones up to 15 s (TEST_F_TIMEOUT).  The shared files, which take about
 * 40 s to make, are made before the tests, outside these limits.
 */
#define SLOW		60
#define SLOWER		150

static const char *dir;
static bool shared_files_made;

/* ------------------------------------------------------------ helpers */

/* @name in the directory under test (path_in()) */
static char *path(const char *name)
{
	return path_in(dir, name);
}

/* 0 if @ret is a success (not negative), else errno */
static int errno_of(long ret)
{
	return ret < 0 ? errno : 0;
}

static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd >= 0) {
		if (write(fd, "3\n", 2) != 2)
			diag("drop_caches: %s", strerror(errno));
		close(fd);
	}
}

static off_t file_size(const char *name)
{
	struct stat st;

	return stat(name, &st) ? -1 : st.st_size;
}

/* Is @name a mount point (on another file system than its parent)? */
static bool mounted_on(const char *name)
{
	struct stat st, parent;

	return !stat(name, &st) && !stat(path_in(name, ".."), &parent) &&
	       st.st_dev != parent.st_dev;
}

/*
 * A compressed copy of ORIG named NAME, made with szip OPTS and
 * activated with +c.  Returns 0, or an errno from the ioctl.
 */
static int make_compressed(const char *orig, const char *name,
			   const char *opts)
{
	if (run("szip -qc %s '%s' > '%s'", opts, orig, name))
		return EIO;
	return change_flags(name, FS_COMPR_FL, 0);
}

/* Compare NAME's contents through read() with ORIG's. */
static bool same_contents(const char *orig, const char *name)
{
	size_t a_len, b_len;
	unsigned char *a = read_all(orig, &a_len), *b = read_all(name, &b_len);
	bool same = a && b && a_len == b_len && !memcmp(a, b, a_len);

	if (!same && a && b) {
		size_t i = 0;

		while (i < a_len && i < b_len && a[i] == b[i])
			i++;
		diag("%s differs from %s: sizes %zu/%zu, first difference at %zu",
		     name, orig, b_len, a_len, i);
	}
	free(a);
	free(b);
	return same;
}

/* Compare two files 64 KiB at a time (for files larger than memory). */
static bool same_stream(const char *a_name, const char *b_name)
{
	static unsigned char a[65536], b[65536];
	int fa = open(a_name, O_RDONLY), fb = open(b_name, O_RDONLY);
	bool same = fa >= 0 && fb >= 0;

	while (same) {
		ssize_t ra = read(fa, a, sizeof(a)), rb = read(fb, b, sizeof(b));

		same = ra == rb && ra >= 0 && !memcmp(a, b, ra > 0 ? ra : 0);
		if (ra <= 0)
			break;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

static int set_param(const char *name, long long value)
{
	return run("echo %lld > " PARAMS "/%s", value, name);
}

/* A module parameter's value, or -1 */
static long long get_param(const char *name)
{
	return sysfs_number(PARAMS, name);
}

/* ------------------------------------------------------------ fixture */

static const struct variant {
	const char *name;
	const char *opts;
} variants[] = {
	{ "c4k", "--chunk-size=4096" },
	{ "c8k", "--chunk-size=8192" },
	{ "c16k", "" },
	{ "c32k", "--chunk-size=32768" },
	{ "c12k", "--chunk-size=12288" },	/* not a power of two */
	{ "dict", "--dict=16384" },
	{ "x86", "--filter=x86 --chunk-size=8192" },
	{ "legacy", "" },	/* faulty.lib defaults: 16K, no filter */
	/* format 2: each codec, the largest chunks, both checksums */
	{ "v2zstd", "--codec=zstd --level=3 --checksum=xxh64" },
	{ "v2zstd4k", "--codec=zstd --level=1 --chunk-size=4096" },
	{ "v2lz4", "--codec=lz4 --level=9 --dict=65536 --checksum=crc32c" },
	{ "v2c128k", "--format=2 --chunk-size=131072 --filter=x86 --checksum=crc32c" },
};

/* The module parameters that tests change */
static const char *const param_names[] = {
	"fault_around_kb", "cache_kb", "cache_ahead_kb",
};

/* An ext4 image with inline data, verity and encryption, loop-mounted. */
#define SPECIAL		"/tmp/special"
/* An ext4 on emulated persistent memory, mounted with dax=always */
#define DAX_MNT		"/tmp/ext4dec-dax"
/* An ext4 of 16 KiB blocks: its folios are at least that large (7.x) */
#define LBS_MNT		"/tmp/ext4dec-lbs"

FIXTURE(ext4dec) {
	long long params[ARRAY_SIZE(param_names)];	/* values before the test */
};

/*
 * The files the tests share: "orig", DATA_SIZE bytes that compress like
 * code, and a compressed and activated copy of it per variant.  main()
 * makes them once, before the tests (under emulation that takes longer
 * than a test's time limit); each test's setup checks they are there.
 * Return: 0, or -1 after a diagnostic.
 */
static int make_shared_files(void)
{
	unsigned char *data = malloc(DATA_SIZE);
	size_t i;
	int err;

	if (!data)
		return -1;
	gen_data(data, DATA_SIZE, 1);
	err = write_file(path("orig"), data, DATA_SIZE, false) ? errno : 0;
	free(data);
	if (err) {
		diag("setup: write orig: %s", strerror(err));
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		err = make_compressed(path("orig"), path(variants[i].name),
				      variants[i].opts);
		if (err) {
			diag("setup: %s: %s", variants[i].name, strerror(err));
			return -1;
		}
	}
	return 0;
}

FIXTURE_SETUP(ext4dec)
{
	size_t i;

	ASSERT_NE(NULL, dir) TH_LOG("usage: ext4dec_test DIR [harness options]");
	ASSERT_TRUE(shared_files_made) TH_LOG("the shared files were not made");
	for (i = 0; i < ARRAY_SIZE(param_names); i++) {
		self->params[i] = get_param(param_names[i]);
		ASSERT_LE(0, self->params[i]) {
			TH_LOG("no module parameter %s", param_names[i]);
		}
	}
}

/*
 * In the test's parent, so that it runs after a failed ASSERT or a test
 * killed by a signal too (not after a timeout, which kills both): the
 * harness of 6.12 skips a FIXTURE_TEARDOWN() after a failed ASSERT when
 * built with optimization (its local "child" is clobbered by longjmp()).
 */
FIXTURE_TEARDOWN_PARENT(ext4dec)
{
	size_t i;

	if (mounted_on(DAX_MNT) && umount(DAX_MNT))
		TH_LOG("umount " DAX_MNT ": %s", strerror(errno));
	if (mounted_on(LBS_MNT) && umount(LBS_MNT))
		TH_LOG("umount " LBS_MNT ": %s", strerror(errno));
	unlink(LBS_MNT ".img");
	/* rmmod_busy_then_clean may leave the module unloaded */
	if (access(PARAMS, F_OK))
		return;
	/* the activation policy: the defaults */
	EXPECT_EQ(0, run("echo N > " PARAMS "/any_owner && echo -1 > " PARAMS "/trusted_gid"));
	EXPECT_EQ(0, run("echo N > " PARAMS "/reader_inflates"));
	for (i = 0; i < ARRAY_SIZE(param_names); i++) {
		if (get_param(param_names[i]) == self->params[i])
			continue;
		EXPECT_EQ(0, set_param(param_names[i], self->params[i])) {
			TH_LOG("cannot restore %s", param_names[i]);
		}
	}
}

/* -------------------------------------------------------------- tests */

TEST_F(ext4dec, sysfs_counters)
{
	struct stat st;
	int missing = 0;
	size_t i;

	/* the shared files, active from the moment their inodes are read */
	for (i = 0; i < ARRAY_SIZE(variants); i++)
		missing += !!stat(path(variants[i].name), &st);
	ASSERT_EQ(0, missing);
	EXPECT_LE((long long)ARRAY_SIZE(variants), counter("active_inodes"));
	EXPECT_LE(0, counter("chunks_inflated"));
	EXPECT_EQ(0, counter("read_errors"));
	EXPECT_LE(0, counter("refusals/not_szip")) TH_LOG("no refusals/not_szip");
}

TEST_F_TIMEOUT(ext4dec, chattr_plus_c_activates_stat_sizes, SLOW)
{
	struct stat raw, act;
	int err;

	ASSERT_EQ(0, run("szip -qc '%s' > '%s'", path("orig"), path("st")));
	ASSERT_EQ(0, stat(path("st"), &raw));
	err = change_flags(path("st"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("chattr +c: %s", strerror(err));
	ASSERT_EQ(0, stat(path("st"), &act));
	EXPECT_EQ(DATA_SIZE, act.st_size);
	/* the raw file's blocks */
	EXPECT_EQ(raw.st_blocks, act.st_blocks);
	EXPECT_GT(DATA_SIZE / 2, raw.st_size);
}

/*
 * The hooks are permanent ftrace users: while the module is loaded,
 * sysctl kernel.ftrace_enabled=0 fails with EBUSY instead of silently
 * turning them off under active inodes (7.x refuses it to everyone).
 */
TEST_F(ext4dec, ftrace_cannot_be_turned_off)
{
	const char *knob = "/proc/sys/kernel/ftrace_enabled";
	int fd = open(knob, O_WRONLY);
	ssize_t r;
	int err;

	if (fd < 0)
		SKIP(return, "no %s", knob);
	r = write(fd, "0\n", 2);
	err = r < 0 ? errno : 0;
	if (r == 2) {
		/* turned off: put it back before anything else runs */
		lseek(fd, 0, SEEK_SET);
		if (write(fd, "1\n", 2) != 2)
			TH_LOG("cannot turn ftrace back on: %s", strerror(errno));
	}
	close(fd);
	/* EOPNOTSUPP: a kernel that never turns ftrace off (7.x) */
	EXPECT_TRUE(err == EBUSY || err == EOPNOTSUPP) {
		TH_LOG("ftrace_enabled=0: %s", r == 2 ? "accepted" : strerror(err));
	}
}

TEST_F(ext4dec, lsattr_shows_c)
{
	EXPECT_EQ(0, run("lsattr '%s' | grep -q '^[^ ]*c[^ ]* '", path("c16k")));
}

TEST_F_TIMEOUT(ext4dec, read_whole_file_all_variants, SLOW)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		EXPECT_TRUE(same_contents(path("orig"), path(variants[i].name))) {
			TH_LOG("variant %s", variants[i].name);
		}
	}
}

TEST_F(ext4dec, pread_random_offsets_sizes)
{
	size_t orig_len, i, k;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *buf = malloc(256 * 1024);

	ASSERT_NE(NULL, orig);
	ASSERT_NE(NULL, buf);
	rng_state = 99;
	for (i = 0; i < ARRAY_SIZE(variants); i++) {
		int fd = open(path(variants[i].name), O_RDONLY);

		ASSERT_LE(0, fd) TH_LOG("open %s", variants[i].name);
		for (k = 0; k < 400; k++) {
			size_t off = rng() % (orig_len + 100);
			size_t len = rng() % (k % 10 ? 9000 : 256 * 1024);
			ssize_t r = pread(fd, buf, len, off);
			size_t want = off >= orig_len ? 0 :
				      (len < orig_len - off ? len : orig_len - off);

			ASSERT_TRUE(r == (ssize_t)want && !memcmp(buf, orig + off, want)) {
				TH_LOG("%s: pread(%zu at %zu) = %zd", variants[i].name,
				       len, off, r);
			}
		}
		close(fd);
	}
	free(buf);
	free(orig);
}

TEST_F(ext4dec, preadv)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	static unsigned char a[1000], b[70000], c[4096];
	struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) },
				{ c, sizeof(c) } };
	int fd = open(path("c4k"), O_RDONLY);
	off_t off = 123457;

	ASSERT_NE(NULL, orig);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)(sizeof(a) + sizeof(b) + sizeof(c)),
		  preadv(fd, iov, 3, off));
	EXPECT_EQ(0, memcmp(a, orig + off, sizeof(a)));
	EXPECT_EQ(0, memcmp(b, orig + off + sizeof(a), sizeof(b)));
	EXPECT_EQ(0, memcmp(c, orig + off + sizeof(a) + sizeof(b), sizeof(c)));
	close(fd);
	free(orig);
}

/*
 * NAME mapped with @flags equals orig, pages touched backwards as a
 * loader might; a private mapping is written (copy-on-write: the file
 * does not change).
 */
static void mmap_compare(struct __test_metadata *_metadata, const char *name,
			 int flags)
{
	size_t orig_len, p;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	int fd = open(path(name), O_RDONLY);
	unsigned char *m;

	ASSERT_NE(NULL, orig);
	ASSERT_LE(0, fd) TH_LOG("open %s", name);
	m = mmap(NULL, orig_len, PROT_READ | (flags == MAP_PRIVATE ? PROT_WRITE : 0),
		 flags, fd, 0);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap %s: %s", name, strerror(errno));
	close(fd);
	for (p = orig_len & ~4095UL; p + 4096 > 4096; p -= 4096) {
		ASSERT_EQ(0, memcmp(m + p, orig + p,
				    p + 4096 <= orig_len ? 4096 : orig_len - p)) {
			TH_LOG("%s: page at %zu", name, p);
		}
	}
	if (flags == MAP_PRIVATE)
		memset(m, 0xAB, 8192);
	munmap(m, orig_len);
	free(orig);
	EXPECT_TRUE(same_contents(path("orig"), path(name))) {
		TH_LOG("%s: after mapping", name);
	}
}

TEST_F_TIMEOUT(ext4dec, mmap_shared, SLOW)
{
	static const char *const names[] = { "c32k", "v2zstd", "v2lz4", "v2c128k" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		drop_caches();
		mmap_compare(_metadata, names[i], MAP_SHARED);
	}
}

TEST_F(ext4dec, mmap_private)
{
	mmap_compare(_metadata, "c32k", MAP_PRIVATE);
}

TEST_F(ext4dec, mmap_shared_writable_refused)
{
	int fd = open(path("c16k"), O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				   fd, 0));
	close(fd);
}

/* The errno of open(@name, @flags), 0 if it opened */
static int open_errno(const char *name, int flags)
{
	int fd = open(name, flags);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

TEST_F(ext4dec, write_open_trunc_truncate_etxtbsy)
{
	EXPECT_EQ(ETXTBSY, open_errno(path("c16k"), O_WRONLY)) TH_LOG("O_WRONLY");
	EXPECT_EQ(ETXTBSY, open_errno(path("c16k"), O_RDWR)) TH_LOG("O_RDWR");
	EXPECT_EQ(ETXTBSY, open_errno(path("c16k"), O_RDONLY | O_TRUNC)) {
		TH_LOG("O_TRUNC");
	}
	EXPECT_EQ(ETXTBSY, errno_of(truncate(path("c16k"), 10))) TH_LOG("truncate");
	EXPECT_TRUE(same_contents(path("orig"), path("c16k"))) TH_LOG("file changed");
}

TEST_F(ext4dec, o_direct_read)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *buf;
	int fd = open(path("c8k"), O_RDONLY | O_DIRECT);

	ASSERT_NE(NULL, orig);
	ASSERT_LE(0, fd) TH_LOG("open O_DIRECT: %s", strerror(errno));
	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, 65536));
	ASSERT_EQ(65536, pread(fd, buf, 65536, 8192 * 5));
	EXPECT_EQ(0, memcmp(buf, orig + 8192 * 5, 65536));
	close(fd);
	free(buf);
	free(orig);
}

TEST_F(ext4dec, seek_end_data_hole)
{
	int fd = open(path("c16k"), O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(DATA_SIZE, lseek(fd, 0, SEEK_END));
	EXPECT_EQ(100, lseek(fd, 100, SEEK_DATA));
	EXPECT_EQ(DATA_SIZE, lseek(fd, 100, SEEK_HOLE));
	close(fd);
}

/* Whether everything @fd reads with pread() is @want's @len bytes. */
static bool fd_reads(int fd, const unsigned char *want, size_t len)
{
	/* aligned for O_DIRECT */
	static unsigned char buf[65536] __attribute__((aligned(4096)));
	size_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if ((size_t)n > len - off || memcmp(buf, want + off, n)) {
			diag("fd %d: bytes at %zu differ", fd, off);
			return false;
		}
		off += n;
	}
	if (n < 0 || off != len)
		diag("fd %d: %zu of %zu bytes read: %s", fd, off, len,
		     n < 0 ? strerror(errno) : "EOF");
	return !n && off == len;
}

/*
 * Files opened while the inode was raw keep ext4's file operations: once
 * it is activated they read, read directly, splice, map and seek the
 * uncompressed file; a read that must not block fails with EAGAIN.  They
 * do not hold the inode active: after chattr -c they read the raw bytes
 * again.
 */
TEST_F_TIMEOUT(ext4dec, opened_before_activation, SLOW)
{
	size_t orig_len, raw_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *raw, *buf, *m;
	off_t pos, off = 8192 * 7;
	struct iovec iov;
	struct stat st;
	int fd, dfd, out, err;
	ssize_t n;

	ASSERT_EQ(0, run("szip -qc --chunk-size=8192 '%s' > '%s'", path("orig"), path("pre")));
	raw = read_all(path("pre"), &raw_len);
	ASSERT_NE(NULL, orig);
	ASSERT_NE(NULL, raw);
	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, 65536));
	fd = open(path("pre"), O_RDONLY);
	dfd = open(path("pre"), O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, dfd) TH_LOG("open O_DIRECT: %s", strerror(errno));
	/* raw, and in the page cache */
	ASSERT_EQ(65536, pread(fd, buf, 65536, 0));
	EXPECT_EQ(0, memcmp(buf, raw, 65536));

	err = change_flags(path("pre"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("+c with files open: %s", strerror(err));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(DATA_SIZE, st.st_size);
	EXPECT_TRUE(fd_reads(fd, orig, DATA_SIZE)) TH_LOG("read");
	n = pread(dfd, buf, 65536, 8192 * 5);
	EXPECT_EQ(65536, n) TH_LOG("O_DIRECT: %s", n < 0 ? strerror(errno) : "short");
	EXPECT_EQ(0, memcmp(buf, orig + 8192 * 5, 65536)) TH_LOG("O_DIRECT read raw bytes");
	/* past the raw size, where the raw blocks end */
	pos = (DATA_SIZE - 20000) & ~4095L;
	n = pread(dfd, buf, 65536, pos);
	EXPECT_EQ(DATA_SIZE - pos, n) TH_LOG("O_DIRECT at the end");
	EXPECT_EQ(0, memcmp(buf, orig + pos, DATA_SIZE - pos)) TH_LOG("O_DIRECT at the end");
	EXPECT_EQ(100, lseek(fd, 100, SEEK_DATA));
	EXPECT_EQ(DATA_SIZE, lseek(fd, 100, SEEK_HOLE)) TH_LOG("SEEK_HOLE");
	EXPECT_EQ(DATA_SIZE, lseek(fd, 0, SEEK_END));

	/* not cached: reading it would mean waiting for I/O and inflation */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	iov = (struct iovec){ buf, 4096 };
	n = preadv2(fd, &iov, 1, off, RWF_NOWAIT);
	EXPECT_TRUE(n < 0 && errno == EAGAIN) {
		TH_LOG("RWF_NOWAIT: %zd (%s)", n, n < 0 ? strerror(errno) : "bytes");
	}
	out = open(path("pre.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, out);
	EXPECT_EQ(65536, sendfile(out, fd, &off, 65536));
	close(out);
	free(buf);
	buf = read_all(path("pre.out"), &orig_len);
	EXPECT_TRUE(buf && !memcmp(buf, orig + 8192 * 7, 65536)) TH_LOG("sendfile");
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, memcmp(m + 3 * MiB, orig + 3 * MiB, DATA_SIZE - 3 * MiB)) TH_LOG("mmap");
	munmap(m, DATA_SIZE);

	/* the raw file again, through the same files */
	err = change_flags(path("pre"), 0, FS_COMPR_FL);
	ASSERT_EQ(0, err) TH_LOG("-c: %s", strerror(err));
	EXPECT_EQ((off_t)raw_len, lseek(fd, 0, SEEK_END));
	EXPECT_TRUE(fd_reads(fd, raw, raw_len)) TH_LOG("read after -c");
	EXPECT_TRUE(fd_reads(dfd, raw, raw_len)) TH_LOG("O_DIRECT after -c");
	close(fd);
	close(dfd);
	unlink(path("pre"));
	unlink(path("pre.out"));
	free(buf);
	free(orig);
	free(raw);
}

/* aio direct reads of a file until told to stop, sorted by what they read */
struct aio_reads {
	int fd;
	off_t off;		/* where each reads, before the raw end */
	size_t len;		/* how much each asks for, past the raw end */
	const unsigned char *raw;	/* the compressed bytes at @off */
	size_t raw_len;			/* how many there are */
	volatile bool stop;
	long raw_reads, uncompressed, mixed;
	int err;
};

static void *aio_reads_loop(void *p)
{
	struct aio_reads *a = p;
	aio_context_t ctx = 0;
	unsigned char *buf;
	size_t i;

	if (syscall(SYS_io_setup, 1, &ctx)) {
		a->err = errno;
		return NULL;
	}
	a->err = posix_memalign((void **)&buf, 4096, a->len);
	if (a->err) {
		syscall(SYS_io_destroy, ctx);
		return NULL;
	}
	while (!a->stop) {
		struct iocb cb = {
			.aio_fildes = a->fd, .aio_lio_opcode = IOCB_CMD_PREAD,
			.aio_buf = (uintptr_t)buf, .aio_nbytes = a->len,
			.aio_offset = a->off,
		};
		struct iocb *cbs[1] = { &cb };
		struct io_event ev;

		if (syscall(SYS_io_submit, ctx, 1, cbs) != 1 ||
		    syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) {
			a->err = errno;
			break;
		}
		if ((long long)ev.res < 0) {
			a->err = -(long long)ev.res;
			break;
		}
		/* the uncompressed file is all zeros there */
		for (i = 0; i < (size_t)ev.res && !buf[i]; i++)
			;
		if ((size_t)ev.res == a->raw_len && !memcmp(buf, a->raw, a->raw_len))
			a->raw_reads++;
		else if ((size_t)ev.res == a->len && i == a->len)
			a->uncompressed++;
		else
			a->mixed++;
	}
	syscall(SYS_io_destroy, ctx);
	free(buf);
	return NULL;
}

/*
 * An asynchronous direct read through a file opened before activation,
 * submitted while chattr +c activates the file, samples the inode as
 * inactive and then waits in ext4 for the inode lock that the activation
 * holds while it reads the file's tables (2^17 chunks here, read again
 * after drop_caches).  It must not go on to map the raw blocks, now under
 * the uncompressed size, and queue their I/O: that would read compressed
 * bytes up to the raw end and zeros after.  Each read spans the raw end:
 * it gives the raw bytes up to there (inactive) or a full read of the
 * uncompressed file, here zeros (active), nothing else.  One reader reads
 * 64 KiB, the other the raw file's last block, alone: on 7.x ext4 maps a
 * direct read of a block or less by calling ext4_iomap_begin() itself,
 * larger ones through ext4_iomap_ops->iomap_next().
 */
TEST_F_TIMEOUT(ext4dec, aio_direct_read_across_activation, SLOWER)
{
	const char *big = path("aio-orig"), *sz = path("aio.sz");
	struct aio_reads total[2] = { 0 };
	size_t raw_len;
	unsigned char *raw;
	int fd, round, err;

	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 512 * MiB));	/* 2^17 chunks of 4 KiB */
	close(fd);
	ASSERT_EQ(0, run("szip -qc --codec=zstd --level=1 --chunk-size=4096 '%s' > '%s'", big, sz));
	unlink(big);
	raw = read_all(sz, &raw_len);
	ASSERT_NE(NULL, raw);
	ASSERT_LT(8192, raw_len);
	/* a last block read whole would be no different from a raw read */
	ASSERT_NE(0, raw_len % 4096) TH_LOG("the raw size must not be a multiple of 4 KiB");
	/* 40 activations: one in six caught a reader on 7.3 */
	for (round = 0; round < 40; round++) {
		struct aio_reads a[2] = {
			{ .off = (raw_len & ~4095UL) - 4096, .len = 65536 },
			{ .off = raw_len & ~4095UL, .len = 4096 },
		};
		pthread_t t[2];
		int fd_raw, i;

		/* a file opened raw; the tables out of the cache */
		err = change_flags(sz, 0, FS_COMPR_FL);
		ASSERT_EQ(0, err) TH_LOG("-c: %s", strerror(err));
		fd_raw = open(sz, O_RDONLY | O_DIRECT);
		ASSERT_LE(0, fd_raw);
		drop_caches();
		for (i = 0; i < 2; i++) {
			a[i].fd = fd_raw;
			a[i].raw = raw + a[i].off;
			a[i].raw_len = raw_len - a[i].off;
			ASSERT_EQ(0, pthread_create(&t[i], NULL, aio_reads_loop, &a[i]));
		}
		usleep(20000);
		err = change_flags(sz, FS_COMPR_FL, 0);
		usleep(20000);
		for (i = 0; i < 2; i++) {
			a[i].stop = true;
			pthread_join(t[i], NULL);
		}
		close(fd_raw);
		ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
		for (i = 0; i < 2; i++) {
			ASSERT_EQ(0, a[i].err) TH_LOG("aio: %s", strerror(a[i].err));
			total[i].len = a[i].len;
			total[i].raw_reads += a[i].raw_reads;
			total[i].uncompressed += a[i].uncompressed;
			total[i].mixed += a[i].mixed;
		}
	}
	for (int i = 0; i < 2; i++) {
		TH_LOG("aio direct reads of %zu bytes: %ld raw, %ld uncompressed, %ld neither",
		       total[i].len, total[i].raw_reads, total[i].uncompressed,
		       total[i].mixed);
		EXPECT_EQ(0, total[i].mixed) TH_LOG("raw blocks read under the uncompressed size");
		EXPECT_LT(0, total[i].raw_reads);
		EXPECT_LT(0, total[i].uncompressed);
	}
	unlink(sz);
	free(raw);
}

/*
 * FIEMAP of an active file: its blocks hold compressed data, which must
 * not pass for the file's (a sparse copier trusting FIEMAP would copy
 * them): one extent over the whole file, encoded, location unknown.
 */
TEST_F(ext4dec, fiemap_reports_one_encoded_extent)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[32];
	} m = { .fm = { .fm_length = FIEMAP_MAX_OFFSET, .fm_extent_count = 32 } };
	int fd = open(path("c16k"), O_RDONLY);
	__u32 want = FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_LAST;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, FS_IOC_FIEMAP, &m)) TH_LOG("FIEMAP: %s", strerror(errno));
	EXPECT_EQ(1, m.fm.fm_mapped_extents);
	EXPECT_EQ(0, m.fe[0].fe_logical);
	EXPECT_EQ(DATA_SIZE, m.fe[0].fe_length);
	EXPECT_EQ(want, m.fe[0].fe_flags & want) TH_LOG("flags %#x", m.fe[0].fe_flags);
	/* from the middle: the same extent */
	m.fm.fm_start = DATA_SIZE / 2;
	ASSERT_EQ(0, ioctl(fd, FS_IOC_FIEMAP, &m));
	EXPECT_EQ(1, m.fm.fm_mapped_extents);
	/* past the end: nothing */
	m.fm.fm_start = DATA_SIZE;
	ASSERT_EQ(0, ioctl(fd, FS_IOC_FIEMAP, &m));
	EXPECT_EQ(0, m.fm.fm_mapped_extents);
	/* extended attributes are ext4's: no encoded extent */
	m.fm.fm_start = 0;
	m.fm.fm_flags = FIEMAP_FLAG_XATTR;
	m.fe[0].fe_flags = 0;
	EXPECT_EQ(0, ioctl(fd, FS_IOC_FIEMAP, &m)) TH_LOG("FIEMAP_FLAG_XATTR: %s", strerror(errno));
	EXPECT_FALSE(m.fm.fm_mapped_extents && m.fe[0].fe_flags & FIEMAP_EXTENT_ENCODED) {
		TH_LOG("FIEMAP_FLAG_XATTR answered by ext4dec");
	}
	/* ext4's extent cache would show the raw blocks: refused */
	memset(&m, 0, sizeof(m));
	m.fm.fm_length = FIEMAP_MAX_OFFSET;
	m.fm.fm_extent_count = 32;
	EXPECT_EQ(EOPNOTSUPP, errno_of(ioctl(fd, EXT4_IOC_GET_ES_CACHE, &m))) {
		TH_LOG("EXT4_IOC_GET_ES_CACHE: %s, %u extents", strerror(errno),
		       m.fm.fm_mapped_extents);
	}
	close(fd);
	EXPECT_EQ(0, run("filefrag -v '%s' | grep -q encoded", path("c16k"))) {
		TH_LOG("filefrag -v shows no encoded extent");
	}
	/* a plain file's extent cache is ext4's */
	fd = open(path("orig"), O_RDONLY);
	ASSERT_LE(0, fd);
	memset(&m, 0, sizeof(m));
	m.fm.fm_length = FIEMAP_MAX_OFFSET;
	m.fm.fm_extent_count = 32;
	EXPECT_EQ(0, ioctl(fd, EXT4_IOC_GET_ES_CACHE, &m)) {
		TH_LOG("EXT4_IOC_GET_ES_CACHE of a plain file: %s", strerror(errno));
	}
	close(fd);
}

TEST_F(ext4dec, sendfile_and_pipe)
{
	int in = open(path("c4k"), O_RDONLY);
	int out = open(path("sendfile.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	off_t off = 0;
	ssize_t n, total = 0;

	ASSERT_LE(0, in);
	ASSERT_LE(0, out);
	while ((n = sendfile(out, in, &off, 1 << 20)) > 0)
		total += n;
	close(in);
	close(out);
	EXPECT_EQ(DATA_SIZE, total) TH_LOG("sendfile copied %zd", total);
	EXPECT_TRUE(same_contents(path("orig"), path("sendfile.out")));
	EXPECT_EQ(0, run("cat '%s' | cmp -s - '%s'", path("c8k"), path("orig"))) {
		TH_LOG("through a pipe");
	}
	unlink(path("sendfile.out"));
}

TEST_F(ext4dec, data_ioctls_fallocate_fibmap_swapon_refused)
{
	int fd = open(path("c16k"), O_RDONLY);
	int block = 0;
	struct move_extent move = { 0 };

	ASSERT_LE(0, fd);
	EXPECT_NE(0, errno_of(fallocate(fd, 0, 0, 4096))) TH_LOG("fallocate allowed");
	EXPECT_NE(0, errno_of(ioctl(fd, FIBMAP, &block))) TH_LOG("FIBMAP allowed");
	move.donor_fd = fd;
	EXPECT_EQ(EOPNOTSUPP, errno_of(ioctl(fd, EXT4_IOC_MOVE_EXT, &move))) {
		TH_LOG("EXT4_IOC_MOVE_EXT");
	}
	EXPECT_EQ(EOPNOTSUPP, errno_of(ioctl(fd, FS_IOC_ENABLE_VERITY, NULL))) {
		TH_LOG("FS_IOC_ENABLE_VERITY");
	}
	EXPECT_EQ(EOPNOTSUPP, errno_of(ioctl(fd, EXT4_IOC_MIGRATE))) TH_LOG("EXT4_IOC_MIGRATE");
	EXPECT_EQ(EOPNOTSUPP, errno_of(ioctl(fd, EXT4_IOC_SWAP_BOOT))) TH_LOG("EXT4_IOC_SWAP_BOOT");
	close(fd);
	EXPECT_EQ(EBUSY, change_flags(path("c16k"), FS_JOURNAL_DATA_FL, 0)) {
		TH_LOG("+j on an active inode");
	}
	/* a change of block map format, as EXT4_IOC_MIGRATE (+e) makes */
	EXPECT_EQ(EBUSY, change_flags(path("c16k"), 0, FS_EXTENT_FL)) {
		TH_LOG("-e on an active inode");
	}
	EXPECT_NE(0, errno_of(swapon(path("c16k"), 0))) TH_LOG("swapon worked");
	EXPECT_TRUE(same_contents(path("orig"), path("c16k"))) TH_LOG("file changed");
}

/*
 * Every other ioctl is ext4's, with ext4's answer: a terminal ioctl
 * (isatty() on a redirected stdout) fails with ENOTTY, ext4's own work.
 */
TEST_F(ext4dec, other_ioctls_are_ext4s)
{
	int fd = open(path("c16k"), O_RDONLY);
	__u32 state = 0, flags = 0;

	ASSERT_LE(0, fd);
	EXPECT_FALSE(isatty(fd));
	EXPECT_EQ(ENOTTY, errno) TH_LOG("isatty: %s", strerror(errno));
	EXPECT_EQ(0, errno_of(ioctl(fd, EXT4_IOC_GETSTATE, &state))) {
		TH_LOG("EXT4_IOC_GETSTATE: %s", strerror(errno));
	}
	EXPECT_EQ(0, errno_of(ioctl(fd, FS_IOC_GETFLAGS, &flags)));
	EXPECT_TRUE(flags & FS_COMPR_FL);
	close(fd);
}

/*
 * Run ext4dec_ioctl32 (tests/selftests/ioctl32.c): @cmd on @name from a
 * 32-bit program.  Return: its errno (0 if the ioctl worked), or -1 if
 * the kernel runs no 32-bit programs, -2 if it could not be run.
 */
static int ioctl32(const char *name, unsigned long cmd)
{
	char arg[32];
	pid_t pid;
	int s;

	snprintf(arg, sizeof(arg), "%#lx", cmd);
	pid = fork();
	if (!pid) {
		execlp("ext4dec_ioctl32", "ext4dec_ioctl32", name, arg, (char *)NULL);
		_exit(errno == ENOEXEC ? 124 : 123);
	}
	if (pid < 0 || waitpid(pid, &s, 0) != pid || !WIFEXITED(s))
		return -2;
	s = WEXITSTATUS(s);
	return s == 124 ? -1 : s == 123 || s == 125 ? -2 : s;
}

/*
 * The data ioctls are refused through the 32-bit path too: through a file
 * opened before the activation, which keeps ext4's operations, and whose
 * ext4_compat_ioctl() reaches ext4's ioctl code without passing
 * ext4_ioctl() (inlined into it); and through one opened after.
 */
TEST_F(ext4dec, compat_ioctl_data_refused)
{
	char fdname[32];
	int fd, err;

	ASSERT_EQ(0, run("szip -qc '%s' > '%s'", path("orig"), path("c32")));
	fd = open(path("c32"), O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, change_flags(path("c32"), FS_COMPR_FL, 0));
	snprintf(fdname, sizeof(fdname), "fd:%d", fd);
	err = ioctl32(fdname, EXT4_IOC_MOVE_EXT);
	if (err == -1)
		SKIP(return, "this kernel runs no 32-bit programs");
	ASSERT_LE(0, err) TH_LOG("cannot run ext4dec_ioctl32");
	EXPECT_EQ(EOPNOTSUPP, err) {
		TH_LOG("EXT4_IOC_MOVE_EXT, file opened before: %s", strerror(err));
	}
	err = ioctl32(fdname, FS_IOC_ENABLE_VERITY);
	EXPECT_EQ(EOPNOTSUPP, err) TH_LOG("FS_IOC_ENABLE_VERITY: %s", strerror(err));
	err = ioctl32(path("c32"), EXT4_IOC_MOVE_EXT);
	EXPECT_EQ(EOPNOTSUPP, err) TH_LOG("EXT4_IOC_MOVE_EXT, file opened after: %s", strerror(err));
	/* ext4's own answer elsewhere: not open for writing */
	err = ioctl32(path("orig"), EXT4_IOC_MOVE_EXT);
	EXPECT_EQ(EBADF, err) TH_LOG("EXT4_IOC_MOVE_EXT on a plain file: %s", strerror(err));
	close(fd);
	EXPECT_TRUE(same_contents(path("orig"), path("c32")));
	unlink(path("c32"));
}

TEST_F(ext4dec, exec_compressed_binary)
{
	int err;

	/* busybox picks its applet from argv[0]: keep the name */
	mkdir(path("exe"), 0755);
	err = make_compressed("/bin/busybox", path("exe/busybox"), "--filter=x86");
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	ASSERT_EQ(0, run("chmod +x '%s'", path("exe/busybox")));
	EXPECT_EQ(file_size("/bin/busybox"), file_size(path("exe/busybox")));
	EXPECT_EQ(0, run("'%s' echo exec-ok | grep -q exec-ok", path("exe/busybox"))) {
		TH_LOG("running a compressed executable failed");
	}
}

TEST_F_TIMEOUT(ext4dec, program_with_compressed_libc, SLOW)
{
	static const char *const libs[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	const char *lib = NULL;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(libs) && !lib; i++)
		if (!access(libs[i], R_OK))
			lib = libs[i];
	if (!lib)
		SKIP(return, "no libc.so.6 in the guest");
	mkdir(path("lib"), 0755);
	err = make_compressed(lib, path("lib/libc.so.6"), "--filter=x86");
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	/* the program runs with the compressed libc, and says it does */
	EXPECT_EQ(0, run("LD_LIBRARY_PATH='%s' /bin/busybox cat /proc/self/maps | grep -q '%s'",
			 path("lib"), path("lib/libc.so.6"))) {
		TH_LOG("compressed libc.so.6 not used by ld.so");
	}
	EXPECT_EQ(0, run("LD_LIBRARY_PATH='%s' /bin/busybox sha256sum '%s' > /dev/null",
			 path("lib"), path("orig"))) {
		TH_LOG("program failed");
	}
}

TEST_F(ext4dec, drop_caches_reread)
{
	drop_caches();
	EXPECT_TRUE(same_contents(path("orig"), path("dict")));
	drop_caches();
	EXPECT_TRUE(same_contents(path("orig"), path("x86")));
}

/* A cold sequential read of NAME inflates each chunk once; a warm one, none. */
static void cold_read_counts(struct __test_metadata *_metadata,
			     const char *name, long long csize)
{
	long long before, after, chunks = (DATA_SIZE + csize - 1) / csize;
	unsigned char *buf;
	size_t len;

	drop_caches();
	before = counter("chunks_inflated");
	buf = read_all(path(name), &len);
	after = counter("chunks_inflated");
	free(buf);
	ASSERT_NE(NULL, buf) TH_LOG("read %s", name);
	ASSERT_EQ((size_t)DATA_SIZE, len) TH_LOG("read %s", name);
	EXPECT_EQ(chunks, after - before) {
		TH_LOG("%s: cold sequential read inflated %lld chunks, file has %lld",
		       name, after - before, chunks);
	}
	buf = read_all(path(name), &len);
	free(buf);
	EXPECT_EQ(after, counter("chunks_inflated")) {
		TH_LOG("%s: warm read inflated chunks", name);
	}
}

TEST_F(ext4dec, cold_sequential_read_inflates_each_chunk_once)
{
	cold_read_counts(_metadata, "c16k", 16384);
	cold_read_counts(_metadata, "c12k", 12288);
	cold_read_counts(_metadata, "v2c128k", 131072);
	cold_read_counts(_metadata, "v2zstd", 16384);
}

TEST_F(ext4dec, random_reads_inflate_touched_chunks)
{
	int fd = open(path("c32k"), O_RDONLY);
	long long before;
	char c;

	ASSERT_LE(0, fd);
	drop_caches();
	before = counter("chunks_inflated");
	/* no readahead: random access advice */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	ASSERT_EQ(1, pread(fd, &c, 1, 5 * 32768 + 100));
	ASSERT_EQ(1, pread(fd, &c, 1, 5 * 32768 + 30000));
	ASSERT_EQ(1, pread(fd, &c, 1, 40 * 32768));
	close(fd);
	EXPECT_EQ(2, counter("chunks_inflated") - before) {
		TH_LOG("3 reads in 2 chunks");
	}
}

/*
 * A page fault that misses the page cache inflates the chunk that holds
 * the page and no other (no read-around beyond it): pages touched
 * scattered over a cold mapping, as a program's start touches a library,
 * inflate exactly the chunks touched, and read the original's bytes.
 */
static void fault_counts(struct __test_metadata *_metadata,
			 const unsigned char *orig, const char *name,
			 long long csize, int advice)
{
	size_t nr = (DATA_SIZE + csize - 1) / csize, pages = (DATA_SIZE + 4095) / 4096;
	long long before, expected = 0;
	char *inflated = calloc(nr, 1);
	int fd = open(path(name), O_RDONLY), i;
	unsigned char *m, vec;

	ASSERT_NE(NULL, inflated);
	ASSERT_LE(0, fd) TH_LOG("%s: open", name);
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("%s: mmap", name);
	ASSERT_EQ(0, advice ? madvise(m, DATA_SIZE, advice) : 0) {
		TH_LOG("%s: madvise", name);
	}
	before = counter("chunks_inflated");
	rng_state = 4242;
	for (i = 0; i < 64; i++) {
		size_t off = rng() % pages * 4096;
		size_t n = DATA_SIZE - off < 4096 ? DATA_SIZE - off : 4096;

		/*
		 * A page drop_caches left (one in a CPU's LRU batch, say)
		 * needs no fault; a fault inflates its chunk, once.
		 */
		ASSERT_EQ(0, mincore(m + off, 4096, &vec)) {
			TH_LOG("%s: mincore: %s", name, strerror(errno));
		}
		if (!(vec & 1) && !inflated[off / csize]) {
			inflated[off / csize] = 1;
			expected++;
		}
		ASSERT_EQ(0, memcmp(m + off, orig + off, n)) {
			TH_LOG("%s: page at %zu differs from the original", name, off);
		}
		ASSERT_EQ(expected, counter("chunks_inflated") - before) {
			TH_LOG("%s: %d faults, %lld chunks to inflate", name, i + 1,
			       expected);
		}
	}
	munmap(m, DATA_SIZE);
	free(inflated);
}

TEST_F(ext4dec, page_faults_inflate_touched_chunks)
{
	static const struct {
		const char *name;
		long long csize;
		int advice;
	} files[] = {
		{ "c32k", 32768, 0 },
		{ "c4k", 4096, 0 },
		{ "c12k", 12288, 0 },
		{ "v2c128k", 131072, 0 },
		{ "v2zstd", 16384, MADV_RANDOM },
	};
	size_t len, i;
	unsigned char *orig = read_all(path("orig"), &len);

	ASSERT_NE(NULL, orig);
	ASSERT_EQ((size_t)DATA_SIZE, len);
	for (i = 0; i < ARRAY_SIZE(files); i++)
		fault_counts(_metadata, orig, files[i].name, files[i].csize,
			     files[i].advice);
	free(orig);
}

/* Pages of [@p, @p + @len) in the page cache (mincore), or -1 */
static int resident_pages(const void *p, size_t len)
{
	unsigned char vec[64];
	size_t i, n = len / 4096;
	int r = 0;

	if (n > sizeof(vec) || mincore((void *)p, len, vec))
		return -1;
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

/*
 * fault_around_kb: a fault also reads that much after its chunk, in whole
 * chunks (the workers fill them while the fault goes on), and never past
 * the end of the file.
 */
TEST_F_TIMEOUT(ext4dec, fault_around_kb_reads_following_chunks, SLOW)
{
	int fd = open(path("c32k"), O_RDONLY), around = 0, after, i;
	long long before, got[2];
	volatile unsigned char *m;

	ASSERT_LE(0, fd);
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, set_param("fault_around_kb", 40));
	before = counter("chunks_inflated");
	(void)m[5 * 32768 + 4096];	/* chunk 5, and 6 and 7 read around */
	/* the workers fill 6 and 7 (mincore counts uptodate pages only) */
	for (i = 0; i < 200; i++) {
		around = resident_pages((const void *)(m + 6 * 32768), 2 * 32768);
		if (around == 16)
			break;
		usleep(100000);
	}
	after = resident_pages((const void *)(m + 8 * 32768), 32768);
	got[0] = counter("chunks_inflated") - before;
	(void)m[DATA_SIZE - 1];		/* the last chunk: nothing after it */
	got[1] = counter("chunks_inflated") - before;
	munmap((void *)m, DATA_SIZE);
	EXPECT_TRUE(around == 16 && after == 0) {
		TH_LOG("after a fault in chunk 5: %d of chunks 6-7's 16 pages cached within 20 s, %d of chunk 8's",
		       around, after);
	}
	EXPECT_TRUE(got[0] == 3 && got[1] == 4) {
		TH_LOG("fault_around_kb=40 (2 chunks of 32K): %lld, then %lld chunks inflated, not 3, 4",
		       got[0], got[1]);
	}
}

/* A fresh compressed copy of orig, 32 KiB chunks, mapped */
static volatile unsigned char *map_fresh(const char *name)
{
	void *m = MAP_FAILED;
	int fd;

	if (make_compressed(path("orig"), path(name), "--chunk-size=32768"))
		return NULL;
	fd = open(path(name), O_RDONLY);
	if (fd >= 0) {
		m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
	}
	return m == MAP_FAILED ? NULL : m;
}

/*
 * Reading ahead stops paying when misses never find their bytes kept:
 * faults in every other chunk, downwards, each keeping the chunk above
 * it, which is never asked for.  The first ones read ahead; after a few
 * dozen, only one miss in 16 does.
 */
static void cache_ahead_stops(struct __test_metadata *_metadata)
{
	volatile unsigned char *m = map_fresh("ahead2");
	int i, kept_late = 0;
	long long kept;

	ASSERT_NE(NULL, m) TH_LOG("ahead2: compress, activate, map");
	for (i = 0; i < 45; i++) {
		kept = counter("cached_bytes");
		(void)m[(size_t)(95 - 2 * i) * 32768];
		if (i == 0) {
			ASSERT_LT(kept, counter("cached_bytes")) {
				TH_LOG("the first miss kept nothing");
			}
		}
		kept_late += i >= 37 && counter("cached_bytes") > kept;
	}
	munmap((void *)m, DATA_SIZE);
	unlink(path("ahead2"));
	EXPECT_GE(1, kept_late) {
		TH_LOG("%d of misses 38-45, none a hit, read ahead (expected at most 1)",
		       kept_late);
	}
}

/*
 * A miss of one chunk also reads the compressed bytes of the chunks after
 * it (cache_ahead_kb) and keeps them, inflating nothing more: a later
 * fault in one of those chunks inflates it without I/O.  The cache holds
 * no more than cache_kb, gives everything back to drop_caches (its
 * shrinker) and to deactivation, and keeps nothing with cache_ahead_kb=0.
 * The fixture's teardown puts the parameters back.
 */
TEST_F_TIMEOUT(ext4dec, miss_keeps_following_chunks_bytes, SLOWER)
{
	long long inflated, hits, raw, kept, most = 0;
	volatile unsigned char *m;
	unsigned char *orig;
	size_t len, i;
	ssize_t r;
	char c;
	int fd;

	orig = read_all(path("orig"), &len);
	ASSERT_NE(NULL, orig);
	ASSERT_EQ((size_t)DATA_SIZE, len);
	m = map_fresh("ahead1");
	ASSERT_NE(NULL, m) TH_LOG("ahead1: compress, activate, map");
	ASSERT_EQ(0, set_param("cache_kb", 16384));
	ASSERT_EQ(0, set_param("cache_ahead_kb", 64));
	ASSERT_EQ(0, set_param("fault_around_kb", 0));
	drop_caches();
	ASSERT_EQ(0, counter("cached_bytes")) TH_LOG("bytes kept after drop_caches");

	inflated = counter("chunks_inflated");
	hits = counter("cache_hits");
	raw = counter("compressed_bytes");
	(void)m[5 * 32768 + 4096];		/* chunk 5: keeps 6 and more */
	kept = counter("cached_bytes");
	raw = counter("compressed_bytes") - raw;
	/* chunk 5's bytes and at most 64 KiB more; allocations at most twice */
	ASSERT_TRUE(counter("chunks_inflated") - inflated == 1 && kept > 0 &&
		    kept <= 2 * 64 * 1024 && raw <= 33 * 1024 + 64 * 1024) {
		TH_LOG("a fault in chunk 5 inflated %lld chunks, read %lld bytes and kept %lld (cache_ahead_kb=64)",
		       counter("chunks_inflated") - inflated, raw, kept);
	}
	raw = counter("compressed_bytes");
	ASSERT_EQ(0, memcmp((const void *)(m + 6 * 32768), orig + 6 * 32768, 32768)) {
		TH_LOG("chunk 6, inflated from kept bytes, differs from the original");
	}
	ASSERT_TRUE(counter("chunks_inflated") - inflated == 2 &&
		    counter("cache_hits") - hits == 1 &&
		    counter("compressed_bytes") == raw &&
		    counter("cached_bytes") < kept) {
		TH_LOG("a fault in chunk 6: %lld chunks inflated in all, %lld cache hits, %lld bytes read, %lld bytes kept (were %lld)",
		       counter("chunks_inflated") - inflated,
		       counter("cache_hits") - hits,
		       counter("compressed_bytes") - raw,
		       counter("cached_bytes"), kept);
	}

	/* at most cache_kb, the oldest dropped first */
	ASSERT_EQ(0, set_param("cache_kb", 40));
	for (i = 0; i < 12; i++) {
		size_t off = (20 + i * 6) * 32768;

		ASSERT_EQ(0, memcmp((const void *)(m + off), orig + off, 4096)) {
			TH_LOG("page at %zu differs from the original", off);
		}
		kept = counter("cached_bytes");
		most = kept > most ? kept : most;
	}
	ASSERT_TRUE(most > 0 && most <= 40 * 1024) {
		TH_LOG("with cache_kb=40, up to %lld bytes kept", most);
	}
	/* chunk 87, kept last, is there; 21, kept first, is gone */
	hits = counter("cache_hits");
	(void)m[87 * 32768];
	ASSERT_EQ(hits + 1, counter("cache_hits")) {
		TH_LOG("with cache_kb=40, the bytes kept last were not kept");
	}
	(void)m[21 * 32768];
	ASSERT_EQ(hits + 1, counter("cache_hits")) {
		TH_LOG("with cache_kb=40, the bytes kept first were still kept");
	}

	/* the shrinker: drop_caches frees slab caches too */
	drop_caches();
	ASSERT_EQ(0, counter("cached_bytes")) TH_LOG("bytes kept after drop_caches");

	/* none read ahead with cache_ahead_kb=0 */
	ASSERT_EQ(0, set_param("cache_kb", 16384));
	ASSERT_EQ(0, set_param("cache_ahead_kb", 0));
	hits = counter("cache_hits");
	(void)m[10 * 32768];
	(void)m[11 * 32768];
	ASSERT_TRUE(counter("cached_bytes") == 0 && counter("cache_hits") == hits) {
		TH_LOG("cache_ahead_kb=0: %lld bytes kept, %lld hits",
		       counter("cached_bytes"), counter("cache_hits") - hits);
	}
	munmap((void *)m, DATA_SIZE);
	free(orig);

	/* deactivation gives back what its inode kept */
	ASSERT_EQ(0, set_param("cache_ahead_kb", 16));
	drop_caches();
	fd = open(path("ahead1"), O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG("open ahead1: %s", strerror(errno));
	/* no readahead beyond the chunk: a miss of one chunk */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	r = pread(fd, &c, 1, 3 * 32768);
	close(fd);
	kept = counter("cached_bytes");
	ASSERT_TRUE(r == 1 && !change_flags(path("ahead1"), 0, FS_COMPR_FL) &&
		    kept > 0 && !counter("cached_bytes")) {
		TH_LOG("a read of chunk 3 kept %lld bytes, %lld left after chattr -c",
		       kept, counter("cached_bytes"));
	}
	unlink(path("ahead1"));
	cache_ahead_stops(_metadata);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* A cold mapping of c32k, populated by @how, reads the original's bytes. */
static void populate_compare(struct __test_metadata *_metadata,
			     const unsigned char *orig, const char *how)
{
	int fd = open(path("c32k"), O_RDONLY), flags = MAP_SHARED;
	unsigned char *m;
	int err = 0;

	ASSERT_LE(0, fd);
	drop_caches();
	if (!strcmp(how, "MAP_POPULATE"))
		flags |= MAP_POPULATE;
	m = mmap(NULL, DATA_SIZE, PROT_READ, flags, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("%s: mmap", how);
	if (!strcmp(how, "mlock"))
		err = mlock(m, DATA_SIZE);
	else if (!strcmp(how, "MADV_POPULATE_READ"))
		err = madvise(m, DATA_SIZE, MADV_POPULATE_READ);
	ASSERT_EQ(0, err) TH_LOG("%s: %s", how, strerror(errno));
	ASSERT_EQ(0, memcmp(m, orig, DATA_SIZE)) {
		TH_LOG("%s: the mapping differs from the original", how);
	}
	munmap(m, DATA_SIZE);
}

/*
 * Faults through every path that reaches the fault handler: populated
 * mappings (MAP_POPULATE, mlock, MADV_POPULATE_READ, as GUP faults pages
 * in), a write to a cold private mapping (copy-on-write of a page read
 * first), processes faulting in one chunk at once, and a chunk with
 * holes left by reclaim (one inflation fills them all).
 */
TEST_F(ext4dec, faults_populate_mlock_cow_concurrent_holes)
{
	static const char *const how[] = { "MAP_POPULATE", "mlock", "MADV_POPULATE_READ" };
	size_t len, i, off = 9 * 32768 + 4096 + 10;
	unsigned char *orig = read_all(path("orig"), &len), *m, page[4096];
	long long before;
	int fd, st, bad = 0, holes;

	ASSERT_NE(NULL, orig);
	ASSERT_EQ((size_t)DATA_SIZE, len);
	for (i = 0; i < ARRAY_SIZE(how); i++)
		populate_compare(_metadata, orig, how[i]);

	/* copy-on-write of a cold page */
	fd = open(path("c32k"), O_RDONLY);
	ASSERT_LE(0, fd);
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap private");
	m[off] ^= 0xff;
	memcpy(page, orig + off - 10, 4096);
	page[10] ^= 0xff;
	ASSERT_EQ(0, memcmp(m + off - 10, page, 4096)) TH_LOG("written private page");
	munmap(m, DATA_SIZE);
	ASSERT_EQ(4096, pread(fd, page, 4096, off - 10));
	ASSERT_EQ(0, memcmp(page, orig + off - 10, 4096)) {
		TH_LOG("the file changed under a private mapping");
	}

	/*
	 * Four processes fault in chunk 20 at once.  Readahead of the reads
	 * above may still be inflating it: drop_caches() leaves the folios
	 * it holds locked, so drop again until none of its pages is cached.
	 */
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	for (i = 0; i < 50; i++) {
		drop_caches();
		if (!resident_pages(m + 20 * 32768, 32768))
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, resident_pages(m + 20 * 32768, 32768)) TH_LOG("chunk 20 stays cached");
	munmap(m, DATA_SIZE);
	before = counter("chunks_inflated");
	for (i = 0; i < 4; i++) {
		if (fork())
			continue;
		m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		_exit(m == MAP_FAILED || memcmp(m + 20 * 32768 + i * 4096,
						 orig + 20 * 32768 + i * 4096, 4096));
	}
	for (i = 0; i < 4; i++)
		bad |= wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st);
	ASSERT_EQ(0, bad) TH_LOG("a process read wrong bytes in chunk 20");
	/*
	 * Usually one inflation; racing faulters may split the chunk's pages
	 * between them, but none is added twice: at most one per page.
	 */
	ASSERT_TRUE(counter("chunks_inflated") - before >= 1 &&
		    counter("chunks_inflated") - before <= 8) {
		TH_LOG("4 processes faulting in one chunk of 8 pages inflated %lld chunks",
		       counter("chunks_inflated") - before);
	}

	/* chunk 30 cached, then pages 1, 3 and 5 of it dropped */
	ASSERT_EQ(4096, pread(fd, page, 4096, 30 * 32768));
	for (i = 1; i < 6; i += 2)
		posix_fadvise(fd, 30 * 32768 + i * 4096, 4096, POSIX_FADV_DONTNEED);
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m);
	holes = 8 - resident_pages(m + 30 * 32768, 32768);
	before = counter("chunks_inflated");
	for (i = 1; i < 6; i += 2) {
		ASSERT_EQ(0, memcmp(m + 30 * 32768 + i * 4096,
				    orig + 30 * 32768 + i * 4096, 4096)) {
			TH_LOG("page %zu of chunk 30", i);
		}
	}
	EXPECT_TRUE(holes == 3 && counter("chunks_inflated") - before == 1) {
		TH_LOG("a chunk with %d holes: %lld inflations to fill them", holes,
		       counter("chunks_inflated") - before);
	}
	munmap(m, DATA_SIZE);
	free(orig);
}

TEST_F_TIMEOUT(ext4dec, memcg_limited_reader, SLOWER)
{
	const char *cg = "/sys/fs/cgroup/ext4dec-test";
	size_t n = 48 * MiB, i;
	unsigned char *data = malloc(n);
	pid_t pid;
	int st, err;

	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) &&
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2");
	if (run("grep -q memory /sys/fs/cgroup/cgroup.controllers"))
		SKIP(return, "no memory controller");
	ASSERT_NE(NULL, data);
	for (i = 0; i < n; i += 4096)
		gen_data(data + i, 4096, i / 4096 % 64 + 7);
	ASSERT_EQ(0, write_file(path("big.orig"), data, n, false));
	free(data);
	err = make_compressed(path("big.orig"), path("big"), "-1");
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	drop_caches();
	run("echo +memory > /sys/fs/cgroup/cgroup.subtree_control");
	mkdir(cg, 0755);
	ASSERT_EQ(0, run("echo 16M > %s/memory.max", cg));
	pid = fork();
	if (!pid) {
		char p[64];

		snprintf(p, sizeof(p), "echo %d > %s/cgroup.procs", getpid(), cg);
		_exit(run("%s", p) || !same_stream(path("big.orig"), path("big")));
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	rmdir(cg);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) {
		TH_LOG("48 MiB file read in a 16 MiB cgroup differs");
	}
	unlink(path("big"));
	unlink(path("big.orig"));
}

/* ------------------------------------------------ allocation failures */

#define FAILSLAB	"/sys/kernel/debug/failslab"

/*
 * failslab's settings that fail every slab allocation, sleeping ones too
 * and without a word, of the tasks that ask for it
 * (/proc/self/make-it-fail) and of no other: the task filter first.
 */
static const char *const failslab_settings[][2] = {
	{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" }, { "verbose", "0" },
	{ "space", "0" }, { "interval", "1" }, { "times", "-1" },
	{ "probability", "100" },
};

#define NR_FAILSLAB	ARRAY_SIZE(failslab_settings)

/* Write @val to failslab's @knob.  Return: 0, or -1 after a diagnostic. */
static int failslab_write(const char *knob, const char *val)
{
	int fd = open(path_in(FAILSLAB, knob), O_WRONLY);
	ssize_t n = fd < 0 ? -1 : write(fd, val, strlen(val));

	if (n != (ssize_t)strlen(val))
		diag("%s = %s: %s", path_in(FAILSLAB, knob), val, strerror(errno));
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * Apply failslab_settings, after saving in @saved the values they
 * replace, for failslab_off().  Return: 0, or -1 after a diagnostic.
 */
static int failslab_on(char saved[NR_FAILSLAB][32])
{
	size_t i;

	for (i = 0; i < NR_FAILSLAB; i++) {
		int fd = open(path_in(FAILSLAB, failslab_settings[i][0]), O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, saved[i], 31);

		if (fd >= 0)
			close(fd);
		if (n <= 0) {
			diag("%s: %s", failslab_settings[i][0], strerror(errno));
			return -1;
		}
		saved[i][n] = 0;
	}
	for (i = 0; i < NR_FAILSLAB; i++)
		if (failslab_write(failslab_settings[i][0], failslab_settings[i][1]))
			return -1;
	return 0;
}

/* Put back the values failslab_on() saved, the probability first. */
static int failslab_off(char saved[NR_FAILSLAB][32])
{
	int err = 0;
	size_t i;

	for (i = NR_FAILSLAB; i-- > 0;)
		err |= failslab_write(failslab_settings[i][0], saved[i]);
	return err;
}

/*
 * In a child process: touch the page at @off of the shared mapping @m of
 * an active file, or, with @m NULL, pread() it through @fd, while every
 * slab allocation of the child fails, as the buffer for the page's
 * compressed bytes does (a kmalloc() for a small chunk).  The page is
 * not in the page cache; the pages @span before and after it are, and
 * are touched first, so that the page tables over it are there.  Exits
 * 0 if the page reads as @want, 2 if it reads other bytes, 3 if the read
 * failed with ENOMEM, 4 with another error, 5 if the fault injection
 * could not be set up; a fault that fails kills it with SIGBUS.
 */
static void __attribute__((noreturn))
read_without_slab(const unsigned char *m, int fd, size_t off, size_t span,
		  const unsigned char *want)
{
	static unsigned char buf[4096];
	volatile const unsigned char *v = m;
	int mif = open("/proc/self/make-it-fail", O_WRONLY), err;
	ssize_t n = sizeof(buf);

	/* this process's own pages and page tables, before the failures */
	memset(buf, 0, sizeof(buf));
	if (m)
		buf[0] = v[off - span] + v[off + span];
	if (mif < 0 || pwrite(mif, "1", 1, 0) != 1)
		_exit(5);
	if (m)
		buf[0] = v[off];
	else
		n = pread(fd, buf, sizeof(buf), off);
	err = errno;
	if (pwrite(mif, "0", 1, 0) != 1)
		_exit(5);
	if (n != (ssize_t)sizeof(buf))
		_exit(n < 0 && err == ENOMEM ? 3 : 4);
	_exit(memcmp(m ? m + off : buf, want, sizeof(buf)) ? 2 : 0);
}

/*
 * The page at @off of @name, dropped from the page cache with the
 * @span bytes around it that make a chunk (or a folio), read by a child
 * without slab allocations (read_without_slab()), mapped and with
 * pread(), each after the other dropped it again.  Return: the number of
 * reads that went wrong, each with a diagnostic.
 */
static int reads_without_slab(const char *name, const unsigned char *orig, size_t off,
			      size_t span)
{
	static const char *const how[] = { "page fault", "pread" };
	/* read_without_slab()'s exit statuses */
	static const char *const why[] = {
		"", "", "wrong bytes", "ENOMEM", "an error", "no make-it-fail",
	};
	int fd = open(name, O_RDONLY | O_NOATIME), bad = 0, i, st;
	size_t start = off / span * span;
	unsigned char *m;
	pid_t pid;

	if (fd < 0) {
		diag("%s: open: %s", name, strerror(errno));
		return 1;
	}
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || !fd_reads(fd, orig, DATA_SIZE)) {
		diag("%s: cannot map or read it", name);
		close(fd);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		posix_fadvise(fd, start, span, POSIX_FADV_DONTNEED);
		if (resident_pages(m + start, span)) {
			diag("%s: bytes %zu to %zu stay cached", name, start, start + span);
			bad++;
			continue;
		}
		pid = fork();
		if (!pid)
			read_without_slab(i ? NULL : m, fd, off, span, orig + off);
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			diag("%s: fork: %s", name, strerror(errno));
			bad++;
			continue;
		}
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			continue;
		bad++;
		diag("%s: %s of byte %zu without slab allocations: %s", name, how[i], off,
		     WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) :
		     WEXITSTATUS(st) < ARRAY_SIZE(why) ? why[WEXITSTATUS(st)] : "?");
	}
	munmap(m, DATA_SIZE);
	close(fd);
	return bad;
}

/*
 * A read or a page fault that finds no memory for the compressed bytes
 * it needs does not fail: a fault would kill its process with SIGBUS (a
 * compressed library refaulted under memory pressure), a read would fail
 * with ENOMEM.  failslab makes every slab allocation of the reading
 * process fail, the buffer for the compressed bytes included (4 KiB
 * chunks: a kmalloc()); the page is read through the module's reserve
 * instead.  Where ext4 mounts 16 KiB blocks, also a folio of four chunks.
 * Needs fault injection (the debug kernel); a memory cgroup cannot make
 * that buffer's allocation fail: it is not charged to one.
 */
TEST_F_TIMEOUT(ext4dec, no_memory_for_compressed_bytes_no_sigbus, SLOWER)
{
	char saved[NR_FAILSLAB][32];
	long long reserve_reads = counter("reserve_reads");
	long long read_errors = counter("read_errors");
	bool lbs = false;
	size_t len;
	unsigned char *orig = read_all(path("orig"), &len);
	int bad = 0, err;

	if (access(FAILSLAB "/probability", W_OK))
		run("mount -t debugfs none /sys/kernel/debug 2>/dev/null");
	if (access(FAILSLAB "/probability", W_OK) || access("/proc/self/make-it-fail", W_OK))
		SKIP(free(orig); return, "no failslab in debugfs: a kernel without fault injection");
	ASSERT_NE(NULL, orig);
	ASSERT_EQ((size_t)DATA_SIZE, len);
	/* no compressed bytes kept, which would stand in for the read */
	ASSERT_EQ(0, set_param("cache_kb", 0));
	drop_caches();
	if (!run("(modprobe loop; truncate -s 96M " LBS_MNT ".img && "
		 "mkfs.ext4 -q -F -b 16384 " LBS_MNT ".img && mkdir -p " LBS_MNT " && "
		 "mount -o loop " LBS_MNT ".img " LBS_MNT ") > /dev/null 2>&1")) {
		err = make_compressed(path("orig"), LBS_MNT "/c4k", "--chunk-size=4096");
		ASSERT_EQ(0, err) TH_LOG("+c on 16 KiB blocks: %s", strerror(err));
		lbs = true;
	} else {
		diag("ext4 here mounts no 16 KiB blocks: no folio of several chunks");
	}
	ASSERT_EQ(0, failslab_on(saved));
	/* chunks 100 and 517, and a folio of chunks 300 to 303 */
	bad += reads_without_slab(path("c4k"), orig, 100 * 4096, 4096);
	bad += reads_without_slab(path("c4k"), orig, 517 * 4096, 4096);
	if (lbs)
		bad += reads_without_slab(LBS_MNT "/c4k", orig, 302 * 4096, 16384);
	EXPECT_EQ(0, failslab_off(saved)) TH_LOG("failslab left on");
	diag("%lld chunks read through the reserve", counter("reserve_reads") - reserve_reads);
	EXPECT_EQ(0, bad);
	/* one chunk per read, four per read of a 16 KiB folio */
	EXPECT_LE(reserve_reads + 4 + (lbs ? 8 : 0), counter("reserve_reads"));
	EXPECT_EQ(read_errors, counter("read_errors"));
	free(orig);
}

/* ------------------------------------------------------- large folios */

/* The folios that hold a file's pages, as a mapping of it shows them */
struct folio_layout {
	long largest;	/* pages in the largest folio */
	long crossing;	/* folios that hold parts of two chunks or more */
	long large;	/* folios of more than a page */
};

/*
 * The folios of the page cache that hold the first @len bytes of @name,
 * all of which must be cached: the pages are mapped, and each page's
 * frame found in /proc/self/pagemap and its flags in /proc/kpageflags
 * (a compound tail is a large folio's page other than its first).
 * Return: 0, or -1 after a diagnostic.
 */
static int folio_layout(const char *name, size_t len, long csize, struct folio_layout *l)
{
	const uint64_t tail = 1ULL << 16;
	int fd = open(name, O_RDONLY);
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	size_t i, n = (len + 4095) / 4096, first = 0;
	volatile unsigned char *m = MAP_FAILED;
	int ret = -1;

	*l = (struct folio_layout){ 0 };
	if (fd < 0 || pm < 0 || kf < 0) {
		diag("folio_layout: open: %s", strerror(errno));
		goto out;
	}
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto out;
	for (i = 0; i <= n; i++) {
		uint64_t pfn = 0, flags = 0;

		if (i < n) {
			(void)m[i * 4096];
			if (pread(pm, &pfn, 8, ((uintptr_t)m / 4096 + i) * 8) != 8 ||
			    !(pfn >> 63) || !(pfn & ((1ULL << 55) - 1)) ||
			    pread(kf, &flags, 8, (pfn & ((1ULL << 55) - 1)) * 8) != 8) {
				diag("folio_layout: page %zu: no frame", i);
				goto out;
			}
		}
		/* a folio ends where the next one starts, or at the end */
		if (i == n || !(flags & tail)) {
			if (i > first) {
				long pages = i - first;

				l->largest = pages > l->largest ? pages : l->largest;
				l->large += pages > 1;
				l->crossing += first * 4096 / csize != (i * 4096 - 1) / csize;
			}
			first = i;
		}
	}
	ret = 0;
out:
	if (m != MAP_FAILED)
		munmap((void *)m, len);
	close(kf);
	close(pm);
	close(fd);
	return ret;
}

/* Whether ext4 gives regular files large folios: since 6.16 */
static bool ext4_large_folios(void)
{
	return kernel_at_least(6, 16);
}

/*
 * @name, cold, equals @orig (@len bytes, the file @orig_name) when read
 * from the middle of a chunk first, then whole with read(), then mapped,
 * backwards; past EOF its last page reads as zeros.
 */
static void cold_reads_compare(struct __test_metadata *_metadata, const char *name,
			       const char *orig_name, const unsigned char *orig, size_t len)
{
	size_t mid = 3 * 16384 + 8192 + 100, p;
	unsigned char buf[300];
	unsigned char *m;
	int fd;

	drop_caches();
	fd = open(name, O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG("open %s", name);
	ASSERT_EQ((ssize_t)sizeof(buf), pread(fd, buf, sizeof(buf), mid));
	EXPECT_EQ(0, memcmp(buf, orig + mid, sizeof(buf))) TH_LOG("%s: mid-folio", name);
	EXPECT_TRUE(same_stream(orig_name, name)) TH_LOG("%s: read()", name);
	m = mmap(NULL, (len + 4095) & ~4095UL, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	close(fd);
	for (p = len & ~4095UL; p + 4096 > 4096; p -= 4096) {
		size_t n = p + 4096 <= len ? 4096 : len - p;

		ASSERT_EQ(0, memcmp(m + p, orig + p, n)) TH_LOG("%s: page at %zu", name, p);
	}
	for (p = len; p % 4096; p++)
		ASSERT_EQ(0, m[p]) TH_LOG("%s: byte %zu past EOF", name, p);
	munmap(m, (len + 4095) & ~4095UL);
}

/*
 * Folios in the page cache of an active inode: as large as ext4 makes
 * them (since 6.16) but never larger than a chunk, so that one chunk's
 * failure fails only its own pages.  A chunk of several folios, a folio
 * of a whole chunk, the folio that holds EOF and a read starting in the
 * middle of a folio all read back right, whatever the chunk size
 * (12 KiB: single pages only, no larger folio fits in a chunk).
 */
TEST_F_TIMEOUT(ext4dec, large_folios_within_chunks, SLOWER)
{
	static const struct { const char *name; long csize; } files[] = {
		{ "c4k", 4096 }, { "c12k", 12288 }, { "c16k", 16384 },
		{ "c32k", 32768 }, { "v2c128k", 131072 },
	};
	size_t orig_len, i;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	struct folio_layout l;
	unsigned char buf[300];
	int fd;

	ASSERT_NE(NULL, orig);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		const char *name = path(files[i].name);
		long csize = files[i].csize;

		cold_reads_compare(_metadata, name, path("orig"), orig, orig_len);
		ASSERT_EQ(0, folio_layout(name, orig_len, csize, &l));
		diag("%s: largest folio %ld pages, %ld large", files[i].name,
		     l.largest, l.large);
		EXPECT_EQ(0, l.crossing) TH_LOG("%s: %ld folios cross chunks",
						files[i].name, l.crossing);
		EXPECT_GE(csize & -csize, l.largest * 4096) {
			TH_LOG("%s: a folio of %ld pages", files[i].name, l.largest);
		}
		if (ext4_large_folios() && csize >= 16384) {
			EXPECT_LT(0, l.large) TH_LOG("%s: no large folio", files[i].name);
		}
		/* chunk 3 dropped from a warm cache, read again from its middle */
		fd = open(name, O_RDONLY);
		ASSERT_LE(0, fd);
		posix_fadvise(fd, 3 * csize, csize, POSIX_FADV_DONTNEED);
		ASSERT_EQ((ssize_t)sizeof(buf),
			  pread(fd, buf, sizeof(buf), 3 * csize + csize / 2 + 100));
		close(fd);
		EXPECT_EQ(0, memcmp(buf, orig + 3 * csize + csize / 2 + 100, sizeof(buf))) {
			TH_LOG("%s: the middle of a dropped chunk", files[i].name);
		}
		EXPECT_TRUE(same_stream(path("orig"), name)) TH_LOG("%s: read again", files[i].name);
	}
	free(orig);
}

/*
 * Large folios split under an active inode (as reclaim and memory
 * failure split them), then some of the pages dropped: every byte still
 * reads right, mapped or read, and the dropped pages come back.
 */
TEST_F_TIMEOUT(ext4dec, large_folios_split_then_reread, SLOWER)
{
	const char *split = "/sys/kernel/debug/split_huge_pages";
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	struct folio_layout before, after;
	int fd;

	ASSERT_NE(NULL, orig);
	if (access(split, W_OK))
		run("mount -t debugfs none /sys/kernel/debug 2>/dev/null");
	if (access(split, W_OK))
		SKIP(free(orig); return, "no %s (debugfs, THP)", split);
	cold_reads_compare(_metadata, path("c32k"), path("orig"), orig, orig_len);
	ASSERT_EQ(0, folio_layout(path("c32k"), orig_len, 32768, &before));
	/* in pages: all of the file, into single pages */
	ASSERT_EQ(0, run("echo '%s,0x0,0x%zx' > %s", path("c32k"), orig_len / 4096 + 1, split));
	ASSERT_EQ(0, folio_layout(path("c32k"), orig_len, 32768, &after));
	diag("large folios: %ld before the split, %ld after", before.large, after.large);
	if (ext4_large_folios()) {
		EXPECT_LT(0, before.large) TH_LOG("no large folio to split");
		EXPECT_GT(before.large, after.large) TH_LOG("nothing was split");
	}
	EXPECT_TRUE(same_stream(path("orig"), path("c32k")));
	/* drop every other 4 KiB page: chunks partly cached */
	fd = open(path("c32k"), O_RDONLY);
	ASSERT_LE(0, fd);
	for (size_t p = 0; p < orig_len; p += 8192)
		posix_fadvise(fd, p, 4096, POSIX_FADV_DONTNEED);
	close(fd);
	EXPECT_TRUE(same_stream(path("orig"), path("c32k"))) TH_LOG("after dropping pages");
	mmap_compare(_metadata, "c32k", MAP_SHARED);
	free(orig);
}

/*
 * A folio larger than a chunk, where the file system's blocks make the
 * page cache's folios at least 16 KiB: 4 KiB chunks and 12 KiB chunks
 * (which straddle folios) read back right, read, mapped and from the
 * middle of a folio, as does a file whose EOF folio has pages wholly past
 * EOF, and a corrupt chunk, first or last in its folio, fails the folio
 * that holds it, no more.  Skipped where ext4 takes no block larger than a page.
 */
TEST_F_TIMEOUT(ext4dec, large_folios_span_chunks, SLOWER)
{
	static const char *const opts[] = { "--chunk-size=4096", "--chunk-size=12288" };
	char name[64];
	size_t orig_len, i, page;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *b, buf[4096];
	struct folio_layout l;
	int err, fd;

	ASSERT_NE(NULL, orig);
	if (run("(modprobe loop; truncate -s 96M " LBS_MNT ".img && "
		"mkfs.ext4 -q -F -b 16384 " LBS_MNT ".img && mkdir -p " LBS_MNT " && "
		"mount -o loop " LBS_MNT ".img " LBS_MNT ") > /tmp/lbs.log 2>&1")) {
		run("sed 's/^/# /' /tmp/lbs.log; rm -f " LBS_MNT ".img");
		SKIP(free(orig); return, "ext4 here mounts no 16 KiB blocks");
	}
	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		snprintf(name, sizeof(name), LBS_MNT "/c%zu", i);
		err = make_compressed(path("orig"), name, opts[i]);
		ASSERT_EQ(0, err) TH_LOG("%s: %s", opts[i], strerror(err));
		cold_reads_compare(_metadata, name, path("orig"), orig, orig_len);
		ASSERT_EQ(0, folio_layout(name, orig_len, i ? 12288 : 4096, &l));
		diag("%s: largest folio %ld pages, %ld crossing chunks", opts[i],
		     l.largest, l.crossing);
		EXPECT_LE(4, l.largest);
		EXPECT_LT(0, l.crossing);
	}
	/* EOF 100 bytes into a 16 KiB folio: three pages wholly past it */
	ASSERT_EQ(0, write_file(LBS_MNT "/eof.orig", orig, 3 * MiB + 100, false));
	err = make_compressed(LBS_MNT "/eof.orig", LBS_MNT "/eof", "--chunk-size=4096");
	ASSERT_EQ(0, err) TH_LOG("eof: %s", strerror(err));
	cold_reads_compare(_metadata, LBS_MNT "/eof", LBS_MNT "/eof.orig", orig, 3 * MiB + 100);
	/* chunks 4 and 11 garbled: the first chunk of a folio, the last of the next */
	ASSERT_EQ(0, run("szip -qc --chunk-size=4096 '%s' > " LBS_MNT "/bad", path("orig")));
	b = read_all(LBS_MNT "/bad", &i);
	ASSERT_NE(NULL, b);
	for (page = 4; page <= 11; page += 7) {
		uint32_t from, to;

		memcpy(&from, b + 20 + 4 * page, 4);
		memcpy(&to, b + 20 + 4 * (page + 1), 4);
		memset(b + (from + to) / 2, 0x55, 8);
	}
	ASSERT_EQ(0, write_file(LBS_MNT "/bad", b, i, false));
	free(b);
	err = change_flags(LBS_MNT "/bad", FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	drop_caches();
	fd = open(LBS_MNT "/bad", O_RDONLY);
	ASSERT_LE(0, fd);
	for (page = 0; page < 16; page++) {
		ssize_t r = pread(fd, buf, 4096, page * 4096);

		/* the 16 KiB folios of chunks 4 and 11: chunks 4 to 11 */
		if (page >= 4 && page <= 11) {
			EXPECT_EQ(EIO, errno_of(r)) TH_LOG("page %zu read %zd", page, r);
		} else {
			EXPECT_TRUE(r == 4096 && !memcmp(buf, orig + page * 4096, 4096)) {
				TH_LOG("page %zu wrong", page);
			}
		}
	}
	close(fd);
	free(orig);
}

/* The workspaces counter once it is @want, or after 15 s, what it is then */
static long long workspaces_settled(long long want)
{
	long long n;
	int i;

	for (i = 0; (n = counter("workspaces")) != want && i < 150; i++)
		usleep(100000);
	return n;
}

/*
 * The pool of workspaces for inline inflation holds one when idle, grows
 * while readers inflate side by side (at most the "workspaces" parameter,
 * one per CPU), and is back to one 5 s after the last use.
 */
TEST_F_TIMEOUT(ext4dec, workspaces_grow_on_demand_shrink_when_idle, SLOW)
{
	const int readers = 4;
	long long most = 0, n, max = get_param("workspaces");
	pid_t pids[4];
	int i;

	if (!max)
		max = sysconf(_SC_NPROCESSORS_CONF);	/* one per possible CPU */
	if (max < 2)
		SKIP(return, "a pool of at most %lld workspace cannot grow", max);
	EXPECT_EQ(1, workspaces_settled(1)) TH_LOG("an idle pool");
	for (i = 0; i < readers; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			/* single chunks, missed each time: inflated by this task */
			int fd = open(path("c4k"), O_RDONLY);
			char buf[4096];
			double end = now() + 3;

			if (fd < 0)
				_exit(1);
			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
			rng_state = 77 + i;
			while (now() < end) {
				off_t off = (off_t)(rng() % (DATA_SIZE / 4096)) * 4096;

				posix_fadvise(fd, off, 4096, POSIX_FADV_DONTNEED);
				if (pread(fd, buf, sizeof(buf), off) != sizeof(buf))
					_exit(2);
			}
			_exit(0);
		}
		ASSERT_LT(0, pids[i]);
	}
	for (i = 0; i < 40; i++) {
		n = counter("workspaces");
		most = n > most ? n : most;
		usleep(100000);
	}
	for (i = 0; i < readers; i++) {
		int st;

		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("reader %d", i);
	}
	EXPECT_LE(2, most) TH_LOG("the pool never grew: %lld at most", most);
	EXPECT_GE(max, most) TH_LOG("more than the workspaces parameter");
	EXPECT_EQ(1, workspaces_settled(1)) TH_LOG("the pool did not shrink back");
}

/*
 * Readers of freshly evicted inodes, started together: the first opens
 * race with the activation, and each reader checks every byte it reads.
 */
TEST_F_TIMEOUT(ext4dec, concurrent_readers, SLOW)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	int i, st, bad = 0, round;

	ASSERT_NE(NULL, orig);
	for (round = 0; round < 3; round++) {
		drop_caches();
		for (i = 0; i < 8; i++) {
			if (fork())
				continue;
			/* child: random reads of one of three files, checked */
			static unsigned char buf[20000];
			const char *name = variants[i % 3].name;
			int fd = open(path(name), O_RDONLY), k;

			rng_state = 1000 + i + 100 * round;
			for (k = 0; fd >= 0 && k < 200; k++) {
				size_t off = k ? rng() % orig_len : 0;
				size_t len = rng() % sizeof(buf);
				ssize_t r = pread(fd, buf, len, off);
				size_t want = len < orig_len - off ? len : orig_len - off;

				if (r != (ssize_t)want || memcmp(buf, orig + off, want)) {
					size_t d = 0;

					while (r > 0 && d < (size_t)r && buf[d] == orig[off + d])
						d++;
					diag("child %d: %s: pread(%zu at %zu) = %zd, first difference at +%zu",
					     i, name, len, off, r, d);
					_exit(1);
				}
			}
			_exit(fd < 0);
		}
		for (i = 0; i < 8; i++) {
			wait(&st);
			bad += !WIFEXITED(st) || WEXITSTATUS(st);
		}
	}
	free(orig);
	EXPECT_EQ(0, bad) TH_LOG("%d of 24 concurrent readers saw wrong data", bad);
}

TEST_F_TIMEOUT(ext4dec, unlink_while_mapped, SLOW)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len), *m;
	int fd, err;

	ASSERT_NE(NULL, orig);
	err = make_compressed(path("orig"), path("unl"), "");
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	fd = open(path("unl"), O_RDONLY);
	ASSERT_LE(0, fd);
	m = mmap(NULL, orig_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, unlink(path("unl")));
	drop_caches();
	EXPECT_EQ(0, memcmp(m, orig, orig_len)) TH_LOG("mapping of the unlinked file");
	EXPECT_LE(1, counter("active_inodes")) TH_LOG("mapped inode not active");
	munmap(m, orig_len);
	free(orig);
	/* nothing is open now: eviction leaves no inode active */
	drop_caches();
	EXPECT_EQ(0, counter("active_inodes")) TH_LOG("after eviction");
}

TEST_F_TIMEOUT(ext4dec, chattr_cycles, SLOW)
{
	int i, err;

	ASSERT_EQ(0, run("szip -qc '%s' > '%s'", path("orig"), path("cyc.sz")));
	ASSERT_EQ(0, run("cp '%s' '%s'", path("cyc.sz"), path("cyc")));
	for (i = 0; i < 4; i++) {
		err = change_flags(path("cyc"), FS_COMPR_FL, 0);
		ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
		ASSERT_EQ(DATA_SIZE, file_size(path("cyc"))) TH_LOG("size after +c");
		ASSERT_TRUE(same_contents(path("orig"), path("cyc"))) TH_LOG("after +c");
		/* the real chattr for -c */
		ASSERT_EQ(0, run("chattr -c '%s'", path("cyc"))) TH_LOG("chattr -c");
		ASSERT_TRUE(same_contents(path("cyc.sz"), path("cyc"))) {
			TH_LOG("raw after -c");
		}
	}
}

/*
 * Change NAME's flags while another process holds it open with
 * @open_flags; returns the errno of the change.
 */
static int change_flags_held_open(const char *name, int open_flags, int add,
				  int remove)
{
	int pipefd[2], err;
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return errno;
	pid = fork();
	if (!pid) {
		int f = open(name, open_flags);

		if (f < 0 || write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	err = read(pipefd[0], &c, 1) == 1 ? change_flags(name, add, remove) :
					      ECHILD;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pipefd[0]);
	return err;
}

/* Change NAME's flags while it is mapped (and closed); returns errno. */
static int change_flags_mapped(const char *name, int add, int remove)
{
	int fd = open(name, O_RDONLY), err;
	void *m;

	if (fd < 0)
		return errno;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return errno;
	err = change_flags(name, add, remove);
	munmap(m, 4096);
	return err;
}

/*
 * Provoke more "not activated" log lines than the kernel's default rate
 * limit lets through (10 in 5 s): @name must be a plain file that is not
 * szip.  A report of another kind logged right after must still appear.
 */
static bool refusal_burst(const char *name)
{
	int i;

	for (i = 0; i < 12; i++)
		if (change_flags(name, FS_COMPR_FL, 0) != EINVAL)
			return false;
	return true;
}

TEST_F(ext4dec, chattr_minus_c_busy)
{
	int err;

	err = change_flags_held_open(path("c8k"), O_RDONLY, 0, FS_COMPR_FL);
	EXPECT_EQ(EBUSY, err) TH_LOG("-c while open elsewhere: %s", strerror(err));
	err = change_flags_mapped(path("c8k"), 0, FS_COMPR_FL);
	EXPECT_EQ(EBUSY, err) TH_LOG("-c while mapped: %s", strerror(err));
	EXPECT_TRUE(same_contents(path("orig"), path("c8k"))) TH_LOG("still active");
}

TEST_F_TIMEOUT(ext4dec, chattr_plus_c_refusals, SLOW)
{
	int err, i;

	ASSERT_EQ(0, run("szip -qc '%s' > '%s'", path("orig"), path("w")));
	err = change_flags_held_open(path("w"), O_WRONLY | O_APPEND,
				     FS_COMPR_FL, 0);
	EXPECT_EQ(ETXTBSY, err) TH_LOG("+c with a writer: %s", strerror(err));
	/* a burst of one reason hides no other */
	for (i = 0; i < 12; i++) {
		err = change_flags_mapped(path("w"), FS_COMPR_FL, 0);
		ASSERT_EQ(EBUSY, err) TH_LOG("+c while mapped: %s", strerror(err));
	}

	/* not szip */
	ASSERT_EQ(0, write_file(path("plain"), "hello world\n", 12, false));
	err = change_flags(path("plain"), FS_COMPR_FL, 0);
	EXPECT_EQ(EINVAL, err) TH_LOG("+c on a text file: %s", strerror(err));
	EXPECT_EQ(0, run("dmesg | tail -n 20 | grep -q '%s'",
			 "plain: not activated: not a valid szip file")) {
		TH_LOG("no dmesg line naming the file and the reason");
	}
}

TEST_F_TIMEOUT(ext4dec, corrupt_chunk_eio_only_there, SLOW)
{
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	long long errors = counter("read_errors");
	unsigned int off1, off2;
	int fd, err;

	ASSERT_NE(NULL, orig);
	ASSERT_EQ(0, run("szip -qc --chunk-size=4096 '%s' > '%s'", path("orig"),
			 path("corrupt")));
	b = read_all(path("corrupt"), &n);
	ASSERT_NE(NULL, b);
	/* garble the middle of chunk 5's compressed data */
	memcpy(&off1, b + 20 + 4 * 5, 4);
	memcpy(&off2, b + 20 + 4 * 6, 4);
	memset(b + (off1 + off2) / 2, 0x55, 8);
	ASSERT_EQ(0, write_file(path("corrupt"), b, n, false));
	free(b);
	err = change_flags(path("corrupt"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	ASSERT_EQ(0, write_file(path("burst"), "not szip\n", 9, false));
	ASSERT_TRUE(refusal_burst(path("burst"))) TH_LOG("refusals");
	drop_caches();
	fd = open(path("corrupt"), O_RDONLY);
	ASSERT_LE(0, fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	EXPECT_EQ(EIO, errno_of(pread(fd, buf, 4096, 5 * 4096))) {
		TH_LOG("bad chunk read without EIO");
	}
	EXPECT_TRUE(pread(fd, buf, 4096, 4 * 4096) == 4096 &&
		    !memcmp(buf, orig + 4 * 4096, 4096)) {
		TH_LOG("chunk before");
	}
	EXPECT_TRUE(pread(fd, buf, 4096, 6 * 4096) == 4096 &&
		    !memcmp(buf, orig + 6 * 4096, 4096)) {
		TH_LOG("chunk after");
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	EXPECT_EQ(EIO, errno_of(pread(fd, buf, 4096, 5 * 4096))) {
		TH_LOG("bad chunk read without EIO, second time");
	}
	close(fd);
	free(orig);
	EXPECT_LT(errors, counter("read_errors")) TH_LOG("read_errors did not move");
	EXPECT_EQ(0, run("dmesg | grep -q 'chunk 5: '")) {
		TH_LOG("no dmesg line with the chunk number");
	}
}

/*
 * Write szip file NAME (4 KiB chunks, no dictionary: the offset table is at
 * byte 20) with @size bytes at @at set to @val (little-endian), then cut
 * to @trunc bytes if @trunc >= 0.
 */
static int make_broken(const char *name, long at, int size, uint32_t val,
		       long trunc)
{
	size_t n;
	unsigned char *b;
	int ret, i;

	if (access(path("bad.base"), R_OK) &&
	    run("szip -qc --chunk-size=4096 '%s' > '%s'", path("orig"),
		path("bad.base")))
		return -1;
	b = read_all(path("bad.base"), &n);
	if (!b)
		return -1;
	for (i = 0; i < size; i++)
		b[at + i] = (unsigned char)(val >> (8 * i));
	if (trunc >= 0)
		n = trunc;
	ret = write_file(name, b, n, false);
	free(b);
	return ret;
}

TEST_F_TIMEOUT(ext4dec, malformed_headers_refused, SLOW)
{
	static const struct {
		const char *what;
		long at;
		int size;
		uint32_t val;
		long trunc;
	} cases[] = {
		{ "bad magic", 0, 1, 'X', -1 },
		{ "chunk size 5000", 8, 2, 5000, -1 },
		{ "chunk size 36864", 8, 2, 36864, -1 },
		{ "zero chunks", 12, 4, 0, -1 },
		{ "last chunk size 0", 16, 2, 0, -1 },
		{ "last chunk size > chunk size", 16, 2, 4097, -1 },
		{ "windowBits 16", 18, 1, 16, -1 },
		{ "unknown filter", 19, 1, 9, -1 },
		{ "file shorter than totalSize", 0, 0, 0, 5000 },
		{ "truncated header", 0, 0, 0, 10 },
		{ "offset table past EOF", 12, 4, 0x40000000, -1 },
		{ "offset into the header", 20 + 4 * 3, 4, 21, -1 },
		{ "offsets out of order", 20 + 4 * 3, 4, 0x7FFFFFFF, -1 },
	};
	long long refused = counter("refusals/not_szip");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[32];
		int err;

		snprintf(name, sizeof(name), "bad%zu", i);
		ASSERT_EQ(0, make_broken(path(name), cases[i].at, cases[i].size,
					 cases[i].val, cases[i].trunc)) {
			TH_LOG("make %s", cases[i].what);
		}
		err = change_flags(path(name), FS_COMPR_FL, 0);
		EXPECT_EQ(EINVAL, err) {
			TH_LOG("%s: +c gave %s", cases[i].what, strerror(err));
		}
		EXPECT_GT(DATA_SIZE, file_size(path(name))) {
			TH_LOG("%s: size changed", cases[i].what);
		}
		EXPECT_EQ(0, run("lsattr '%s' | grep -q '^[^c ]* '", path(name))) {
			TH_LOG("%s: +c was set", cases[i].what);
		}
	}
	EXPECT_EQ((long long)ARRAY_SIZE(cases), counter("refusals/not_szip") - refused) {
		TH_LOG("refusals/not_szip");
	}
}

/* A wrong (but in-range) last chunk size: only the last chunk fails. */
TEST_F_TIMEOUT(ext4dec, wrong_last_chunk_size_eio_on_last_chunk, SLOW)
{
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	uint16_t last;
	off_t size;
	int fd, err;

	ASSERT_NE(NULL, orig);
	ASSERT_EQ(0, run("szip -qc --chunk-size=4096 '%s' > '%s'", path("orig"),
			 path("lastcs")));
	b = read_all(path("lastcs"), &n);
	ASSERT_NE(NULL, b);
	memcpy(&last, b + 16, 2);
	last = last > 100 ? 100 : last + 1;
	memcpy(b + 16, &last, 2);
	ASSERT_EQ(0, write_file(path("lastcs"), b, n, false));
	free(b);
	err = change_flags(path("lastcs"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	size = file_size(path("lastcs"));
	ASSERT_EQ((off_t)(orig_len / 4096 * 4096 + last), size);
	fd = open(path("lastcs"), O_RDONLY);
	ASSERT_LE(0, fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	EXPECT_EQ(EIO, errno_of(pread(fd, buf, 10, size - 10))) {
		TH_LOG("last chunk read without EIO");
	}
	EXPECT_TRUE(pread(fd, buf, 4096, size - last - 4096) == 4096 &&
		    !memcmp(buf, orig + size - last - 4096, 4096)) {
		TH_LOG("chunk before last");
	}
	close(fd);
	free(orig);
}

/*
 * Format 2 checksums: a flipped bit in chunk 5's stored checksum and a
 * garbled chunk 9 each give EIO on exactly that chunk's pages.
 */
TEST_F_TIMEOUT(ext4dec, v2_checksum_eio_on_that_chunk_only, SLOW)
{
	const long chunk = 16384, nr = (DATA_SIZE + chunk - 1) / chunk;
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	long long errors = counter("read_errors");
	uint64_t off9, off10;
	long page;
	int fd, err;

	ASSERT_NE(NULL, orig);
	ASSERT_EQ(0, run("szip -qc --codec=lz4 --level=9 --checksum=crc32c '%s' > '%s'",
			 path("orig"), path("v2bad")));
	b = read_all(path("v2bad"), &n);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(2, b[7]) TH_LOG("not a crc32c file");
	/* header 64, no dictionary, offsets 8 * nr, then crc32c 4 * nr */
	b[64 + 8 * nr + 4 * 5] ^= 0x10;
	memcpy(&off9, b + 64 + 8 * 9, 8);
	memcpy(&off10, b + 64 + 8 * 10, 8);
	memset(b + (off9 + off10) / 2, 0x55, 4);
	ASSERT_EQ(0, write_file(path("v2bad"), b, n, false));
	free(b);
	err = change_flags(path("v2bad"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("+c: %s", strerror(err));
	ASSERT_EQ(0, write_file(path("burst"), "not szip\n", 9, false));
	ASSERT_TRUE(refusal_burst(path("burst"))) TH_LOG("refusals");
	drop_caches();
	fd = open(path("v2bad"), O_RDONLY);
	ASSERT_LE(0, fd);
	for (page = 0; page < 12 * chunk / 4096; page++) {
		bool bad = page / (chunk / 4096) == 5 || page / (chunk / 4096) == 9;
		ssize_t r = pread(fd, buf, 4096, page * 4096);

		if (bad) {
			ASSERT_EQ(EIO, errno_of(r)) {
				TH_LOG("page %ld (chunk %ld) read %zd, not EIO",
				       page, page / (chunk / 4096), r);
			}
		} else {
			ASSERT_TRUE(r == 4096 && !memcmp(buf, orig + page * 4096, 4096)) {
				TH_LOG("page %ld (chunk %ld) wrong", page,
				       page / (chunk / 4096));
			}
		}
	}
	close(fd);
	free(orig);
	EXPECT_LE(errors + 2, counter("read_errors")) TH_LOG("read_errors did not move");
	/* logged once per inode: whichever chunk a worker inflated first */
	EXPECT_EQ(0, run("dmesg | grep -Eq 'chunk 5: chunk checksum mismatch|chunk 9: corrupt'")) {
		TH_LOG("no dmesg line naming chunk 5's checksum or chunk 9's data");
	}
}

/*
 * zstd with a dictionary: read back where the kernel's zstd can use one
 * (6.12), refused as unsupported where it cannot (6.1), never misread.
 */
TEST_F(ext4dec, v2_zstd_dictionary_or_refused)
{
	long long refused = counter("refusals/unsupported");
	int err;

	ASSERT_EQ(0, run("szip -qc --codec=zstd --level=3 --dict=65536 --checksum=xxh64 '%s' > '%s'",
			 path("orig"), path("v2zdict")));
	err = change_flags(path("v2zdict"), FS_COMPR_FL, 0);
	if (kernel_at_least(6, 12)) {
		ASSERT_EQ(0, err) TH_LOG("+c on 6.12 or later: %s", strerror(err));
		drop_caches();
		EXPECT_TRUE(same_contents(path("orig"), path("v2zdict")));
		mmap_compare(_metadata, "v2zdict", MAP_SHARED);
		return;
	}
	ASSERT_EQ(EOPNOTSUPP, err) TH_LOG("+c before 6.12: %s", strerror(err));
	EXPECT_EQ(refused + 1, counter("refusals/unsupported"));
	EXPECT_EQ(0, run("dmesg | grep -q 'zstd dictionary'")) {
		TH_LOG("no dmesg line naming the missing capability");
	}
}

/*
 * What an mmap() of 4 KiB of @name gives: -errno if it fails, else 0 if
 * reading the page kills the reader with SIGBUS (past the end of the
 * file), 1 if it reads.  Used for the empty file below.
 */
static int empty_mmap_outcome(const char *name)
{
	int fd = open(name, O_RDONLY), status, ret;
	volatile unsigned char *p;
	pid_t pid;

	if (fd < 0)
		return -errno;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	pid = fork();
	if (!pid) {
		(void)p[0];
		_exit(0);
	}
	munmap((void *)p, 4096);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
		return 0;
	return WIFEXITED(status) ? 1 : -ECHILD;
}

/*
 * An empty file in format 2 (a header, no chunks; what szip writes for an
 * empty input), +c: served as an empty file, as an ordinary empty file is,
 * when activated by chattr and again at its first open after eviction.
 */
TEST_F(ext4dec, v2_empty_file_is_served_empty)
{
	struct stat st;
	char buf[64];
	int fd, err, round;

	ASSERT_EQ(0, run(": > '%s' && szip -qc /dev/null > '%s'", path("empty0"),
			 path("v2empty")));
	ASSERT_EQ(0, stat(path("v2empty"), &st));
	ASSERT_LT(0, st.st_size) TH_LOG("the szip file has its header");
	err = change_flags(path("v2empty"), FS_COMPR_FL, 0);
	ASSERT_EQ(0, err) TH_LOG("chattr +c: %s", strerror(err));
	for (round = 0; round < 2; round++) {
		if (round)
			drop_caches();
		ASSERT_EQ(0, stat(path("v2empty"), &st));
		EXPECT_EQ(0, st.st_size) TH_LOG("round %d", round);
		fd = open(path("v2empty"), O_RDONLY);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, read(fd, buf, sizeof(buf)));
		EXPECT_EQ(0, pread(fd, buf, sizeof(buf), 4096));
		EXPECT_EQ(0, lseek(fd, 0, SEEK_END));
		EXPECT_EQ(-1, lseek(fd, 0, SEEK_DATA));
		EXPECT_EQ(ENXIO, errno);
		/* a mapping of 0 bytes fails, whatever the file */
		EXPECT_EQ(MAP_FAILED, mmap(NULL, 0, PROT_READ, MAP_SHARED, fd, 0));
		EXPECT_EQ(EINVAL, errno);
		close(fd);
		/* one of 4 KiB: as for an ordinary empty file */
		EXPECT_EQ(empty_mmap_outcome(path("empty0")),
			  empty_mmap_outcome(path("v2empty"))) TH_LOG("round %d", round);
	}
	EXPECT_EQ(0, run("lsattr -d '%s' | cut -d' ' -f1 | grep -q c", path("v2empty")));
	EXPECT_TRUE(same_contents(path("empty0"), path("v2empty")));
}

/* Format 2 header fields the module must refuse */
TEST_F(ext4dec, v2_malformed_headers_refused)
{
	static const struct {
		const char *what;
		int at;
		unsigned char val;
	} cases[] = {
		{ "reserved byte set", 40, 1 },
		{ "unknown codec", 4, 9 },
		{ "chunk shift 18", 5, 18 },
		{ "unknown checksum", 7, 3 },
	};
	long long refused = counter("refusals/not_szip");
	unsigned char *b;
	size_t i, n;

	ASSERT_EQ(0, run("szip -qc --codec=lz4 --level=1 '%s' > '%s'", path("orig"),
			 path("v2base")));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int err;

		b = read_all(path("v2base"), &n);
		ASSERT_NE(NULL, b);
		b[cases[i].at] = cases[i].val;
		ASSERT_EQ(0, write_file(path("v2mal"), b, n, false));
		free(b);
		err = change_flags(path("v2mal"), FS_COMPR_FL, 0);
		EXPECT_EQ(EINVAL, err) {
			TH_LOG("%s: +c gave %s", cases[i].what, strerror(err));
		}
		EXPECT_EQ((off_t)n, file_size(path("v2mal"))) {
			TH_LOG("%s: size changed", cases[i].what);
		}
		ASSERT_EQ(0, unlink(path("v2mal")));
	}
	EXPECT_EQ((long long)ARRAY_SIZE(cases), counter("refusals/not_szip") - refused) {
		TH_LOG("refusals/not_szip");
	}
}

/*
 * The ext4 image with inline data, verity and encryption at SPECIAL:
 * made and mounted by the first test that asks, kept for the others.
 */
static bool special_fs(void)
{
	if (mounted_on(SPECIAL))
		return true;
	if (!run("(modprobe loop && truncate -s 64M " SPECIAL ".img && "
		 "mkfs.ext4 -q -F -b 4096 -O inline_data,verity,encrypt " SPECIAL ".img && "
		 "mkdir -p " SPECIAL " && mount -o loop " SPECIAL ".img " SPECIAL
		 ") > /tmp/special.log 2>&1"))
		return true;
	run("sed 's/^/# /' /tmp/special.log");
	return false;
}

/* +c on NAME must fail with EOPNOTSUPP and count under refusals/WHY. */
static void expect_refusal(struct __test_metadata *_metadata, const char *name,
			   const char *why)
{
	char counter_name[64];
	long long before;
	int err;

	snprintf(counter_name, sizeof(counter_name), "refusals/%s", why);
	before = counter(counter_name);
	err = change_flags(name, FS_COMPR_FL, 0);
	EXPECT_EQ(EOPNOTSUPP, err) TH_LOG("+c on a %s file: %s", why, strerror(err));
	EXPECT_EQ(before + 1, counter(counter_name)) {
		TH_LOG("%s did not move", counter_name);
	}
}

TEST_F(ext4dec, inline_data_file_refused)
{
	if (!special_fs())
		SKIP(return, "cannot make a loop-mounted ext4 with inline_data");
	ASSERT_EQ(0, run("printf 'small file, inline in its inode: 48 bytes..\\n' > /tmp/small && "
			 "szip -qc /tmp/small > " SPECIAL "/inline"));
	ASSERT_EQ(0, run("lsattr " SPECIAL "/inline | grep -q '^[^ ]*N'")) {
		TH_LOG("the file is not inline");
	}
	expect_refusal(_metadata, SPECIAL "/inline", "inline_data");
}

TEST_F_TIMEOUT(ext4dec, verity_file_refused, SLOW)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = 4096,
	};
	int fd;

	if (!special_fs())
		SKIP(return, "cannot make a loop-mounted ext4 with verity");
	ASSERT_EQ(0, run("szip -qc '%s' > " SPECIAL "/verity", path("orig")));
	fd = open(SPECIAL "/verity", O_RDONLY);
	ASSERT_LE(0, fd);
	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg)) {
		TH_LOG("FS_IOC_ENABLE_VERITY: %s", strerror(errno));
		close(fd);
		SKIP(return, "FS_IOC_ENABLE_VERITY failed");
	}
	close(fd);
	expect_refusal(_metadata, SPECIAL "/verity", "verity");
}

TEST_F_TIMEOUT(ext4dec, encrypted_file_refused, SLOW)
{
	struct {
		struct fscrypt_add_key_arg arg;
		__u8 raw[64];
	} key = { .arg.key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER,
		  .arg.raw_size = 64 };
	struct fscrypt_policy_v2 policy = {
		.version = FSCRYPT_POLICY_V2,
		.contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS,
		.filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS,
		.flags = FSCRYPT_POLICY_FLAGS_PAD_32,
	};
	int fd;

	if (!special_fs())
		SKIP(return, "cannot make a loop-mounted ext4 with encryption");
	memset(key.raw, 0x5c, sizeof(key.raw));
	mkdir(SPECIAL "/enc", 0755);
	fd = open(SPECIAL, O_RDONLY);
	ASSERT_LE(0, fd);
	if (ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, &key)) {
		close(fd);
		SKIP(return, "FS_IOC_ADD_ENCRYPTION_KEY failed");
	}
	close(fd);
	memcpy(policy.master_key_identifier, key.arg.key_spec.u.identifier,
	       FSCRYPT_KEY_IDENTIFIER_SIZE);
	fd = open(SPECIAL "/enc", O_RDONLY);
	ASSERT_LE(0, fd);
	if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &policy)) {
		TH_LOG("FS_IOC_SET_ENCRYPTION_POLICY: %s", strerror(errno));
		close(fd);
		SKIP(return, "cannot set an encryption policy (crypto modules?)");
	}
	close(fd);
	if (run("szip -qc '%s' > " SPECIAL "/enc/file", path("orig")))
		SKIP(return, "cannot write into the encrypted directory");
	expect_refusal(_metadata, SPECIAL "/enc/file", "encrypted");
}

TEST_F_TIMEOUT(ext4dec, data_journalled_file_refused, SLOW)
{
	ASSERT_EQ(0, run("szip -qc '%s' > '%s'", path("orig"), path("jdata")));
	ASSERT_EQ(0, change_flags(path("jdata"), FS_JOURNAL_DATA_FL, 0)) TH_LOG("+j");
	expect_refusal(_metadata, path("jdata"), "journal_data");
}

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX	0x00200000
#endif

/*
 * A DAX file on emulated persistent memory: the harness boots with
 * memmap=SIZE!START (RAM the kernel leaves as a legacy pmem region) and
 * nd_pmem gives /dev/pmem0, where ext4 mounts with dax=always.  The
 * fixture's teardown unmounts it if the test stops early.
 */
TEST_F_TIMEOUT(ext4dec, dax_file_refused, SLOW)
{
	struct statx stx = { 0 };
	bool dax;
	int i;

	if (run("grep -q 'memmap=[0-9]*[KMG]!' /proc/cmdline"))
		SKIP(return, "booted without memmap=SIZE!START: no emulated persistent memory");
	run("modprobe -q nd_e820; modprobe -q nd_pmem");
	for (i = 0; i < 50 && access("/dev/pmem0", F_OK); i++)
		usleep(100000);
	ASSERT_EQ(0, access("/dev/pmem0", F_OK)) TH_LOG("memmap= given, yet no /dev/pmem0");
	ASSERT_EQ(0, run("mkfs.ext4 -F -q -b 4096 /dev/pmem0"));
	mkdir(DAX_MNT, 0755);
	ASSERT_EQ(0, mount("/dev/pmem0", DAX_MNT, "ext4", 0, "dax=always")) {
		TH_LOG("mount -o dax=always: %s", strerror(errno));
	}
	ASSERT_EQ(0, run("szip -qc '%s' > " DAX_MNT "/dax", path("orig")));
	ASSERT_EQ(0, statx(AT_FDCWD, DAX_MNT "/dax", 0, STATX_BASIC_STATS, &stx)) {
		TH_LOG("statx: %s", strerror(errno));
	}
	dax = stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_DAX;
	ASSERT_TRUE(dax) {
		TH_LOG("the file is not DAX (statx attributes %#llx, mask %#llx)",
		       (unsigned long long)stx.stx_attributes,
		       (unsigned long long)stx.stx_attributes_mask);
	}
	expect_refusal(_metadata, DAX_MNT "/dax", "dax");
	EXPECT_EQ(0, umount(DAX_MNT)) TH_LOG("umount " DAX_MNT ": %s", strerror(errno));
}

TEST_F(ext4dec, inherited_c_plain_file_stays_raw)
{
	size_t n;
	unsigned char *b;
	int fd;

	mkdir(path("cdir"), 0755);
	ASSERT_EQ(0, change_flags(path("cdir"), FS_COMPR_FL, 0)) {
		TH_LOG("+c on a directory");
	}
	fd = open(path("cdir/new"), O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(11, write(fd, "plain text\n", 11));
	close(fd);
	drop_caches();
	b = read_all(path("cdir/new"), &n);
	EXPECT_TRUE(b && n == 11 && !memcmp(b, "plain text\n", 11)) {
		TH_LOG("inherited +c file not readable raw");
	}
	free(b);
	EXPECT_EQ(0, run("lsattr '%s' | grep -q '^[^ ]*c'", path("cdir/new"))) {
		TH_LOG("not +c");
	}
}

/* EXT4DEC_IOC_GET_STATUS of @name into @st; 0 or an errno */
static int get_status(const char *name, struct ext4dec_status *st)
{
	int fd = open(name, O_RDONLY), err;

	if (fd < 0)
		return errno;
	memset(st, 0xa5, sizeof(*st));
	err = errno_of(ioctl(fd, EXT4DEC_IOC_GET_STATUS, st));
	close(fd);
	return err;
}

/* What the module makes of a file, for anyone who can open it */
TEST_F_TIMEOUT(ext4dec, status_ioctl_reports_what_the_module_makes_of_a_file, SLOW)
{
	char *bad = path("cdir-status/file");
	struct ext4dec_status st;
	unsigned char *b;
	size_t n;
	int i;

	/* an active file, read once after drop_caches: each chunk inflated once */
	drop_caches();
	b = read_all(path("v2zstd"), &n);
	free(b);
	ASSERT_EQ(0, get_status(path("v2zstd"), &st)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(EXT4DEC_STATE_ACTIVE, st.state);
	EXPECT_EQ(0, st.refusal);
	EXPECT_EQ(2, st.format);
	EXPECT_EQ(2, st.codec) TH_LOG("zstd");
	EXPECT_EQ(16384, st.chunk_size) TH_LOG("szip's default chunk size");
	EXPECT_EQ((DATA_SIZE + 16383) / 16384, st.nr_chunks);
	EXPECT_EQ(DATA_SIZE, st.size);
	EXPECT_TRUE(st.raw_size > 0 && st.raw_size < DATA_SIZE / 2) {
		TH_LOG("raw size %llu", (unsigned long long)st.raw_size);
	}
	EXPECT_LE(st.nr_chunks, st.chunks_inflated) TH_LOG("%llu chunks inflated",
							  (unsigned long long)st.chunks_inflated);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, st.reserved[i]);
	ASSERT_EQ(0, get_status(path("legacy"), &st));
	EXPECT_EQ(1, st.format);
	EXPECT_EQ(1, st.codec) TH_LOG("deflate");

	/* not +c */
	ASSERT_EQ(0, get_status(path("orig"), &st));
	EXPECT_EQ(EXT4DEC_STATE_PLAIN, st.state);
	EXPECT_EQ(DATA_SIZE, st.size);

	/* +c, not szip: refused at its first open, until it changes */
	mkdir(path("cdir-status"), 0755);
	ASSERT_EQ(0, set_compr(path("cdir-status"), 1));
	ASSERT_EQ(0, write_file(bad, "not szip\n", 9, false));
	ASSERT_EQ(0, get_status(bad, &st));
	EXPECT_EQ(EXT4DEC_STATE_REFUSED, st.state);
	EXPECT_EQ(EINVAL, st.refusal);
	EXPECT_EQ(9, st.size);
	/* being written: not refused, not active */
	{
		int w = open(bad, O_WRONLY | O_APPEND), fd = open(bad, O_RDONLY);

		ASSERT_LE(0, w);
		ASSERT_LE(0, fd);
		EXPECT_EQ(1, write(w, "x", 1));
		EXPECT_EQ(0, ioctl(fd, EXT4DEC_IOC_GET_STATUS, &st));
		EXPECT_EQ(EXT4DEC_STATE_INACTIVE, st.state);
		close(fd);
		close(w);
	}
	unlink(bad);
}

/* Whether NAME reads as szip bytes (not through ext4dec) */
static bool reads_raw(const char *name)
{
	char magic[3] = "";
	int fd = open(name, O_RDONLY);
	bool raw = fd >= 0 && read(fd, magic, 3) == 3 && !memcmp(magic, "SeZ", 3);

	if (fd >= 0)
		close(fd);
	return raw;
}

/*
 * The activation policy: by default only files that nobody but root, and
 * the trusted group, can have written are decoded; any_owner opens it to
 * every owner.  A refused file reads raw, once counted; chattr +c on it
 * fails with EPERM.
 */
TEST_F_TIMEOUT(ext4dec, policy_trusts_root_and_trusted_group, SLOW)
{
	char *name = path("nobodys");
	long long refused;
	int i;

	ASSERT_EQ(0, make_compressed(path("orig"), name, "--chunk-size=8192"));
	ASSERT_EQ(0, chown(name, 65534, 65534));
	/* +c, and inactive: what every +c file is when the module loads */
	ASSERT_EQ(0, run("rmmod ext4dec && modprobe ext4dec")) TH_LOG("reload");
	refused = counter("refusals/untrusted");
	for (i = 0; i < 3; i++) {
		EXPECT_TRUE(reads_raw(name)) TH_LOG("nobody's file decoded");
		EXPECT_GT(DATA_SIZE, file_size(name)) TH_LOG("nobody's file's size");
	}
	EXPECT_EQ(refused + 1, counter("refusals/untrusted")) {
		TH_LOG("refusals/untrusted: %lld, was %lld", counter("refusals/untrusted"),
		       refused);
	}

	/* the trusted group's files are trusted, from the change on */
	ASSERT_EQ(0, set_param("trusted_gid", 65534));
	EXPECT_TRUE(same_contents(path("orig"), name)) TH_LOG("trusted group");
	ASSERT_EQ(0, set_param("trusted_gid", -1));
	EXPECT_EQ(0, set_compr(name, 0)) TH_LOG("-c");
	EXPECT_EQ(EPERM, set_compr(name, 1)) TH_LOG("+c on nobody's file");
	EXPECT_TRUE(reads_raw(name)) TH_LOG("after a refused +c");

	ASSERT_EQ(0, run("echo Y > " PARAMS "/any_owner"));
	EXPECT_EQ(0, set_compr(name, 1)) TH_LOG("+c with any_owner");
	EXPECT_TRUE(same_contents(path("orig"), name)) TH_LOG("any_owner");
	ASSERT_EQ(0, run("echo N > " PARAMS "/any_owner"));
	EXPECT_EQ(0, set_compr(name, 0));

	/* root's file that others may write, and one only root's group may */
	ASSERT_EQ(0, chown(name, 0, 0));
	ASSERT_EQ(0, chmod(name, 0646));
	EXPECT_EQ(EPERM, set_compr(name, 1)) TH_LOG("+c on a file others may write");
	ASSERT_EQ(0, chmod(name, 0664));
	EXPECT_EQ(0, set_compr(name, 1)) TH_LOG("+c on a file root's group may write");
	EXPECT_TRUE(same_contents(path("orig"), name));
	EXPECT_EQ(0, set_compr(name, 0));
	unlink(name);
}

/*
 * A +c file that is not szip is checked once, not at every open, until its
 * contents change; then it is checked again, and activated if it became
 * szip.
 */
TEST_F_TIMEOUT(ext4dec, refusal_remembered_until_file_changes, SLOW)
{
	char *name = path("cdir-once/file");
	long long refused;
	int i;

	mkdir(path("cdir-once"), 0755);
	ASSERT_EQ(0, set_compr(path("cdir-once"), 1)) TH_LOG("+c on a directory");
	ASSERT_EQ(0, write_file(name, "not szip\n", 9, false));
	refused = counter("refusals/not_szip");
	for (i = 0; i < 5; i++)
		EXPECT_EQ(9, file_size(name));
	EXPECT_EQ(refused + 1, counter("refusals/not_szip")) {
		TH_LOG("5 stats: %lld refusals", counter("refusals/not_szip") - refused);
	}
	/* the same bytes written again: a change all the same */
	ASSERT_EQ(0, write_file(name, "not szip\n", 9, false));
	EXPECT_EQ(9, file_size(name));
	EXPECT_EQ(refused + 2, counter("refusals/not_szip")) TH_LOG("after a write");
	ASSERT_EQ(0, run("szip -qc '%s' > /tmp/once.sz && cat /tmp/once.sz > '%s'",
			 path("orig"), name));
	EXPECT_TRUE(same_contents(path("orig"), name)) TH_LOG("szip bytes written");
	EXPECT_EQ(refused + 2, counter("refusals/not_szip"));
	unlink(name);
	unlink("/tmp/once.sz");
}

/*
 * Checking a +c file that is not szip takes write access away from
 * nobody: a stat of it never makes a writer's open fail with ETXTBSY.
 */
TEST_F_TIMEOUT(ext4dec, stat_of_non_szip_never_blocks_a_writer, SLOW)
{
	char *name = path("cdir-w/file");
	int fd, i, busy = 0, s;
	struct stat st;
	pid_t pid;

	mkdir(path("cdir-w"), 0755);
	ASSERT_EQ(0, set_compr(path("cdir-w"), 1)) TH_LOG("+c on a directory");
	ASSERT_EQ(0, write_file(name, "not szip\n", 9, false));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (;;)
			stat(name, &st);
	}
	/* each write changes the file: the next stat checks it again */
	for (i = 0; i < 2000; i++) {
		fd = open(name, O_WRONLY | O_APPEND);
		if (fd < 0) {
			if (errno == ETXTBSY)
				busy++;
			continue;
		}
		if (write(fd, "x", 1) != 1)
			TH_LOG("write: %s", strerror(errno));
		close(fd);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &s, 0);
	EXPECT_EQ(0, busy) TH_LOG("%d of 2000 opens for writing failed with ETXTBSY", busy);
	EXPECT_EQ(9 + 2000 - busy, file_size(name));
	unlink(name);
}

/*
 * stat() needs no permission on the file itself: a user who cannot read
 * another's 0600 +c file must not activate it by a stat (activation would
 * deny the owner's writes).  A reader's stat activates it.
 */
TEST_F_TIMEOUT(ext4dec, stat_by_non_reader_does_not_activate, SLOW)
{
	char *priv = path("private");
	off_t raw;
	pid_t pid;
	int fd, s;

	struct stat dst;

	ASSERT_EQ(0, stat(dir, &dst));
	ASSERT_EQ(0, run("szip -qc '%s' > '%s' && chmod 600 '%s' && chmod o+x '%s'",
			 path("orig"), priv, priv, dir));
	raw = file_size(priv);
	ASSERT_EQ(0, change_flags(priv, FS_COMPR_FL, 0));
	/* +c, and inactive: what every +c file is when the module loads */
	ASSERT_EQ(0, run("rmmod ext4dec && modprobe ext4dec")) TH_LOG("reload");
	pid = fork();
	if (!pid) {
		struct stat st;

		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		if (stat(priv, &st))
			_exit(4);
		if (open(priv, O_RDONLY) >= 0 || errno != EACCES)
			_exit(5);
		_exit(st.st_size == raw ? 0 : st.st_size == DATA_SIZE ? 1 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &s, 0));
	ASSERT_TRUE(WIFEXITED(s));
	EXPECT_EQ(0, WEXITSTATUS(s)) {
		TH_LOG("as nobody: %s", (const char *[]){ "", "stat saw the uncompressed size",
			"stat saw another size", "cannot drop privileges",
			"stat failed", "the file was readable" }[WEXITSTATUS(s) % 6]);
	}
	/* still inactive: the owner may write */
	fd = open(priv, O_RDWR);
	EXPECT_LE(0, fd) TH_LOG("O_RDWR: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(DATA_SIZE, file_size(priv)) TH_LOG("a reader's stat");
	unlink(priv);
	chmod(dir, dst.st_mode & 07777);
}

/* @name's ctime in nanoseconds, or -1 */
static long long ctime_ns(const char *name)
{
	struct stat st;

	if (stat(name, &st))
		return -1;
	return st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
}

/*
 * What a read returns changes at activation and at deactivation: ctime
 * moves, as for a write (the timestamps' granularity is a tick at most).
 */
TEST_F_TIMEOUT(ext4dec, activation_and_deactivation_change_ctime, SLOW)
{
	char *name = path("ctime");
	long long raw, active, again;

	ASSERT_EQ(0, make_compressed(path("orig"), name, "--chunk-size=8192"));
	ASSERT_EQ(0, run("rmmod ext4dec")) TH_LOG("rmmod");
	raw = ctime_ns(name);
	usleep(50000);
	ASSERT_EQ(0, run("modprobe ext4dec")) TH_LOG("modprobe");
	active = ctime_ns(name);	/* this stat activates */
	EXPECT_EQ(DATA_SIZE, file_size(name)) TH_LOG("not activated");
	EXPECT_LT(raw, active) TH_LOG("activation left ctime alone");
	usleep(50000);
	ASSERT_EQ(0, run("rmmod ext4dec")) TH_LOG("rmmod");
	again = ctime_ns(name);
	EXPECT_GT(DATA_SIZE, file_size(name)) TH_LOG("still active");
	EXPECT_LT(active, again) TH_LOG("deactivation left ctime alone");
	ASSERT_EQ(0, run("modprobe ext4dec")) TH_LOG("modprobe");
	unlink(name);
}

TEST_F(ext4dec, active_before_first_stat_after_mount)
{
	const char *mnt = getenv("EXT4DEC_MNT"), *dev = getenv("EXT4DEC_DEV");
	struct stat st;

	if (!mnt || !dev)
		SKIP(return, "EXT4DEC_MNT/EXT4DEC_DEV not set");
	sync();
	ASSERT_EQ(0, chdir("/"));
	/* EBUSY here is a reference the module leaked on an inode or file */
	ASSERT_EQ(0, umount(mnt)) TH_LOG("umount %s: %s", mnt, strerror(errno));
	ASSERT_EQ(0, mount(dev, mnt, "ext4", 0, NULL)) {
		TH_LOG("mount: %s", strerror(errno));
	}
	/* first access is a stat: already the uncompressed size */
	ASSERT_EQ(0, stat(path("c16k"), &st));
	EXPECT_EQ(DATA_SIZE, st.st_size) TH_LOG("size after mount");
	EXPECT_TRUE(same_contents(path("orig"), path("c4k"))) TH_LOG("read after mount");
}

/*
 * The scheduling policy of the inflate workers (kernel threads named
 * ext4dec/N), all of which must have the same: -1 if there is none, -2 if
 * they differ.
 */
/* The inflate workers' pids (threads named ext4dec/N), at most @max; how many */
static int worker_pids(pid_t *pids, int max)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	int n = 0;

	while (proc && n < max && (e = readdir(proc))) {
		char name[300], comm[32] = "";
		FILE *f;

		snprintf(name, sizeof(name), "/proc/%s/comm", e->d_name);
		f = fopen(name, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "ext4dec/", 8))
			pids[n++] = atoi(e->d_name);
		fclose(f);
	}
	if (proc)
		closedir(proc);
	return n;
}

#define MAX_WORKERS	64

/* The workers' common scheduling policy, -1 without workers, -2 if mixed */
static int workers_policy(void)
{
	pid_t pids[MAX_WORKERS];
	int i, n = worker_pids(pids, MAX_WORKERS), policy = -1;

	for (i = 0; i < n; i++) {
		int p = sched_getscheduler(pids[i]);

		policy = policy == -1 || policy == p ? p : -2;
	}
	return policy;
}

/*
 * The CPU time the workers have run, in ns (/proc/PID/schedstat), or -1.
 * A worker that has had nothing to do has not run since it started.
 */
static long long workers_runtime(void)
{
	pid_t pids[MAX_WORKERS];
	int i, n = worker_pids(pids, MAX_WORKERS);
	long long sum = 0;

	for (i = 0; i < n; i++) {
		char name[64];
		long long ns;
		FILE *f;
		int got;

		snprintf(name, sizeof(name), "/proc/%d/schedstat", pids[i]);
		f = fopen(name, "r");
		if (!f)
			return -1;
		got = fscanf(f, "%lld", &ns);
		fclose(f);
		if (got != 1)
			return -1;
		sum += ns;
	}
	return n ? sum : -1;
}

/* The workers' policy once it is @want, or after 5 s, what it is then */
static int workers_policy_settled(int want)
{
	int policy, i;

	for (i = 0; (policy = workers_policy()) != want && i < 50; i++)
		usleep(100000);	/* the last module's workers still exiting */
	return policy;
}

/*
 * The workers run at normal priority unless the module is loaded with
 * workers_rt=1: a user reading a compressible file in a loop must not
 * hold every CPU at real-time priority.
 */
TEST_F_TIMEOUT(ext4dec, workers_normal_priority_unless_asked, SLOW)
{
	EXPECT_EQ(SCHED_OTHER, workers_policy());
	ASSERT_EQ(0, run("rmmod ext4dec")) TH_LOG("rmmod");
	ASSERT_EQ(0, run("modprobe ext4dec workers_rt=1")) TH_LOG("modprobe workers_rt=1");
	EXPECT_EQ(SCHED_FIFO, workers_policy_settled(SCHED_FIFO));
	EXPECT_TRUE(same_contents(path("orig"), path("c8k")));
	ASSERT_EQ(0, run("rmmod ext4dec")) TH_LOG("rmmod");
	ASSERT_EQ(0, run("modprobe ext4dec")) TH_LOG("modprobe");
	EXPECT_EQ(SCHED_OTHER, workers_policy_settled(SCHED_OTHER));
}

/* Read @name 128 KiB at a time, as cat does: is it @orig's @len bytes? */
static bool reads_as(const char *name, const unsigned char *orig, size_t len)
{
	static unsigned char buf[128 * 1024];
	int fd = open(name, O_RDONLY);
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0 && done + n <= len &&
	       !memcmp(buf, orig + done, n))
		done += n;
	close(fd);
	return !n && done == len;
}

/*
 * The workers' runtime once they have been idle for 200 ms (readahead of
 * an earlier test may still be in flight), or -1.
 */
static long long workers_idle_runtime(void)
{
	long long before = -2, now = workers_runtime();
	int i;

	for (i = 0; i < 50 && now != before; i++) {
		usleep(200000);
		before = now;
		now = workers_runtime();
	}
	return now == before ? now : -1;
}

/*
 * What a reader waits for is inflated in its own task, charged to it and
 * its cgroup: 128 KiB preads of cold chunks (8 chunks each, no readahead
 * beyond them) leave the workers idle.  The window read ahead of a
 * reader reading 128 KiB at a time is the workers', unless
 * reader_inflates=1.  (How much of one read() of a whole file is read
 * ahead of the reader depends on the kernel: 7.x reads it all in
 * synchronous windows, which the reader then inflates.)
 */
TEST_F_TIMEOUT(ext4dec, readers_inflate_what_they_wait_for, SLOW)
{
	static unsigned char buf[128 * 1024];
	long long chunks, work, runtime;
	unsigned char *orig;
	size_t orig_len;
	int fd, i;

	orig = read_all(path("orig"), &orig_len);
	ASSERT_NE(NULL, orig);
	ASSERT_LE(1, counter("workers")) TH_LOG("no inflate workers");
	fd = open(path("c16k"), O_RDONLY);
	ASSERT_LE(0, fd);
	/* exactly the pages asked for: no readahead window beyond them */
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM));
	drop_caches();
	runtime = workers_idle_runtime();
	ASSERT_LE(0, runtime) TH_LOG("no schedstat of the workers, or they do not settle");
	chunks = counter("chunks_inflated");
	work = counter("worker_chunks");
	ASSERT_LE(0, work) TH_LOG("no worker_chunks counter");
	for (i = 0; i < 12; i++) {
		off_t off = (off_t)i * 256 * 1024;

		ASSERT_EQ((ssize_t)sizeof(buf), pread(fd, buf, sizeof(buf), off));
		ASSERT_EQ(0, memcmp(buf, orig + off, sizeof(buf))) TH_LOG("pread at %lld", (long long)off);
	}
	close(fd);
	/* 8 chunks a pread, but for a page drop_caches may have left */
	EXPECT_LE(12 * 8 - 4, counter("chunks_inflated") - chunks);
	EXPECT_GE(12 * 8, counter("chunks_inflated") - chunks);
	EXPECT_EQ(0, counter("worker_chunks") - work) TH_LOG("chunks the reader waited for went to the workers");
	EXPECT_EQ(runtime, workers_runtime()) TH_LOG("the workers ran for the reader's preads");

	/* sequential reads: the workers inflate the window ahead */
	drop_caches();
	work = counter("worker_chunks");
	EXPECT_TRUE(reads_as(path("c16k"), orig, orig_len));
	EXPECT_LT(0, counter("worker_chunks") - work) TH_LOG("128 KiB reads: the workers read nothing ahead");

	/* reader_inflates: the reader inflates all of it */
	ASSERT_EQ(0, run("echo Y > " PARAMS "/reader_inflates"));
	drop_caches();
	runtime = workers_idle_runtime();
	ASSERT_LE(0, runtime);
	chunks = counter("chunks_inflated");
	work = counter("worker_chunks");
	EXPECT_TRUE(reads_as(path("c16k"), orig, orig_len));
	EXPECT_EQ(0, run("echo N > " PARAMS "/reader_inflates"));
	/* a page drop_caches left (one in a CPU's LRU batch) spares its chunk */
	EXPECT_LT((long long)orig_len / 16384 / 2, counter("chunks_inflated") - chunks);
	EXPECT_EQ(0, counter("worker_chunks") - work) TH_LOG("reader_inflates=1, the workers inflated");
	EXPECT_EQ(runtime, workers_runtime()) TH_LOG("reader_inflates=1, the workers ran");
	free(orig);
}

TEST_F_TIMEOUT(ext4dec, rmmod_busy_then_clean, SLOW)
{
	int fd = open(path("c16k"), O_RDONLY);
	off_t raw;

	ASSERT_LE(0, fd);
	ASSERT_NE(0, run("rmmod ext4dec 2>/dev/null")) TH_LOG("rmmod worked while open");
	close(fd);
	ASSERT_EQ(0, run("rmmod ext4dec")) TH_LOG("rmmod failed when idle");
	raw = file_size(path("c16k"));
	EXPECT_TRUE(raw > 0 && raw < DATA_SIZE) {
		TH_LOG("size %lld after rmmod", (long long)raw);
	}
	EXPECT_EQ(0, run("szip -t '%s'", path("c16k"))) TH_LOG("raw szip bytes after rmmod");
	ASSERT_EQ(0, run("modprobe ext4dec"));
	EXPECT_EQ(DATA_SIZE, file_size(path("c16k"))) TH_LOG("not active again");
	EXPECT_TRUE(same_contents(path("orig"), path("c16k"))) TH_LOG("read after reload");
}

struct stalled_ioctl {
	int fd;
	void *arg;
	int ret;
};

static void *stalled_ioctl(void *p)
{
	struct stalled_ioctl *s = p;

	s->ret = ioctl(s->fd, EXT4_IOC_GETSTATE, s->arg);
	return NULL;
}

/* Wait up to @secs for @pid; return its wait status, or -1 if it runs on. */
static int wait_for(pid_t pid, int secs)
{
	int i, status;

	for (i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(100000);
	}
	return -1;
}

/*
 * An ioctl of an ext4 file that waits on user memory (here a page that a
 * userfaultfd leaves unanswered; a FUSE-backed page behaves the same)
 * does not hold up rmmod: only the ioctls that move data run ext4dec's
 * code.  EXT4_IOC_GETSTATE is ext4's own (FS_IOC_GETFLAGS would be the
 * VFS's): it writes its answer to user memory.
 */
TEST_F_TIMEOUT(ext4dec, rmmod_does_not_wait_for_other_ioctls, SLOW)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { 0 };
	struct stalled_ioctl st = { .ret = -2 };
	struct pollfd pfd = { .events = POLLIN };
	struct uffd_msg msg;
	pthread_t thread;
	int uffd, status;
	pid_t pid;
	void *page;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (uffd < 0 && errno == ENOSYS)
		SKIP(return, "no userfaultfd in this kernel (the debug lane's config)");
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	reg.range.start = (unsigned long)page;
	reg.range.len = 4096;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg)) TH_LOG("%s", strerror(errno));
	st.fd = open(path("orig"), O_RDONLY);
	ASSERT_LE(0, st.fd);
	st.arg = page;
	ASSERT_EQ(0, pthread_create(&thread, NULL, stalled_ioctl, &st));
	/* the ioctl is in the kernel, waiting for the page */
	pfd.fd = uffd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("the ioctl did not fault");
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execlp("rmmod", "rmmod", "ext4dec", NULL);
		_exit(127);
	}
	status = wait_for(pid, 10);
	EXPECT_NE(-1, status) TH_LOG("rmmod waits for an ioctl ext4dec has nothing to do with");
	/* let the ioctl finish, and rmmod if it waits */
	zero.range.start = (unsigned long)page;
	zero.range.len = 4096;
	EXPECT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero)) TH_LOG("%s", strerror(errno));
	pthread_join(thread, NULL);
	EXPECT_EQ(0, st.ret) TH_LOG("FS_IOC_GETFLAGS: %s", strerror(errno));
	if (status == -1)
		status = wait_for(pid, 60);
	EXPECT_TRUE(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("rmmod failed");
	}
	close(st.fd);
	close(uffd);
	ASSERT_EQ(0, run("modprobe ext4dec")) TH_LOG("modprobe");
}

/* ext4dec_test DIR [harness options]: the harness gets the options. */
int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] != '-') {
		dir = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
		shared_files_made = !make_shared_files();
	}
	return test_harness_run(argc, argv);
}
