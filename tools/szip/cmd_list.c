// SPDX-License-Identifier: GPL-2.0
/*
 * szip -l: one line of header fields, sizes and ratio per file, under a
 * column header printed once, and a totals line after two or more files;
 * -v adds the chunk size spread and layout, -vv a line per chunk.  A
 * truncated file is listed from its header, then reported as an error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "szip_tool.h"

#define ROW_FORMAT	"%12llu %14llu %7.3f %8llu %6s %6s %6s %5s %7s %6s  %s\n"

/* What the lines printed so far add up to, for szip_list_totals() */
static struct {
	unsigned int files;
	u64 compressed;
	u64 size;
	u64 chunks;
} totals;

/*
 * The ratio, as ext4dec-compress --min-ratio and ext4dec-status mean it
 * too: compressed size over uncompressed size (0.411 stores 41.1%).
 */
static double ratio(u64 size, u64 compressed)
{
	return size ? (double)compressed / size : 0.0;
}

static void print_header(void)
{
	static bool done;

	if (!done)
		printf("%12s %14s %7s %8s %6s %6s %6s %5s %7s %6s  %s\n",
		       "compressed", "uncompressed", "ratio", "chunks", "chunk",
		       "dict", "filter", "wbits", "codec", "csum", "name");
	done = true;
}

/* One file's line, from its header; counted in the totals */
static void print_row(const struct szip_info *info, const char *name)
{
	char wbits[8], chunk[16], dict[16];

	snprintf(wbits, sizeof(wbits), "%d", info->window_bits);
	snprintf(chunk, sizeof(chunk), "%u", info->chunk_size);
	snprintf(dict, sizeof(dict), "%u", info->dict_size);
	print_header();
	printf(ROW_FORMAT, (unsigned long long)info->total_size,
	       (unsigned long long)info->size,
	       ratio(info->size, info->total_size),
	       (unsigned long long)info->nr_chunks, chunk, dict,
	       szip_filter_name(info->filter),
	       info->version >= 2 ? "-" : wbits, szip_codec_name(info->codec),
	       szip_csum_name(info->checksum), name);
	totals.files++;
	totals.compressed += info->total_size;
	totals.size += info->size;
	totals.chunks += info->nr_chunks;
}

/*
 * -v: the format version, compressed chunk sizes, where the data starts;
 * -vv: each chunk's offset and sizes.
 */
static void list_details(const struct szip_opts *o,
			 const struct szip_info *info, const u8 *buf,
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
	for (i = 0; o->verbose > 1 && i < info->nr_chunks; i++) {
		u32 c = szip_chunk_clen(&f, i), u = szip_chunk_ulen(info, i);

		printf("    chunk %u: offset %llu, %u -> %u bytes%s\n", i,
		       (unsigned long long)szip_chunk_offset(&f, i), c, u,
		       info->version >= 2 && c == u ? " (stored)" : "");
	}
}

/*
 * A file shorter than its header says: the header alone is listed (with
 * the sizes it claims), then the truncation is reported.  Returns false if
 * @buf is not such a file (or not even a valid header).
 */
static bool list_truncated(const char *name, const u8 *buf, size_t len)
{
	struct szip_info info;

	if (szip_parse_header(&info, buf, len, len) != SZIP_ERR_TRUNCATED ||
	    szip_parse_header(&info, buf, len, UINT64_MAX))
		return false;
	print_row(&info, name);
	fflush(stdout);
	szip_fail(name, "%s: %zu of %llu bytes", szip_strerror(SZIP_ERR_TRUNCATED),
		  len, (unsigned long long)info.total_size);
	return true;
}

/**
 * szip_cmd_list() - szip -l: show one file's header fields
 * @o: the command line
 * @in: the file, "-" for stdin
 * @out: unused (-l writes no file)
 *
 * The column header comes before the first file that can be listed.
 *
 * Return: 0, or -1 after a message naming the file (a truncated file is
 * listed first).
 */
int szip_cmd_list(const struct szip_opts *o, const char *in, const char *out)
{
	struct szip_input src;
	struct szip_info info;
	struct stat st;
	int ret = -1;

	(void)out;
	if (szip_load_input(o, in, &src, &st))
		return -1;
	if (!list_truncated(in, src.buf, src.len) &&
	    !szip_decode_buffer(in, src.buf, src.len, &info, NULL, NULL)) {
		print_row(&info, in);
		if (o->verbose > 0)
			list_details(o, &info, src.buf, src.len);
		ret = 0;
	}
	szip_input_free(&src);
	return ret;
}

/**
 * szip_list_totals() - after szip -l: a totals line for two or more files
 * @o: the command line
 */
void szip_list_totals(const struct szip_opts *o)
{
	(void)o;
	if (totals.files < 2)
		return;
	printf(ROW_FORMAT, (unsigned long long)totals.compressed,
	       (unsigned long long)totals.size,
	       ratio(totals.size, totals.compressed),
	       (unsigned long long)totals.chunks, "-", "-", "-", "-", "-", "-",
	       "(totals)");
}
