/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/lib/testlib.h - helpers shared by the test programs: the module's
 * selftests and the stress programs run in the VM, and the hostile-file
 * generator on the host.  TAP diagnostics, a seeded pseudo-random
 * generator, test data that compresses like code, shell commands, whole
 * files, inode flags, the module's counters in sysfs and the running
 * kernel's version.
 *
 * Everything is static and each program takes what it needs; the
 * generator's state is the including program's own.
 */
#ifndef EXT4DEC_TESTLIB_H
#define EXT4DEC_TESTLIB_H

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

#endif /* EXT4DEC_TESTLIB_H */
