// SPDX-License-Identifier: GPL-2.0
/*
 * szip -l: one line of header fields, sizes and ratio per file, under a
 * column header printed once; -v adds the chunk size spread and layout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "szip_tool.h"

/* -v: the format version, compressed chunk sizes, where the data starts */
static void list_details(const struct szip_info *info, const u8 *buf,
			 size_t len)
{
	struct szip_file f = { .info = *info };
	u32 i, lo = UINT32_MAX, hi = 0, stored = 0;

	szip_file_set_meta(&f, buf + info->dict_offset);
	for (i = 0; i < info->nr_chunks; i++) {
		u32 c = szip_chunk_clen(&f, i);

		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
		stored += info->version >= 2 && c == szip_chunk_ulen(info, i);
	}
	if (!info->nr_chunks)	/* an empty v2 file */
		lo = 0;
	printf("    format v%u; last chunk %u bytes; compressed chunks %u..%u bytes (%u stored); data at %llu; %llu trailing bytes\n",
	       info->version, info->last_chunk_size, lo, hi, stored,
	       (unsigned long long)info->data_offset,
	       (unsigned long long)(len - info->total_size));
}

/**
 * szip_cmd_list() - szip -l: show one file's header fields
 * @o: the command line
 * @in: the file, "-" for stdin
 * @out: unused (-l writes no file)
 *
 * The column header comes before the first file that can be listed.
 *
 * Return: 0, or -1 after a message naming the file.
 */
int szip_cmd_list(const struct szip_opts *o, const char *in, const char *out)
{
	static bool header_done;
	struct szip_info info;
	char wbits[8];
	struct stat st;
	size_t len;
	u8 *buf;

	(void)out;
	if (szip_load_input(o, in, &buf, &len, &st))
		return -1;
	if (szip_decode_buffer(in, buf, len, &info, NULL, NULL)) {
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
	       info.chunk_size, info.dict_size, szip_filter_name(info.filter),
	       wbits, szip_codec_name(info.codec), szip_csum_name(info.checksum),
	       in);
	if (o->verbose > 0)
		list_details(&info, buf, len);
	free(buf);
	return 0;
}
