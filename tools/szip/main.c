// SPDX-License-Identifier: GPL-2.0
/*
 * szip - pack files into, and unpack them from, the seekable szip format.
 *
 * gzip-style command line: compress by default, -d, -t, -l; output written
 * to a temporary file in the target directory, fsync'ed and renamed into
 * place, so a failed or interrupted run never leaves a partial output under
 * the target name.  Every file written is decoded again and compared with
 * its input before it is renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "szip_env.h"
#include "szip.h"
#include "pack.h"

#define EXIT_ERROR	1
#define EXIT_USAGE	2
#define SUFFIX		".sz"
#define SZIP_VERSION	"0.1"

enum mode { MODE_COMPRESS, MODE_DECOMPRESS, MODE_TEST, MODE_LIST };

static struct {
	enum mode mode;
	bool to_stdout;
	bool keep;
	bool force;
	int verbose;	/* -1 quiet, 0 normal, 1+ verbose */
	struct pack_opts pack;
} opt = {
	.mode = MODE_COMPRESS,
	.pack = {
		.format = 0,		/* chosen by the options (finish_options) */
		.codec = SZIP_CODEC_DEFLATE,
		.checksum = SZIP_CSUM_NONE,
		.chunk_size = SZIP_DEFAULT_CHUNK_SIZE,
		.level = 0,		/* the codec's default */
		.filter = SZIP_FILTER_NONE,
		.dict_size = 0,
	},
};

/* The temporary output, removed if we die before renaming it. */
static char tmp_path[PATH_MAX];

static void __attribute__((format(printf, 2, 3)))
fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "szip: ");
	if (name)
		fprintf(stderr, "%s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: szip [OPTION]... [INPUT [OUTPUT]]\n"
"Compress INPUT into the seekable szip format (INPUT.sz by default),\n"
"or decompress, test or list szip files.  INPUT '-' or none: stdin.\n"
"\n"
"  -z, --compress        compress (default)\n"
"  -d, --decompress      decompress (INPUT.sz -> INPUT)\n"
"  -t, --test            decode and check every chunk, write nothing\n"
"  -l, --list            show header fields, sizes and ratio\n"
"  -c, --stdout          write to standard output, keep INPUT\n"
"  -k, --keep            keep INPUT (it is removed after success otherwise,\n"
"                        unless OUTPUT is given)\n"
"  -f, --force           overwrite OUTPUT; accept symlinks, hard-linked\n"
"                        or already compressed inputs, and terminals\n"
"  -q, --quiet           no warnings\n"
"  -v, --verbose         sizes, choices made, progress (repeatable)\n"
"  -1 .. -9, --level=N   compression level: deflate 1..9 (default 9), zstd\n"
"                        1..22 (default 19), lz4 1 fast, 2..12 (default 12)\n"
"      --chunk-size=N    bytes per chunk (default 16384; K suffix accepted):\n"
"                        format 1 4096..32768, a multiple of 4096; format 2\n"
"                        a power of two in 4096..131072\n"
"      --dict[=SIZE]     preset dictionary of SIZE bytes built from the\n"
"                        input (deflate up to 32768, lz4 65536, zstd 262144,\n"
"                        trained); without SIZE or 'auto': best size\n"
"      --filter=F        branch filter: none, x86, arm, thumb, auto\n"
"                        (default none; auto keeps the smallest)\n"
"      --codec=C         deflate (default), zstd or lz4 (format 2)\n"
"      --checksum=C      none (default), xxh64 or crc32c per chunk, checked\n"
"                        after decompression (format 2)\n"
"      --format=N        1: faulty.lib's szip (the default unless another\n"
"                        option needs format 2); 2: this project's v2\n"
"  -h, --help            this help\n"
"  -V, --version         version\n"
"\n"
"Exit status: 0 success, 1 error, 2 usage error.\n");
}

static const char *const filter_names[SZIP_NR_FILTERS] = {
	[SZIP_FILTER_NONE] = "none",
	[SZIP_FILTER_THUMB] = "thumb",
	[SZIP_FILTER_ARM] = "arm",
	[SZIP_FILTER_X86] = "x86",
};

static const char *filter_name(int f)
{
	return f >= 0 && f < SZIP_NR_FILTERS ? filter_names[f] : "unknown";
}

static const char *const codec_names[SZIP_NR_CODECS] = {
	[SZIP_CODEC_DEFLATE] = "deflate",
	[SZIP_CODEC_ZSTD] = "zstd",
	[SZIP_CODEC_LZ4] = "lz4",
};

static const char *codec_name(int c)
{
	return c > 0 && c < SZIP_NR_CODECS ? codec_names[c] : "unknown";
}

static const char *const csum_names[SZIP_NR_CSUMS] = {
	[SZIP_CSUM_NONE] = "-",
	[SZIP_CSUM_XXH64] = "xxh64",
	[SZIP_CSUM_CRC32C] = "crc32c",
};

static const char *csum_name(int c)
{
	return c >= 0 && c < SZIP_NR_CSUMS ? csum_names[c] : "unknown";
}

/* ------------------------------------------------------------------ I/O */

static int read_all(int fd, u8 **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	u8 *p = malloc(cap);
	struct stat st;

	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		cap = (size_t)st.st_size + 1;
		free(p);
		p = malloc(cap);
	}
	while (p) {
		ssize_t r;

		if (n == cap) {
			u8 *q = realloc(p, cap * 2);

			if (!q)
				break;
			p = q;
			cap *= 2;
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(p);
			return -errno;
		}
		if (!r) {
			*buf = p;
			*len = n;
			return 0;
		}
		n += (size_t)r;
	}
	free(p);
	return -ENOMEM;
}

static int write_all(int fd, const u8 *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Open INPUT after the refusals that -f lifts. */
static int open_input(const char *name, struct stat *st)
{
	int fd;

	if (!strcmp(name, "-")) {
		if (fstat(STDIN_FILENO, st))
			return -1;
		return STDIN_FILENO;
	}
	if (lstat(name, st)) {
		fail(name, "%s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(st->st_mode) && !opt.force) {
		fail(name, "is a symbolic link; use -f to follow it");
		return -1;
	}
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st)) {
		fail(name, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISDIR(st->st_mode) || (!S_ISREG(st->st_mode) && !opt.force)) {
		fail(name, "not a regular file");
		close(fd);
		return -1;
	}
	return fd;
}

static int load_input(const char *name, u8 **buf, size_t *len,
		      struct stat *st)
{
	int fd = open_input(name, st);
	int ret;

	if (fd < 0)
		return -1;
	ret = read_all(fd, buf, len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret) {
		fail(name, "read failed: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

typedef int (*producer_fn)(int fd, void *ctx);

/*
 * Write OUTPUT through a temporary file in its directory: the producer
 * writes, then fsync, then rename over OUTPUT, then fsync the directory.
 * Any failure removes the temporary file and leaves OUTPUT as it was.
 */
static int write_atomic(const char *out, mode_t mode, producer_fn produce,
			void *ctx)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX];
	const char *dir, *base;
	int fd, dfd, ret;

	if (snprintf(dirbuf, sizeof(dirbuf), "%s", out) >= (int)sizeof(dirbuf) ||
	    snprintf(basebuf, sizeof(basebuf), "%s", out) >= (int)sizeof(basebuf)) {
		fail(out, "name too long");
		return -1;
	}
	dir = dirname(dirbuf);
	base = basename(basebuf);
	/* the temporary's name must fit where the output's does */
	if (snprintf(tmp_path, sizeof(tmp_path), "%s/.%.200s.szip-XXXXXX", dir,
		     base) >= (int)sizeof(tmp_path)) {
		tmp_path[0] = 0;
		fail(out, "name too long");
		return -1;
	}
	fd = mkstemp(tmp_path);
	if (fd < 0) {
		fail(out, "cannot create temporary file in %s: %s", dir,
		     strerror(errno));
		tmp_path[0] = 0;
		return -1;
	}
	ret = produce(fd, ctx);
	if (!ret && fchmod(fd, mode & 07777))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp_path, out))
		ret = -errno;
	if (ret) {
		if (ret != -ECANCELED)
			fail(out, "write failed: %s", strerror(-ret));
		unlink(tmp_path);
		tmp_path[0] = 0;
		return -1;
	}
	tmp_path[0] = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* ------------------------------------------------------------- decoding */

typedef int (*sink_fn)(void *ctx, const u8 *data, size_t len, u64 pos);

/*
 * Validate @buf as an szip file and pass every decoded chunk to @sink.
 * Prints a diagnostic naming @name and returns -1 on any problem.
 */
static int decode_buffer(const char *name, const u8 *buf, size_t len,
			 struct szip_info *info, sink_fn sink, void *ctx)
{
	struct szip_decoder *d;
	struct szip_file f;
	enum szip_ret ret;
	int err = 0;
	u8 *out;
	u32 i, bad = 0;

	ret = szip_open_buffer(&f, buf, len, &bad);
	if (ret == SZIP_ERR_OFFSETS) {
		fail(name, "offset table entry %u: %s", bad, szip_strerror(ret));
		return -1;
	}
	if (ret) {
		fail(name, "%s", szip_strerror(ret));
		return -1;
	}
	*info = f.info;
	if (!sink)
		return 0;

	d = malloc(szip_decoder_size());
	out = malloc(info->chunk_size);
	if (!d || !out || szip_decoder_init(d)) {
		free(d);
		free(out);
		fail(name, "cannot set up the decoder");
		return -1;
	}
	ret = szip_file_prepare(&f);
	if (ret)
		fail(name, "cannot prepare the dictionary");
	for (i = 0; !ret && !err && i < info->nr_chunks; i++) {
		u64 off = szip_chunk_offset(&f, i);

		ret = szip_decode_chunk(d, &f, i, buf + off,
					szip_chunk_clen(&f, i), out);
		if (ret) {
			fail(name, "chunk %u: %s", i, szip_strerror(ret));
			break;
		}
		err = sink(ctx, out, szip_chunk_ulen(info, i),
			   (u64)i * info->chunk_size);
	}
	szip_file_release(&f);
	szip_decoder_end(d);
	free(d);
	free(out);
	return ret || err ? -1 : 0;
}

struct compare_ctx {
	const u8 *orig;
	size_t len;
};

static int compare_sink(void *ctx, const u8 *data, size_t len, u64 pos)
{
	struct compare_ctx *c = ctx;

	if (pos + len > c->len || memcmp(c->orig + pos, data, len))
		return -1;
	return 0;
}

static int discard_sink(void *ctx, const u8 *data, size_t len, u64 pos)
{
	(void)ctx;
	(void)data;
	(void)len;
	(void)pos;
	return 0;
}

struct fd_sink_ctx {
	int fd;
	int err;
};

static int fd_sink(void *ctx, const u8 *data, size_t len, u64 pos)
{
	struct fd_sink_ctx *c = ctx;

	(void)pos;
	c->err = write_all(c->fd, data, len);
	return c->err;
}

/* ---------------------------------------------------------------- modes */

static void progress(void *arg, u64 done, u64 total)
{
	fprintf(stderr, "\rszip: %s: %3u%%", (const char *)arg,
		(unsigned int)(done * 100 / (total ? total : 1)));
	if (done == total)
		fputc('\n', stderr);
}

struct buf_ctx {
	const u8 *data;
	size_t len;
};

static int produce_buffer(int fd, void *ctx)
{
	struct buf_ctx *b = ctx;

	return write_all(fd, b->data, b->len);
}

struct decode_ctx {
	const char *name;
	const u8 *buf;
	size_t len;
};

static int produce_decoded(int fd, void *ctx)
{
	struct decode_ctx *d = ctx;
	struct fd_sink_ctx s = { .fd = fd };
	struct szip_info info;

	if (decode_buffer(d->name, d->buf, d->len, &info, fd_sink, &s))
		return s.err ? s.err : -ECANCELED;
	return 0;
}

static bool has_suffix(const char *name)
{
	size_t n = strlen(name);

	return n > strlen(SUFFIX) && !strcmp(name + n - strlen(SUFFIX), SUFFIX);
}

/* Work out OUTPUT; NULL for stdout.  Returns -1 (reported) on failure. */
static int output_name(const char *in, const char *explicit_out, char *out,
		       size_t out_len, bool *to_stdout)
{
	*to_stdout = opt.to_stdout || (explicit_out ? !strcmp(explicit_out, "-") :
							!strcmp(in, "-"));
	if (*to_stdout)
		return 0;
	if (explicit_out) {
		snprintf(out, out_len, "%s", explicit_out);
		return 0;
	}
	if (opt.mode == MODE_COMPRESS) {
		if (snprintf(out, out_len, "%s%s", in, SUFFIX) >= (int)out_len) {
			fail(in, "name too long");
			return -1;
		}
		return 0;
	}
	if (!has_suffix(in)) {
		fail(in, "unknown suffix (expected %s); give OUTPUT or use -c",
		     SUFFIX);
		return -1;
	}
	snprintf(out, out_len, "%.*s", (int)(strlen(in) - strlen(SUFFIX)), in);
	return 0;
}

/* Refusals that depend on OUTPUT; -f lifts all but writing onto INPUT. */
static int check_output(const char *in, const struct stat *in_st,
			const char *out, bool remove_src)
{
	struct stat st;

	if (!lstat(out, &st)) {
		if (!strcmp(in, "-") ? false :
		    st.st_dev == in_st->st_dev && st.st_ino == in_st->st_ino) {
			fail(in, "input and output are the same file");
			return -1;
		}
		if (!opt.force) {
			fail(out, "already exists; use -f to overwrite");
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			fail(out, "is a directory");
			return -1;
		}
	}
	if (remove_src && in_st->st_nlink > 1 && !opt.force) {
		fail(in, "has %lu other hard link(s); use -k or -f",
		     (unsigned long)in_st->st_nlink - 1);
		return -1;
	}
	return 0;
}

/* The output keeps a file input's permissions; from stdin, 0666 & ~umask. */
static mode_t output_mode(const char *in, const struct stat *st)
{
	mode_t mask;

	if (strcmp(in, "-"))
		return st->st_mode;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

static int emit(const char *in, const char *out, bool to_stdout, mode_t mode,
		producer_fn produce, void *ctx)
{
	if (to_stdout) {
		int ret = produce(STDOUT_FILENO, ctx);

		if (ret && ret != -ECANCELED)
			fail(in, "write to stdout failed: %s", strerror(-ret));
		return ret ? -1 : 0;
	}
	return write_atomic(out, mode, produce, ctx);
}

/* One compression or decompression: its input, output and refusals. */
struct job {
	const char *in;
	char out[PATH_MAX];
	bool to_stdout;
	bool remove_src;
	struct stat st;
	u8 *buf;
	size_t len;
};

/* Name the output, read the input, apply the refusals that need both. */
static int start_job(struct job *j, const char *in, const char *explicit_out)
{
	bool compress = opt.mode == MODE_COMPRESS;

	j->in = in;
	if (output_name(in, explicit_out, j->out, sizeof(j->out), &j->to_stdout))
		return -1;
	if (!opt.force && (compress ? j->to_stdout && isatty(STDOUT_FILENO) :
			   !strcmp(in, "-") && isatty(STDIN_FILENO))) {
		fail(in, "refusing to %s compressed data %s a terminal; use -f",
		     compress ? "write" : "read", compress ? "to" : "from");
		return -1;
	}
	if (load_input(in, &j->buf, &j->len, &j->st))
		return -1;
	j->remove_src = !j->to_stdout && !explicit_out && !opt.keep;
	if (!j->to_stdout && check_output(in, &j->st, j->out, j->remove_src)) {
		free(j->buf);
		return -1;
	}
	return 0;
}

static int finish_job(struct job *j, producer_fn produce, void *ctx)
{
	if (emit(j->in, j->out, j->to_stdout, output_mode(j->in, &j->st),
		 produce, ctx))
		return -1;
	if (j->remove_src && unlink(j->in))
		fail(j->in, "cannot remove input: %s", strerror(errno));
	return 0;
}

static int compress_one(const char *in, const char *explicit_out)
{
	struct pack_result res = { 0 };
	struct compare_ctx cmp;
	struct szip_info info;
	struct buf_ctx b;
	struct job j;
	char err[256];
	int ret = -1;

	if (start_job(&j, in, explicit_out))
		return -1;
	if (szip_format_of(j.buf, j.len) && !opt.force) {
		fail(in, "already an szip file; use -f to compress it again");
		goto out;
	}
	opt.pack.progress = opt.verbose > 0 && isatty(STDERR_FILENO) &&
			    j.len > (8 << 20) ? progress : NULL;
	opt.pack.progress_arg = (void *)in;
	if (szip_pack(j.buf, j.len, &opt.pack, &res, err, sizeof(err))) {
		fail(in, "%s", err);
		goto out;
	}

	/* decode what we made and compare before anything is written */
	cmp.orig = j.buf;
	cmp.len = j.len;
	if (decode_buffer(in, res.data, res.len, &info, compare_sink, &cmp) ||
	    info.size != j.len) {
		fail(in, "internal error: output does not decode to the input");
		goto out;
	}
	b.data = res.data;
	b.len = res.len;
	if (finish_job(&j, produce_buffer, &b))
		goto out;
	if (opt.verbose > 0)
		fprintf(stderr,
			"szip: %s: %zu -> %zu bytes (%.1f%%), %u chunks of %u, filter %s, dictionary %u\n",
			in, j.len, res.len, 100.0 * res.len / j.len,
			info.nr_chunks, info.chunk_size, filter_name(res.filter),
			res.dict_size);
	ret = 0;
out:
	free(res.data);
	free(j.buf);
	return ret;
}

static int decompress_one(const char *in, const char *explicit_out)
{
	struct decode_ctx ctx;
	struct szip_info info;
	struct job j;
	int ret = -1;

	if (start_job(&j, in, explicit_out))
		return -1;
	/* header and table first: refuse before creating anything */
	if (decode_buffer(in, j.buf, j.len, &info, NULL, NULL))
		goto out;
	ctx.name = in;
	ctx.buf = j.buf;
	ctx.len = j.len;
	if (finish_job(&j, produce_decoded, &ctx))
		goto out;
	if (opt.verbose > 0)
		fprintf(stderr, "szip: %s: %zu -> %llu bytes\n", in, j.len,
			(unsigned long long)info.size);
	ret = 0;
out:
	free(j.buf);
	return ret;
}

static int test_one(const char *in)
{
	struct szip_info info;
	struct stat st;
	size_t len;
	u8 *buf;
	int ret;

	if (load_input(in, &buf, &len, &st))
		return -1;
	ret = decode_buffer(in, buf, len, &info, discard_sink, NULL);
	if (!ret && opt.verbose > 0)
		fprintf(stderr, "szip: %s: OK (%u chunks, %llu bytes)\n", in,
			info.nr_chunks, (unsigned long long)info.size);
	free(buf);
	return ret;
}

static int list_one(const char *in)
{
	static bool header_done;
	struct szip_info info;
	char wbits[8];
	struct stat st;
	size_t len;
	u8 *buf;

	if (load_input(in, &buf, &len, &st))
		return -1;
	if (decode_buffer(in, buf, len, &info, NULL, NULL)) {
		free(buf);
		return -1;
	}
	if (!header_done)
		printf("%12s %14s %7s %8s %6s %6s %6s %5s %7s %6s  %s\n",
		       "compressed", "uncompressed", "ratio", "chunks", "chunk",
		       "dict", "filter", "wbits", "codec", "csum", "name");
	header_done = true;
	if (info.version >= 2)
		snprintf(wbits, sizeof(wbits), "-");
	else
		snprintf(wbits, sizeof(wbits), "%d", info.window_bits);
	printf("%12llu %14llu %7.3f %8u %6u %6u %6s %5s %7s %6s  %s\n",
	       (unsigned long long)info.total_size,
	       (unsigned long long)info.size,
	       (double)info.size / info.total_size, info.nr_chunks,
	       info.chunk_size, info.dict_size, filter_name(info.filter),
	       wbits, codec_name(info.codec), csum_name(info.checksum), in);
	if (opt.verbose > 0) {
		struct szip_file f = { .info = info };
		u32 i, lo = UINT32_MAX, hi = 0, stored = 0;

		szip_file_set_meta(&f, buf + info.dict_offset);
		for (i = 0; i < info.nr_chunks; i++) {
			u32 c = szip_chunk_clen(&f, i);

			lo = c < lo ? c : lo;
			hi = c > hi ? c : hi;
			stored += info.version >= 2 && c == szip_chunk_ulen(&info, i);
		}
		printf("    format v%u; last chunk %u bytes; compressed chunks %u..%u bytes (%u stored); data at %llu; %llu trailing bytes\n",
		       info.version, info.last_chunk_size, lo, hi, stored,
		       (unsigned long long)info.data_offset,
		       (unsigned long long)(len - info.total_size));
	}
	free(buf);
	return 0;
}

/* ------------------------------------------------------------- options */

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	if (*end == 'k' || *end == 'K') {
		if (*v > max / 1024)
			return -1;
		*v *= 1024;
		end++;
		if (!strcmp(end, "iB"))
			end += 2;
	}
	return *end || *v > max ? -1 : 0;
}

static int parse_filter(const char *s)
{
	int f;

	if (!strcmp(s, "auto"))
		return PACK_FILTER_AUTO;
	for (f = 0; f < SZIP_NR_FILTERS; f++)
		if (!strcmp(s, filter_names[f]))
			return f;
	return -2;
}

enum {
	OPT_CHUNK_SIZE = 256, OPT_DICT, OPT_FILTER, OPT_LEVEL, OPT_CODEC,
	OPT_CHECKSUM, OPT_FORMAT
};

static const struct option long_options[] = {
	{ "compress", no_argument, NULL, 'z' },
	{ "decompress", no_argument, NULL, 'd' },
	{ "uncompress", no_argument, NULL, 'd' },
	{ "test", no_argument, NULL, 't' },
	{ "list", no_argument, NULL, 'l' },
	{ "stdout", no_argument, NULL, 'c' },
	{ "to-stdout", no_argument, NULL, 'c' },
	{ "keep", no_argument, NULL, 'k' },
	{ "force", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "chunk-size", required_argument, NULL, OPT_CHUNK_SIZE },
	{ "dict", optional_argument, NULL, OPT_DICT },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "codec", required_argument, NULL, OPT_CODEC },
	{ "checksum", required_argument, NULL, OPT_CHECKSUM },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

/* The index of @s in @names (@n entries, NULL holes), or -1 */
static int parse_name(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	return -1;
}

/* Defaults that depend on other options, then the combined checks */
static int finish_options(void)
{
	struct pack_opts *o = &opt.pack;
	char err[128];

	if (!o->format)
		o->format = o->codec != SZIP_CODEC_DEFLATE ||
			    o->checksum != SZIP_CSUM_NONE ||
			    o->chunk_size > SZIP_MAX_CHUNK_SIZE ? 2 : 1;
	if (!o->level)
		o->level = o->codec == SZIP_CODEC_ZSTD ? 19 :
			   o->codec == SZIP_CODEC_LZ4 ? 12 : 9;
	if (opt.mode == MODE_COMPRESS && pack_check_opts(o, err, sizeof(err))) {
		fail(NULL, "%s", err);
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv)
{
	unsigned long v;
	int c;

	while ((c = getopt_long(argc, argv, "zdtlckfqvhV123456789",
				long_options, NULL)) != -1) {
		switch (c) {
		case 'z': opt.mode = MODE_COMPRESS; break;
		case 'd': opt.mode = MODE_DECOMPRESS; break;
		case 't': opt.mode = MODE_TEST; break;
		case 'l': opt.mode = MODE_LIST; break;
		case 'c': opt.to_stdout = true; break;
		case 'k': opt.keep = true; break;
		case 'f': opt.force = true; break;
		case 'q': opt.verbose = -1; break;
		case 'v': opt.verbose = opt.verbose < 0 ? 1 : opt.verbose + 1; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("szip %s\n", SZIP_VERSION); exit(0);
		case OPT_CHUNK_SIZE:
			if (parse_uint(optarg, SZIP2_MAX_CHUNK_SIZE, &v) ||
			    v < SZIP_MIN_CHUNK_SIZE || v % SZIP_CHUNK_ALIGN) {
				fail(NULL, "invalid chunk size '%s': a multiple of 4096 in 4096..32768 (format 1) or a power of two in 4096..131072 (format 2)",
				     optarg);
				return -1;
			}
			opt.pack.chunk_size = (u32)v;
			break;
		case OPT_DICT:
			if (!optarg || !strcmp(optarg, "auto")) {
				opt.pack.dict_size = PACK_DICT_AUTO;
				break;
			}
			if (parse_uint(optarg, SZIP2_MAX_DICT_SIZE, &v)) {
				fail(NULL, "invalid dictionary size '%s': 0..262144 or auto",
				     optarg);
				return -1;
			}
			opt.pack.dict_size = (int)v;
			break;
		case OPT_CODEC:
			opt.pack.codec = parse_name(optarg, codec_names,
						    SZIP_NR_CODECS);
			if (opt.pack.codec < 1) {
				fail(NULL, "invalid codec '%s': deflate, zstd or lz4",
				     optarg);
				return -1;
			}
			break;
		case OPT_CHECKSUM:
			opt.pack.checksum = parse_name(optarg, csum_names,
						       SZIP_NR_CSUMS);
			if (!strcmp(optarg, "none"))
				opt.pack.checksum = SZIP_CSUM_NONE;
			if (opt.pack.checksum < 0) {
				fail(NULL, "invalid checksum '%s': none, xxh64 or crc32c",
				     optarg);
				return -1;
			}
			break;
		case OPT_FORMAT:
			if (parse_uint(optarg, 2, &v) || v < 1) {
				fail(NULL, "invalid format '%s': 1 or 2", optarg);
				return -1;
			}
			opt.pack.format = (int)v;
			break;
		case OPT_FILTER:
			opt.pack.filter = parse_filter(optarg);
			if (opt.pack.filter == -2) {
				fail(NULL, "invalid filter '%s': none, x86, arm, thumb or auto",
				     optarg);
				return -1;
			}
			break;
		case OPT_LEVEL:
			if (parse_uint(optarg, 99, &v) || v < 1) {
				fail(NULL, "invalid level '%s'", optarg);
				return -1;
			}
			opt.pack.level = (int)v;
			break;
		default:
			if (c >= '1' && c <= '9') {
				opt.pack.level = c - '0';
				break;
			}
			return -1;
		}
	}
	return finish_options();
}

int main(int argc, char **argv)
{
	int nargs, i, ret = 0;

	if (parse_options(argc, argv)) {
		fprintf(stderr, "Try 'szip --help' for more information.\n");
		return EXIT_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);

	nargs = argc - optind;
	if (opt.mode == MODE_TEST || opt.mode == MODE_LIST) {
		static char *stdin_only[] = { "-" };
		char **files = nargs ? argv + optind : stdin_only;

		for (i = 0; i < (nargs ? nargs : 1); i++) {
			if (opt.mode == MODE_TEST)
				ret |= test_one(files[i]);
			else
				ret |= list_one(files[i]);
		}
		return ret ? EXIT_ERROR : 0;
	}
	if (nargs > 2 || (nargs == 2 && opt.to_stdout)) {
		fail(NULL, "expected INPUT [OUTPUT]%s",
		     opt.to_stdout ? " (no OUTPUT with -c)" : "");
		fprintf(stderr, "Try 'szip --help' for more information.\n");
		return EXIT_USAGE;
	}
	if (opt.mode == MODE_COMPRESS)
		ret = compress_one(nargs ? argv[optind] : "-",
				   nargs == 2 ? argv[optind + 1] : NULL);
	else
		ret = decompress_one(nargs ? argv[optind] : "-",
				     nargs == 2 ? argv[optind + 1] : NULL);
	return ret ? EXIT_ERROR : 0;
}
