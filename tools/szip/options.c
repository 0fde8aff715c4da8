// SPDX-License-Identifier: GPL-2.0
/*
 * The encoder's option rules, each stated once: the names the command line
 * and -l use for codecs, checksums and filters; the formats; the chunk
 * sizes, levels and dictionary sizes each format and codec takes; the
 * defaults that depend on other options; and pack_check_opts(), which the
 * command line and szip_pack() both run on the finished options.
 *
 * Chunk sizes: format 1 (faulty.lib's) takes a multiple of 4096 in
 * 4096..32768, format 2 a power of two in 4096..131072.  --chunk-size is
 * read before the format is settled, so it takes any multiple of 4096 in
 * 4096..131072; a size format 1 cannot hold makes format 2 the default.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lz4hc.h>
#include <zstd.h>

#include "options.h"

static const char *const codec_names[SZIP_NR_CODECS] = {
	[SZIP_CODEC_DEFLATE] = "deflate",
	[SZIP_CODEC_ZSTD] = "zstd",
	[SZIP_CODEC_LZ4] = "lz4",
};

static const char *const csum_names[SZIP_NR_CSUMS] = {
	[SZIP_CSUM_NONE] = "-",
	[SZIP_CSUM_XXH64] = "xxh64",
	[SZIP_CSUM_CRC32C] = "crc32c",
};

static const char *const filter_names[SZIP_NR_FILTERS] = {
	[SZIP_FILTER_NONE] = "none",
	[SZIP_FILTER_THUMB] = "thumb",
	[SZIP_FILTER_ARM] = "arm",
	[SZIP_FILTER_X86] = "x86",
};

/* Entry @i of @names (@n entries, NULL holes), or "unknown" */
static const char *name_of(const char *const *names, int n, int i)
{
	return i >= 0 && i < n && names[i] ? names[i] : "unknown";
}

/* Store the index of @s in @names (@n entries, NULL holes) in @id */
static bool id_of(const char *s, const char *const *names, int n, int *id)
{
	int i;

	for (i = 0; i < n; i++) {
		if (names[i] && !strcmp(s, names[i])) {
			*id = i;
			return true;
		}
	}
	return false;
}

const char *szip_codec_name(int codec)
{
	return name_of(codec_names, SZIP_NR_CODECS, codec);
}

/* "-" for none, as -l shows it */
const char *szip_csum_name(int checksum)
{
	return name_of(csum_names, SZIP_NR_CSUMS, checksum);
}

const char *szip_filter_name(int filter)
{
	return name_of(filter_names, SZIP_NR_FILTERS, filter);
}

bool szip_codec_by_name(const char *s, int *codec)
{
	return id_of(s, codec_names, SZIP_NR_CODECS, codec);
}

/* "none" or "-" for none */
bool szip_csum_by_name(const char *s, int *checksum)
{
	if (!strcmp(s, "none")) {
		*checksum = SZIP_CSUM_NONE;
		return true;
	}
	return id_of(s, csum_names, SZIP_NR_CSUMS, checksum);
}

/* A filter's name, or "auto" for %PACK_FILTER_AUTO */
bool szip_filter_by_name(const char *s, int *filter)
{
	if (!strcmp(s, "auto")) {
		*filter = PACK_FILTER_AUTO;
		return true;
	}
	return id_of(s, filter_names, SZIP_NR_FILTERS, filter);
}

bool szip_format_ok(long format)
{
	return format == 1 || format == 2;
}

/**
 * szip_chunk_size_ok() - may a file of @format have chunks of @chunk_size?
 * @format: 1 or 2; 0 when the format is not chosen yet
 * @chunk_size: uncompressed bytes per chunk
 *
 * Return: true if it may (format 0: if it is in the bounds both formats
 * share, a multiple of 4096 in 4096..131072).
 */
bool szip_chunk_size_ok(int format, unsigned long chunk_size)
{
	unsigned long cs = chunk_size;

	if (cs < SZIP_MIN_CHUNK_SIZE || cs % SZIP_CHUNK_ALIGN)
		return false;
	switch (format) {
	case 1:
		return cs <= SZIP_MAX_CHUNK_SIZE;
	case 2:
		return cs <= SZIP2_MAX_CHUNK_SIZE && !(cs & (cs - 1));
	default:
		return cs <= SZIP2_MAX_CHUNK_SIZE;
	}
}

/* Levels run from 1 to this */
static int max_level(int codec)
{
	switch (codec) {
	case SZIP_CODEC_ZSTD:
		return ZSTD_maxCLevel();
	case SZIP_CODEC_LZ4:
		return LZ4HC_CLEVEL_MAX;
	default:
		return 9;
	}
}

/* Without --level: zstd 19, LZ4's and deflate's highest */
static int default_level(int codec)
{
	switch (codec) {
	case SZIP_CODEC_ZSTD:
		return 19;
	case SZIP_CODEC_LZ4:
		return 12;
	default:
		return 9;
	}
}

/**
 * pack_max_dict() - largest dictionary the encoder writes
 * @format: 1 or 2
 * @codec: SZIP_CODEC_* id
 *
 * Return: the size in bytes: what the codec can refer back to (deflate
 * 32 KiB, LZ4 64 KiB), or the format's limit for zstd.
 */
u32 pack_max_dict(int format, int codec)
{
	if (format < 2 || codec == SZIP_CODEC_DEFLATE)
		return SZIP_MAX_WRITE_DICT;
	if (codec == SZIP_CODEC_LZ4)
		return SZIP_LZ4_WINDOW;
	return SZIP2_MAX_DICT_SIZE;
}

/* Format 1 is faulty.lib's: deflate only, no checksums */
static bool format1_codec(const struct pack_opts *o)
{
	return o->codec == SZIP_CODEC_DEFLATE && o->checksum == SZIP_CSUM_NONE;
}

/**
 * pack_set_defaults() - fill in what depends on other options
 * @o: the options; a format or level of 0 means "not given"
 *
 * Format 1 if it can hold what the other options ask for, else 2; the
 * codec's default level.
 */
void pack_set_defaults(struct pack_opts *o)
{
	if (!o->format)
		o->format = format1_codec(o) &&
			    szip_chunk_size_ok(1, o->chunk_size) ? 1 : 2;
	if (!o->level)
		o->level = default_level(o->codec);
}

/**
 * pack_check_opts() - do the options fit together and the format?
 * @o: the options
 * @err: receives a message saying what does not fit
 * @err_len: size of @err
 *
 * Return: 0 or -EINVAL.
 */
int pack_check_opts(const struct pack_opts *o, char *err, size_t err_len)
{
	if (!szip_format_ok(o->format)) {
		snprintf(err, err_len, "format %d: only 1 and 2 exist", o->format);
		return -EINVAL;
	}
	if (o->codec < 1 || o->codec >= SZIP_NR_CODECS ||
	    o->checksum < 0 || o->checksum >= SZIP_NR_CSUMS) {
		snprintf(err, err_len, "unknown codec or checksum");
		return -EINVAL;
	}
	if (o->format < 2) {
		if (!format1_codec(o)) {
			snprintf(err, err_len, "format 1 has only deflate and no checksums");
			return -EINVAL;
		}
		if (!szip_chunk_size_ok(1, o->chunk_size)) {
			snprintf(err, err_len, "format 1 chunk sizes are multiples of 4096 up to 32768");
			return -EINVAL;
		}
	} else if (!szip_chunk_size_ok(2, o->chunk_size)) {
		snprintf(err, err_len, "format 2 chunk sizes are powers of two in 4096..131072");
		return -EINVAL;
	}
	if (o->level < 1 || o->level > max_level(o->codec)) {
		snprintf(err, err_len, "level %d out of range 1..%d", o->level,
			 max_level(o->codec));
		return -EINVAL;
	}
	if (o->dict_size != PACK_DICT_AUTO &&
	    (o->dict_size < 0 ||
	     (u32)o->dict_size > pack_max_dict(o->format, o->codec))) {
		snprintf(err, err_len, "dictionary size %d out of range 0..%u",
			 o->dict_size, pack_max_dict(o->format, o->codec));
		return -EINVAL;
	}
	return 0;
}
