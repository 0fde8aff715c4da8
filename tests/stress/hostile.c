// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec_hostile - feed malformed and odd szip files to the module (run as
 * root in the test VM, ext4dec loaded).
 *
 * Usage: ext4dec_hostile SRCDIR DSTDIR [-s SEED] [-p PREADS] [-j JOBS]
 *                       [-m MUTATIONS] [-t STALL]
 *
 * SRCDIR holds the files written by gen_hostile and their MANIFEST; DSTDIR
 * is a directory on ext4.  For each file: the reference decode is computed
 * with the userspace szip library and checked against the generator's
 * (size, bad chunks, hash); the file is copied into DSTDIR (zero blocks
 * written, left as holes or preallocated as unwritten extents, in turn);
 * FS_IOC_SETFLAGS sets FS_COMPR_FL, which must succeed or fail with EINVAL
 * as the manifest allows (or, before Linux 6.12, whose zstd cannot use a
 * dictionary, with EOPNOTSUPP for a zstd file with one).  A refused file must read
 * back raw, without +c.  An activated one must have the uncompressed size
 * and be read with read(), through a whole-file mapping
 * (SIGBUS caught page by page), with random pread()s at a fixed seed and
 * with an O_DIRECT read, dropping its page cache in between: every read
 * must return the reference bytes, or fail with EIO exactly where a chunk
 * that does not decode starts (a short read stops there; a mapped page of
 * such a chunk raises SIGBUS).  Anything else fails the file.
 *
 * The work runs in JOBS children (default 1), each taking every JOBS-th
 * file; if none makes progress for STALL seconds (default 300; 0: no
 * watchdog) the parent dumps the blocked tasks (sysrq w) and fails.  -m
 * checks only the first MUTATIONS of the randomly mutated files (a shorter
 * run); PREADS random reads per file (default 24).  Prints TAP: one test per class of files,
 * and the counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "szref.h"
#include "../lib/testlib.h"

#define PAGE		4096UL
/* files larger than this are read in samples */
#define FULL_READ_MAX	(2UL << 20)
#define MAX_DIAG	30

enum { C_VALID, C_HEADER, C_TABLE, C_STREAM, C_FILTER, C_MUTATION, C_OTHER,
       NR_CLASSES };

static const char *const class_names[NR_CLASSES] = {
	"valid", "header", "table", "stream", "filter", "mutation", "other",
};

struct counts {
	unsigned long files, activated, refused, reads, eio, sigbus, short_reads;
	unsigned long failed;
};

/* shared by the workers and the parent (the watchdog's area is apart) */
struct shared {
	int ndiag;
	struct counts c[NR_CLASSES];
};

#define inc(field)	__atomic_fetch_add(&sh->c[cur_class].field, 1, __ATOMIC_RELAXED)

static struct shared *sh;
static const char *srcdir, *dstdir;
/* the kernel's zstd takes dictionaries (6.12 and later) */
static bool zstd_dicts;
static unsigned long preads_per_file = 24;
static u64 seed = 1;
static unsigned long max_mutations = ~0UL;
static unsigned long jobs = 1;
static struct szip_decoder *dec;

/* the file being checked */
static const char *cur_name, *cur_what;
static int cur_class;
static bool cur_failed;

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	char who[384];
	va_list ap;

	if (!cur_failed)
		inc(failed);
	cur_failed = true;
	snprintf(who, sizeof(who), "%s (%s)", cur_name, cur_what);
	va_start(ap, fmt);
	vdiag_capped(&sh->ndiag, MAX_DIAG, who, fmt, ap);
	va_end(ap);
}

static bool zero_block(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Copy @n bytes to @name.  Whole zero blocks are written (@mode 0), left
 * as holes (1) or preallocated, unwritten (2).
 */
static int copy_in(const char *name, const u8 *p, size_t n, int mode)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t off;

	if (fd < 0)
		return -1;
	for (off = 0; off < n; off += PAGE) {
		size_t k = n - off < PAGE ? n - off : PAGE;

		if (mode && k == PAGE && zero_block(p + off, k)) {
			if (mode == 2 && fallocate(fd, 0, off, k))
				goto err;
			continue;
		}
		if (pwrite(fd, p + off, k, off) != (ssize_t)k)
			goto err;
	}
	if (ftruncate(fd, n))
		goto err;
	return close(fd);
err:
	close(fd);
	return -1;
}

static bool bad_at(const struct ref *r, u64 pos)
{
	return pos < r->info.size && r->bad[pos / r->info.chunk_size];
}

/*
 * Check one read of @len bytes at @off that returned @got (errno @err)
 * into @buf.  @how names the kind of read.
 */
static void check_read(const struct ref *r, const char *how, u64 off,
		       size_t len, ssize_t got, int err, const u8 *buf)
{
	u64 size = r->info.size;
	size_t want = off >= size ? 0 : (len < size - off ? len : size - off);

	inc(reads);
	if (got < 0) {
		if (err != EIO)
			fail("%s(%zu at %llu): %s", how, len,
			     (unsigned long long)off, strerror(err));
		else if (!bad_at(r, off))
			fail("%s(%zu at %llu): EIO, but chunk %llu decodes", how,
			     len, (unsigned long long)off,
			     (unsigned long long)(off / r->info.chunk_size));
		inc(eio);
		return;
	}
	if ((size_t)got > want) {
		fail("%s(%zu at %llu) = %zd, more than the %zu bytes there", how,
		     len, (unsigned long long)off, got, want);
		return;
	}
	if (got && memcmp(buf, r->data + off, got)) {
		size_t d = 0;

		while (buf[d] == r->data[off + d])
			d++;
		fail("%s(%zu at %llu) = %zd: wrong bytes from %llu (chunk %llu, %s)",
		     how, len, (unsigned long long)off, got,
		     (unsigned long long)(off + d),
		     (unsigned long long)((off + d) / r->info.chunk_size),
		     bad_at(r, off + d) ? "bad" : "good");
		return;
	}
	if ((size_t)got < want) {
		if (!got || !bad_at(r, off + got))
			fail("%s(%zu at %llu) = %zd, short of %zu, not at a bad chunk",
			     how, len, (unsigned long long)off, got, want);
		inc(short_reads);
	}
}

static void drop_file_cache(int fd)
{
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* read() from start to end, skipping over chunks that fail. */
static void check_read_all(const struct ref *r, int fd, u8 *buf)
{
	u64 size = r->info.size, pos = 0, step = 0;
	u64 cs = r->info.chunk_size;

	if (lseek(fd, 0, SEEK_SET))
		fail("lseek: %s", strerror(errno));
	while (pos < size) {
		size_t len = 4096 * (1 + step % 5) + (step % 3 ? 0 : 1000);
		ssize_t got;

		if (size > FULL_READ_MAX && step >= 64)
			break;
		step++;
		got = read(fd, buf, len);
		check_read(r, "read", pos, len, got, errno, buf);
		if (got > 0) {
			pos += got;
		} else {
			/* EIO (or a bogus 0): go on at the next chunk */
			pos = (pos / cs + 1) * cs;
			if (size > FULL_READ_MAX)
				pos += cs * (rng() % 64);
			if (lseek(fd, pos, SEEK_SET) != (off_t)pos) {
				fail("lseek: %s", strerror(errno));
				return;
			}
		}
	}
	if (pos >= size) {
		ssize_t got = read(fd, buf, 10);

		if (got != 0)
			fail("read at EOF (%llu) = %zd", (unsigned long long)size, got);
	}
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static void check_page(const struct ref *r, const volatile u8 *m, u64 p)
{
	u64 off = p * PAGE, size = r->info.size;
	size_t n = size - off < PAGE ? size - off : PAGE;
	u8 copy[PAGE];

	inc(reads);
	if (sigsetjmp(bus_jmp, 1)) {
		inc(sigbus);
		if (!bad_at(r, off))
			fail("mmap: SIGBUS at %llu, in chunk %llu that decodes",
			     (unsigned long long)off,
			     (unsigned long long)(off / r->info.chunk_size));
		return;
	}
	for (size_t i = 0; i < PAGE; i++)
		copy[i] = m[off + i];
	if (bad_at(r, off))
		fail("mmap: page at %llu of chunk %llu that does not decode is readable",
		     (unsigned long long)off,
		     (unsigned long long)(off / r->info.chunk_size));
	else if (memcmp(copy, r->data + off, n))
		fail("mmap: wrong bytes in the page at %llu", (unsigned long long)off);
	else if (!zero_block(copy + n, PAGE - n))
		fail("mmap: the last page is not zero after EOF");
}

static void check_mmap(const struct ref *r, int fd)
{
	u64 pages = (r->info.size + PAGE - 1) / PAGE, p;
	int flags = rng() & 1 ? MAP_SHARED : MAP_PRIVATE;
	u8 *m;

	m = mmap(NULL, pages * PAGE, PROT_READ, flags, fd, 0);
	if (m == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return;
	}
	if (r->info.size <= FULL_READ_MAX) {
		/* backwards every other time, as a loader might */
		bool back = rng() & 1;

		for (p = 0; p < pages; p++)
			check_page(r, m, back ? pages - 1 - p : p);
	} else {
		for (p = 0; p < 96; p++)
			check_page(r, m, p < 16 ? p : p < 32 ? pages - 1 - (p - 16) :
				   rng() % pages);
	}
	munmap(m, pages * PAGE);
}

/* Random pread()s, near chunk boundaries half of the time. */
static void check_preads(const struct ref *r, int fd, u8 *buf, size_t cap)
{
	u64 size = r->info.size, cs = r->info.chunk_size;

	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (unsigned long k = 0; k < preads_per_file; k++) {
		u64 off;
		size_t len;
		ssize_t got;

		if (rng() & 1)
			off = (rng() % (size / cs + 2)) * cs + rng() % 9 - 4;
		else
			off = rng() % (size + 2 * cs);
		if (off > size + 2 * cs)
			off = 0;	/* wrapped below 0 */
		switch (rng() % 4) {
		case 0:
			len = 1;
			break;
		case 1:
			len = PAGE;
			break;
		default:
			len = rng() % (3 * cs) + 1;
		}
		if (len > cap)
			len = cap;
		if (k % 8 == 7)
			drop_file_cache(fd);
		got = pread(fd, buf, len, off);
		check_read(r, "pread", off, len, got, errno, buf);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
}

/* One O_DIRECT read of up to 64 KiB at a random page. */
static void check_odirect(const struct ref *r, const char *name, u8 *buf)
{
	u64 pages = (r->info.size + PAGE - 1) / PAGE;
	u64 off = rng() % pages * PAGE;
	int fd = open(name, O_RDONLY | O_DIRECT);
	ssize_t got;

	if (fd < 0) {
		fail("open O_DIRECT: %s", strerror(errno));
		return;
	}
	got = pread(fd, buf, 65536, off);
	check_read(r, "pread O_DIRECT", off, 65536, got, errno, buf);
	close(fd);
}

static void check_active(const struct ref *r, const char *name, u8 *buf,
			 size_t cap)
{
	struct stat st;
	int fd, flags = 0;

	if (stat(name, &st) || (u64)st.st_size != r->info.size)
		fail("st_size %lld, expected %llu", (long long)st.st_size,
		     (unsigned long long)r->info.size);
	if (get_flags(name, &flags) || !(flags & FS_COMPR_FL))
		fail("+c not set after activation");
	fd = open(name, O_RDONLY);
	if (fd < 0) {
		fail("open: %s", strerror(errno));
		return;
	}
	watchdog_progress("%s: read", cur_name);
	check_read_all(r, fd, buf);
	drop_file_cache(fd);
	watchdog_progress("%s: mmap", cur_name);
	check_mmap(r, fd);
	drop_file_cache(fd);
	watchdog_progress("%s: pread", cur_name);
	check_preads(r, fd, buf, cap);
	close(fd);
	watchdog_progress("%s: O_DIRECT", cur_name);
	check_odirect(r, name, buf);
}

static void check_refused(const u8 *raw, size_t n, const char *name)
{
	size_t len;
	int flags = 0;
	u8 *back;

	if (get_flags(name, &flags) || (flags & FS_COMPR_FL))
		fail("refused, but +c is set");
	back = read_all(name, &len);
	if (!back || len != n || memcmp(back, raw, n))
		fail("refused, but does not read back raw (%zu bytes of %zu)",
		     back ? len : 0, n);
	free(back);
	inc(reads);
}

static int class_of(const char *what)
{
	for (int i = 0; i < C_OTHER; i++)
		if (!strncmp(what, class_names[i], strlen(class_names[i])))
			return i;
	return C_OTHER;
}

static void run_one(unsigned long idx, const char *name, const char *act,
		    unsigned long long size, unsigned int nr_bad,
		    unsigned long long hash, u8 *buf, size_t cap)
{
	char src[512], dst[512];
	struct ref r;
	size_t n;
	u8 *raw;
	int err;

	snprintf(src, sizeof(src), "%s/%s", srcdir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dstdir, name);
	inc(files);
	raw = read_all(src, &n);
	if (!raw) {
		fail("cannot read %s", src);
		return;
	}
	if (ref_compute(dec, raw, n, &r)) {
		fail("no reference decode (too large?)");
		free(raw);
		return;
	}
	if (strcmp(act, ref_act_names[r.act]) ||
	    (r.act != REF_REFUSE &&
	     (r.info.size != size || r.nr_bad != nr_bad || r.hash != hash))) {
		fail("the reference decode here (%s, %llu bytes, %u bad chunks) is not the generator's (%s, %llu, %u)",
		     ref_act_names[r.act], (unsigned long long)r.info.size,
		     r.nr_bad, act, size, nr_bad);
		goto out;
	}

	watchdog_progress("%s: copy", name);
	if (copy_in(dst, raw, n, idx % 3)) {
		fail("copy to %s: %s", dst, strerror(errno));
		goto out;
	}
	watchdog_progress("%s: chattr +c", name);
	err = set_compr(dst, 1);
	if (!err) {
		inc(activated);
		if (r.act == REF_REFUSE)
			fail("activated; the library refuses it: %s",
			     szip_strerror(r.err));
		else
			check_active(&r, dst, buf, cap);
	} else if (err == EINVAL ||
		   (err == EOPNOTSUPP && !zstd_dicts && ref_optional(raw, n))) {
		inc(refused);
		if (r.act == REF_ACCEPT && err == EINVAL)
			fail("refused (EINVAL); the library accepts it");
		check_refused(raw, n, dst);
	} else {
		fail("chattr +c: %s", strerror(err));
	}
	if (unlink(dst))
		fail("unlink: %s", strerror(errno));
out:
	ref_free(&r);
	free(raw);
}

/* Worker @worker: every jobs-th file of the manifest, from the @worker-th. */
static int run_all(int worker, void *arg)
{
	char line[1024], path[512];
	unsigned long idx = 0, mutations = 0;
	size_t cap = 4 << 20;
	u8 *buf;
	FILE *m;

	(void)arg;
	snprintf(path, sizeof(path), "%s/MANIFEST", srcdir);
	m = fopen(path, "r");
	if (!m) {
		diag("%s: %s", path, strerror(errno));
		return 1;
	}
	if (posix_memalign((void **)&buf, PAGE, cap))
		return 1;
	dec = malloc(szip_decoder_size());
	if (!dec || szip_decoder_init(dec))
		return 1;
	while (fgets(line, sizeof(line), m)) {
		char name[64], act[16], what[256];
		unsigned long long size, hash;
		unsigned int nr_bad;

		if (sscanf(line, "%63s %15s %llu %u %llx %255s", name, act, &size,
			   &nr_bad, &hash, what) != 6) {
			diag("bad manifest line: %s", line);
			return 1;
		}
		if (class_of(what) == C_MUTATION && mutations++ >= max_mutations)
			continue;
		if (idx++ % jobs != (unsigned long)worker)
			continue;
		cur_name = name;
		cur_what = what;
		cur_class = class_of(what);
		cur_failed = false;
		rng_seed(seed + idx);
		run_one(idx - 1, name, act, size, nr_bad, hash, buf, cap);
	}
	fclose(m);
	szip_decoder_end(dec);
	free(dec);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigbus };
	unsigned int stall = 300;
	struct counts total = { 0 };
	double start = now();
	int opt, bad_exit;

	while ((opt = getopt(argc, argv, "s:p:j:m:t:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			preads_per_file = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			jobs = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			max_mutations = strtoul(optarg, NULL, 0);
			break;
		case 't':
			stall = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || !jobs || jobs > WATCHDOG_MAX_WORKERS) {
usage:
		fprintf(stderr, "usage: %s SRCDIR DSTDIR [-s SEED] [-p PREADS] [-j JOBS] [-m MUTATIONS] [-t STALL]\n",
			argv[0]);
		return 2;
	}
	srcdir = argv[optind];
	dstdir = argv[optind + 1];
	zstd_dicts = kernel_at_least(6, 12);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	mkdir(dstdir, 0755);

	printf("TAP version 13\n");
	bad_exit = watchdog_run("hostile_files_no_hang", jobs, stall, run_all, NULL);
	if (bad_exit < 0)
		return 1;
	for (int i = 0; i < NR_CLASSES; i++) {
		struct counts *c = &sh->c[i];

		if (!c->files && i < C_MUTATION) {
			/* a designed class: the generator and this program disagree */
			tap_result(false, "hostile_%s_files # no file of this class",
				   class_names[i]);
			total.failed++;
			continue;
		}
		if (!c->files)
			continue;	/* no mutations asked for, no file outside the classes */
		tap_result(!c->failed, "hostile_%s_files", class_names[i]);
		diag("%s: %lu files, %lu activated, %lu refused, %lu reads checked, %lu EIO, %lu short, %lu SIGBUS, %lu failed",
		     class_names[i], c->files, c->activated, c->refused, c->reads,
		     c->eio, c->short_reads, c->sigbus, c->failed);
		total.files += c->files;
		total.activated += c->activated;
		total.refused += c->refused;
		total.reads += c->reads;
		total.eio += c->eio + c->sigbus;
		total.failed += c->failed;
	}
	tap_result(!bad_exit, "hostile_run_complete");
	tap_plan();
	diag("hostile: %lu files tried, %lu activated, %lu refused, %lu reads checked, %lu EIO (or SIGBUS), %lu failed, in %.0f s",
	     total.files, total.activated, total.refused, total.reads, total.eio,
	     total.failed, now() - start);
	return total.failed || bad_exit;
}
