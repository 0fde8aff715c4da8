/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the szip tool: the parsed command line, which main.c
 * fills in and the commands only read, and the functions the tool's files
 * share, grouped by the file that defines them.
 */
#ifndef _SZIP_TOOL_H
#define _SZIP_TOOL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "szip.h"
#include "options.h"

enum szip_mode { MODE_COMPRESS, MODE_DECOMPRESS, MODE_TEST, MODE_LIST };

/* Which file an operand is, to keep outputs off the other inputs */
struct szip_file_id {
	dev_t dev;
	ino_t ino;
};

/**
 * struct szip_opts - the command line
 * @mode: what to do; the last of -z, -d, -t and -l wins
 * @to_stdout: -c
 * @keep: -k
 * @force: -f
 * @verbose: -1 quiet (-q), 0 normal, 1 verbose (-v), 2 and up: -vv
 * @output: -o FILE, or the second operand of --in-out; NULL for none
 * @in_out: --in-out: the operands are INPUT OUTPUT (faulty.lib's form)
 * @ultra: --ultra: zstd levels above %SZIP_MAX_LEVEL_NO_ULTRA as -N
 * @level_digits: the level was given as -N rather than --level=N
 * @format_given: --format was given (else pack.format was chosen)
 * @inputs: the operands that exist, when each is an input with an
 *	output named after it: no output may replace one of them
 * @nr_inputs: number of @inputs
 * @pack: what to encode (the encoder's options, pack_set_defaults() done)
 */
struct szip_opts {
	enum szip_mode mode;
	bool to_stdout;
	bool keep;
	bool force;
	int verbose;
	const char *output;
	bool in_out;
	bool ultra;
	bool level_digits;
	bool format_given;
	const struct szip_file_id *inputs;
	size_t nr_inputs;
	struct pack_opts pack;
};

/*
 * A command: @in is a file name or "-" for stdin, @out the file -o or
 * --in-out named (NULL if none; always NULL for -t and -l).  Returns 0,
 * or -1 after a message naming the file.
 */
typedef int (*szip_cmd_fn)(const struct szip_opts *o, const char *in,
			   const char *out);

/* cmd_compress.c */
int szip_cmd_compress(const struct szip_opts *o, const char *in,
		      const char *out);

/* cmd_decompress.c */
typedef int (*szip_sink_fn)(void *ctx, const u8 *data, size_t len, u64 pos);
int szip_decode_buffer(const char *name, const u8 *buf, size_t len,
		       struct szip_info *info, szip_sink_fn sink, void *ctx);
int szip_cmd_decompress(const struct szip_opts *o, const char *in,
			const char *out);
int szip_cmd_test(const struct szip_opts *o, const char *in, const char *out);

/* cmd_list.c */
int szip_cmd_list(const struct szip_opts *o, const char *in, const char *out);
void szip_list_totals(const struct szip_opts *o);

/* utils.c */

/**
 * struct szip_input - an input's bytes, whole
 * @buf: the bytes: a read-only mapping of a regular file (the page cache
 *	holds them, not the heap), else read into malloc'd memory
 * @len: their number
 * @mapped: @buf is a mapping
 */
struct szip_input {
	u8 *buf;
	size_t len;
	bool mapped;
};

/**
 * struct szip_job - one compression or decompression
 * @in: the input's name, "-" for stdin
 * @out: the output's name (unused with @to_stdout)
 * @to_stdout: the output goes to stdout
 * @remove_src: delete the input once the output is in place
 * @st: the input's stat
 * @src: the input's bytes
 */
struct szip_job {
	const char *in;
	char out[PATH_MAX];
	bool to_stdout;
	bool remove_src;
	struct stat st;
	struct szip_input src;
};

/* Writes an output to @fd; 0, -errno, or -ECANCELED if it said why */
typedef int (*szip_producer_fn)(int fd, void *ctx);

void szip_fail(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void szip_catch_signals(void);
double szip_now(void);
void szip_report_time(const struct szip_opts *o, const char *name,
		      double start, u64 bytes);
int szip_write_all(int fd, const u8 *buf, size_t len);
int szip_load_input(const struct szip_opts *o, const char *name,
		    struct szip_input *src, struct stat *st);
void szip_input_free(struct szip_input *src);
int szip_job_start(const struct szip_opts *o, struct szip_job *j,
		   const char *in, const char *out);
int szip_job_finish(struct szip_job *j, szip_producer_fn produce, void *ctx);

#endif /* _SZIP_TOOL_H */
