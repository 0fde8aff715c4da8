/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/lib/testlib.h - helpers shared by the test programs: the module's
 * selftests and the stress programs run in the VM, and the hostile-file
 * generator on the host.  TAP diagnostics (capped ones for failures too),
 * TAP results numbered across forked workers, a seeded pseudo-random
 * generator, test data that compresses like code, shell commands, whole
 * files read and written, inode flags, the module's counters in sysfs, the
 * running kernel's version, and a watchdog that runs forked workers and
 * fails the run with a reason when they stop making progress.
 *
 * Everything is static and each program takes what it needs; the
 * generator's state is the including program's own.
 */
#ifndef EXT4DEC_TESTLIB_H
#define EXT4DEC_TESTLIB_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
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
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Is the running kernel at least @major.@minor? */
static inline int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0;
	return ma > major || (ma == major && mi >= minor);
}

/* Print a TAP diagnostic line ("# ..."). */
static inline void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * vdiag_capped() - a diagnostic "@who: MESSAGE", MESSAGE made of @fmt and
 * @ap (@who NULL: MESSAGE alone), printed only if fewer than @max calls
 * came before it.  *@count counts the calls; it may be in memory shared
 * by several processes.  For a program's failures: each keeps its own
 * count of them, and a flood of one bug does not bury the others.
 */
static inline void vdiag_capped(int *count, int max, const char *who,
				const char *fmt, va_list ap)
{
	char msg[512];

	if (__atomic_fetch_add(count, 1, __ATOMIC_RELAXED) >= max)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (who)
		diag("%s: %s", who, msg);
	else
		diag("%s", msg);
}

/* vdiag_capped() without a @who */
static inline void __attribute__((format(printf, 3, 4)))
diag_capped(int *count, int max, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag_capped(count, max, NULL, fmt, ap);
	va_end(ap);
}

/* xorshift64*; the state must not be zero (see rng_seed()) */
static uint64_t rng_state = 1;

static inline uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Start the sequence of rng() that @seed names (any value). */
static inline void rng_seed(uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ULL | 1;
}

/* Words of assembly text, for test data that compresses like code */
static const char *const code_words[16] = {
	"mov ", "call ", "ret\n", "push ", "%rax", "%rbx", ", ", "0x",
	"jmp ", "lea ", "ext4", "szip", "chunk", "\n", "\t", "page",
};

/*
 * Fill @p with @n bytes named by @seed that compress like code: words of
 * assembly text, with stray bytes and x86 call opcodes (0xE8) for the
 * branch filter to find.  Reseeds rng().
 */
static inline void gen_data(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i = 0;

	rng_seed(seed);
	while (i < n) {
		uint64_t r = rng();
		const char *w;

		if (r % 5 == 0) {
			p[i++] = (uint8_t)(r >> 8);
			if (i < n && r % 3 == 0)
				p[i++] = 0xE8;
			continue;
		}
		w = code_words[(r >> 16) % 16];
		for (size_t k = 0; w[k] && i < n; k++)
			p[i++] = (uint8_t)w[k];
	}
}

/* Run a shell command; return its exit status, -1 if it did not exit. */
static inline int __attribute__((format(printf, 1, 2)))
run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int s;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	s = system(cmd);
	return s == -1 || !WIFEXITED(s) ? -1 : WEXITSTATUS(s);
}

/*
 * Read all of @fd from offset 0, up to EOF even if the file grew or
 * shrank since fstat(); *@n gets the length (0 on error).  Return: a malloc()ed
 * buffer, NULL on error (errno set).
 */
static inline uint8_t *read_fd(int fd, size_t *n)
{
	struct stat sb;
	size_t done = 0, cap;
	uint8_t *p;

	*n = 0;
	if (fstat(fd, &sb))
		return NULL;
	cap = sb.st_size + 1;
	p = malloc(cap);
	while (p) {
		ssize_t r = pread(fd, p + done, cap - done, done);

		if (r < 0) {
			free(p);
			return NULL;
		}
		if (!r)
			break;
		done += r;
		if (done == cap) {
			uint8_t *q = realloc(p, cap *= 2);

			if (!q)
				free(p);
			p = q;
		}
	}
	*n = done;
	return p;
}

/* read_fd() of the file @name */
static inline uint8_t *read_all(const char *name, size_t *n)
{
	int fd = open(name, O_RDONLY);
	uint8_t *p;

	*n = 0;
	if (fd < 0)
		return NULL;
	p = read_fd(fd, n);
	close(fd);
	return p;
}

/*
 * "@parent/@name", in one of 8 static buffers taken in turn: it stays
 * good for the next 7 calls.
 */
static inline char *path_in(const char *parent, const char *name)
{
	static char bufs[8][512];
	static unsigned int n;
	char *p = bufs[n++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", parent, name);
	return p;
}

/*
 * Write @n bytes of @p to the file @name, created (0644) or truncated.
 * With @sync, fsync() it too: a write-back error shows here, and the
 * bytes are on disk before what comes next; without, they may still be
 * dirty in the page cache, for chattr +c to write back.
 * Return: 0, or -1 (errno set).
 */
static inline int write_file(const char *name, const void *p, size_t n,
			     bool sync)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644), err = 0;
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, p, n);
	if (w < 0)
		err = errno;
	else if (w != (ssize_t)n)
		err = EIO;	/* short write */
	if (sync && fsync(fd) && !err)
		err = errno;
	if (close(fd) && !err)
		err = errno;
	errno = err;
	return err ? -1 : 0;
}

/* Get @name's inode flags (FS_IOC_GETFLAGS).  Return: 0 or an errno. */
static inline int get_flags(const char *name, int *flags)
{
	int fd = open(name, O_RDONLY | O_NONBLOCK), ret = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, flags))
		ret = errno;
	close(fd);
	return ret;
}

/* Set the inode flags @add and clear @remove.  Return: 0 or an errno. */
static inline int change_flags(const char *name, int add, int remove)
{
	int fd = open(name, O_RDONLY | O_NONBLOCK), flags, ret = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		ret = errno;
	} else {
		flags = (flags | add) & ~remove;
		if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
			ret = errno;
	}
	close(fd);
	return ret;
}

/* chattr +c (@on) or -c of @name.  Return: 0 or an errno. */
static inline int set_compr(const char *name, int on)
{
	return on ? change_flags(name, FS_COMPR_FL, 0) :
		    change_flags(name, 0, FS_COMPR_FL);
}

/* The number in @dir/@name (a sysfs file); -1 if unreadable. */
static inline long long sysfs_number(const char *dir, const char *name)
{
	char p[256];
	long long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The module's counter /sys/kernel/ext4dec/@name; -1 if unreadable. */
static inline long long counter(const char *name)
{
	return sysfs_number("/sys/kernel/ext4dec", name);
}

/* Have the kernel log its blocked tasks (sysrq w), for a watchdog. */
static inline void show_blocked_tasks(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "w", 1) != 1)
			diag("sysrq: %s", strerror(errno));
		close(fd);
	}
}

/* CLOCK_MONOTONIC in seconds */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------ watchdog and TAP results */

/*
 * What a program's processes share for the watchdog, in one anonymous
 * shared mapping made by the first process that asks (watchdog_area()),
 * before watchdog_run() forks its workers.  The program's own shared
 * counters, if any, stay in a mapping of its own.
 */
struct watchdog {
	volatile unsigned long progress;	/* bumped by watchdog_progress() */
	int results;		/* TAP results so far (tap_result()), all processes */
	bool shared;		/* false: mmap() failed, this process's copy */
	char where[256];	/* what the last watchdog_progress() said */
};

static inline struct watchdog *watchdog_area(void)
{
	static struct watchdog private, *area;

	if (!area) {
		area = mmap(NULL, sizeof(*area), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED)
			area = &private;
		else
			area->shared = true;
	}
	return area;
}

/*
 * Print the TAP result "ok N ..." (@ok) or "not ok N ...", N numbered
 * after the results printed before it by this program, forked workers
 * included; the rest of the line is made of @fmt: the test's name, maybe
 * a "# SKIP ..." or a "# reason".
 */
static inline void __attribute__((format(printf, 2, 3)))
tap_result(bool ok, const char *fmt, ...)
{
	int n = __atomic_add_fetch(&watchdog_area()->results, 1, __ATOMIC_RELAXED);
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The TAP plan, "1..N" for the N results of tap_result() (last). */
static inline void tap_plan(void)
{
	printf("1..%d\n", __atomic_load_n(&watchdog_area()->results, __ATOMIC_RELAXED));
	fflush(stdout);
}

/*
 * For the workers of watchdog_run(): they are making progress, now at
 * what @fmt says (shown if they stop there).
 */
static inline void __attribute__((format(printf, 1, 2)))
watchdog_progress(const char *fmt, ...)
{
	struct watchdog *wd = watchdog_area();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(wd->where, sizeof(wd->where), fmt, ap);
	va_end(ap);
	__atomic_fetch_add(&wd->progress, 1, __ATOMIC_RELAXED);
}

#define WATCHDOG_MAX_WORKERS	64

/**
 * watchdog_run() - run forked workers and wait for them, under a watchdog
 * @name: the TAP test that a stall fails
 * @nr_workers: how many workers (at most WATCHDOG_MAX_WORKERS)
 * @stall: seconds without a watchdog_progress() of any worker that make
 *	a stall (0: no watchdog)
 * @fn: worker @i (0 to @nr_workers - 1) runs @fn(@i, @arg) and exits
 *	with what it returns
 * @arg: for @fn
 *
 * On a stall: a diagnostic of where the workers were, the kernel's
 * blocked tasks logged (sysrq w), every worker killed, then "not ok N
 * @name # ..." and the plan "1..N" printed, so that the TAP stream ends
 * failed with the reason.  A worker killed by a signal gets a diagnostic.
 *
 * Return: -1 after a stall (the caller exits, with 1); 0 if every worker
 * exited with 0, else 1.
 */
static inline int watchdog_run(const char *name, int nr_workers,
			       unsigned int stall, int (*fn)(int, void *),
			       void *arg)
{
	struct watchdog *wd = watchdog_area();
	unsigned long last = wd->progress;
	int left = 0, bad = 0, s;
	pid_t pids[WATCHDOG_MAX_WORKERS];
	double seen;

	if (nr_workers > WATCHDOG_MAX_WORKERS)
		nr_workers = WATCHDOG_MAX_WORKERS;
	if (!wd->shared)
		stall = 0;	/* the workers' progress would not be seen */
	fflush(NULL);
	for (int i = 0; i < nr_workers; i++) {
		pids[i] = fork();
		if (!pids[i])
			_exit(fn(i, arg));
		if (pids[i] < 0) {
			diag("%s: fork: %s", name, strerror(errno));
			bad = 1;
			continue;
		}
		left++;
	}
	seen = now();
	while (left) {
		for (int i = 0; i < nr_workers; i++) {
			if (pids[i] <= 0 || waitpid(pids[i], &s, WNOHANG) != pids[i])
				continue;
			if (WIFSIGNALED(s))
				diag("%s: worker %d killed by signal %d", name, i,
				     WTERMSIG(s));
			if (!WIFEXITED(s) || WEXITSTATUS(s))
				bad = 1;
			pids[i] = 0;
			left--;
		}
		if (!left)
			break;
		if (wd->progress != last) {
			last = wd->progress;
			seen = now();
		} else if (stall && now() - seen > stall) {
			diag("%s: no progress for %u s at %s: a stuck folio lock? blocked tasks in dmesg",
			     name, stall, wd->where);
			show_blocked_tasks();
			for (int i = 0; i < nr_workers; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
			tap_result(false, "%s # no progress for %u s", name, stall);
			tap_plan();
			return -1;
		}
		usleep(200000);
	}
	return bad;
}

#endif /* EXT4DEC_TESTLIB_H */
