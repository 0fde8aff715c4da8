/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules the encoder's options follow, each stated once in options.c:
 * the names of codecs, checksums and filters, the chunk sizes of each
 * format, levels and dictionary sizes per codec, and the defaults that
 * depend on other options.  The command line (main.c), the commands and
 * the encoder (pack.c) all ask here.
 */
#ifndef _SZIP_OPTIONS_H
#define _SZIP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "pack.h"

/* --level takes 1..this before the codec is known */
#define SZIP_MAX_LEVEL_ARG	99

/* -T takes 0..this (0: one thread per CPU online) */
#define SZIP_MAX_THREADS	256

/* zstd's highest level without --ultra (its command line's own limit) */
#define SZIP_MAX_LEVEL_NO_ULTRA	19

/* What to encode when no option says otherwise */
#define PACK_OPTS_DEFAULT {						\
	.format = 0,		/* chosen by pack_set_defaults() */	\
	.codec = SZIP_CODEC_DEFLATE,					\
	.checksum = SZIP_CSUM_NONE,					\
	.chunk_size = SZIP_DEFAULT_CHUNK_SIZE,				\
	.level = 0,		/* the codec's, by pack_set_defaults() */ \
	.filter = SZIP_FILTER_NONE,					\
	.dict_size = 0,							\
	.threads = 0,		/* one per CPU online */		\
}

const char *szip_codec_name(int codec);
const char *szip_csum_name(int checksum);
const char *szip_filter_name(int filter);
bool szip_codec_by_name(const char *s, int *codec);
bool szip_csum_by_name(const char *s, int *checksum);
bool szip_filter_by_name(const char *s, int *filter);

bool szip_format_ok(long format);
bool szip_chunk_size_ok(int format, unsigned long chunk_size);
u32 pack_max_dict(int format, int codec);
void pack_set_defaults(struct pack_opts *o);
int pack_check_opts(const struct pack_opts *o, char *err, size_t err_len);

#endif /* _SZIP_OPTIONS_H */
