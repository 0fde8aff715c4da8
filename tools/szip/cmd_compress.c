// SPDX-License-Identifier: GPL-2.0
/*
 * szip -z (the default): encode INPUT with pack.c, decode the result again
 * and compare it with INPUT, and only then put OUTPUT in place (stdout:
 * write it).  A file output is written chunk by chunk and read back, so
 * that memory does not grow with the input (which utils.c maps).  An
 * empty INPUT is written in format 2, the one that can represent it,
 * unless --format=1 was asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "szip_tool.h"

static void progress(void *arg, u64 done, u64 total)
{
	fprintf(stderr, "\rszip: %s: %3u%%", (const char *)arg,
		(unsigned int)(done * 100 / (total ? total : 1)));
	if (done == total)
		fputc('\n', stderr);
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

/* One input being packed, for the producers below */
struct pack_ctx {
	const char *name;
	const struct szip_input *src;
	const struct pack_opts *pack;
	struct pack_result res;
	struct szip_info info;
};

/* Decode what was made (@len bytes at @buf) and compare with the input */
static int verify(struct pack_ctx *c, const u8 *buf, size_t len)
{
	struct compare_ctx cmp = { .orig = c->src->buf, .len = c->src->len };

	if (szip_decode_buffer(c->name, buf, len, &c->info, compare_sink,
			       &cmp) ||
	    c->info.size != c->src->len) {
		szip_fail(c->name, "internal error: output does not decode to the input");
		return -ECANCELED;
	}
	return 0;
}

/*
 * To stdout, which cannot be rewound to write the tables: the file is
 * made in memory and checked before any of it is written.
 */
static int produce_in_memory(int fd, void *ctx)
{
	struct pack_ctx *c = ctx;
	char err[256];
	int ret;

	if (szip_pack(c->src->buf, c->src->len, c->pack, &c->res, err,
		      sizeof(err))) {
		szip_fail(c->name, "%s", err);
		return -ECANCELED;
	}
	ret = verify(c, c->res.data, c->res.len);
	return ret ? ret : szip_write_all(fd, c->res.data, c->res.len);
}

/*
 * To the temporary file of the output: chunks are written as they are
 * made, so memory does not grow with the input; the file is then read
 * back through a mapping and checked before utils.c renames it into place.
 */
static int produce_to_file(int fd, void *ctx)
{
	struct pack_ctx *c = ctx;
	char err[256];
	void *map;
	int ret;

	if (szip_pack_fd(c->src->buf, c->src->len, c->pack, fd, &c->res, err,
			 sizeof(err))) {
		szip_fail(c->name, "%s", err);
		return -ECANCELED;
	}
	map = mmap(NULL, c->res.len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		szip_fail(c->name, "cannot read the output back to check it: %s",
			  strerror(errno));
		return -ECANCELED;
	}
	ret = verify(c, map, c->res.len);
	munmap(map, c->res.len);
	return ret;
}

/*
 * Format 1 has at least one chunk: an empty input takes format 2 when the
 * format was chosen rather than asked for.  Returns -1 after a message.
 */
static int empty_input_format(const struct szip_opts *o, const char *in,
			      struct pack_opts *pack)
{
	char err[256];

	if (pack->format >= 2)
		return 0;
	if (o->format_given) {
		szip_fail(in, "empty: format 1 cannot represent an empty file; use --format=2");
		return -1;
	}
	pack->format = 2;
	if (pack_check_opts(pack, err, sizeof(err))) {
		szip_fail(in,
			  "empty: format 1 cannot represent an empty file, nor format 2 these options: %s",
			  err);
		return -1;
	}
	return 0;
}

/**
 * szip_cmd_compress() - szip -z: encode INPUT into OUTPUT
 * @o: the command line
 * @in: INPUT, "-" for stdin
 * @out: OUTPUT, or NULL for INPUT.sz
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_cmd_compress(const struct szip_opts *o, const char *in,
		      const char *out)
{
	struct pack_opts pack = o->pack;
	double start = szip_now();
	struct pack_ctx c = { .name = in, .pack = &pack };
	struct szip_job j;
	int ret = -1;

	if (szip_job_start(o, &j, in, out))
		return -1;
	c.src = &j.src;
	if (szip_format_of(j.src.buf, j.src.len) && !o->force) {
		szip_fail(in, "already an szip file; use -f to compress it again");
		goto out;
	}
	if (!j.src.len && empty_input_format(o, in, &pack))
		goto out;
	pack.progress = o->verbose > 0 && isatty(STDERR_FILENO) &&
			j.src.len > (8 << 20) ? progress : NULL;
	pack.progress_arg = (void *)in;
	if (szip_job_finish(&j, j.to_stdout ? produce_in_memory :
			    produce_to_file, &c))
		goto out;
	if (o->verbose > 0)
		fprintf(stderr,
			"szip: %s: %zu -> %zu bytes (%.1f%%), %u chunks of %u, filter %s, dictionary %u\n",
			in, j.src.len, c.res.len,
			j.src.len ? 100.0 * c.res.len / j.src.len : 0.0,
			c.info.nr_chunks, c.info.chunk_size,
			szip_filter_name(c.res.filter), c.res.dict_size);
	szip_report_time(o, in, start, j.src.len);
	ret = 0;
out:
	free(c.res.data);
	szip_input_free(&j.src);
	return ret;
}
