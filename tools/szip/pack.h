/* SPDX-License-Identifier: GPL-2.0 */
/*
 * szip encoder: chunking, filter and dictionary selection, deflate.
 */
#ifndef _SZIP_PACK_H
#define _SZIP_PACK_H

#include <stddef.h>

#include "szip.h"

#define PACK_FILTER_AUTO	(-1)
#define PACK_DICT_AUTO		(-1)

/**
 * struct pack_opts - what to produce
 * @format: 1 (faulty.lib's format; deflate, chunks up to 32 KiB, no
 *	checksum) or 2
 * @codec: SZIP_CODEC_* (only %SZIP_CODEC_DEFLATE in format 1)
 * @checksum: SZIP_CSUM_* (only %SZIP_CSUM_NONE in format 1)
 * @chunk_size: uncompressed bytes per chunk (szip_chunk_size_ok())
 * @level: the codec's level, from 1 (for LZ4, 1 is fast mode, 2 and up
 *	high compression); pack_check_opts() knows each codec's highest
 * @filter: SZIP_FILTER_* or %PACK_FILTER_AUTO
 * @dict_size: dictionary bytes (0 none, up to pack_max_dict()) or
 *	%PACK_DICT_AUTO
 * @threads: threads compressing chunks (0 or 1: the caller alone); the
 *	output is the same for any number
 * @progress: called now and then with the bytes done so far (may be NULL)
 * @progress_arg: passed to @progress
 */
struct pack_opts {
	int format;
	int codec;
	int checksum;
	u32 chunk_size;
	int level;
	int filter;
	int dict_size;
	int threads;
	void (*progress)(void *arg, u64 done, u64 total);
	void *progress_arg;
};

/**
 * struct pack_result - an encoded szip file
 * @data: the file's bytes (malloc'd; free with free()); NULL when
 *	szip_pack_fd() wrote them
 * @len: its length
 * @filter: the filter used
 * @dict_size: the dictionary size used
 */
struct pack_result {
	u8 *data;
	size_t len;
	int filter;
	u32 dict_size;
};

int szip_pack(const u8 *in, size_t len, const struct pack_opts *opts,
	      struct pack_result *res, char *err, size_t err_len);
int szip_pack_fd(const u8 *in, size_t len, const struct pack_opts *opts,
		 int fd, struct pack_result *res, char *err, size_t err_len);

#endif /* _SZIP_PACK_H */
