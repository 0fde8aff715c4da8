// SPDX-License-Identifier: GPL-2.0
/*
 * szip -d and -t, and the decode driver under them: szip_decode_buffer()
 * validates a whole szip file in memory and passes each decoded chunk to
 * a sink.  -d's sink writes the output, -t's discards; -z compares what
 * it made with its input through it, and -l reads headers with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "szip_tool.h"

/**
 * szip_decode_buffer() - validate an szip file and decode every chunk
 * @name: the file's name, for diagnostics
 * @buf: the whole file
 * @len: its length
 * @info: receives the header fields
 * @sink: receives each decoded chunk in order, with its uncompressed
 *	offset; NULL to validate the header and tables only.  A nonzero
 *	return stops decoding.
 * @ctx: passed to @sink
 *
 * Return: 0, or -1 after a diagnostic naming @name (none when @sink
 * stopped it).
 */
int szip_decode_buffer(const char *name, const u8 *buf, size_t len,
		       struct szip_info *info, szip_sink_fn sink, void *ctx)
{
	struct szip_decoder *d;
	struct szip_file f;
	u8 *out;
	u32 i, bad = 0;
	enum szip_ret ret;
	int err = 0;

	ret = szip_open_buffer(&f, buf, len, &bad);
	if (ret == SZIP_ERR_OFFSETS) {
		szip_fail(name, "offset table entry %u: %s", bad,
			  szip_strerror(ret));
		return -1;
	}
	if (ret) {
		szip_fail(name, "%s", szip_strerror(ret));
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
		szip_fail(name, "cannot set up the decoder");
		return -1;
	}
	ret = szip_file_prepare(&f);
	if (ret)
		szip_fail(name, "cannot prepare the dictionary");
	for (i = 0; !ret && !err && i < info->nr_chunks; i++) {
		u64 off = szip_chunk_offset(&f, i);

		ret = szip_decode_chunk(d, &f, i, buf + off,
					szip_chunk_clen(&f, i), out);
		if (ret) {
			szip_fail(name, "chunk %u: %s", i, szip_strerror(ret));
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
	c->err = szip_write_all(c->fd, data, len);
	return c->err;
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

	if (szip_decode_buffer(d->name, d->buf, d->len, &info, fd_sink, &s))
		return s.err ? s.err : -ECANCELED;
	return 0;
}

/**
 * szip_cmd_decompress() - szip -d: decode INPUT into OUTPUT
 * @o: the command line
 * @in: INPUT, "-" for stdin
 * @out: OUTPUT, or NULL for INPUT without its suffix
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_cmd_decompress(const struct szip_opts *o, const char *in,
			const char *out)
{
	double start = szip_now();
	struct decode_ctx ctx;
	struct szip_info info;
	struct szip_job j;
	int ret = -1;

	if (szip_job_start(o, &j, in, out))
		return -1;
	/* header and table first: refuse before creating anything */
	if (szip_decode_buffer(in, j.src.buf, j.src.len, &info, NULL, NULL))
		goto out;
	ctx.name = in;
	ctx.buf = j.src.buf;
	ctx.len = j.src.len;
	if (szip_job_finish(&j, produce_decoded, &ctx))
		goto out;
	if (o->verbose > 0)
		fprintf(stderr, "szip: %s: %zu -> %llu bytes\n", in, j.src.len,
			(unsigned long long)info.size);
	szip_report_time(o, in, start, info.size);
	ret = 0;
out:
	szip_input_free(&j.src);
	return ret;
}

/**
 * szip_cmd_test() - szip -t: decode INPUT and check every chunk
 * @o: the command line
 * @in: INPUT, "-" for stdin
 * @out: unused (-t writes nothing)
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_cmd_test(const struct szip_opts *o, const char *in, const char *out)
{
	double start = szip_now();
	struct szip_input src;
	struct szip_info info;
	struct stat st;
	int ret;

	(void)out;
	if (szip_load_input(o, in, &src, &st))
		return -1;
	ret = szip_decode_buffer(in, src.buf, src.len, &info, discard_sink,
				 NULL);
	if (!ret && o->verbose > 0)
		fprintf(stderr, "szip: %s: OK (%u chunks, %llu bytes)\n", in,
			info.nr_chunks, (unsigned long long)info.size);
	if (!ret)
		szip_report_time(o, in, start, info.size);
	szip_input_free(&src);
	return ret;
}
