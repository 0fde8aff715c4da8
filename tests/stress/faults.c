// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec_faults - fault injection against the module (run as root in a
 * test VM whose kernel has failslab, fail_page_alloc and fail_make_request
 * in debugfs; ext4dec loaded, szip in PATH).
 *
 * Usage: ext4dec_faults [-r ROUNDS] [-d DISK] [-o TESTS] [-s] [-K] [-v] DIR
 *
 * Allocation failures, made by failslab and fail_page_alloc in this
 * process only (sleeping allocations included):
 *   systematic  /proc/self/task/TID/fail-nth fails the 1st, 2nd, ... fault
 *               point of one operation, until the operation gets through
 *               without reaching the next one: activation by open() and
 *               by stat() of a +c file, activation by chattr +c, and reads
 *               through read_folio (random pread), readahead (read) and a
 *               page fault (mmap, first file only).  Each operation must
 *               succeed with the right bytes or fail cleanly: ENOMEM or
 *               EIO; a page fault never fails (SIGBUS), since read_folio
 *               reads through the module's reserve without memory; a
 *               file must never be opened raw because its activation
 *               failed.  After each fault the
 *               same operation, without faults, must give the right bytes
 *               (a folio left locked would hang it: a watchdog reports it).
 *   random      ROUNDS (default 40) rounds of create, open, read, map,
 *               chattr -c and +c with 10% of the allocations failing.
 * I/O errors, made by fail_make_request on the scratch disk for this
 * process only: while its bios fail, a read of a chunk not in the page
 * cache fails with EIO (a mapped page with SIGBUS) and a cached one still
 * reads; once they stop, every page reads correctly; one to three failed
 * bios under readahead give the right bytes or EIO; a failed read of the
 * header at chattr +c fails the activation with EIO.  If kmemleak is
 * enabled (kmemleak=on), a scan after all of it must find nothing
 * allocated by ext4dec.  Prints TAP and the counts.
 *
 * DISK is the scratch disk (vda); TESTS a comma-separated subset of open,
 * stat, chattr, read, random, io, kmemleak; -v prints every step.  Each
 * sweep and the random rounds must inject faults (their counts are
 * printed).  -s (strict, for a kernel built for fault injection): a knob
 * that cannot be set or a disk without make-it-fail fails the test
 * concerned instead of being a diagnostic or a skip; -K: kmemleak left
 * off fails instead of skipping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/testlib.h"

#define PAGE		4096UL
#define MAX_DIAG	30
#define DBG		"/sys/kernel/debug"
#define MAX_NTH		2000

static const char *dir;
static int nth_fd = -1;
static int ndiag, failures;
static const char *only;
static bool verbose;
static const char *cur_test;
static bool strict, need_kmemleak;

/* a test file: the original and its szip bytes */
struct tfile {
	const char *name;
	size_t size;
	const char *opts;
	uint8_t *data;
	uint8_t *raw;
	size_t raw_size;
	size_t chunk;
};

static struct tfile tfiles[] = {
	{ "dict4k", 96 << 10, "--chunk-size=4096 --dict=2048", NULL, NULL, 0, 4096 },
	{ "x86-16k", (200 << 10) + 333, "--filter=x86", NULL, NULL, 0, 16384 },
};

/*
 * Where the kernel's zstd takes a dictionary (6.12), the first file is a
 * zstd one with a dictionary instead: its decoder dictionary is built
 * before the block map is read, and must be freed when that fails.
 */
static const struct tfile zstd_dict_file = {
	"zdict4k", 96 << 10, "--codec=zstd --level=3 --chunk-size=4096 --dict=2048",
	NULL, NULL, 0, 4096
};

/* counts for the summary; random_seen: operations of the random rounds
 * that an injected fault made fail (cleanly) */
static long injected, clean_errors, successes, verify_reads, sigbus, eio;
static long random_seen;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	va_start(ap, fmt);
	vdiag_capped(&ndiag, MAX_DIAG, cur_test, fmt, ap);
	va_end(ap);
}

/* Write @val to @name; retried, as this may run with faults injected. */
static void knob(const char *name, const char *val)
{
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(name, O_WRONLY);
		ssize_t w = fd < 0 ? -1 : write(fd, val, strlen(val));

		if (fd >= 0)
			close(fd);
		if (w == (ssize_t)strlen(val))
			return;
		if (errno != ENOMEM)
			break;
	}
	if (strict)
		fail("cannot set %s to %s: %s", name, val, strerror(errno));
	else
		diag("%s = %s: %s", name, val, strerror(errno));
}

/* @name in the directory under test (path_in()) */
static char *fpath(const char *name)
{
	return path_in(dir, name);
}

static bool wanted(const char *key)
{
	return !only || strstr(only, key);
}

/* ---------------------------------------------------- fault control */

/* Fail the @n-th fault point from now on in this thread (0: none). */
static void nth_set(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(nth_fd, b, len, 0) != len)
		diag("fail-nth: %s", strerror(errno));
}

/* Whether the fault set by nth_set() was injected; clears it if not. */
static bool nth_done(void)
{
	char b[16] = "";

	if (pread(nth_fd, b, sizeof(b) - 1, 0) <= 0)
		return true;
	if (atoi(b)) {
		nth_set(0);
		return false;
	}
	injected++;
	return true;
}

static void alloc_faults_setup(void)
{
	static const char *const types[] = { "failslab", "fail_page_alloc" };

	for (int i = 0; i < 2; i++) {
		char p[128];

#define SET(k, v) do { snprintf(p, sizeof(p), DBG "/%s/" k, types[i]); knob(p, v); } while (0)
		SET("probability", "0");
		SET("interval", "1");
		SET("times", "-1");
		SET("space", "0");
		SET("verbose", "0");
		SET("task-filter", "Y");
		SET("ignore-gfp-wait", "N");
#undef SET
	}
	knob(DBG "/fail_page_alloc/ignore-gfp-highmem", "N");
	knob(DBG "/fail_page_alloc/min-order", "0");
	knob("/proc/self/make-it-fail", "1");
}

static void alloc_faults_random(int percent)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", percent);
	knob(DBG "/failslab/probability", v);
	knob(DBG "/fail_page_alloc/probability", v);
}

/* ------------------------------------------------------------ checks */

/* The whole file through @fd must be @f's original; 0 if so. */
static int verify_fd(const struct tfile *f, int fd, const char *when)
{
	size_t n;
	uint8_t *b = read_fd(fd, &n);
	int bad = !b || n != f->size || memcmp(b, f->data, n);

	verify_reads++;
	if (bad)
		fail("%s: %s: reads %s (%zu bytes of %zu)", f->name, when,
		     !b ? strerror(errno) : n == f->raw_size &&
		     !memcmp(b, f->raw, n) ? "raw szip bytes" : "wrong bytes",
		     b ? n : 0, f->size);
	free(b);
	return bad;
}

static int verify_name(const struct tfile *f, const char *name, const char *when)
{
	int fd = open(name, O_RDONLY), bad;

	if (fd < 0) {
		fail("%s: %s: open: %s", f->name, when, strerror(errno));
		return 1;
	}
	bad = verify_fd(f, fd, when);
	close(fd);
	return bad;
}

static void clean_error(int err, const char *what, const struct tfile *f)
{
	if (err == ENOMEM || err == EIO)
		clean_errors++;
	else
		fail("%s: %s failed with %s under an allocation fault", f->name,
		     what, strerror(err));
}

/* A +c file, inactive, without writers: created in a +c directory. */
static int make_inactive_c(const struct tfile *f, const char *name)
{
	unlink(name);
	return write_file(name, f->raw, f->raw_size, true);
}

/* -------------------------------------------- systematic allocations */

/* Activation by open() or stat() of a +c file (the hooks), n-th fault. */
static void sweep_activate_hook(const struct tfile *f, bool by_stat,
				unsigned int *points)
{
	char name[512];
	unsigned int n;

	snprintf(name, sizeof(name), "%s/%s", fpath("cdir"), f->name);
	for (n = 1; n < MAX_NTH; n++) {
		struct stat sb;
		int fd = -1, ret, err;
		bool hit;

		watchdog_progress("%s n=%u", cur_test, n);
		if (make_inactive_c(f, name)) {
			fail("%s: cannot write %s", f->name, name);
			return;
		}
		nth_set(n);
		if (by_stat) {
			ret = stat(name, &sb);
		} else {
			fd = open(name, O_RDONLY);
			ret = fd < 0 ? -1 : 0;
		}
		err = errno;
		hit = nth_done();
		if (verbose) {
			struct stat now_st;

			diag("%s fault %u%s: %s; size %lld", by_stat ? "stat" : "open",
			     n, hit ? "" : " (not reached)",
			     ret ? strerror(err) : "ok",
			     stat(name, &now_st) ? -1LL : (long long)now_st.st_size);
		}
		if (ret) {
			clean_error(err, by_stat ? "stat" : "open", f);
		} else {
			successes++;
			if (by_stat && (size_t)sb.st_size != f->size &&
			    (size_t)sb.st_size == f->raw_size)
				fail("%s: fault %u: stat succeeded with the raw size",
				     f->name, n);
			if (!by_stat) {
				uint8_t head[64];

				/* before any stat, which could activate it */
				if (pread(fd, head, sizeof(head), 0) != sizeof(head) ||
				    memcmp(head, f->data, sizeof(head)))
					fail("%s: fault %u: the open succeeded, and reads %s",
					     f->name, n, !memcmp(head, f->raw, sizeof(head)) ?
					     "the raw szip bytes" : "wrong bytes");
				verify_fd(f, fd, "opened under a fault");
			}
		}
		if (fd >= 0)
			close(fd);
		verify_name(f, name, "after the fault");
		if (!hit)
			break;
	}
	*points = n - 1;
}

/* Activation by chattr +c, n-th fault. */
static void sweep_activate_chattr(const struct tfile *f, unsigned int *points)
{
	char name[512];
	unsigned int n;

	snprintf(name, sizeof(name), "%s.chattr", fpath(f->name));
	for (n = 1; n < MAX_NTH; n++) {
		int fd, flags, err;
		bool hit;

		watchdog_progress("%s n=%u", cur_test, n);
		unlink(name);
		if (write_file(name, f->raw, f->raw_size, true)) {
			fail("cannot write %s", name);
			return;
		}
		fd = open(name, O_RDONLY);
		if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
			fail("open %s: %s", name, strerror(errno));
			return;
		}
		flags |= FS_COMPR_FL;
		nth_set(n);
		err = ioctl(fd, FS_IOC_SETFLAGS, &flags) ? errno : 0;
		hit = nth_done();
		close(fd);
		if (err) {
			clean_error(err, "chattr +c", f);
			if (!get_flags(name, &flags) && (flags & FS_COMPR_FL))
				fail("%s: chattr +c failed (%s) but set the flag",
				     f->name, strerror(err));
			err = set_compr(name, true);
			if (err)
				fail("%s: chattr +c after the fault: %s", f->name,
				     strerror(err));
		} else {
			successes++;
		}
		verify_name(f, name, "after chattr +c");
		if (!hit)
			break;
	}
	unlink(name);
	*points = n - 1;
}

/* munmap() can fail under allocation faults (VMA splits): retry */
static void xmunmap(void *m, size_t len)
{
	for (int tries = 0; munmap(m, len); tries++) {
		if (tries > 1000) {
			fail("munmap: %s", strerror(errno));
			return;
		}
	}
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Touch @len bytes of @m from @off; 0, or -1 on SIGBUS. */
static int touch(const volatile uint8_t *m, size_t off, size_t len,
		 uint8_t *out)
{
	if (sigsetjmp(bus_jmp, 1))
		return -1;
	for (size_t i = 0; i < len; i++)
		out[i] = m[off + i];
	return 0;
}

enum read_mode { R_PREAD, R_READ, R_MMAP };

/*
 * Read [@off, @off + @len) of @fd by @mode; checks the bytes it gives
 * and returns their number, or -1 with the error (or SIGBUS) in *@err.
 */
static ssize_t read_by(const struct tfile *f, int fd, enum read_mode mode,
		       size_t off, size_t len, uint8_t *buf, int *err)
{
	ssize_t got;

	*err = 0;
	if (mode == R_MMAP) {
		size_t maplen = (f->size + PAGE - 1) & ~(PAGE - 1);
		uint8_t *m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED) {
			*err = errno;
			return -1;
		}
		got = touch(m, off, len, buf) ? -1 : (ssize_t)len;
		if (got < 0)
			*err = EFAULT;	/* SIGBUS */
		xmunmap(m, maplen);
	} else if (mode == R_PREAD) {
		got = pread(fd, buf, len, off);
		*err = errno;
	} else {
		got = lseek(fd, off, SEEK_SET) == (off_t)off ? read(fd, buf, len) : -1;
		*err = errno;
	}
	if (got > 0 && memcmp(buf, f->data + off, got))
		fail("%s: read mode %d at %zu: wrong bytes", f->name, mode, off);
	return got;
}

/* Reads of an active file through @mode, n-th fault. */
static void sweep_read(const struct tfile *f, enum read_mode mode,
		       unsigned int *points)
{
	size_t off = 2 * f->chunk + (mode == R_MMAP ? 0 : 100);
	size_t len = mode == R_MMAP ? PAGE : 2 * f->chunk + 5000;
	uint8_t *buf = malloc(len);
	unsigned int n;
	int fd = open(fpath(f->name), O_RDONLY | O_NOATIME);

	if (!buf || fd < 0) {
		fail("%s: open: %s", f->name, strerror(errno));
		return;
	}
	memset(buf, 0, len);	/* no page faults of its own under the fault */
	posix_fadvise(fd, 0, 0, mode == R_PREAD ? POSIX_FADV_RANDOM :
		      POSIX_FADV_NORMAL);
	for (n = 1; n < MAX_NTH; n++) {
		ssize_t got;
		int err;
		bool hit;

		watchdog_progress("%s n=%u", cur_test, n);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		nth_set(n);
		got = read_by(f, fd, mode, off, len, buf, &err);
		hit = nth_done();
		if (got < 0) {
			if (mode == R_MMAP && err == EFAULT)
				fail("%s: fault %u: SIGBUS under an allocation fault",
				     f->name, n);
			else
				clean_error(err, mode == R_MMAP ? "mmap" : "read", f);
		} else {
			successes++;
		}
		/* the same read without a fault: all of it, right */
		got = read_by(f, fd, mode, off, len, buf, &err);
		verify_reads++;
		if (got != (ssize_t)len)
			fail("%s: fault %u: the next read gave %zd of %zu: %s",
			     f->name, n, got, len, strerror(err));
		if (!hit)
			break;
	}
	close(fd);
	free(buf);
	*points = n - 1;
}

/* ---------------------------------------------------- random faults */

static void random_rounds(int rounds)
{
	char name[512];

	snprintf(name, sizeof(name), "%s/random", fpath("cdir"));
	for (int r = 0; r < rounds; r++) {
		const struct tfile *f = &tfiles[r % 2];
		uint8_t *buf;
		size_t n;
		int fd, err;

		watchdog_progress("%s round %d", cur_test, r);
		if (make_inactive_c(f, name)) {
			fail("cannot write %s", name);
			return;
		}
		alloc_faults_random(10);
		fd = open(name, O_RDONLY);
		err = errno;
		if (fd >= 0) {
			struct stat sb;

			if (!fstat(fd, &sb) && (size_t)sb.st_size != f->size) {
				alloc_faults_random(0);
				fail("%s: round %d: opened with size %lld", f->name, r,
				     (long long)sb.st_size);
				close(fd);
				continue;
			}
			buf = read_fd(fd, &n);
			if (!buf) {
				clean_error(errno, "read", f);
				random_seen++;
			}
			else if (n > f->size || memcmp(buf, f->data, n))
				fail("%s: round %d: wrong bytes", f->name, r);
			free(buf);
			{
				uint8_t page[PAGE];
				size_t maplen = (f->size + PAGE - 1) & ~(PAGE - 1);
				uint8_t *m = mmap(NULL, maplen, PROT_READ, MAP_SHARED,
						  fd, 0);

				if (m != MAP_FAILED) {
					size_t off = (rng() % (f->size / PAGE)) * PAGE;

					if (touch(m, off, PAGE, page))
						fail("%s: round %d: SIGBUS under allocation faults",
						     f->name, r);
					else if (memcmp(page, f->data + off, PAGE))
						fail("%s: round %d: wrong mapped page",
						     f->name, r);
					xmunmap(m, maplen);
				}
			}
			close(fd);
			err = set_compr(name, false);
			random_seen += err == ENOMEM || err == EIO;
			if (err && err != ENOMEM && err != EIO && err != EBUSY)
				fail("%s: chattr -c under faults: %s", f->name,
				     strerror(err));
			err = set_compr(name, true);
			random_seen += err == ENOMEM || err == EIO;
			if (err && err != ENOMEM && err != EIO)
				fail("%s: chattr +c under faults: %s", f->name,
				     strerror(err));
		} else {
			clean_error(err, "open", f);
			random_seen++;
		}
		alloc_faults_random(0);
		/* whatever happened: +c, active, right bytes */
		if (set_compr(name, true))
			fail("%s: round %d: chattr +c after the faults", f->name, r);
		verify_name(f, name, "after random faults");
	}
	unlink(name);
}

/* ------------------------------------------------------- I/O errors */

static void io_faults_setup(bool on)
{
	knob(DBG "/fail_make_request/probability", on ? "100" : "0");
	knob(DBG "/fail_make_request/interval", "1");
	knob(DBG "/fail_make_request/verbose", "0");
	knob(DBG "/fail_make_request/task-filter", "Y");
	knob(DBG "/fail_make_request/space", "0");
	knob(DBG "/fail_make_request/times", "0");
	knob("/proc/self/make-it-fail", "1");
}

static void io_fail_next(int times)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", times);
	knob(DBG "/fail_make_request/times", v);
}

/* pread one page at @off; must give the original bytes */
static void read_ok(const struct tfile *f, int fd, size_t off, uint8_t *buf,
		    const char *when)
{
	size_t len = off + PAGE <= f->size ? PAGE : f->size - off;
	ssize_t got = pread(fd, buf, len, off);

	verify_reads++;
	if (got != (ssize_t)len || memcmp(buf, f->data + off, len))
		fail("%s: page at %zu: %zd bytes (%s)", when, off, got,
		     got < 0 ? strerror(errno) : "wrong bytes");
}

static int io_errors(const char *disk)
{
	const struct tfile *f = &tfiles[1];
	size_t cs = f->chunk, maplen = (f->size + PAGE - 1) & ~(PAGE - 1);
	int fd = -1, err, errs = failures;
	uint8_t *buf = malloc(PAGE), *m;
	long long read_errors;
	ssize_t got;
	char p[128];

	snprintf(p, sizeof(p), "/sys/block/%s/make-it-fail", disk);
	if (access(p, W_OK)) {
		diag("no %s", p);
		return -1;
	}
	io_faults_setup(true);
	knob(p, "1");
	fd = open(fpath(f->name), O_RDONLY | O_NOATIME);
	if (!buf || fd < 0) {
		fail("open: %s", strerror(errno));
		goto out;
	}

	/* every bio of this process fails while chunk 3 is read */
	watchdog_progress("%s read", cur_test);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	read_ok(f, fd, 1 * cs, buf, "chunk 1 before the errors");
	/* chunk 3 is read from the disk, not from bytes chunk 1's miss kept */
	knob("/proc/sys/vm/drop_caches", "2");
	io_fail_next(-1);
	got = pread(fd, buf, PAGE, 3 * cs + PAGE);
	err = errno;
	if (verbose)
		run("echo \"# pread under I/O errors: times $(cat " DBG "/fail_make_request/times), make-it-fail $(cat /proc/%d/make-it-fail) $(cat /sys/block/%s/make-it-fail)\"",
		    getpid(), disk);
	if (got >= 0 || err != EIO)
		fail("pread of a chunk whose bios fail = %zd (%s), not EIO", got,
		     got < 0 ? strerror(err) : "no error");
	else
		eio++;
	read_ok(f, fd, 1 * cs + PAGE, buf, "chunk 1, in the page cache, while bios fail");
	io_fail_next(0);
	for (size_t off = 0; off < f->size; off += PAGE)
		read_ok(f, fd, off, buf, "after the I/O errors");

	/* the same through a page fault: SIGBUS for that page only */
	watchdog_progress("%s mmap", cur_test);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
	} else {
		madvise(m, maplen, MADV_RANDOM);
		if (touch(m, 1 * cs, PAGE, buf))
			fail("SIGBUS before any error");
		knob("/proc/sys/vm/drop_caches", "2");
		io_fail_next(-1);
		if (!touch(m, 5 * cs, PAGE, buf))
			fail("a page whose bios fail was mapped");
		else
			sigbus++;
		if (touch(m, 1 * cs, PAGE, buf) || memcmp(buf, f->data + cs, PAGE))
			fail("a mapped page in the page cache, while bios fail");
		io_fail_next(0);
		if (touch(m, 5 * cs, PAGE, buf) ||
		    memcmp(buf, f->data + 5 * cs, PAGE))
			fail("the page after the I/O errors");
		verify_reads += 3;
		munmap(m, maplen);
	}

	/* one failed bio in readahead: right bytes or EIO, then all right */
	watchdog_progress("%s readahead", cur_test);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (int times = 1; times <= 3; times++) {
		uint8_t *all = malloc(f->size);
		size_t pos = 0;

		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		io_fail_next(times);
		while (all && pos < f->size) {
			got = pread(fd, all + pos, f->size - pos, pos);
			if (got <= 0)
				break;
			pos += got;
		}
		io_fail_next(0);
		if (!all || memcmp(all, f->data, pos))
			fail("readahead with %d failed bio(s): wrong bytes", times);
		if (pos < f->size)
			eio++;
		free(all);
	}
	close(fd);
	fd = -1;
	verify_name(f, fpath(f->name), "after readahead I/O errors");

	/* activation: the header read fails */
	watchdog_progress("%s activation", cur_test);
	err = set_compr(fpath(f->name), false);
	if (err) {
		fail("chattr -c: %s", strerror(err));
	} else {
		fd = open(fpath(f->name), O_RDONLY | O_NOATIME);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
			fd = -1;
		}
		io_fail_next(-1);
		err = set_compr(fpath(f->name), true);
		io_fail_next(0);
		if (err != EIO)
			fail("chattr +c with the header read failing: %s",
			     err ? strerror(err) : "succeeded");
		else
			eio++;
		err = set_compr(fpath(f->name), true);
		if (err)
			fail("chattr +c after the I/O error: %s", strerror(err));
		verify_name(f, fpath(f->name), "activated after an I/O error");
	}

	/*
	 * A miss of one chunk also reads the next chunks' bytes to keep them
	 * (cache.c); when that read fails, the chunk asked for is read again
	 * alone, and is not reported as failed unless that fails too.
	 */
	watchdog_progress("%s read ahead", cur_test);
	fd = open(fpath(f->name), O_RDONLY | O_NOATIME);
	if (fd < 0) {
		fail("open: %s", strerror(errno));
		goto out;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	knob("/proc/sys/vm/drop_caches", "2");
	read_errors = counter("read_errors");
	io_fail_next(1);
	read_ok(f, fd, 7 * cs, buf, "a miss whose read of the next chunks failed once");
	io_fail_next(0);
	if (counter("read_errors") != read_errors)
		fail("a miss whose read of the next chunks failed once: %lld chunks reported failed",
		     counter("read_errors") - read_errors);
out:
	knob(p, "0");
	io_faults_setup(false);
	if (fd >= 0)
		close(fd);
	free(buf);
	return failures > errs;
}

/* ---------------------------------------------------------- kmemleak */

/* Returns -1 if kmemleak is off, else the number of module leaks. */
static int kmemleak_check(void)
{
	const char *kl = DBG "/kmemleak";
	char line[512], obj[4096] = "";
	int fd = open(kl, O_RDWR), leaks = 0, other = 0;
	FILE *f;

	if (fd < 0)
		return -1;
	if (write(fd, "scan", 4) != 4) {
		close(fd);
		return -1;	/* disabled */
	}
	/* objects must be old enough to be reported: scan again */
	sleep(6);
	if (write(fd, "scan", 4) != 4)
		diag("kmemleak scan: %s", strerror(errno));
	close(fd);
	f = fopen(kl, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "unreferenced object", 19)) {
			if (obj[0] && (strstr(obj, "ext4dec") || strstr(obj, "szip")))
				leaks++;
			else if (obj[0])
				other++;
			if (obj[0])
				diag_capped(&ndiag, MAX_DIAG, "kmemleak: %.200s", obj);
			obj[0] = 0;
		}
		if (strlen(obj) + strlen(line) < sizeof(obj))
			strcat(obj, line);
	}
	if (obj[0]) {
		if (strstr(obj, "ext4dec") || strstr(obj, "szip"))
			leaks++;
		else
			other++;
		diag_capped(&ndiag, MAX_DIAG, "kmemleak: %.200s", obj);
	}
	fclose(f);
	diag("kmemleak: %d object(s) of ext4dec, %d other", leaks, other);
	return leaks;
}

/* ------------------------------------------------------------- main */

static int setup(void)
{
	char cdir[512];

	mkdir(dir, 0755);
	snprintf(cdir, sizeof(cdir), "%s", fpath("cdir"));
	mkdir(cdir, 0755);
	if (set_compr(cdir, true))
		return -1;
	if (kernel_at_least(6, 12))
		tfiles[0] = zstd_dict_file;
	for (size_t i = 0; i < sizeof(tfiles) / sizeof(tfiles[0]); i++) {
		struct tfile *f = &tfiles[i];
		char orig[512];
		int fd;

		f->data = malloc(f->size);
		if (!f->data)
			return -1;
		gen_data(f->data, f->size, i + 11);
		snprintf(orig, sizeof(orig), "%s.orig", fpath(f->name));
		if (write_file(orig, f->data, f->size, true) ||
		    run("szip -q -c %s '%s' > '%s'", f->opts, orig, fpath(f->name)))
			return -1;
		unlink(orig);
		fd = open(fpath(f->name), O_RDONLY);
		if (fd < 0)
			return -1;
		f->raw = read_fd(fd, &f->raw_size);
		close(fd);
		if (!f->raw || set_compr(fpath(f->name), true) ||
		    verify_name(f, fpath(f->name), "setup"))
			return -1;
	}
	return 0;
}

#define TEST(name, cond, ...)						\
	do {								\
		int before = failures;					\
		cur_test = name;					\
		__VA_ARGS__;						\
		tap_result(failures == before && (cond), "%s", name);	\
	} while (0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void sweep_activate_by_open(const struct tfile *f, unsigned int *points)
{
	sweep_activate_hook(f, false, points);
}

static void sweep_activate_by_stat(const struct tfile *f, unsigned int *points)
{
	sweep_activate_hook(f, true, points);
}

/* the activation sweeps: the two hooks that activate, then chattr +c */
static const struct {
	const char *how;
	void (*sweep)(const struct tfile *f, unsigned int *points);
} activations[] = {
	{ "open", sweep_activate_by_open },
	{ "stat", sweep_activate_by_stat },
	{ "chattr", sweep_activate_chattr },
};

static int run_tests(int rounds, const char *disk)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	unsigned int pts[4];
	long long nomem, io;
	long inj0;
	int leaks;
	char p[64];

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	if (setup()) {
		tap_result(false, "faults_setup");
		tap_plan();
		return 1;
	}
	snprintf(p, sizeof(p), "/proc/self/task/%d/fail-nth", gettid());
	nth_fd = open(p, O_RDWR);
	alloc_faults_setup();
	nomem = counter("refusals/no_memory");
	io = counter("refusals/io_error");

	for (int i = 0; i < 2; i++) {
		const struct tfile *f = &tfiles[i];
		char name[64];

		/* a sweep that injected nothing tested nothing */
		for (size_t a = 0; a < ARRAY_SIZE(activations); a++) {
			if (!wanted(activations[a].how))
				continue;
			snprintf(name, sizeof(name), "faults_activate_by_%s_%s",
				 activations[a].how, f->name);
			inj0 = injected;
			TEST(name, nth_fd >= 0 && injected > inj0,
			     activations[a].sweep(f, &pts[0]));
			diag("%s: %u fault points, %ld faults injected", name, pts[0],
			     injected - inj0);
		}
		if (wanted("read")) {
			snprintf(name, sizeof(name), "faults_read_%s", f->name);
			/* page faults: one file is enough (and slow) */
			pts[2] = 0;
			inj0 = injected;
			TEST(name, nth_fd >= 0 && injected > inj0 && pts[0] && pts[1] &&
			     (i || pts[2]),
			     sweep_read(f, R_PREAD, &pts[0]);
			     sweep_read(f, R_READ, &pts[1]);
			     if (!i) sweep_read(f, R_MMAP, &pts[2]));
			diag("%s: %u fault points in pread, %u in read, %u in a page fault, %ld faults injected",
			     name, pts[0], pts[1], pts[2], injected - inj0);
		}
	}
	diag("faults: refusals/no_memory +%lld, refusals/io_error +%lld",
	     counter("refusals/no_memory") - nomem, counter("refusals/io_error") - io);
	if (wanted("random")) {
		inj0 = random_seen;
		TEST("faults_random_allocation_failures", random_seen > inj0,
		     random_rounds(rounds));
		diag("faults_random_allocation_failures: %ld operations failed cleanly",
		     random_seen - inj0);
	}
	alloc_faults_random(0);
	knob("/proc/self/make-it-fail", "0");
	diag("faults: %ld faults injected, %ld clean errors, %ld operations succeeded, %ld verification reads",
	     injected, clean_errors, successes, verify_reads);

	if (wanted("io")) {
		long sigbus_before = sigbus;
		int r;

		cur_test = "faults_io_error_on_the_disk";
		r = io_errors(disk);
		diag("faults: I/O errors gave %ld EIO and %ld SIGBUS", eio,
		     sigbus - sigbus_before);
		if (r < 0)
			tap_result(!strict, "faults_io_error_on_the_disk # %sno make-it-fail for %s",
				   strict ? "" : "SKIP ", disk);
		else
			tap_result(!r, "faults_io_error_on_the_disk");
	}
	knob("/proc/self/make-it-fail", "0");

	for (size_t i = 0; i < sizeof(tfiles) / sizeof(tfiles[0]); i++)
		unlink(fpath(tfiles[i].name));
	run("rm -rf '%s'", dir);
	sync();
	knob("/proc/sys/vm/drop_caches", "3");
	cur_test = "faults_kmemleak";
	if (wanted("kmemleak")) {
		leaks = kmemleak_check();
		if (leaks < 0)
			tap_result(!need_kmemleak, "faults_kmemleak # %skmemleak is off (boot with kmemleak=on)",
				   need_kmemleak ? "" : "SKIP ");
		else
			tap_result(!leaks, "faults_kmemleak");
	}
	tap_plan();
	return failures ? 1 : 0;
}

struct run_args {
	int rounds;
	const char *disk;
};

static int tests_worker(int worker, void *arg)
{
	const struct run_args *a = arg;

	(void)worker;
	return run_tests(a->rounds, a->disk);
}

int main(int argc, char **argv)
{
	struct run_args args = { .rounds = 40, .disk = "vda" };
	int opt;

	while ((opt = getopt(argc, argv, "r:d:o:sKv")) != -1) {
		switch (opt) {
		case 'r':
			args.rounds = atoi(optarg);
			break;
		case 'd':
			args.disk = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		case 's':
			strict = true;
			break;
		case 'K':
			need_kmemleak = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1) {
usage:
		fprintf(stderr, "usage: %s [-r ROUNDS] [-d DISK] [-o TESTS] [-s] [-K] [-v] DIR\n",
			argv[0]);
		return 2;
	}
	dir = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	/* a folio left locked hangs the tests: the watchdog reports it */
	return watchdog_run("faults_no_hang", 1, 300, tests_worker, &args) ? 1 : 0;
}
