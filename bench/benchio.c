// SPDX-License-Identifier: GPL-2.0
/*
 * benchio - the benchmark's workloads, run inside the guest.
 *
 *   benchio [options] seq FILE           read() the whole file, 128 KiB at a time
 *   benchio [options] sendfile FILE      sendfile() the whole file to /dev/null,
 *                                        1 MiB a call (the splice path, as
 *                                        cat and cp copy files)
 *   benchio [options] rand FILE COUNT    COUNT preads of 4 KiB at random
 *                                        page-aligned offsets; latency
 *                                        percentiles
 *   benchio [options] mmap FILE          map the file, touch every page once
 *                                        in a scattered, ld.so-like order
 *   benchio [options] replay FILE TRACE  map the file, touch its pages in the
 *                                        order of TRACE (lines "FIRST COUNT":
 *                                        runs of pages; bench/firefox-libxul.trace
 *                                        is Firefox's start)
 *   benchio [options] sum FILE           print a checksum of the contents
 *   benchio [options] exec CMD [ARG]...  run CMD, report its time and CPU
 *   benchio drop                         sync and drop the caches
 *
 * Options:
 *   -c        cold: sync and drop the page, dentry and inode caches first
 *   -D        rand: open the file with O_DIRECT (the reads go to the device)
 *   -d DEV    report the bytes read from block device DEV (e.g. vdb,
 *             /sys/block/DEV/stat) during the run
 *   -k BYTES  rand, replay: also report how many distinct BYTES-sized
 *             chunks the reads touched (touched_chunks)
 *   -s SEED   seed of rand and mmap (default 1)
 *   -t TAG    copied to the result line
 *
 * Result: one line on stdout, "BENCH tag=... mode=... key=value ...":
 *   ns (wall time), bytes (bytes read or touched), user_ns and sys_ns (CPU
 *   time of this process and of waited-for children), majflt, dev_bytes,
 *   dev_ios (read requests) and dev_busy_ns (time the device had requests
 *   in flight), cached_kb (growth of Cached in /proc/meminfo), ext4dec counters
 *   (chunks, ubytes, cbytes, hits: growth of chunks_inflated,
 *   uncompressed_bytes, compressed_bytes and cache_hits in
 *   /sys/kernel/ext4dec, if loaded), busy_ns (time
 *   all CPUs spent outside idle and iowait, from /proc/stat: work done for
 *   the run by kernel threads and interrupts too), and for rand p50_ns,
 *   p99_ns, max_ns.
 *
 * The same seed gives the same offsets and the same page order on every
 * machine.  Exit status: 0 success, 1 error, 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096u
#define SEQ_BUF		(128u * 1024)

static const char *tag = "-";
static const char *dev;
static uint64_t seed = 1;
static uint64_t chunk_bytes;
static int cold;
static int open_flags;	/* -D: O_DIRECT */

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("benchio: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: small, and the same sequence everywhere */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545F4914F6CDD1DULL;
}

static void rnd_seed(uint64_t s)
{
	rnd_state = s * 0x9E3779B97F4A7C15ULL + 1;
	if (!rnd_state)
		rnd_state = 1;
}

/* A uniform integer in [0, n) */
static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* First number of a one-line file, or -1 if it cannot be read. */
static long long read_number(const char *path)
{
	char buf[64];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

/*
 * From /sys/block/DEV/stat: read requests completed (field 1), sectors
 * read (3), milliseconds the device had requests in flight (10).  -1 each
 * without a device.
 */
static void dev_stat(long long *ios, long long *sectors, long long *busy_ms)
{
	unsigned long long f[10];
	char path[256];
	FILE *fp;
	int n;

	*ios = *sectors = *busy_ms = -1;
	if (!dev)
		return;
	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	fp = fopen(path, "r");
	if (!fp)
		die("%s: %s", path, strerror(errno));
	n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]);
	fclose(fp);
	if (n != 10)
		die("%s: unexpected contents", path);
	*ios = (long long)f[0];
	*sectors = (long long)f[2];
	*busy_ms = (long long)f[9];
}

/* "Cached:" of /proc/meminfo in KiB */
static long long cached_kb(void)
{
	char line[256];
	long long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Cached: %lld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Busy time of all CPUs in USER_HZ ticks: /proc/stat "cpu" minus idle, iowait */
static long long cpu_busy_ticks(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return -1;
	/* user nice system idle iowait irq softirq steal */
	return (long long)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
}

struct snap {
	uint64_t ns;
	long long busy;
	long long ios, sectors, dev_busy_ms, cached;
	long long chunks, ubytes, cbytes, hits;
	struct rusage self, children;
};

static void snapshot(struct snap *s)
{
	dev_stat(&s->ios, &s->sectors, &s->dev_busy_ms);
	s->cached = cached_kb();
	s->chunks = read_number("/sys/kernel/ext4dec/chunks_inflated");
	s->ubytes = read_number("/sys/kernel/ext4dec/uncompressed_bytes");
	s->cbytes = read_number("/sys/kernel/ext4dec/compressed_bytes");
	s->hits = read_number("/sys/kernel/ext4dec/cache_hits");
	getrusage(RUSAGE_SELF, &s->self);
	getrusage(RUSAGE_CHILDREN, &s->children);
	s->busy = cpu_busy_ticks();
	s->ns = now_ns();
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

static void drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		die("/proc/sys/vm/drop_caches: %s", strerror(errno));
	if (write(fd, "3\n", 2) != 2)
		die("drop_caches: %s", strerror(errno));
	close(fd);
}

/* Print the result line: deltas between @a and @b, then @extra. */
static void report(const char *mode, const struct snap *a, const struct snap *b,
		   uint64_t bytes, const char *extra)
{
	uint64_t user = tv_ns(&b->self.ru_utime) - tv_ns(&a->self.ru_utime) +
			tv_ns(&b->children.ru_utime) - tv_ns(&a->children.ru_utime);
	uint64_t sys = tv_ns(&b->self.ru_stime) - tv_ns(&a->self.ru_stime) +
		       tv_ns(&b->children.ru_stime) - tv_ns(&a->children.ru_stime);
	long majflt = b->self.ru_majflt - a->self.ru_majflt +
		      b->children.ru_majflt - a->children.ru_majflt;

	printf("BENCH tag=%s mode=%s cold=%d ns=%" PRIu64 " bytes=%" PRIu64
	       " user_ns=%" PRIu64 " sys_ns=%" PRIu64 " majflt=%ld",
	       tag, mode, cold, b->ns - a->ns, bytes, user, sys, majflt);
	if (a->sectors >= 0)
		printf(" dev_bytes=%lld dev_ios=%lld dev_busy_ns=%lld",
		       (b->sectors - a->sectors) * 512, b->ios - a->ios,
		       (b->dev_busy_ms - a->dev_busy_ms) * 1000000);
	printf(" cached_kb=%lld", b->cached - a->cached);
	if (a->busy >= 0 && b->busy >= 0)
		printf(" busy_ns=%lld", (b->busy - a->busy) * (1000000000LL / sysconf(_SC_CLK_TCK)));
	if (a->chunks >= 0 && b->chunks >= 0)
		printf(" chunks=%lld ubytes=%lld cbytes=%lld", b->chunks - a->chunks,
		       b->ubytes - a->ubytes, b->cbytes - a->cbytes);
	if (a->hits >= 0 && b->hits >= 0)
		printf(" hits=%lld", b->hits - a->hits);
	if (extra && *extra)
		printf(" %s", extra);
	putchar('\n');
	fflush(stdout);
}

static int open_file(const char *path, off_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | open_flags);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	if (fstat(fd, &st))
		die("%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("%s: not a regular file", path);
	*size = st.st_size;
	return fd;
}

static void do_seq(const char *path)
{
	static char buf[SEQ_BUF];
	struct snap a, b;
	uint64_t total = 0;
	off_t size;
	ssize_t n;
	int fd;

	snapshot(&a);
	fd = open_file(path, &size);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (uint64_t)n;
	if (n < 0)
		die("%s: read: %s", path, strerror(errno));
	close(fd);
	snapshot(&b);
	if (total != (uint64_t)size)
		die("%s: read %" PRIu64 " bytes, size %lld", path, total, (long long)size);
	report("seq", &a, &b, total, NULL);
}

static void do_sendfile(const char *path)
{
	struct snap a, b;
	uint64_t total = 0;
	off_t size;
	int fd, out;
	ssize_t n;

	out = open("/dev/null", O_WRONLY);
	if (out < 0)
		die("/dev/null: %s", strerror(errno));
	snapshot(&a);
	fd = open_file(path, &size);
	while ((n = sendfile(out, fd, NULL, 1u << 20)) > 0)
		total += (uint64_t)n;
	if (n < 0)
		die("%s: sendfile: %s", path, strerror(errno));
	close(fd);
	snapshot(&b);
	close(out);
	if (total != (uint64_t)size)
		die("%s: sendfile gave %" PRIu64 " of %lld bytes", path, total, (long long)size);
	report("sendfile", &a, &b, total, NULL);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The p-th percentile (nearest rank) of sorted @v[n] */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned int p)
{
	size_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* Distinct chunk_bytes-sized chunks of a file of @size among marked offsets */
struct chunk_set {
	uint64_t *bits;
	uint64_t count;
};

static void chunk_set_init(struct chunk_set *cs, uint64_t size)
{
	uint64_t n = chunk_bytes ? (size + chunk_bytes - 1) / chunk_bytes : 0;

	cs->count = 0;
	cs->bits = calloc(n / 64 + 1, sizeof(*cs->bits));
	if (!cs->bits)
		die("out of memory");
}

static void chunk_set_mark(struct chunk_set *cs, uint64_t off)
{
	uint64_t c;

	if (!chunk_bytes)
		return;
	c = off / chunk_bytes;
	if (!(cs->bits[c / 64] & (1ULL << (c % 64))))
		cs->count++;
	cs->bits[c / 64] |= 1ULL << (c % 64);
}

static void do_rand(const char *path, const char *count_s)
{
	/* aligned for O_DIRECT (-D) */
	static char buf[PAGE] __attribute__((aligned(PAGE)));
	char extra[200];
	struct snap a, b;
	struct chunk_set chunks;
	uint64_t *lat, pages;
	unsigned long count, i;
	off_t size;
	char *end;
	int fd;

	count = strtoul(count_s, &end, 10);
	if (*end || !count || count > 10000000)
		die("bad COUNT '%s'", count_s);
	lat = calloc(count, sizeof(*lat));
	if (!lat)
		die("out of memory");
	rnd_seed(seed);
	snapshot(&a);
	fd = open_file(path, &size);
	pages = ((uint64_t)size + PAGE - 1) / PAGE;
	for (i = 0; i < count; i++) {
		off_t off = (off_t)(rnd_below(pages) * PAGE);
		uint64_t t0 = now_ns();
		ssize_t n = pread(fd, buf, PAGE, off);

		lat[i] = now_ns() - t0;
		if (n < 0)
			die("%s: pread at %lld: %s", path, (long long)off, strerror(errno));
	}
	close(fd);
	snapshot(&b);
	/* replay the offsets: distinct chunks touched */
	chunk_set_init(&chunks, (uint64_t)size);
	rnd_seed(seed);
	for (i = 0; i < count; i++)
		chunk_set_mark(&chunks, rnd_below(pages) * PAGE);
	free(chunks.bits);
	qsort(lat, count, sizeof(*lat), cmp_u64);
	snprintf(extra, sizeof(extra), "count=%lu p50_ns=%" PRIu64 " p99_ns=%" PRIu64
		 " max_ns=%" PRIu64 " touched_chunks=%" PRIu64, count,
		 percentile(lat, count, 50), percentile(lat, count, 99),
		 lat[count - 1], chunks.count);
	report("rand", &a, &b, (uint64_t)count * PAGE, extra);
	free(lat);
}

/*
 * The order in which ld.so and the first run of a large library touch its
 * pages: runs of 1..16 consecutive pages (a function and its callees, a
 * relocation table), the runs visited in a random order.  Every page is in
 * exactly one run.
 */
static uint64_t *scattered_order(uint64_t pages)
{
	uint64_t *order = malloc(pages * sizeof(*order));
	uint64_t *run_start = malloc((pages + 1) * sizeof(*run_start));
	uint64_t nruns = 0, p = 0, i, k = 0;

	if (!order || !run_start)
		die("out of memory");
	while (p < pages) {
		run_start[nruns++] = p;
		p += 1 + rnd_below(16);
	}
	run_start[nruns] = pages;
	/* visit run r in a shuffled order; keep each run's end */
	{
		uint64_t *perm = malloc(nruns * sizeof(*perm));

		if (!perm)
			die("out of memory");
		for (i = 0; i < nruns; i++)
			perm[i] = i;
		for (i = nruns - 1; i > 0; i--) {
			uint64_t j = rnd_below(i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (i = 0; i < nruns; i++) {
			uint64_t r = perm[i], q;
			uint64_t end = run_start[r + 1] < pages ? run_start[r + 1] : pages;

			for (q = run_start[r]; q < end; q++)
				order[k++] = q;
		}
		free(perm);
	}
	free(run_start);
	if (k != pages)
		die("internal error: %" PRIu64 " of %" PRIu64 " pages ordered", k, pages);
	return order;
}

/*
 * Map @path privately and read one byte of each page @order[0..@n) in
 * turn, between snapshots @a and @b.  Return: the sum of the bytes.
 */
static unsigned int touch_in_order(const char *path, const uint64_t *order,
				   uint64_t n, struct snap *a, struct snap *b)
{
	volatile const unsigned char *map;
	unsigned int sum = 0;
	uint64_t i;
	off_t size;
	int fd;

	snapshot(a);
	fd = open_file(path, &size);
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		die("%s: mmap: %s", path, strerror(errno));
	close(fd);
	for (i = 0; i < n; i++)
		sum += map[order[i] * PAGE];
	munmap((void *)map, (size_t)size);
	snapshot(b);
	return sum;
}

static void do_mmap(const char *path)
{
	struct snap a, b;
	uint64_t pages, *order;
	unsigned int sum = 0;
	char extra[64];
	off_t size;
	int fd;

	rnd_seed(seed);
	fd = open_file(path, &size);
	close(fd);
	pages = ((uint64_t)size + PAGE - 1) / PAGE;
	if (!pages)
		die("%s: empty file", path);
	order = scattered_order(pages);
	sum = touch_in_order(path, order, pages, &a, &b);
	snprintf(extra, sizeof(extra), "pages=%" PRIu64 " touch=%u", pages, sum & 0xff);
	report("mmap", &a, &b, pages * PAGE, extra);
	free(order);
}

/*
 * Pages in the order of @trace: lines "FIRST COUNT" (runs of pages), "#"
 * comments; pages at or past @pages are left out.  Sets *@n.
 */
static uint64_t *read_trace(const char *trace, uint64_t pages, uint64_t *n)
{
	FILE *f = fopen(trace, "r");
	uint64_t *order = NULL, cap = 0, first, count, p;
	char line[256];
	int lineno = 0;

	if (!f)
		die("%s: %s", trace, strerror(errno));
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%" SCNu64 " %" SCNu64, &first, &count) != 2 || !count)
			die("%s:%d: not \"FIRST COUNT\"", trace, lineno);
		for (p = first; p < first + count && p < pages; p++) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 4096;
				order = realloc(order, cap * sizeof(*order));
				if (!order)
					die("out of memory");
			}
			order[(*n)++] = p;
		}
	}
	fclose(f);
	if (!*n)
		die("%s: no page of the file in the trace", trace);
	return order;
}

static void do_replay(const char *path, const char *trace)
{
	struct chunk_set chunks;
	struct snap a, b;
	uint64_t pages, i, n, *order;
	unsigned int sum = 0;
	char extra[128];
	off_t size;
	int fd;

	fd = open_file(path, &size);
	close(fd);
	pages = ((uint64_t)size + PAGE - 1) / PAGE;
	order = read_trace(trace, pages, &n);
	chunk_set_init(&chunks, (uint64_t)size);
	for (i = 0; i < n; i++)
		chunk_set_mark(&chunks, order[i] * PAGE);
	sum = touch_in_order(path, order, n, &a, &b);
	snprintf(extra, sizeof(extra), "pages=%" PRIu64 " touched_chunks=%" PRIu64 " touch=%u",
		 n, chunks.count, sum & 0xff);
	report("replay", &a, &b, n * PAGE, extra);
	free(chunks.bits);
	free(order);
}

/* 64-bit FNV-1a over 8-byte little-endian words (tail zero-padded) */
static void do_sum(const char *path)
{
	static unsigned char buf[SEQ_BUF];
	uint64_t h = 0xcbf29ce484222325ULL, total = 0;
	off_t size;
	ssize_t n;
	int fd = open_file(path, &size);

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		size_t i;

		if (n % 8)
			memset(buf + n, 0, 8 - (size_t)(n % 8));
		for (i = 0; i < (size_t)n; i += 8) {
			uint64_t w = 0;
			int k;

			for (k = 7; k >= 0; k--)
				w = (w << 8) | buf[i + (size_t)k];
			h = (h ^ w) * 0x100000001b3ULL;
		}
		total += (uint64_t)n;
	}
	if (n < 0)
		die("%s: read: %s", path, strerror(errno));
	close(fd);
	printf("SUM tag=%s bytes=%" PRIu64 " fnv=%016" PRIx64 "\n", tag, total, h);
}

static void do_exec(char **argv)
{
	struct snap a, b;
	char extra[32];
	int status;
	pid_t pid;

	snapshot(&a);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "benchio: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	snapshot(&b);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s failed (status %d)", argv[0], status);
	snprintf(extra, sizeof(extra), "status=%d", WEXITSTATUS(status));
	report("exec", &a, &b, 0, extra);
}

static void usage(int rc)
{
	fputs("usage: benchio [-c] [-d DEV] [-k CHUNK] [-s SEED] [-t TAG] seq|sendfile|mmap|sum FILE\n"
	      "       benchio [-c] [-D] [-d DEV] [-k CHUNK] [-s SEED] [-t TAG] rand FILE COUNT\n"
	      "       benchio [-c] [-d DEV] [-k CHUNK] [-t TAG] replay FILE TRACE\n"
	      "       benchio [-c] [-d DEV] [-t TAG] exec CMD [ARG]...\n"
	      "       benchio drop\n", rc ? stderr : stdout);
	exit(rc);
}

int main(int argc, char **argv)
{
	const char *mode;
	int c;

	while ((c = getopt(argc, argv, "+cDd:hk:s:t:")) != -1) {
		switch (c) {
		case 'c': cold = 1; break;
		case 'D': open_flags = O_DIRECT; break;
		case 'd': dev = optarg; break;
		case 'k': chunk_bytes = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': tag = optarg; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind >= argc)
		usage(2);
	mode = argv[optind++];
	if (!strcmp(mode, "drop")) {
		drop_caches();
		return 0;
	}
	if (optind >= argc)
		usage(2);
	if (!strcmp(mode, "exec")) {
		if (cold)
			drop_caches();
		do_exec(argv + optind);
		return 0;
	}
	if (open_flags && strcmp(mode, "rand"))
		usage(2);	/* -D: rand only */
	if (cold)
		drop_caches();
	if (!strcmp(mode, "seq") && argc - optind == 1)
		do_seq(argv[optind]);
	else if (!strcmp(mode, "rand") && argc - optind == 2)
		do_rand(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "mmap") && argc - optind == 1)
		do_mmap(argv[optind]);
	else if (!strcmp(mode, "sendfile") && argc - optind == 1)
		do_sendfile(argv[optind]);
	else if (!strcmp(mode, "replay") && argc - optind == 2)
		do_replay(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "sum") && argc - optind == 1)
		do_sum(argv[optind]);
	else
		usage(2);
	return 0;
}
