// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec selftests: run as root inside the test VM, on an ext4 file system,
 * with ext4dec loaded and the szip tool in PATH.
 *
 * Usage: ext4dec_test DIR [TEST...]
 *
 * DIR is an empty directory on ext4.  Each test is one behaviour of the
 * module and prints one TAP line; "# " lines are diagnostics.  Exit status
 * 0 if nothing failed, 1 otherwise (kselftest convention).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
#include <signal.h>
#include <stdarg.h>
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
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/testlib.h"

#define MiB		(1024 * 1024)

enum result { PASS, FAIL, SKIP };

static const char *dir;
static char skip_reason[256];

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			diag("%s:%d: %s", __func__, __LINE__, #cond);	\
			diag(__VA_ARGS__);				\
			return FAIL;					\
		}							\
	} while (0)

static enum result skip(const char *why)
{
	snprintf(skip_reason, sizeof(skip_reason), "%s", why);
	return SKIP;
}

/* ------------------------------------------------------------ helpers */

/* @name in the directory under test (path_in()) */
static char *path(const char *name)
{
	return path_in(dir, name);
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

/* ------------------------------------------------------------ fixtures */

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

#define NR_VARIANTS	(sizeof(variants) / sizeof(variants[0]))
#define DATA_SIZE	(3 * MiB + 12345)

static int setup(void)
{
	unsigned char *data = malloc(DATA_SIZE);
	char name[64];
	size_t i;

	if (!data)
		return -1;
	gen_data(data, DATA_SIZE, 1);
	if (write_file(path("orig"), data, DATA_SIZE, false))
		return -1;
	free(data);
	for (i = 0; i < NR_VARIANTS; i++) {
		int err;

		snprintf(name, sizeof(name), "%s", variants[i].name);
		err = make_compressed(path("orig"), path(name), variants[i].opts);
		if (err) {
			diag("setup: %s: %s", name, strerror(err));
			return -1;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- tests */

static enum result t_sysfs(void)
{
	CHECK(counter("active_inodes") >= (long long)NR_VARIANTS,
	      "active_inodes %lld", counter("active_inodes"));
	CHECK(counter("chunks_inflated") >= 0 && counter("read_errors") == 0,
	      "counters missing or read errors");
	CHECK(counter("refusals/not_szip") >= 0, "no refusals/not_szip");
	return PASS;
}

static enum result t_activate_stat(void)
{
	struct stat raw, act;
	int err;

	CHECK(!run("szip -qc '%s' > '%s'", path("orig"), path("st")), "szip");
	CHECK(!stat(path("st"), &raw), "stat");
	err = change_flags(path("st"), FS_COMPR_FL, 0);
	CHECK(!err, "chattr +c: %s", strerror(err));
	CHECK(!stat(path("st"), &act), "stat");
	CHECK(act.st_size == DATA_SIZE, "st_size %lld, expected %d",
	      (long long)act.st_size, DATA_SIZE);
	CHECK(act.st_blocks == raw.st_blocks,
	      "st_blocks %lld, raw file had %lld", (long long)act.st_blocks,
	      (long long)raw.st_blocks);
	CHECK(raw.st_size < DATA_SIZE / 2, "raw size %lld",
	      (long long)raw.st_size);
	return PASS;
}

static enum result t_lsattr(void)
{
	CHECK(!run("lsattr '%s' | grep -q '^[^ ]*c[^ ]* '", path("c16k")),
	      "lsattr does not show c");
	return PASS;
}

static enum result t_read_all(void)
{
	size_t i;

	for (i = 0; i < NR_VARIANTS; i++)
		CHECK(same_contents(path("orig"), path(variants[i].name)),
		      "variant %s", variants[i].name);
	return PASS;
}

static enum result t_pread_random(void)
{
	size_t orig_len, i, k;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *buf = malloc(256 * 1024);

	CHECK(orig && buf, "setup");
	rng_state = 99;
	for (i = 0; i < NR_VARIANTS; i++) {
		int fd = open(path(variants[i].name), O_RDONLY);

		CHECK(fd >= 0, "open %s", variants[i].name);
		for (k = 0; k < 400; k++) {
			size_t off = rng() % (orig_len + 100);
			size_t len = rng() % (k % 10 ? 9000 : 256 * 1024);
			ssize_t r = pread(fd, buf, len, off);
			size_t want = off >= orig_len ? 0 :
				      (len < orig_len - off ? len : orig_len - off);

			CHECK(r == (ssize_t)want && !memcmp(buf, orig + off, want),
			      "%s: pread(%zu, %zu) = %zd", variants[i].name,
			      len, off, r);
		}
		close(fd);
	}
	free(buf);
	free(orig);
	return PASS;
}

static enum result t_readv(void)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	static unsigned char a[1000], b[70000], c[4096];
	struct iovec iov[3] = { { a, sizeof(a) }, { b, sizeof(b) },
				{ c, sizeof(c) } };
	int fd = open(path("c4k"), O_RDONLY);
	off_t off = 123457;
	ssize_t r;

	CHECK(orig && fd >= 0, "setup");
	r = preadv(fd, iov, 3, off);
	CHECK(r == (ssize_t)(sizeof(a) + sizeof(b) + sizeof(c)), "preadv %zd", r);
	CHECK(!memcmp(a, orig + off, sizeof(a)) &&
	      !memcmp(b, orig + off + sizeof(a), sizeof(b)) &&
	      !memcmp(c, orig + off + sizeof(a) + sizeof(b), sizeof(c)),
	      "data");
	close(fd);
	free(orig);
	return PASS;
}

static enum result mmap_compare_name(const char *name, int flags)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	int fd = open(path(name), O_RDONLY);
	unsigned char *m;

	CHECK(orig && fd >= 0, "setup");
	m = mmap(NULL, orig_len, PROT_READ | (flags == MAP_PRIVATE ? PROT_WRITE : 0),
		 flags, fd, 0);
	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	/* touch pages backwards, as a loader might */
	for (size_t p = orig_len & ~4095UL; p + 4096 > 4096; p -= 4096)
		CHECK(!memcmp(m + p, orig + p, p + 4096 <= orig_len ? 4096 : orig_len - p),
		      "page at %zu", p);
	if (flags == MAP_PRIVATE)
		memset(m, 0xAB, 8192);	/* copy-on-write, file unchanged */
	munmap(m, orig_len);
	free(orig);
	CHECK(same_contents(path("orig"), path(name)), "after mapping");
	return PASS;
}

static enum result mmap_compare_file(const char *name)
{
	return mmap_compare_name(name, MAP_SHARED);
}

static enum result mmap_compare(int flags)
{
	return mmap_compare_name("c32k", flags);
}

static enum result t_mmap_shared(void)
{
	static const char *const names[] = { "c32k", "v2zstd", "v2lz4", "v2c128k" };
	enum result r = PASS;
	size_t i;

	for (i = 0; r == PASS && i < sizeof(names) / sizeof(names[0]); i++) {
		drop_caches();
		r = mmap_compare_file(names[i]);
	}
	return r;
}

static enum result t_mmap_private(void)
{
	return mmap_compare(MAP_PRIVATE);
}

static enum result t_mmap_shared_write_refused(void)
{
	int fd = open(path("c16k"), O_RDONLY);
	void *m;

	CHECK(fd >= 0, "open");
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(m == MAP_FAILED, "writable shared mapping allowed");
	close(fd);
	return PASS;
}

static enum result t_write_refused(void)
{
	int fd;

	fd = open(path("c16k"), O_WRONLY);
	CHECK(fd < 0 && errno == ETXTBSY, "O_WRONLY: fd %d errno %d", fd, errno);
	fd = open(path("c16k"), O_RDWR);
	CHECK(fd < 0 && errno == ETXTBSY, "O_RDWR: fd %d errno %d", fd, errno);
	fd = open(path("c16k"), O_RDONLY | O_TRUNC);
	CHECK(fd < 0 && errno == ETXTBSY, "O_TRUNC: fd %d errno %d", fd, errno);
	CHECK(truncate(path("c16k"), 10) && errno == ETXTBSY,
	      "truncate: errno %d", errno);
	CHECK(same_contents(path("orig"), path("c16k")), "file changed");
	return PASS;
}

static enum result t_odirect(void)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	unsigned char *buf;
	int fd = open(path("c8k"), O_RDONLY | O_DIRECT);
	ssize_t r;

	CHECK(orig && fd >= 0, "open O_DIRECT: %s", strerror(errno));
	CHECK(!posix_memalign((void **)&buf, 4096, 65536), "memalign");
	r = pread(fd, buf, 65536, 8192 * 5);
	CHECK(r == 65536 && !memcmp(buf, orig + 8192 * 5, 65536), "pread %zd", r);
	close(fd);
	free(buf);
	free(orig);
	return PASS;
}

static enum result t_seek(void)
{
	int fd = open(path("c16k"), O_RDONLY);
	off_t end, data, hole;

	CHECK(fd >= 0, "open");
	end = lseek(fd, 0, SEEK_END);
	data = lseek(fd, 100, SEEK_DATA);
	hole = lseek(fd, 100, SEEK_HOLE);
	close(fd);
	CHECK(end == DATA_SIZE, "SEEK_END %lld", (long long)end);
	CHECK(data == 100, "SEEK_DATA %lld", (long long)data);
	CHECK(hole == DATA_SIZE, "SEEK_HOLE %lld", (long long)hole);
	return PASS;
}

static enum result t_sendfile_splice(void)
{
	int in = open(path("c4k"), O_RDONLY);
	int out = open(path("sendfile.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	off_t off = 0;
	ssize_t n, total = 0;

	CHECK(in >= 0 && out >= 0, "open");
	while ((n = sendfile(out, in, &off, 1 << 20)) > 0)
		total += n;
	close(in);
	close(out);
	CHECK(total == DATA_SIZE, "sendfile copied %zd", total);
	CHECK(same_contents(path("orig"), path("sendfile.out")), "sendfile");
	CHECK(!run("cat '%s' | cmp -s - '%s'", path("c8k"), path("orig")),
	      "through a pipe");
	unlink(path("sendfile.out"));
	return PASS;
}

static enum result t_refused_ops(void)
{
	int fd = open(path("c16k"), O_RDONLY);
	int block = 0;
	struct {
		__u32 donor_fd, reserved;
		__u64 orig_start, donor_start, len, moved_len;
	} move = { 0 };

	CHECK(fd >= 0, "open");
	CHECK(fallocate(fd, 0, 0, 4096) < 0, "fallocate allowed");
	CHECK(ioctl(fd, FIBMAP, &block) < 0, "FIBMAP allowed");
	move.donor_fd = fd;
	errno = 0;
	CHECK(ioctl(fd, _IOWR('f', 15, move), &move) < 0 && errno == EOPNOTSUPP,
	      "EXT4_IOC_MOVE_EXT: %s", strerror(errno));
	errno = 0;
	CHECK(ioctl(fd, FS_IOC_ENABLE_VERITY, NULL) < 0 && errno == EOPNOTSUPP,
	      "FS_IOC_ENABLE_VERITY: %s", strerror(errno));
	close(fd);
	CHECK(change_flags(path("c16k"), FS_JOURNAL_DATA_FL, 0) == EBUSY,
	      "+j on an active inode");
	CHECK(swapon(path("c16k"), 0) < 0, "swapon worked");
	CHECK(same_contents(path("orig"), path("c16k")), "file changed");
	return PASS;
}

static enum result t_exec_binary(void)
{
	int err;

	/* busybox picks its applet from argv[0]: keep the name */
	mkdir(path("exe"), 0755);
	err = make_compressed("/bin/busybox", path("exe/busybox"), "--filter=x86");
	CHECK(!err, "+c: %s", strerror(err));
	CHECK(!run("chmod +x '%s'", path("exe/busybox")), "chmod");
	CHECK(file_size(path("exe/busybox")) == file_size("/bin/busybox"),
	      "size");
	CHECK(!run("'%s' echo exec-ok | grep -q exec-ok", path("exe/busybox")),
	      "running a compressed executable failed");
	return PASS;
}

static enum result t_shared_library(void)
{
	static const char *const libs[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
	};
	const char *lib = NULL;
	size_t i;
	int err;

	for (i = 0; i < 2 && !lib; i++)
		if (!access(libs[i], R_OK))
			lib = libs[i];
	if (!lib)
		return skip("no libc.so.6 in the guest");
	mkdir(path("lib"), 0755);
	err = make_compressed(lib, path("lib/libc.so.6"), "--filter=x86");
	CHECK(!err, "+c: %s", strerror(err));
	/* the program runs with the compressed libc, and says it does */
	CHECK(!run("LD_LIBRARY_PATH='%s' /bin/busybox cat /proc/self/maps | grep -q '%s'",
		   path("lib"), path("lib/libc.so.6")),
	      "compressed libc.so.6 not used by ld.so");
	CHECK(!run("LD_LIBRARY_PATH='%s' /bin/busybox sha256sum '%s' > /dev/null",
		   path("lib"), path("orig")), "program failed");
	return PASS;
}

static enum result t_drop_caches(void)
{
	drop_caches();
	CHECK(same_contents(path("orig"), path("dict")), "after drop_caches");
	drop_caches();
	CHECK(same_contents(path("orig"), path("x86")), "after drop_caches");
	return PASS;
}

static enum result cold_read_counts(const char *name, long long csize)
{
	long long before, after, chunks = (DATA_SIZE + csize - 1) / csize;
	unsigned char *buf;
	size_t len;

	drop_caches();
	before = counter("chunks_inflated");
	buf = read_all(path(name), &len);
	after = counter("chunks_inflated");
	free(buf);
	CHECK(buf && len == DATA_SIZE, "read");
	CHECK(after - before == chunks,
	      "%s: cold sequential read inflated %lld chunks, file has %lld",
	      name, after - before, chunks);
	/* warm: nothing more */
	buf = read_all(path(name), &len);
	free(buf);
	CHECK(counter("chunks_inflated") == after, "%s: warm read inflated chunks",
	      name);
	return PASS;
}

static enum result t_cold_read_counts(void)
{
	enum result r = cold_read_counts("c16k", 16384);

	if (r == PASS)
		r = cold_read_counts("c12k", 12288);
	if (r == PASS)
		r = cold_read_counts("v2c128k", 131072);
	return r == PASS ? cold_read_counts("v2zstd", 16384) : r;
}

static enum result t_random_read_counts(void)
{
	int fd = open(path("c32k"), O_RDONLY);
	long long before;
	char c;

	drop_caches();
	before = counter("chunks_inflated");
	CHECK(fd >= 0, "open");
	/* no readahead: random access advice */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	CHECK(pread(fd, &c, 1, 5 * 32768 + 100) == 1, "pread");
	CHECK(pread(fd, &c, 1, 5 * 32768 + 30000) == 1, "pread");
	CHECK(pread(fd, &c, 1, 40 * 32768) == 1, "pread");
	close(fd);
	CHECK(counter("chunks_inflated") - before == 2,
	      "3 reads in 2 chunks inflated %lld chunks",
	      counter("chunks_inflated") - before);
	return PASS;
}

/*
 * A page fault that misses the page cache inflates the chunk that holds
 * the page and no other (no read-around beyond it): pages touched
 * scattered over a cold mapping, as a program's start touches a library,
 * inflate exactly the chunks touched, and read the original's bytes.
 */
static enum result fault_counts(const unsigned char *orig, const char *name,
				long long csize, int advice)
{
	size_t nr = (DATA_SIZE + csize - 1) / csize, pages = (DATA_SIZE + 4095) / 4096;
	long long before, expected = 0, got;
	char *inflated = calloc(nr, 1);
	int fd = open(path(name), O_RDONLY), i;
	enum result r = PASS;
	unsigned char *m, vec;

	CHECK(inflated && fd >= 0, "%s: open", name);
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(m != MAP_FAILED, "%s: mmap", name);
	CHECK(!advice || !madvise(m, DATA_SIZE, advice), "%s: madvise", name);
	before = counter("chunks_inflated");
	rng_state = 4242;
	for (i = 0; i < 64 && r == PASS; i++) {
		size_t off = rng() % pages * 4096;
		size_t n = DATA_SIZE - off < 4096 ? DATA_SIZE - off : 4096;

		/*
		 * A page drop_caches left (one in a CPU's LRU batch, say)
		 * needs no fault; a fault inflates its chunk, once.
		 */
		if (mincore(m + off, 4096, &vec)) {
			diag("%s: mincore: %s", name, strerror(errno));
			r = FAIL;
			break;
		}
		if (!(vec & 1) && !inflated[off / csize]) {
			inflated[off / csize] = 1;
			expected++;
		}
		if (memcmp(m + off, orig + off, n)) {
			diag("%s: page at %zu differs from the original", name, off);
			r = FAIL;
		}
		got = counter("chunks_inflated") - before;
		if (got != expected) {
			diag("%s: %d faults, %lld chunks to inflate, %lld inflated",
			     name, i + 1, expected, got);
			r = FAIL;
		}
	}
	munmap(m, DATA_SIZE);
	free(inflated);
	return r;
}

static enum result t_fault_counts(void)
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
	enum result r = PASS;

	CHECK(orig && len == DATA_SIZE, "read orig");
	for (i = 0; r == PASS && i < sizeof(files) / sizeof(files[0]); i++)
		r = fault_counts(orig, files[i].name, files[i].csize,
				 files[i].advice);
	free(orig);
	return r;
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
static enum result t_fault_around(void)
{
	const char *param = "/sys/module/ext4dec/parameters/fault_around_kb";
	int fd = open(path("c32k"), O_RDONLY), around = 0, after, i;
	long long before, got[2];
	volatile unsigned char *m;

	CHECK(fd >= 0, "open");
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(m != MAP_FAILED, "mmap");
	CHECK(!run("echo 40 > %s", param), "set fault_around_kb");
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
	run("echo 0 > %s", param);
	munmap((void *)m, DATA_SIZE);
	CHECK(around == 16 && after == 0,
	      "after a fault in chunk 5: %d of chunks 6-7's 16 pages cached within 20 s, %d of chunk 8's",
	      around, after);
	CHECK(got[0] == 3 && got[1] == 4,
	      "fault_around_kb=40 (2 chunks of 32K): %lld, then %lld chunks inflated, not 3, 4",
	      got[0], got[1]);
	return PASS;
}

static int set_param(const char *name, long long value)
{
	return run("echo %lld > /sys/module/ext4dec/parameters/%s", value, name);
}

/* A module parameter's value, or -1 */
static long long get_param(const char *name)
{
	return sysfs_number("/sys/module/ext4dec/parameters", name);
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
static enum result cache_ahead_stops(void)
{
	volatile unsigned char *m = map_fresh("ahead2");
	int i, kept_late = 0;
	long long kept;

	CHECK(m, "ahead2: compress, activate, map");
	for (i = 0; i < 45; i++) {
		kept = counter("cached_bytes");
		(void)m[(size_t)(95 - 2 * i) * 32768];
		if (i == 0 && counter("cached_bytes") <= kept) {
			diag("the first miss kept nothing");
			break;
		}
		kept_late += i >= 37 && counter("cached_bytes") > kept;
	}
	munmap((void *)m, DATA_SIZE);
	unlink(path("ahead2"));
	CHECK(i == 45 && kept_late <= 1,
	      "%d of misses 38-45, none a hit, read ahead (expected at most 1)",
	      kept_late);
	return PASS;
}

/*
 * A miss of one chunk also reads the compressed bytes of the chunks after
 * it (cache_ahead_kb) and keeps them, inflating nothing more: a later
 * fault in one of those chunks inflates it without I/O.  The cache holds
 * no more than cache_kb, gives everything back to drop_caches (its
 * shrinker) and to deactivation, and keeps nothing with cache_ahead_kb=0.
 */
static enum result t_cache_ahead(void)
{
	long long cache_kb = get_param("cache_kb");
	long long ahead_kb = get_param("cache_ahead_kb");
	long long around_kb = get_param("fault_around_kb");
	long long inflated, hits, raw, kept, most = 0;
	unsigned char *orig;
	volatile unsigned char *m;
	enum result r = FAIL;
	size_t len, i;
	char c;
	int fd;

	CHECK(cache_kb >= 0 && ahead_kb >= 0 && around_kb >= 0,
	      "no cache_kb, cache_ahead_kb or fault_around_kb");
	orig = read_all(path("orig"), &len);
	m = map_fresh("ahead1");
	if (!orig || len != DATA_SIZE || !m) {
		diag("read orig; ahead1: compress, activate, map");
		goto out;
	}
	if (set_param("cache_kb", 16384) || set_param("cache_ahead_kb", 64) ||
	    set_param("fault_around_kb", 0)) {
		diag("cannot set cache_kb, cache_ahead_kb, fault_around_kb");
		goto out;
	}
	drop_caches();
	if (counter("cached_bytes")) {
		diag("%lld bytes kept after drop_caches", counter("cached_bytes"));
		goto out;
	}

	inflated = counter("chunks_inflated");
	hits = counter("cache_hits");
	raw = counter("compressed_bytes");
	(void)m[5 * 32768 + 4096];		/* chunk 5: keeps 6 and more */
	kept = counter("cached_bytes");
	raw = counter("compressed_bytes") - raw;
	/* chunk 5's bytes and at most 64 KiB more; allocations at most twice */
	if (counter("chunks_inflated") - inflated != 1 || kept <= 0 ||
	    kept > 2 * 64 * 1024 || raw > 33 * 1024 + 64 * 1024) {
		diag("a fault in chunk 5 inflated %lld chunks, read %lld bytes and kept %lld (cache_ahead_kb=64)",
		     counter("chunks_inflated") - inflated, raw, kept);
		goto out;
	}
	raw = counter("compressed_bytes");
	if (memcmp((const void *)(m + 6 * 32768), orig + 6 * 32768, 32768)) {
		diag("chunk 6, inflated from kept bytes, differs from the original");
		goto out;
	}
	if (counter("chunks_inflated") - inflated != 2 ||
	    counter("cache_hits") - hits != 1 ||
	    counter("compressed_bytes") != raw ||
	    counter("cached_bytes") >= kept) {
		diag("a fault in chunk 6: %lld chunks inflated in all, %lld cache hits, %lld bytes read, %lld bytes kept (were %lld)",
		     counter("chunks_inflated") - inflated,
		     counter("cache_hits") - hits,
		     counter("compressed_bytes") - raw,
		     counter("cached_bytes"), kept);
		goto out;
	}

	/* at most cache_kb, the oldest dropped first */
	if (set_param("cache_kb", 40)) {
		diag("cannot set cache_kb");
		goto out;
	}
	for (i = 0; i < 12; i++) {
		size_t off = (20 + i * 6) * 32768;

		if (memcmp((const void *)(m + off), orig + off, 4096)) {
			diag("page at %zu differs from the original", off);
			goto out;
		}
		kept = counter("cached_bytes");
		most = kept > most ? kept : most;
	}
	if (most <= 0 || most > 40 * 1024) {
		diag("with cache_kb=40, up to %lld bytes kept", most);
		goto out;
	}
	/* chunk 87, kept last, is there; 21, kept first, is gone */
	hits = counter("cache_hits");
	(void)m[87 * 32768];
	if (counter("cache_hits") != hits + 1) {
		diag("with cache_kb=40, the bytes kept last were not kept");
		goto out;
	}
	(void)m[21 * 32768];
	if (counter("cache_hits") != hits + 1) {
		diag("with cache_kb=40, the bytes kept first were still kept");
		goto out;
	}

	/* the shrinker: drop_caches frees slab caches too */
	drop_caches();
	if (counter("cached_bytes")) {
		diag("%lld bytes kept after drop_caches", counter("cached_bytes"));
		goto out;
	}

	/* none read ahead with cache_ahead_kb=0 */
	if (set_param("cache_kb", 16384) || set_param("cache_ahead_kb", 0)) {
		diag("cannot set cache_kb, cache_ahead_kb");
		goto out;
	}
	hits = counter("cache_hits");
	(void)m[10 * 32768];
	(void)m[11 * 32768];
	if (counter("cached_bytes") || counter("cache_hits") != hits) {
		diag("cache_ahead_kb=0: %lld bytes kept, %lld hits",
		     counter("cached_bytes"), counter("cache_hits") - hits);
		goto out;
	}
	r = PASS;
out:
	if (m)
		munmap((void *)m, DATA_SIZE);
	free(orig);
	if (r != PASS || set_param("cache_ahead_kb", 16)) {
		diag("cannot set cache_ahead_kb");
		r = FAIL;
		goto restore;
	}

	/* deactivation gives back what its inode kept */
	r = FAIL;
	drop_caches();
	fd = open(path("ahead1"), O_RDONLY);
	if (fd < 0) {
		diag("open ahead1: %s", strerror(errno));
		goto restore;
	}
	/* no readahead beyond the chunk: a miss of one chunk */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	len = pread(fd, &c, 1, 3 * 32768);
	close(fd);
	kept = counter("cached_bytes");
	if (len != 1 || change_flags(path("ahead1"), 0, FS_COMPR_FL) ||
	    kept <= 0 || counter("cached_bytes")) {
		diag("a read of chunk 3 kept %lld bytes, %lld left after chattr -c",
		     kept, counter("cached_bytes"));
		goto restore;
	}
	unlink(path("ahead1"));
	r = cache_ahead_stops();
restore:
	set_param("cache_kb", cache_kb);
	set_param("cache_ahead_kb", ahead_kb);
	set_param("fault_around_kb", around_kb);
	return r;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* A cold mapping of c32k, populated by @how, reads the original's bytes. */
static enum result populate_compare(const unsigned char *orig, const char *how)
{
	int fd = open(path("c32k"), O_RDONLY), flags = MAP_SHARED;
	unsigned char *m;
	int err = 0;

	CHECK(fd >= 0, "open");
	drop_caches();
	if (!strcmp(how, "MAP_POPULATE"))
		flags |= MAP_POPULATE;
	m = mmap(NULL, DATA_SIZE, PROT_READ, flags, fd, 0);
	close(fd);
	CHECK(m != MAP_FAILED, "%s: mmap", how);
	if (!strcmp(how, "mlock"))
		err = mlock(m, DATA_SIZE);
	else if (!strcmp(how, "MADV_POPULATE_READ"))
		err = madvise(m, DATA_SIZE, MADV_POPULATE_READ);
	CHECK(!err, "%s: %s", how, strerror(errno));
	CHECK(!memcmp(m, orig, DATA_SIZE), "%s: the mapping differs from the original", how);
	munmap(m, DATA_SIZE);
	return PASS;
}

/*
 * Faults through every path that reaches the fault handler: populated
 * mappings (MAP_POPULATE, mlock, MADV_POPULATE_READ, as GUP faults pages
 * in), a write to a cold private mapping (copy-on-write of a page read
 * first), processes faulting in one chunk at once, and a chunk with
 * holes left by reclaim (one inflation fills them all).
 */
static enum result t_fault_paths(void)
{
	static const char *const how[] = { "MAP_POPULATE", "mlock", "MADV_POPULATE_READ" };
	size_t len, i, off = 9 * 32768 + 4096 + 10;
	unsigned char *orig = read_all(path("orig"), &len), *m, page[4096];
	long long before;
	int fd, st, bad = 0, holes;
	enum result r = PASS;

	CHECK(orig && len == DATA_SIZE, "read orig");
	for (i = 0; r == PASS && i < sizeof(how) / sizeof(how[0]); i++)
		r = populate_compare(orig, how[i]);
	if (r != PASS)
		return r;

	/* copy-on-write of a cold page */
	fd = open(path("c32k"), O_RDONLY);
	CHECK(fd >= 0, "open");
	drop_caches();
	m = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED, "mmap private");
	m[off] ^= 0xff;
	memcpy(page, orig + off - 10, 4096);
	page[10] ^= 0xff;
	CHECK(!memcmp(m + off - 10, page, 4096), "written private page");
	munmap(m, DATA_SIZE);
	CHECK(pread(fd, page, 4096, off - 10) == 4096 && !memcmp(page, orig + off - 10, 4096),
	      "the file changed under a private mapping");

	/* four processes fault in chunk 20 at once */
	drop_caches();
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
	CHECK(!bad, "a process read wrong bytes in chunk 20");
	/*
	 * Usually one inflation; racing faulters may split the chunk's pages
	 * between them, but none is added twice: at most one per page.
	 */
	CHECK(counter("chunks_inflated") - before >= 1 &&
	      counter("chunks_inflated") - before <= 8,
	      "4 processes faulting in one chunk of 8 pages inflated %lld chunks",
	      counter("chunks_inflated") - before);

	/* chunk 30 cached, then pages 1, 3 and 5 of it dropped */
	CHECK(pread(fd, page, 4096, 30 * 32768) == 4096, "pread");
	for (i = 1; i < 6; i += 2)
		posix_fadvise(fd, 30 * 32768 + i * 4096, 4096, POSIX_FADV_DONTNEED);
	m = mmap(NULL, DATA_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(m != MAP_FAILED, "mmap");
	holes = 8 - resident_pages(m + 30 * 32768, 32768);
	before = counter("chunks_inflated");
	for (i = 1; i < 6; i += 2)
		CHECK(!memcmp(m + 30 * 32768 + i * 4096, orig + 30 * 32768 + i * 4096, 4096),
		      "page %zu of chunk 30", i);
	CHECK(holes == 3 && counter("chunks_inflated") - before == 1,
	      "a chunk with %d holes: %lld inflations to fill them", holes,
	      counter("chunks_inflated") - before);
	munmap(m, DATA_SIZE);
	free(orig);
	return PASS;
}

static enum result t_memcg(void)
{
	const char *cg = "/sys/fs/cgroup/ext4dec-test";
	size_t n = 48 * MiB, i;
	unsigned char *data = malloc(n);
	pid_t pid;
	int st, err;

	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) &&
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return skip("no cgroup2");
	if (run("grep -q memory /sys/fs/cgroup/cgroup.controllers"))
		return skip("no memory controller");
	CHECK(data, "malloc");
	for (i = 0; i < n; i += 4096)
		gen_data(data + i, 4096, i / 4096 % 64 + 7);
	CHECK(!write_file(path("big.orig"), data, n, false), "write");
	free(data);
	err = make_compressed(path("big.orig"), path("big"), "-1");
	CHECK(!err, "+c: %s", strerror(err));
	drop_caches();
	run("echo +memory > /sys/fs/cgroup/cgroup.subtree_control");
	mkdir(cg, 0755);
	CHECK(!run("echo 16M > %s/memory.max", cg), "memory.max");
	pid = fork();
	if (!pid) {
		char p[64];

		snprintf(p, sizeof(p), "echo %d > %s/cgroup.procs", getpid(), cg);
		_exit(run("%s", p) || !same_stream(path("big.orig"), path("big")));
	}
	CHECK(waitpid(pid, &st, 0) == pid, "wait");
	rmdir(cg);
	CHECK(WIFEXITED(st) && !WEXITSTATUS(st),
	      "48 MiB file read in a 16 MiB cgroup differs");
	unlink(path("big"));
	unlink(path("big.orig"));
	return PASS;
}

/*
 * Readers of freshly evicted inodes, started together: the first opens
 * race with the activation, and each reader checks every byte it reads.
 */
static enum result t_concurrent(void)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len);
	int i, st, bad = 0, round;

	CHECK(orig, "read orig");
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
	CHECK(!bad, "%d of 24 concurrent readers saw wrong data", bad);
	return PASS;
}

static enum result t_unlink_while_mapped(void)
{
	size_t orig_len;
	unsigned char *orig = read_all(path("orig"), &orig_len), *m;
	int fd, err;

	CHECK(orig, "read");
	err = make_compressed(path("orig"), path("unl"), "");
	CHECK(!err, "+c: %s", strerror(err));
	fd = open(path("unl"), O_RDONLY);
	CHECK(fd >= 0, "open");
	m = mmap(NULL, orig_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	CHECK(m != MAP_FAILED, "mmap");
	CHECK(!unlink(path("unl")), "unlink");
	drop_caches();
	CHECK(!memcmp(m, orig, orig_len), "mapping of the unlinked file");
	CHECK(counter("active_inodes") >= 1, "mapped inode not active");
	munmap(m, orig_len);
	free(orig);
	/* nothing is open now: eviction leaves no inode active */
	drop_caches();
	CHECK(counter("active_inodes") == 0, "active_inodes %lld after eviction",
	      counter("active_inodes"));
	return PASS;
}

static enum result t_chattr_cycles(void)
{
	int i, err;

	CHECK(!run("szip -qc '%s' > '%s'", path("orig"), path("cyc.sz")), "szip");
	CHECK(!run("cp '%s' '%s'", path("cyc.sz"), path("cyc")), "cp");
	for (i = 0; i < 4; i++) {
		err = change_flags(path("cyc"), FS_COMPR_FL, 0);
		CHECK(!err, "+c: %s", strerror(err));
		CHECK(file_size(path("cyc")) == DATA_SIZE, "size after +c");
		CHECK(same_contents(path("orig"), path("cyc")), "after +c");
		/* the real chattr for -c */
		CHECK(!run("chattr -c '%s'", path("cyc")), "chattr -c");
		CHECK(same_contents(path("cyc.sz"), path("cyc")), "raw after -c");
	}
	return PASS;
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

static enum result t_minus_c_busy(void)
{
	int err;

	err = change_flags_held_open(path("c8k"), O_RDONLY, 0, FS_COMPR_FL);
	CHECK(err == EBUSY, "-c while open elsewhere: %s", strerror(err));
	err = change_flags_mapped(path("c8k"), 0, FS_COMPR_FL);
	CHECK(err == EBUSY, "-c while mapped: %s", strerror(err));
	CHECK(same_contents(path("orig"), path("c8k")), "still active");
	return PASS;
}

static enum result t_plus_c_refusals(void)
{
	int err, i;

	CHECK(!run("szip -qc '%s' > '%s'", path("orig"), path("w")), "szip");
	err = change_flags_held_open(path("w"), O_WRONLY | O_APPEND,
				     FS_COMPR_FL, 0);
	CHECK(err == ETXTBSY, "+c with a writer: %s", strerror(err));
	/* a burst of one reason hides no other */
	for (i = 0; i < 12; i++) {
		err = change_flags_mapped(path("w"), FS_COMPR_FL, 0);
		CHECK(err == EBUSY, "+c while mapped: %s", strerror(err));
	}

	/* not szip */
	CHECK(!write_file(path("plain"), "hello world\n", 12, false), "write");
	err = change_flags(path("plain"), FS_COMPR_FL, 0);
	CHECK(err == EINVAL, "+c on a text file: %s", strerror(err));
	CHECK(!run("dmesg | tail -n 20 | grep -q 'plain: not activated: not a valid szip file'"),
	      "no dmesg line naming the file and the reason");
	return PASS;
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

static enum result t_malformed_refused(void)
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

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32];
		int err;

		snprintf(name, sizeof(name), "bad%zu", i);
		CHECK(!make_broken(path(name), cases[i].at, cases[i].size,
				   cases[i].val, cases[i].trunc),
		      "make %s", cases[i].what);
		err = change_flags(path(name), FS_COMPR_FL, 0);
		CHECK(err == EINVAL, "%s: +c gave %s", cases[i].what,
		      strerror(err));
		CHECK(file_size(path(name)) < DATA_SIZE, "%s: size changed",
		      cases[i].what);
		CHECK(!run("lsattr '%s' | grep -q '^[^c ]* '", path(name)),
		      "%s: +c was set", cases[i].what);
	}
	CHECK(counter("refusals/not_szip") - refused == (long long)i,
	      "refusals/not_szip moved by %lld",
	      counter("refusals/not_szip") - refused);
	return PASS;
}

static enum result t_corrupt_chunk_eio(void)
{
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	long long errors = counter("read_errors");
	unsigned int off1, off2;
	int fd, err;

	CHECK(orig, "read");
	CHECK(!run("szip -qc --chunk-size=4096 '%s' > '%s'", path("orig"),
		   path("corrupt")), "szip");
	b = read_all(path("corrupt"), &n);
	CHECK(b, "read");
	/* garble the middle of chunk 5's compressed data */
	memcpy(&off1, b + 20 + 4 * 5, 4);
	memcpy(&off2, b + 20 + 4 * 6, 4);
	memset(b + (off1 + off2) / 2, 0x55, 8);
	CHECK(!write_file(path("corrupt"), b, n, false), "write");
	free(b);
	err = change_flags(path("corrupt"), FS_COMPR_FL, 0);
	CHECK(!err, "+c: %s", strerror(err));
	CHECK(!write_file(path("burst"), "not szip\n", 9, false) &&
	      refusal_burst(path("burst")), "refusals");
	drop_caches();
	fd = open(path("corrupt"), O_RDONLY);
	CHECK(fd >= 0, "open");
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	CHECK(pread(fd, buf, 4096, 5 * 4096) < 0 && errno == EIO,
	      "bad chunk read without EIO");
	CHECK(pread(fd, buf, 4096, 4 * 4096) == 4096 &&
	      !memcmp(buf, orig + 4 * 4096, 4096), "chunk before");
	CHECK(pread(fd, buf, 4096, 6 * 4096) == 4096 &&
	      !memcmp(buf, orig + 6 * 4096, 4096), "chunk after");
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	CHECK(pread(fd, buf, 4096, 5 * 4096) < 0 && errno == EIO,
	      "bad chunk read without EIO, second time");
	close(fd);
	free(orig);
	CHECK(counter("read_errors") > errors, "read_errors did not move");
	CHECK(!run("dmesg | grep -q 'chunk 5: '"),
	      "no dmesg line with the chunk number");
	return PASS;
}

/*
 * Format 2 checksums: a flipped bit in chunk 5's stored checksum and a
 * garbled chunk 9 each give EIO on exactly that chunk's pages.
 */
static enum result t_v2_checksum_eio(void)
{
	const long chunk = 16384, nr = (DATA_SIZE + chunk - 1) / chunk;
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	long long errors = counter("read_errors");
	uint64_t off9, off10;
	long page;
	int fd, err;

	CHECK(orig, "read");
	CHECK(!run("szip -qc --codec=lz4 --level=9 --checksum=crc32c '%s' > '%s'",
		   path("orig"), path("v2bad")), "szip");
	b = read_all(path("v2bad"), &n);
	CHECK(b && b[7] == 2, "not a crc32c file");
	/* header 64, no dictionary, offsets 8 * nr, then crc32c 4 * nr */
	b[64 + 8 * nr + 4 * 5] ^= 0x10;
	memcpy(&off9, b + 64 + 8 * 9, 8);
	memcpy(&off10, b + 64 + 8 * 10, 8);
	memset(b + (off9 + off10) / 2, 0x55, 4);
	CHECK(!write_file(path("v2bad"), b, n, false), "write");
	free(b);
	err = change_flags(path("v2bad"), FS_COMPR_FL, 0);
	CHECK(!err, "+c: %s", strerror(err));
	CHECK(!write_file(path("burst"), "not szip\n", 9, false) &&
	      refusal_burst(path("burst")), "refusals");
	drop_caches();
	fd = open(path("v2bad"), O_RDONLY);
	CHECK(fd >= 0, "open");
	for (page = 0; page < 12 * chunk / 4096; page++) {
		bool bad = page / (chunk / 4096) == 5 || page / (chunk / 4096) == 9;
		ssize_t r = pread(fd, buf, 4096, page * 4096);

		if (bad)
			CHECK(r < 0 && errno == EIO, "page %ld (chunk %ld) read %zd, not EIO",
			      page, page / (chunk / 4096), r);
		else
			CHECK(r == 4096 && !memcmp(buf, orig + page * 4096, 4096),
			      "page %ld (chunk %ld) wrong", page, page / (chunk / 4096));
	}
	close(fd);
	free(orig);
	CHECK(counter("read_errors") >= errors + 2, "read_errors did not move");
	/* logged once per inode: whichever chunk a worker inflated first */
	CHECK(!run("dmesg | grep -Eq 'chunk 5: chunk checksum mismatch|chunk 9: corrupt'"),
	      "no dmesg line naming chunk 5's checksum or chunk 9's data");
	return PASS;
}

/*
 * zstd with a dictionary: read back where the kernel's zstd can use one
 * (6.12), refused as unsupported where it cannot (6.1), never misread.
 */
static enum result t_v2_zstd_dict(void)
{
	long long refused = counter("refusals/unsupported");
	bool can = kernel_at_least(6, 12);
	int err;

	CHECK(!run("szip -qc --codec=zstd --level=3 --dict=65536 --checksum=xxh64 '%s' > '%s'",
		   path("orig"), path("v2zdict")), "szip");
	err = change_flags(path("v2zdict"), FS_COMPR_FL, 0);
	if (can) {
		CHECK(!err, "+c on 6.12 or later: %s", strerror(err));
		drop_caches();
		CHECK(same_contents(path("orig"), path("v2zdict")), "contents");
		return mmap_compare_file("v2zdict");
	}
	CHECK(err == EOPNOTSUPP, "+c before 6.12: %s, expected EOPNOTSUPP",
	      strerror(err));
	CHECK(counter("refusals/unsupported") == refused + 1,
	      "refusals/unsupported did not move");
	CHECK(!run("dmesg | grep -q 'zstd dictionary'"),
	      "no dmesg line naming the missing capability");
	return PASS;
}

/* Format 2 header fields the module must refuse */
static enum result t_v2_malformed(void)
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

	CHECK(!run("szip -qc --codec=lz4 --level=1 '%s' > '%s'", path("orig"),
		   path("v2base")), "szip");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err;

		b = read_all(path("v2base"), &n);
		CHECK(b, "read");
		b[cases[i].at] = cases[i].val;
		CHECK(!write_file(path("v2mal"), b, n, false), "write");
		free(b);
		err = change_flags(path("v2mal"), FS_COMPR_FL, 0);
		CHECK(err == EINVAL, "%s: +c gave %s", cases[i].what,
		      strerror(err));
		CHECK(file_size(path("v2mal")) == (off_t)n, "%s: size changed",
		      cases[i].what);
		CHECK(!unlink(path("v2mal")), "unlink");
	}
	CHECK(counter("refusals/not_szip") - refused == (long long)i,
	      "refusals/not_szip moved by %lld",
	      counter("refusals/not_szip") - refused);
	return PASS;
}

/* A wrong (but in-range) last chunk size: only the last chunk fails. */
static enum result t_wrong_last_chunk_size(void)
{
	size_t n, orig_len;
	unsigned char *b, *orig = read_all(path("orig"), &orig_len);
	unsigned char buf[4096];
	uint16_t last;
	off_t size;
	int fd, err;

	CHECK(orig, "read");
	CHECK(!run("szip -qc --chunk-size=4096 '%s' > '%s'", path("orig"),
		   path("lastcs")), "szip");
	b = read_all(path("lastcs"), &n);
	CHECK(b, "read");
	memcpy(&last, b + 16, 2);
	last = last > 100 ? 100 : last + 1;
	memcpy(b + 16, &last, 2);
	CHECK(!write_file(path("lastcs"), b, n, false), "write");
	free(b);
	err = change_flags(path("lastcs"), FS_COMPR_FL, 0);
	CHECK(!err, "+c: %s", strerror(err));
	size = file_size(path("lastcs"));
	CHECK(size == (off_t)(orig_len / 4096 * 4096 + last), "size %lld",
	      (long long)size);
	fd = open(path("lastcs"), O_RDONLY);
	CHECK(fd >= 0, "open");
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	CHECK(pread(fd, buf, 10, size - 10) < 0 && errno == EIO,
	      "last chunk read without EIO");
	CHECK(pread(fd, buf, 4096, size - last - 4096) == 4096 &&
	      !memcmp(buf, orig + size - last - 4096, 4096), "chunk before last");
	close(fd);
	free(orig);
	return PASS;
}

/* An ext4 image with inline data, verity and encryption, loop-mounted. */
#define SPECIAL "/tmp/special"

static bool special_fs(void)
{
	static int state;	/* 0 untried, 1 mounted, -1 failed */

	if (!state) {
		state = run("(modprobe loop && truncate -s 64M " SPECIAL ".img && "
			    "mkfs.ext4 -q -F -b 4096 -O inline_data,verity,encrypt " SPECIAL ".img && "
			    "mkdir -p " SPECIAL " && mount -o loop " SPECIAL ".img " SPECIAL
			    ") > /tmp/special.log 2>&1") ? -1 : 1;
		if (state < 0)
			run("sed 's/^/# /' /tmp/special.log");
	}
	return state == 1;
}

/* +c on NAME must fail with EOPNOTSUPP and count under refusals/WHY. */
static enum result expect_refusal(const char *name, const char *why)
{
	char counter_name[64];
	long long before;
	int err;

	snprintf(counter_name, sizeof(counter_name), "refusals/%s", why);
	before = counter(counter_name);
	err = change_flags(name, FS_COMPR_FL, 0);
	CHECK(err == EOPNOTSUPP, "+c on a %s file: %s", why, strerror(err));
	CHECK(counter(counter_name) == before + 1, "%s did not move",
	      counter_name);
	return PASS;
}

static enum result t_refuse_inline(void)
{
	if (!special_fs())
		return skip("cannot make a loop-mounted ext4 with inline_data");
	CHECK(!run("printf 'small file, inline in its inode: 48 bytes..\\n' > /tmp/small && "
		   "szip -qc /tmp/small > " SPECIAL "/inline"), "szip");
	CHECK(!run("lsattr " SPECIAL "/inline | grep -q '^[^ ]*N'"),
	      "the file is not inline");
	return expect_refusal(SPECIAL "/inline", "inline_data");
}

static enum result t_refuse_verity(void)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = 4096,
	};
	int fd;

	if (!special_fs())
		return skip("cannot make a loop-mounted ext4 with verity");
	CHECK(!run("szip -qc '%s' > " SPECIAL "/verity", path("orig")), "szip");
	fd = open(SPECIAL "/verity", O_RDONLY);
	CHECK(fd >= 0, "open");
	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg)) {
		diag("FS_IOC_ENABLE_VERITY: %s", strerror(errno));
		close(fd);
		return skip("FS_IOC_ENABLE_VERITY failed");
	}
	close(fd);
	return expect_refusal(SPECIAL "/verity", "verity");
}

static enum result t_refuse_encrypted(void)
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
		return skip("cannot make a loop-mounted ext4 with encryption");
	memset(key.raw, 0x5c, sizeof(key.raw));
	mkdir(SPECIAL "/enc", 0755);
	fd = open(SPECIAL, O_RDONLY);
	CHECK(fd >= 0, "open");
	if (ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, &key)) {
		close(fd);
		return skip("FS_IOC_ADD_ENCRYPTION_KEY failed");
	}
	close(fd);
	memcpy(policy.master_key_identifier, key.arg.key_spec.u.identifier,
	       FSCRYPT_KEY_IDENTIFIER_SIZE);
	fd = open(SPECIAL "/enc", O_RDONLY);
	CHECK(fd >= 0, "open");
	if (ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, &policy)) {
		diag("FS_IOC_SET_ENCRYPTION_POLICY: %s", strerror(errno));
		close(fd);
		return skip("cannot set an encryption policy (crypto modules?)");
	}
	close(fd);
	if (run("szip -qc '%s' > " SPECIAL "/enc/file", path("orig")))
		return skip("cannot write into the encrypted directory");
	return expect_refusal(SPECIAL "/enc/file", "encrypted");
}

static enum result t_refuse_journal_data(void)
{
	CHECK(!run("szip -qc '%s' > '%s'", path("orig"), path("jdata")), "szip");
	CHECK(!change_flags(path("jdata"), FS_JOURNAL_DATA_FL, 0), "+j");
	return expect_refusal(path("jdata"), "journal_data");
}

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX	0x00200000
#endif
#define DAX_MNT		"/tmp/ext4dec-dax"

/*
 * A DAX file on emulated persistent memory: the harness boots with
 * memmap=SIZE!START (RAM the kernel leaves as a legacy pmem region) and
 * nd_pmem gives /dev/pmem0, where ext4 mounts with dax=always.
 */
static enum result t_refuse_dax(void)
{
	struct statx stx = { 0 };
	enum result r;
	int i;

	if (run("grep -q 'memmap=[0-9]*[KMG]!' /proc/cmdline"))
		return skip("booted without memmap=SIZE!START: no emulated persistent memory");
	run("modprobe -q nd_e820; modprobe -q nd_pmem");
	for (i = 0; i < 50 && access("/dev/pmem0", F_OK); i++)
		usleep(100000);
	CHECK(!access("/dev/pmem0", F_OK), "memmap= given, yet no /dev/pmem0");
	CHECK(!run("mkfs.ext4 -F -q -b 4096 /dev/pmem0"), "mkfs.ext4 on /dev/pmem0");
	mkdir(DAX_MNT, 0755);
	CHECK(!mount("/dev/pmem0", DAX_MNT, "ext4", 0, "dax=always"),
	      "mount -o dax=always: %s", strerror(errno));
	r = FAIL;
	if (run("szip -qc '%s' > " DAX_MNT "/dax", path("orig"))) {
		diag("szip");
	} else if (statx(AT_FDCWD, DAX_MNT "/dax", 0, STATX_BASIC_STATS, &stx)) {
		diag("statx: %s", strerror(errno));
	} else if (!(stx.stx_attributes_mask & STATX_ATTR_DAX) ||
		   !(stx.stx_attributes & STATX_ATTR_DAX)) {
		diag("the file is not DAX (statx attributes %#llx, mask %#llx)",
		     (unsigned long long)stx.stx_attributes,
		     (unsigned long long)stx.stx_attributes_mask);
	} else {
		r = expect_refusal(DAX_MNT "/dax", "dax");
	}
	if (umount(DAX_MNT)) {
		diag("umount " DAX_MNT ": %s", strerror(errno));
		r = FAIL;
	}
	return r;
}

static enum result t_inherited_plain_file(void)
{
	size_t n;
	unsigned char *b;
	int fd;

	mkdir(path("cdir"), 0755);
	CHECK(!change_flags(path("cdir"), FS_COMPR_FL, 0), "+c on a directory");
	fd = open(path("cdir/new"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0, "create");
	CHECK(write(fd, "plain text\n", 11) == 11, "write");
	close(fd);
	drop_caches();
	b = read_all(path("cdir/new"), &n);
	CHECK(b && n == 11 && !memcmp(b, "plain text\n", 11),
	      "inherited +c file not readable raw");
	free(b);
	CHECK(!run("lsattr '%s' | grep -q '^[^ ]*c'", path("cdir/new")),
	      "not +c");
	return PASS;
}

static enum result t_fresh_mount(void)
{
	const char *mnt = getenv("EXT4DEC_MNT"), *dev = getenv("EXT4DEC_DEV");
	struct stat st;

	if (!mnt || !dev)
		return skip("EXT4DEC_MNT/EXT4DEC_DEV not set");
	sync();
	CHECK(!chdir("/"), "chdir: %s", strerror(errno));
	/* EBUSY here is a reference the module leaked on an inode or file */
	CHECK(!umount(mnt), "umount %s: %s", mnt, strerror(errno));
	CHECK(!mount(dev, mnt, "ext4", 0, NULL), "mount: %s", strerror(errno));
	/* first access is a stat: already the uncompressed size */
	CHECK(!stat(path("c16k"), &st), "stat");
	CHECK(st.st_size == DATA_SIZE, "size %lld after mount",
	      (long long)st.st_size);
	CHECK(same_contents(path("orig"), path("c4k")), "read after mount");
	return PASS;
}

static enum result t_rmmod(void)
{
	int fd = open(path("c16k"), O_RDONLY);
	off_t raw;

	CHECK(fd >= 0, "open");
	CHECK(run("rmmod ext4dec 2>/dev/null") != 0, "rmmod worked while open");
	close(fd);
	CHECK(!run("rmmod ext4dec"), "rmmod failed when idle");
	raw = file_size(path("c16k"));
	CHECK(raw > 0 && raw < DATA_SIZE, "size %lld after rmmod", (long long)raw);
	CHECK(run("szip -t '%s'", path("c16k")) == 0, "raw szip bytes after rmmod");
	CHECK(!run("modprobe ext4dec"), "modprobe");
	CHECK(file_size(path("c16k")) == DATA_SIZE, "not active again");
	CHECK(same_contents(path("orig"), path("c16k")), "read after reload");
	return PASS;
}

static const struct test {
	const char *name;
	enum result (*fn)(void);
} tests[] = {
	{ "sysfs_counters", t_sysfs },
	{ "chattr_plus_c_activates_stat_sizes", t_activate_stat },
	{ "lsattr_shows_c", t_lsattr },
	{ "read_whole_file_all_variants", t_read_all },
	{ "pread_random_offsets_sizes", t_pread_random },
	{ "preadv", t_readv },
	{ "mmap_shared", t_mmap_shared },
	{ "mmap_private", t_mmap_private },
	{ "mmap_shared_writable_refused", t_mmap_shared_write_refused },
	{ "write_open_trunc_truncate_etxtbsy", t_write_refused },
	{ "o_direct_read", t_odirect },
	{ "seek_end_data_hole", t_seek },
	{ "sendfile_and_pipe", t_sendfile_splice },
	{ "data_ioctls_fallocate_fibmap_swapon_refused", t_refused_ops },
	{ "exec_compressed_binary", t_exec_binary },
	{ "program_with_compressed_libc", t_shared_library },
	{ "drop_caches_reread", t_drop_caches },
	{ "cold_sequential_read_inflates_each_chunk_once", t_cold_read_counts },
	{ "random_reads_inflate_touched_chunks", t_random_read_counts },
	{ "page_faults_inflate_touched_chunks", t_fault_counts },
	{ "fault_around_kb_reads_following_chunks", t_fault_around },
	{ "miss_keeps_following_chunks_bytes", t_cache_ahead },
	{ "faults_populate_mlock_cow_concurrent_holes", t_fault_paths },
	{ "memcg_limited_reader", t_memcg },
	{ "concurrent_readers", t_concurrent },
	{ "unlink_while_mapped", t_unlink_while_mapped },
	{ "chattr_cycles", t_chattr_cycles },
	{ "chattr_minus_c_busy", t_minus_c_busy },
	{ "chattr_plus_c_refusals", t_plus_c_refusals },
	{ "corrupt_chunk_eio_only_there", t_corrupt_chunk_eio },
	{ "malformed_headers_refused", t_malformed_refused },
	{ "wrong_last_chunk_size_eio_on_last_chunk", t_wrong_last_chunk_size },
	{ "v2_checksum_eio_on_that_chunk_only", t_v2_checksum_eio },
	{ "v2_zstd_dictionary_or_refused", t_v2_zstd_dict },
	{ "v2_malformed_headers_refused", t_v2_malformed },
	{ "inline_data_file_refused", t_refuse_inline },
	{ "verity_file_refused", t_refuse_verity },
	{ "encrypted_file_refused", t_refuse_encrypted },
	{ "data_journalled_file_refused", t_refuse_journal_data },
	{ "dax_file_refused", t_refuse_dax },
	{ "inherited_c_plain_file_stays_raw", t_inherited_plain_file },
	{ "active_before_first_stat_after_mount", t_fresh_mount },
	{ "rmmod_busy_then_clean", t_rmmod },
};

int main(int argc, char **argv)
{
	size_t i, n = sizeof(tests) / sizeof(tests[0]);
	int pass = 0, fail = 0, skipped = 0, nr = 0, a;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [TEST...]\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (setup()) {
		printf("1..0 # SKIP setup failed\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		enum result r;
		bool wanted = argc == 2;

		for (a = 2; a < argc; a++)
			wanted |= !strcmp(argv[a], tests[i].name);
		if (!wanted)
			continue;
		nr++;
		r = tests[i].fn();
		if (r == PASS) {
			pass++;
			printf("ok %d %s\n", nr, tests[i].name);
		} else if (r == SKIP) {
			skipped++;
			printf("ok %d %s # SKIP %s\n", nr, tests[i].name,
			       skip_reason);
		} else {
			fail++;
			printf("not ok %d %s\n", nr, tests[i].name);
		}
	}
	printf("1..%d\n", nr);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skipped);
	return fail ? 1 : 0;
}
