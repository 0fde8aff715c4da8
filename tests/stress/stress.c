// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec_stress - concurrency stress of the module (run as root in the
 * test VM, ext4dec loaded, szip in PATH).
 *
 * Usage: ext4dec_stress [-t SECONDS] [-m CGROUP_MAX_MB] [-P PACKED] DIR
 *        ext4dec_stress --pack PACKED  (the szip files, made ahead)
 *        ext4dec_stress --exec-ok      (what the executors run)
 *
 * DIR is a directory on ext4.  Files, all made with szip and activated
 * with chattr +c:
 *   stable  never deactivated: read, mapped, and one of them executed
 *   cycle   deactivated and activated again all the time (chattr -c/+c)
 *   churn   unlinked and re-created (renamed over, or created in place)
 *   exe     a compressed copy of this program and of libc.so.6
 * They are compressed with szip here, or taken from the directory PACKED
 * that --pack filled (on the host: the same program and libc).
 * For SECONDS (default 120), processes run side by side:
 *   readers   read(), pread() and splice() every file, a quarter of the
 *             time with O_DIRECT (half of the direct preads through aio,
 *             queued asynchronously when the inode is not active), after
 *             dropping its cache now and then; two of
 *             them in a memory cgroup limited to CGROUP_MAX_MB (default
 *             32) that another process also shrinks through
 *             memory.reclaim
 *   mappers   map the stable files (shared and private) and touch pages
 *   executor  runs the compressed program with the compressed libc
 *   chattr    -c and +c on the cycle files
 *   churn     replaces the churn files
 *   dropper   drop_caches (1, 2 and 3)
 *   rmmod     delete_module() and rmmod while a file is held open: both
 *             must be refused
 * Every byte read is compared with the original: stable files must read
 * exactly; cycle and churn files may be seen raw or decompressed (a file
 * opened while inactive, or activated under a reader), but every read
 * must be one or the other from start to end.  Then everything stops and each file must
 * still read back exactly after drop_caches, and be deactivated and
 * activated again; once all are unlinked no inode may be left active.
 * If no process gets through an operation for 300 s (a hang in the
 * module), the blocked tasks go to the kernel log (sysrq w) and the run
 * fails.  Prints TAP and the counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/testlib.h"

#define PAGE		4096UL
#define MAX_DIAG	20
#define CGROUP		"/sys/fs/cgroup/ext4dec-stress"

enum kind { STABLE, CYCLE, CHURN };

struct sfile {
	const char *name;
	enum kind kind;
	size_t size;
	const char *opts;	/* szip options */
	uint8_t *data;		/* the original */
	uint8_t *raw;		/* the szip file */
	size_t raw_size;
};

static struct sfile files[] = {
	{ "stable-16k", STABLE, 1 << 20, "" },
	{ "stable-4k-dict", STABLE, 512 << 10, "--chunk-size=4096 --dict=4096" },
	{ "stable-12k-x86", STABLE, (768 << 10) + 1234, "--chunk-size=12288 --filter=x86" },
	{ "cycle-a", CYCLE, 256 << 10, "--chunk-size=8192" },
	{ "cycle-b", CYCLE, (256 << 10) - 77, "--chunk-size=32768" },
	{ "churn-a", CHURN, 300 << 10, "--chunk-size=4096" },
	{ "churn-b", CHURN, 200 << 10, "" },
};

#define NR_FILES	(sizeof(files) / sizeof(files[0]))

struct stats {
	long reads, bytes, mismatches, errors, opens_missing, aio_reads;
	long maps, pages, execs, exec_failures;
	long minus_c, plus_c, chattr_busy, chattr_errors;
	long churns, drops, reclaims, rmmods, rmmod_wrong;
	int ndiag;
};

static struct stats *st;
static const char *dir;
/* the workers stop at this now(); @role: this worker's, for the watchdog */
static double stop_at;
static char role[32];

#define add(field, n)	__atomic_fetch_add(&st->field, (n), __ATOMIC_RELAXED)

static void __attribute__((format(printf, 1, 2))) problem(const char *fmt, ...)
{
	char who[16];
	va_list ap;

	snprintf(who, sizeof(who), "[%d]", getpid());
	va_start(ap, fmt);
	vdiag_capped(&st->ndiag, MAX_DIAG, who, fmt, ap);
	va_end(ap);
}

/* Whether the run is over; called by the workers between operations. */
static bool stopping(void)
{
	watchdog_progress("%s", role);
	return now() >= stop_at;
}

/* @name in the directory under test (path_in()) */
static char *fpath(const char *name)
{
	return path_in(dir, name);
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

static void write_str(const char *name, const char *s)
{
	int fd = open(name, O_WRONLY);

	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0 && errno != EAGAIN && errno != EBUSY)
			problem("write %s to %s: %s", s, name, strerror(errno));
		close(fd);
	}
}

/* ------------------------------------------------------------ checks */

/*
 * How a read of @len at @off that returned @got bytes @buf differs from
 * the file @want of @size bytes: -1 if it does not, else the offset in
 * @buf of the first difference (@got if it returned too many or few).
 * With @short_ok, a file still being written: fewer bytes are fine.
 */
static long differs(const uint8_t *want, size_t size, uint64_t off, size_t len,
		    size_t got, const uint8_t *buf, bool short_ok)
{
	size_t expect = off >= size ? 0 : len < size - off ? len : size - off;
	size_t d = 0;

	while (d < got && d < expect && buf[d] == want[off + d])
		d++;
	return d == got && (got == expect || short_ok) ? -1 : (long)d;
}

/*
 * Check @got bytes read at @off of @f.  Stable files must match the
 * original exactly and return everything up to EOF.  The others may be
 * raw or uncompressed, but each read one of them from start to end (up to
 * the raw or the uncompressed EOF), never a mix: a file opened while the
 * inode was raw reads it decompressed once it is activated, and a read
 * that an activation or deactivation runs across sees either side.  A
 * churn file may also be read raw while it is written: a raw prefix.
 */
static void check(const struct sfile *f, const char *how, uint64_t off,
		  size_t len, ssize_t got, int err, const uint8_t *buf)
{
	long d, raw;

	add(reads, 1);
	if (got < 0) {
		add(errors, 1);
		problem("%s: %s(%zu at %llu): %s", f->name, how, len,
			(unsigned long long)off, strerror(err));
		return;
	}
	add(bytes, got);
	d = differs(f->data, f->size, off, len, got, buf, false);
	if (d < 0)
		return;
	if (f->kind == STABLE) {
		add(mismatches, 1);
		problem("%s: %s(%zu at %llu) = %zd, first difference at +%ld",
			f->name, how, len, (unsigned long long)off, got, d);
		return;
	}
	/* a churn file created in place is read raw while it is written */
	raw = differs(f->raw, f->raw_size, off, len, got, buf, f->kind == CHURN);
	if (raw < 0)
		return;
	add(mismatches, 1);
	problem("%s: %s(%zu at %llu) = %zd: neither raw (size %zu, first difference at +%ld) nor uncompressed (size %zu, at +%ld)",
		f->name, how, len, (unsigned long long)off, got, f->raw_size, raw,
		f->size, d);
}

/* ------------------------------------------------------------ workers */

/*
 * Read all of @f through @fd with splice() into a pipe, a pipe's worth at
 * most each time (each call is checked like a read): the page cache's
 * pages go to the pipe as they are, no copy through read_iter.
 */
static void splice_whole(const struct sfile *f, int fd, uint8_t *buf)
{
	loff_t pos = 0;
	int p[2];

	if (pipe(p)) {
		add(errors, 1);
		problem("pipe: %s", strerror(errno));
		return;
	}
	for (;;) {
		size_t len = 1 + rng() % (64 << 10);
		uint64_t off = pos;
		ssize_t got = splice(fd, &pos, p[1], NULL, len, 0);
		int err = errno;
		ssize_t n = 0, r;

		while (got > 0 && n < got && (r = read(p[0], buf + n, got - n)) > 0)
			n += r;
		if (got > 0 && n != got) {
			add(errors, 1);
			problem("%s: splice: %zd bytes in the pipe, %zd read", f->name, got, n);
			break;
		}
		/* a pipe's worth from an unaligned offset is short: not EOF */
		check(f, "splice", off, got > 0 ? (size_t)got : len, got, err, buf);
		if (got <= 0)
			break;
	}
	close(p[0]);
	close(p[1]);
}

/*
 * pread() through aio: a direct read of an inactive inode is queued, and
 * completes after io_submit() returns.  Falls back to pread() where the
 * kernel has no aio (ENOSYS, counted as no aio read).
 */
static ssize_t aio_pread(int fd, void *buf, size_t len, uint64_t off)
{
	static aio_context_t ctx;
	static bool none;
	struct iocb cb = {
		.aio_fildes = fd, .aio_lio_opcode = IOCB_CMD_PREAD,
		.aio_buf = (uintptr_t)buf, .aio_nbytes = len, .aio_offset = off,
	};
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;

	if (!ctx && !none && syscall(SYS_io_setup, 1, &ctx)) {
		if (errno != ENOSYS)
			return -1;
		none = true;
	}
	if (none)
		return pread(fd, buf, len, off);
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		return -1;
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) {
		int err = errno;

		/* waits for the read still in flight into @buf */
		syscall(SYS_io_destroy, ctx);
		ctx = 0;
		errno = err;
		return -1;
	}
	add(aio_reads, 1);
	if ((long long)ev.res < 0) {
		errno = -(long long)ev.res;
		return -1;
	}
	return ev.res;
}

static void reader(int id, bool in_cgroup)
{
	/* aligned for O_DIRECT */
	static uint8_t buf[256 << 10] __attribute__((aligned(4096)));

	if (in_cgroup) {
		char pid[32];

		snprintf(pid, sizeof(pid), "%d", getpid());
		write_str(CGROUP "/cgroup.procs", pid);
		/* a reader left outside would run unlimited, testing nothing */
		if (run("grep -q '^0::/ext4dec-stress$' /proc/%d/cgroup", getpid())) {
			problem("reader %d is not in %s", id, CGROUP);
			add(errors, 1);
		}
	}
	rng_state = 1000 + id;
	while (!stopping()) {
		struct sfile *f = &files[rng() % NR_FILES];
		/* a quarter direct: whole pages at page offsets */
		bool direct = rng() % 4 == 0;
		size_t unit = direct ? PAGE : 1;
		int fd = open(fpath(f->name), O_RDONLY | (direct ? O_DIRECT : 0));
		struct stat sb;

		if (fd < 0) {
			if (errno == ENOENT && f->kind == CHURN) {
				add(opens_missing, 1);
				continue;
			}
			add(errors, 1);
			problem("%s: open: %s", f->name, strerror(errno));
			nap(100);
			continue;
		}
		if (fstat(fd, &sb))
			problem("fstat: %s", strerror(errno));
		if (rng() % 4 == 0)
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (!direct && rng() % 4 == 0) {
			splice_whole(f, fd, buf);
		} else if (rng() & 1) {
			/* sequential read() of the whole file */
			uint64_t pos = 0;

			for (;;) {
				size_t len = unit * (1 + rng() % (sizeof(buf) / unit));
				ssize_t got = read(fd, buf, len);

				check(f, direct ? "direct read" : "read", pos, len, got, errno, buf);
				/* short: EOF (and for direct reads, an unaligned offset) */
				if (got <= 0 || (direct && (size_t)got < len))
					break;
				pos += got;
			}
		} else {
			bool aio = direct && rng() % 2;

			posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
			for (int k = 0; k < 16; k++) {
				uint64_t off = rng() % (f->size + PAGE) / unit * unit;
				size_t len = unit * (1 + rng() % ((k & 1 ? PAGE : sizeof(buf)) / unit));
				ssize_t got = aio ? aio_pread(fd, buf, len, off) : pread(fd, buf, len, off);

				check(f, aio ? "aio direct pread" : direct ? "direct pread" : "pread",
				      off, len, got, errno, buf);
			}
		}
		close(fd);
	}
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

/* Compare mapped page @p (@dirty: the one page changed privately). */
static bool check_page(const struct sfile *f, const volatile uint8_t *m,
		       uint64_t p, long dirty)
{
	uint64_t off = p * PAGE;
	size_t n = f->size - off < PAGE ? f->size - off : PAGE;
	uint8_t copy[PAGE];

	if (sigsetjmp(bus_jmp, 1)) {
		add(errors, 1);
		problem("%s: SIGBUS at %llu", f->name, (unsigned long long)off);
		return false;
	}
	for (size_t i = 0; i < n; i++)
		copy[i] = m[off + i];
	if ((long)p == dirty)
		copy[0] ^= 1;
	add(pages, 1);
	add(reads, 1);
	if (memcmp(copy, f->data + off, n)) {
		add(mismatches, 1);
		problem("%s: mapped page at %llu differs", f->name,
			(unsigned long long)off);
	}
	return true;
}

static void mapper(int id)
{
	struct sigaction sa = { .sa_handler = on_sigbus };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	rng_state = 2000 + id;
	while (!stopping()) {
		struct sfile *f = &files[rng() % 3];
		size_t len = (f->size + PAGE - 1) & ~(PAGE - 1);
		bool priv = rng() & 1;
		uint64_t dirty = rng() % (len / PAGE);
		int fd = open(fpath(f->name), O_RDONLY);
		volatile uint8_t *m;

		if (fd < 0) {
			add(errors, 1);
			problem("%s: open: %s", f->name, strerror(errno));
			nap(100);
			continue;
		}
		m = mmap(NULL, len, PROT_READ | (priv ? PROT_WRITE : 0),
			 priv ? MAP_PRIVATE : MAP_SHARED, fd, 0);
		close(fd);
		if (m == MAP_FAILED) {
			add(errors, 1);
			problem("%s: mmap: %s", f->name, strerror(errno));
			continue;
		}
		add(maps, 1);
		if (priv)
			m[dirty * PAGE] ^= 1;	/* a private copy of one page */
		for (int k = 0; k < 64; k++)
			if (!check_page(f, m, rng() % (len / PAGE),
					priv ? (long)dirty : -1))
				break;
		munmap((void *)m, len);
	}
}

static void executor(void)
{
	char exe[512], lib[512];

	snprintf(exe, sizeof(exe), "%s/exe/ext4dec_stress", dir);
	snprintf(lib, sizeof(lib), "%s/exe", dir);
	while (!stopping()) {
		pid_t pid = fork();
		int s = 0;

		if (!pid) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
			setenv("LD_LIBRARY_PATH", lib, 1);
			execl(exe, exe, "--exec-ok", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &s, 0) != pid || !WIFEXITED(s) ||
		    WEXITSTATUS(s) != 42) {
			add(exec_failures, 1);
			problem("running the compressed program: status %#x", s);
			nap(200);
		}
		add(execs, 1);
	}
}

static void chattr_cycler(void)
{
	rng_state = 3000;
	while (!stopping()) {
		struct sfile *f = &files[3 + rng() % 2];
		int err = set_compr(fpath(f->name), false);

		if (err == EBUSY) {
			add(chattr_busy, 1);
			nap(rng() % 50);
			continue;
		}
		if (err) {
			add(chattr_errors, 1);
			problem("%s: chattr -c: %s", f->name, strerror(err));
			continue;
		}
		add(minus_c, 1);
		nap(rng() % 100);
		/* readers never map the cycle files: +c must work */
		for (int tries = 0; (err = set_compr(fpath(f->name), true)); tries++) {
			if (err != EBUSY || tries > 100) {
				add(chattr_errors, 1);
				problem("%s: chattr +c: %s", f->name, strerror(err));
				break;
			}
			add(chattr_busy, 1);
			nap(10);
		}
		if (!err)
			add(plus_c, 1);
		nap(rng() % 100);
	}
}

static int create_active(struct sfile *f, const char *name)
{
	int err;

	if (write_file(name, f->raw, f->raw_size, false))
		return errno;
	err = set_compr(name, true);
	return err;
}

static void churner(void)
{
	char tmp[512];

	rng_state = 4000;
	while (!stopping()) {
		struct sfile *f = &files[5 + rng() % 2];
		int err;

		if (rng() & 1) {
			/* a new inode renamed over the old one */
			snprintf(tmp, sizeof(tmp), "%s.new", fpath(f->name));
			err = create_active(f, tmp);
			if (!err && rename(tmp, fpath(f->name)))
				err = errno;
		} else {
			/* unlinked, then created in place */
			if (unlink(fpath(f->name)))
				problem("%s: unlink: %s", f->name, strerror(errno));
			nap(rng() % 20);
			err = create_active(f, fpath(f->name));
		}
		if (err) {
			add(errors, 1);
			problem("%s: re-create: %s", f->name, strerror(err));
		}
		add(churns, 1);
		nap(100 + rng() % 200);
	}
}

static void dropper(void)
{
	static const char *const what[] = { "1", "2", "3" };

	rng_state = 5000;
	while (!stopping()) {
		nap(700 + rng() % 1000);
		write_str("/proc/sys/vm/drop_caches", what[rng() % 3]);
		add(drops, 1);
	}
}

static void reclaimer(void)
{
	while (!stopping()) {
		nap(300);
		write_str(CGROUP "/memory.reclaim", "4M");
		add(reclaims, 1);
	}
}

/* A file is held open by the parent: unloading must be refused. */
static void rmmod_looper(void)
{
	rng_state = 6000;
	while (!stopping()) {
		int ret;

		if (rng() % 8) {
			ret = syscall(SYS_delete_module, "ext4dec", O_NONBLOCK);
			if (ret == 0 || (errno != EWOULDBLOCK && errno != EBUSY)) {
				add(rmmod_wrong, 1);
				problem("delete_module while in use: %s",
					ret ? strerror(errno) : "succeeded");
			}
		} else {
			ret = run("rmmod ext4dec 2>/dev/null");
			if (ret == 0) {
				add(rmmod_wrong, 1);
				problem("rmmod succeeded while in use");
			}
		}
		add(rmmods, 1);
		nap(100 + rng() % 300);
	}
}

/* ------------------------------------------------------------ setup */

/* The libc.so.6 this program runs with, from its mappings. */
static char *libc_path(void)
{
	char line[1024], *p, *path = NULL;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !path && fgets(line, sizeof(line), f)) {
		p = strchr(line, '/');
		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = 0;
			path = strdup(p);
		}
	}
	if (f)
		fclose(f);
	return path;
}

/* @f's szip bytes: from the packed directory, or made here with szip. */
static int get_raw(struct sfile *f, const char *packed)
{
	char src[600], dst[600];

	if (packed) {
		snprintf(src, sizeof(src), "%s/%s.sz", packed, f->name);
		f->raw = read_all(src, &f->raw_size);
		return f->raw ? 0 : -1;
	}
	snprintf(src, sizeof(src), "%s.orig", fpath(f->name));
	snprintf(dst, sizeof(dst), "%s.sz", fpath(f->name));
	if (write_file(src, f->data, f->size, false) ||
	    run("szip -q -c -1 %s '%s' > '%s'", f->opts, src, dst)) {
		diag("szip %s failed", f->name);
		return -1;
	}
	unlink(src);
	f->raw = read_all(dst, &f->raw_size);
	unlink(dst);
	return f->raw ? 0 : -1;
}

/*
 * Write the compressed program and libc.so.6 as exe/@name: copied from the
 * packed directory, or compressed here.
 */
static int get_exe(const char *name, const char *orig, const char *packed)
{
	char dst[600];

	snprintf(dst, sizeof(dst), "%s/exe/%s", dir, name);
	if (packed)
		return run("cp '%s/%s.sz' '%s' && chmod 755 '%s' && chattr +c '%s'",
			   packed, name, dst, dst, dst);
	return run("szip -q -c -1 -f --filter=x86 '%s' > '%s' && chmod 755 '%s' && chattr +c '%s'",
		   orig, dst, dst, dst);
}

static int setup(const char *packed)
{
	char exe[64], dst[600], *lib;

	mkdir(dir, 0755);
	for (size_t i = 0; i < NR_FILES; i++) {
		struct sfile *f = &files[i];

		f->data = malloc(f->size);
		if (!f->data)
			return -1;
		gen_data(f->data, f->size, i + 1);
		if (get_raw(f, packed))
			return -1;
		if (create_active(f, fpath(f->name))) {
			diag("%s: chattr +c: %s", f->name, strerror(errno));
			return -1;
		}
	}
	/* the executor's program and library, compressed */
	snprintf(dst, sizeof(dst), "%s/exe", dir);
	mkdir(dst, 0755);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", getpid());
	if (get_exe("ext4dec_stress", exe, packed)) {
		diag("cannot compress the executable");
		return -1;
	}
	lib = libc_path();
	if (!lib || get_exe("libc.so.6", lib, packed)) {
		snprintf(dst, sizeof(dst), "%s/exe/libc.so.6", dir);
		unlink(dst);
		diag("no compressed libc.so.6: the program runs with the system one");
	}
	free(lib);
	return 0;
}

/*
 * --pack DIR: the szip files setup() needs, made ahead (on the host, where
 * szip is much faster than in an emulated guest).
 */
static int pack(const char *out)
{
	char src[600], *lib = libc_path();

	dir = out;
	mkdir(dir, 0755);
	for (size_t i = 0; i < NR_FILES; i++) {
		struct sfile *f = &files[i];

		f->data = malloc(f->size);
		if (!f->data)
			return 1;
		gen_data(f->data, f->size, i + 1);
		snprintf(src, sizeof(src), "%s.orig", fpath(f->name));
		if (write_file(src, f->data, f->size, false) ||
		    run("szip -q -c -1 %s '%s' > '%s/%s.sz'", f->opts, src, dir, f->name))
			return 1;
		unlink(src);
	}
	if (!lib ||
	    run("szip -q -c -1 -f --filter=x86 /proc/%d/exe > '%s/ext4dec_stress.sz'",
		getpid(), dir) ||
	    run("szip -q -c -1 -f --filter=x86 '%s' > '%s/libc.so.6.sz'", lib, dir))
		return 1;
	free(lib);
	return 0;
}

static bool setup_cgroup(unsigned int max_mb)
{
	char v[32];

	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) &&
	    mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return false;
	if (run("grep -q memory /sys/fs/cgroup/cgroup.controllers"))
		return false;
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	rmdir(CGROUP);
	if (mkdir(CGROUP, 0755))
		return false;
	snprintf(v, sizeof(v), "%uM", max_mb);
	write_str(CGROUP "/memory.max", v);
	/* the limit must be in force, or the readers run unlimited */
	return !run("grep -qx %llu " CGROUP "/memory.max",
		    (unsigned long long)max_mb << 20);
}

/* After the run: every file reads back exactly, cold, and cycles. */
static bool final_check(void)
{
	bool ok = true;

	sync();
	write_str("/proc/sys/vm/drop_caches", "3");
	for (size_t i = 0; i < NR_FILES; i++) {
		struct sfile *f = &files[i];
		size_t n;
		uint8_t *b = read_all(fpath(f->name), &n);
		int err;

		if (!b || n != f->size || memcmp(b, f->data, n)) {
			diag("%s: does not read back after the run (%zu bytes)", f->name,
			     b ? n : 0);
			ok = false;
		}
		free(b);
		err = set_compr(fpath(f->name), false);
		if (!err)
			err = set_compr(fpath(f->name), true);
		if (err) {
			diag("%s: chattr -c/+c after the run: %s", f->name, strerror(err));
			ok = false;
		}
	}
	return ok;
}

#define NR_READERS	4
#define NR_MAPPERS	2
#define NR_WORKERS	(NR_READERS + NR_MAPPERS + 6)

/* Worker @i; @arg: whether the memory cgroup is there. */
static int worker(int i, void *arg)
{
	bool cg = *(bool *)arg;

	if (i < NR_READERS) {
		snprintf(role, sizeof(role), "reader %d", i);
		reader(i, cg && i < 2);
	} else if (i < NR_READERS + NR_MAPPERS) {
		snprintf(role, sizeof(role), "mapper %d", i);
		mapper(i);
	} else {
		static const struct {
			const char *role;
			void (*run)(void);
		} others[] = {
			{ "executor", executor }, { "chattr", chattr_cycler },
			{ "churn", churner }, { "dropper", dropper },
			{ "reclaimer", reclaimer }, { "rmmod", rmmod_looper },
		};
		int k = i - NR_READERS - NR_MAPPERS;

		snprintf(role, sizeof(role), "%s", others[k].role);
		/* memory.reclaim needs the memory cgroup */
		if (others[k].run != reclaimer || cg)
			others[k].run();
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int seconds = 120, max_mb = 32;
	int opt, hold_fd, ended;
	bool cg, ok;
	double start, t0 = now();
	const char *packed = NULL;
	void *hold_map;

	if (argc == 2 && !strcmp(argv[1], "--exec-ok"))
		return 42;
	if (argc == 3 && !strcmp(argv[1], "--pack"))
		return pack(argv[2]);
	while ((opt = getopt(argc, argv, "t:m:P:")) != -1) {
		switch (opt) {
		case 't':
			seconds = strtoul(optarg, NULL, 0);
			break;
		case 'P':
			packed = optarg;
			break;
		case 'm':
			max_mb = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1) {
usage:
		fprintf(stderr, "usage: %s [-t SECONDS] [-m CGROUP_MAX_MB] [-P PACKED] DIR\n",
			argv[0]);
		return 2;
	}
	dir = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED || setup(packed)) {
		tap_result(false, "stress_setup");
		tap_plan();
		return 1;
	}
	tap_result(true, "stress_setup");
	diag("stress: setup took %.0f s", now() - t0);
	cg = setup_cgroup(max_mb);
	tap_result(cg, "stress_memory_cgroup # two readers limited to %u MB", max_mb);

	/* the module stays in use: one file open and mapped all along */
	hold_fd = open(fpath(files[0].name), O_RDONLY);
	hold_map = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, hold_fd, 0);
	if (hold_fd < 0 || hold_map == MAP_FAILED) {
		tap_result(false, "stress_hold_open");
		tap_plan();
		return 1;
	}

	start = now();
	stop_at = start + seconds;
	/* a hang in the module stops every worker: the watchdog reports it */
	ended = watchdog_run("stress_no_hang", NR_WORKERS, 300, worker, &cg);
	if (ended < 0)
		return 1;
	ok = !ended;
	diag("stress: %.1f minutes run, %ld reads checked (%ld MB, %ld through aio), %ld mismatches, %ld errors; %.0f s to stop",
	     (stop_at - start) / 60, st->reads, st->bytes >> 20, st->aio_reads, st->mismatches,
	     st->errors, now() - stop_at);
	diag("stress: %ld maps (%ld pages), %ld execs (%ld failed), %ld chattr cycles (-c %ld, +c %ld, %ld EBUSY, %ld errors)",
	     st->maps, st->pages, st->execs, st->exec_failures,
	     st->plus_c < st->minus_c ? st->plus_c : st->minus_c, st->minus_c,
	     st->plus_c, st->chattr_busy, st->chattr_errors);
	diag("stress: %ld re-creates (%ld opens found none), %ld drop_caches, %ld memory.reclaim, %ld rmmod attempts (%ld not refused)",
	     st->churns, st->opens_missing, st->drops, st->reclaims, st->rmmods,
	     st->rmmod_wrong);
	tap_result(ok, "stress_workers_ended");
	tap_result(!st->mismatches, "stress_no_mismatch");
	tap_result(!st->errors, "stress_no_read_error");
	tap_result(!st->exec_failures && st->execs, "stress_exec_compressed");
	tap_result(!st->chattr_errors && st->plus_c, "stress_chattr_cycles");
	tap_result(!st->rmmod_wrong && st->rmmods, "stress_rmmod_refused_while_in_use");

	munmap(hold_map, PAGE);
	close(hold_fd);
	t0 = now();
	ok = final_check();
	diag("stress: final check took %.0f s", now() - t0);
	tap_result(ok, "stress_files_intact_after");
	for (size_t i = 0; i < NR_FILES; i++)
		unlink(fpath(files[i].name));
	run("rm -rf '%s/exe'", dir);
	sync();
	write_str("/proc/sys/vm/drop_caches", "3");
	tap_result(counter("active_inodes") == 0,
		   "stress_no_inode_left_active # active_inodes %lld",
		   counter("active_inodes"));
	if (cg)
		rmdir(CGROUP);
	tap_plan();
	return st->mismatches || st->errors || st->rmmod_wrong || !cg;
}
