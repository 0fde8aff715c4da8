// SPDX-License-Identifier: GPL-2.0
/*
 * The szip tool's file handling: diagnostics naming the file, reading an
 * input whole, the refusals -f lifts, naming the output, and atomic
 * output.  An output is written to a temporary file in the target
 * directory, fsync'ed and renamed into place, so a failed or interrupted
 * run never leaves a partial output under the target name.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "szip_tool.h"

#define SUFFIX		".sz"

/* The temporary output, removed if we die before renaming it. */
static char tmp_path[PATH_MAX];

/**
 * szip_fail() - print a diagnostic: "szip: NAME: message"
 * @name: the file it is about, or NULL for none
 * @fmt: printf format of the message
 */
void szip_fail(const char *name, const char *fmt, ...)
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

/**
 * szip_now() - a monotonic clock in seconds, for -vv's timings
 *
 * Return: seconds since an arbitrary start.
 */
double szip_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/**
 * szip_report_time() - -vv: "szip: NAME: S s, R MB/s"
 * @o: the command line (nothing is printed below -vv)
 * @name: the file
 * @start: szip_now() when the file was begun
 * @bytes: uncompressed bytes handled, for the rate
 */
void szip_report_time(const struct szip_opts *o, const char *name,
		      double start, u64 bytes)
{
	double s = szip_now() - start;

	if (o->verbose < 2)
		return;
	fprintf(stderr, "szip: %s: %.3f s, %.1f MB/s uncompressed\n", name, s,
		s > 0 ? (double)bytes / s / 1e6 : 0.0);
}

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/**
 * szip_catch_signals() - remove the temporary output on a fatal signal
 */
void szip_catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	signal(SIGBUS, on_signal);	/* a mapped input truncated meanwhile */
}

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

/**
 * szip_write_all() - write all of @buf to @fd
 * @fd: where to
 * @buf: the bytes
 * @len: their number
 *
 * Return: 0 or -errno.
 */
int szip_write_all(int fd, const u8 *buf, size_t len)
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

/* Refuse an input by its type; -1 after a message */
static int check_type(const struct szip_opts *o, const char *name,
		      const struct stat *st, bool special_ok)
{
	if (S_ISDIR(st->st_mode)) {
		szip_fail(name, "is a directory");
		return -1;
	}
	if (!S_ISREG(st->st_mode) && !o->force && !special_ok) {
		szip_fail(name, "not a regular file; use -c or -f");
		return -1;
	}
	return 0;
}

/*
 * Open INPUT after the refusals that -f lifts.  @special_ok: the input is
 * neither removed nor named after (-c, -o, -t, -l), so a device or a FIFO
 * is read as it is.  The type is checked before open(), which would wait
 * for a FIFO's writer, and again on what was opened.
 */
static int open_input(const struct szip_opts *o, const char *name,
		      struct stat *st, bool special_ok)
{
	int fd;

	if (!strcmp(name, "-")) {
		if (fstat(STDIN_FILENO, st)) {
			szip_fail(name, "%s", strerror(errno));
			return -1;
		}
		return STDIN_FILENO;
	}
	if (lstat(name, st)) {
		szip_fail(name, "%s", strerror(errno));
		return -1;
	}
	if (S_ISLNK(st->st_mode) && !o->force) {
		szip_fail(name, "is a symbolic link; use -f to follow it");
		return -1;
	}
	if (S_ISLNK(st->st_mode) && stat(name, st)) {
		szip_fail(name, "%s", strerror(errno));
		return -1;
	}
	if (check_type(o, name, st, special_ok))
		return -1;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st)) {
		szip_fail(name, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (check_type(o, name, st, special_ok)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The whole of @fd (then closed unless stdin): a named regular file of
 * @st is mapped, so that its bytes stay in the page cache whatever its
 * size; anything else, stdin included (read from where it stands), is
 * read.  -1 after a message.
 */
static int read_input(const char *name, int fd, const struct stat *st,
		      struct szip_input *src)
{
	int ret = 0;

	src->mapped = false;
	if (fd != STDIN_FILENO && S_ISREG(st->st_mode) && st->st_size > 0 &&
	    (u64)st->st_size <= SIZE_MAX) {
		src->len = (size_t)st->st_size;
		src->buf = mmap(NULL, src->len, PROT_READ, MAP_PRIVATE, fd, 0);
		src->mapped = src->buf != MAP_FAILED;
	}
	if (!src->mapped)
		ret = read_all(fd, &src->buf, &src->len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret) {
		szip_fail(name, "read failed: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/**
 * szip_input_free() - release what szip_load_input() or a job holds
 * @src: the input's bytes
 */
void szip_input_free(struct szip_input *src)
{
	if (src->mapped)
		munmap(src->buf, src->len);
	else
		free(src->buf);
	src->buf = NULL;
}

/**
 * szip_load_input() - map or read a whole input of -t or -l
 * @o: the command line (-f lifts some refusals)
 * @name: the file, or "-" for stdin
 * @src: receives the bytes (szip_input_free() them)
 * @st: receives the input's stat
 *
 * Devices and FIFOs are read too: -t and -l remove nothing.
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_load_input(const struct szip_opts *o, const char *name,
		    struct szip_input *src, struct stat *st)
{
	int fd = open_input(o, name, st, true);

	if (fd < 0)
		return -1;
	return read_input(name, fd, st, src);
}

/*
 * Write OUTPUT through a temporary file in its directory: the producer
 * writes, then fsync, then rename over OUTPUT, then fsync the directory.
 * Any failure removes the temporary file and leaves OUTPUT as it was.
 */
static int write_atomic(const char *out, mode_t mode,
			szip_producer_fn produce, void *ctx)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX];
	const char *dir, *base;
	int fd, dfd, ret;

	if (snprintf(dirbuf, sizeof(dirbuf), "%s", out) >= (int)sizeof(dirbuf) ||
	    snprintf(basebuf, sizeof(basebuf), "%s", out) >= (int)sizeof(basebuf)) {
		szip_fail(out, "name too long");
		return -1;
	}
	dir = dirname(dirbuf);
	base = basename(basebuf);
	/* the temporary's name must fit where the output's does */
	if (snprintf(tmp_path, sizeof(tmp_path), "%s/.%.200s.szip-XXXXXX", dir,
		     base) >= (int)sizeof(tmp_path)) {
		tmp_path[0] = 0;
		szip_fail(out, "name too long");
		return -1;
	}
	fd = mkstemp(tmp_path);
	if (fd < 0) {
		szip_fail(out, "cannot create temporary file in %s: %s", dir,
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
			szip_fail(out, "write failed: %s", strerror(-ret));
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

static bool has_suffix(const char *name)
{
	size_t n = strlen(name);

	return n > strlen(SUFFIX) && !strcmp(name + n - strlen(SUFFIX), SUFFIX);
}

/* Work out OUTPUT; NULL for stdout.  Returns -1 (reported) on failure. */
static int output_name(const struct szip_opts *o, const char *in,
		       const char *explicit_out, char *out, size_t out_len,
		       bool *to_stdout)
{
	*to_stdout = o->to_stdout || (explicit_out ? !strcmp(explicit_out, "-") :
						     !strcmp(in, "-"));
	if (*to_stdout)
		return 0;
	if (explicit_out) {
		snprintf(out, out_len, "%s", explicit_out);
		return 0;
	}
	if (o->mode == MODE_COMPRESS) {
		if (snprintf(out, out_len, "%s%s", in, SUFFIX) >= (int)out_len) {
			szip_fail(in, "name too long");
			return -1;
		}
		return 0;
	}
	if (!has_suffix(in)) {
		szip_fail(in, "unknown suffix (expected %s); use -o or -c",
			  SUFFIX);
		return -1;
	}
	snprintf(out, out_len, "%.*s", (int)(strlen(in) - strlen(SUFFIX)), in);
	return 0;
}

/* Is @st one of the operands szip was given as inputs? */
static bool is_input(const struct szip_opts *o, const struct stat *st)
{
	size_t i;

	for (i = 0; i < o->nr_inputs; i++)
		if (o->inputs[i].dev == st->st_dev && o->inputs[i].ino == st->st_ino)
			return true;
	return false;
}

/*
 * Refusals that depend on OUTPUT; -f lifts all but writing onto INPUT or
 * onto another input operand.
 */
static int check_output(const struct szip_opts *o, const char *in,
			const struct stat *in_st, const char *out,
			bool remove_src)
{
	struct stat st;

	if (!lstat(out, &st)) {
		if (!strcmp(in, "-") ? false :
		    st.st_dev == in_st->st_dev && st.st_ino == in_st->st_ino) {
			szip_fail(in, "input and output are the same file");
			return -1;
		}
		if (is_input(o, &st)) {
			szip_fail(out, "is also an input; not overwritten");
			return -1;
		}
		if (!o->force) {
			szip_fail(out, "already exists; use -f to overwrite");
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			szip_fail(out, "is a directory");
			return -1;
		}
	}
	if (remove_src && in_st->st_nlink > 1 && !o->force) {
		szip_fail(in, "has %lu other hard link(s); use -k or -f",
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
		szip_producer_fn produce, void *ctx)
{
	if (to_stdout) {
		int ret = produce(STDOUT_FILENO, ctx);

		if (ret && ret != -ECANCELED)
			szip_fail(in, "write to stdout failed: %s", strerror(-ret));
		return ret ? -1 : 0;
	}
	return write_atomic(out, mode, produce, ctx);
}

/**
 * szip_job_start() - open the input, name the output, apply the refusals
 * @o: the command line; compressing if @o->mode is %MODE_COMPRESS,
 *	decompressing otherwise
 * @j: the job to set up
 * @in: INPUT, "-" for stdin
 * @out: OUTPUT, or NULL to derive it from @in
 *
 * The input is checked before its name is (a missing file is reported
 * as missing), and read whole after every refusal but the output's.
 *
 * Return: 0 (the caller szip_input_free()s @j->src), or -1 after a
 * message naming the file.
 */
int szip_job_start(const struct szip_opts *o, struct szip_job *j,
		   const char *in, const char *out)
{
	bool compress = o->mode == MODE_COMPRESS;
	bool special_ok = o->to_stdout || out;
	int fd;

	j->in = in;
	fd = open_input(o, in, &j->st, special_ok);
	if (fd < 0)
		return -1;
	if (output_name(o, in, out, j->out, sizeof(j->out), &j->to_stdout))
		goto out_close;
	if (!o->force && (compress ? j->to_stdout && isatty(STDOUT_FILENO) :
			  !strcmp(in, "-") && isatty(STDIN_FILENO))) {
		szip_fail(in, "refusing to %s compressed data %s a terminal; use -f",
			  compress ? "write" : "read", compress ? "to" : "from");
		goto out_close;
	}
	if (read_input(in, fd, &j->st, &j->src))
		return -1;
	j->remove_src = !j->to_stdout && !out && !o->keep;
	if (!j->to_stdout &&
	    check_output(o, in, &j->st, j->out, j->remove_src)) {
		szip_input_free(&j->src);
		return -1;
	}
	return 0;
out_close:
	if (fd != STDIN_FILENO)
		close(fd);
	return -1;
}

/**
 * szip_job_finish() - write the output, then remove the input if asked
 * @j: the job, from szip_job_start()
 * @produce: writes the output
 * @ctx: passed to @produce
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_job_finish(struct szip_job *j, szip_producer_fn produce, void *ctx)
{
	if (emit(j->in, j->out, j->to_stdout, output_mode(j->in, &j->st),
		 produce, ctx))
		return -1;
	if (j->remove_src && unlink(j->in))
		szip_fail(j->in, "cannot remove input: %s", strerror(errno));
	return 0;
}
