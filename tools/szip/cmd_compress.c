// SPDX-License-Identifier: GPL-2.0
/*
 * szip -z (the default): encode INPUT with pack.c, decode the result again
 * and compare it with INPUT, and only then write OUTPUT.  An empty INPUT
 * is written in format 2, the one that can represent it, unless --format=1
 * was asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct buf_ctx {
	const u8 *data;
	size_t len;
};

static int produce_buffer(int fd, void *ctx)
{
	struct buf_ctx *b = ctx;

	return szip_write_all(fd, b->data, b->len);
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
	struct pack_result res = { 0 };
	double start = szip_now();
	struct compare_ctx cmp;
	struct szip_info info;
	struct szip_job j;
	struct buf_ctx b;
	char err[256];
	int ret = -1;

	if (szip_job_start(o, &j, in, out))
		return -1;
	if (szip_format_of(j.buf, j.len) && !o->force) {
		szip_fail(in, "already an szip file; use -f to compress it again");
		goto out;
	}
	if (!j.len && empty_input_format(o, in, &pack))
		goto out;
	pack.progress = o->verbose > 0 && isatty(STDERR_FILENO) &&
			j.len > (8 << 20) ? progress : NULL;
	pack.progress_arg = (void *)in;
	if (szip_pack(j.buf, j.len, &pack, &res, err, sizeof(err))) {
		szip_fail(in, "%s", err);
		goto out;
	}

	/* decode what we made and compare before anything is written */
	cmp.orig = j.buf;
	cmp.len = j.len;
	if (szip_decode_buffer(in, res.data, res.len, &info, compare_sink,
			       &cmp) ||
	    info.size != j.len) {
		szip_fail(in, "internal error: output does not decode to the input");
		goto out;
	}
	b.data = res.data;
	b.len = res.len;
	if (szip_job_finish(&j, produce_buffer, &b))
		goto out;
	if (o->verbose > 0)
		fprintf(stderr,
			"szip: %s: %zu -> %zu bytes (%.1f%%), %u chunks of %u, filter %s, dictionary %u\n",
			in, j.len, res.len, j.len ? 100.0 * res.len / j.len : 0.0,
			info.nr_chunks, info.chunk_size,
			szip_filter_name(res.filter), res.dict_size);
	szip_report_time(o, in, start, j.len);
	ret = 0;
out:
	free(res.data);
	free(j.buf);
	return ret;
}
