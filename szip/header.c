// SPDX-License-Identifier: GPL-2.0
/*
 * szip header and offset table validation.
 *
 * The original reader trusts the offset table; this one checks every field
 * before any chunk is touched, so that a caller which has validated a file
 * can compute chunk extents without further bounds checks.
 */
#include "szip_private.h"

static const char *const messages[SZIP_NR_ERRORS] = {
	[SZIP_OK] = "success",
	[SZIP_ERR_SHORT] = "shorter than the 20-byte szip header",
	[SZIP_ERR_MAGIC] = "bad magic (not an szip file)",
	[SZIP_ERR_CHUNK_SIZE] = "chunk size not a multiple of 4096 in 4096..32768",
	[SZIP_ERR_NR_CHUNKS] = "zero chunks",
	[SZIP_ERR_LAST_CHUNK] = "last chunk size not in 1..chunk size",
	[SZIP_ERR_WINDOW_BITS] = "unsupported windowBits",
	[SZIP_ERR_FILTER] = "unknown filter id",
	[SZIP_ERR_DICT_WRAPPED] = "dictionary requires raw deflate (windowBits < 0)",
	[SZIP_ERR_TRUNCATED] = "file shorter than the header's total size (truncated)",
	[SZIP_ERR_TABLE] = "dictionary and offset table overrun the total size",
	[SZIP_ERR_OFFSETS] = "offset table entry out of order or out of range",
	[SZIP_ERR_CHUNK_INDEX] = "chunk index out of range",
	[SZIP_ERR_DATA] = "corrupt deflate data",
	[SZIP_ERR_CHUNK_LONG] = "inflates to more than its chunk size",
	[SZIP_ERR_CHUNK_SHORT] = "inflates to less than its chunk size",
	[SZIP_ERR_CHUNK_TRUNCATED] = "compressed data ends inside the deflate stream",
	[SZIP_ERR_CHUNK_TRAILING] = "trailing bytes after the deflate stream",
	[SZIP_ERR_INTERNAL] = "inflate backend failed to initialise",
};

/**
 * szip_strerror() - describe a library result
 * @ret: an &enum szip_ret value
 *
 * Return: a static, human-readable message; never NULL.
 */
const char *szip_strerror(int ret)
{
	if (ret < 0 || ret >= SZIP_NR_ERRORS)
		return "unknown szip error";
	return messages[ret];
}

static bool window_bits_valid(int wbits)
{
	if (wbits < 0)
		wbits = -wbits;
	return wbits == 0 ||
	       (wbits >= SZIP_WBITS_MIN && wbits <= SZIP_WBITS_MAX);
}

/**
 * szip_parse_header() - validate an szip header
 * @info: filled in on success
 * @buf: the first bytes of the file
 * @len: number of bytes available at @buf
 * @file_size: length of the whole file, to check totalSize against
 *
 * Checks every header field and that the dictionary and the offset table
 * lie inside totalSize, which lies inside the file.  Bytes after totalSize
 * are allowed (the original reader ignores them).  The offset table itself
 * is checked by szip_check_table().
 *
 * Return: %SZIP_OK or the &enum szip_ret naming the first problem found.
 */
int szip_parse_header(struct szip_info *info, const void *buf, size_t len,
		      u64 file_size)
{
	const u8 *p = buf;
	u64 table_end;

	if (len < SZIP_HEADER_SIZE || file_size < SZIP_HEADER_SIZE)
		return SZIP_ERR_SHORT;
	if (szip_le32(p) != SZIP_MAGIC)
		return SZIP_ERR_MAGIC;

	info->total_size = szip_le32(p + 4);
	info->chunk_size = szip_le16(p + 8);
	info->dict_size = szip_le16(p + 10);
	info->nr_chunks = szip_le32(p + 12);
	info->last_chunk_size = szip_le16(p + 16);
	info->window_bits = (s8)p[18];
	info->filter = p[19];

	if (!info->chunk_size || info->chunk_size % SZIP_CHUNK_ALIGN ||
	    info->chunk_size > SZIP_MAX_CHUNK_SIZE)
		return SZIP_ERR_CHUNK_SIZE;
	if (!info->nr_chunks)
		return SZIP_ERR_NR_CHUNKS;
	if (!info->last_chunk_size || info->last_chunk_size > info->chunk_size)
		return SZIP_ERR_LAST_CHUNK;
	if (!window_bits_valid(info->window_bits))
		return SZIP_ERR_WINDOW_BITS;
	if (info->filter >= SZIP_NR_FILTERS)
		return SZIP_ERR_FILTER;
	if (info->dict_size && info->window_bits >= 0)
		return SZIP_ERR_DICT_WRAPPED;
	if (info->total_size > file_size)
		return SZIP_ERR_TRUNCATED;

	/* every chunk needs at least one compressed byte */
	table_end = SZIP_HEADER_SIZE + (u64)info->dict_size +
		    (u64)info->nr_chunks * SZIP_OFFSET_SIZE;
	if (table_end + info->nr_chunks > info->total_size)
		return SZIP_ERR_TABLE;

	info->table_offset = SZIP_HEADER_SIZE + info->dict_size;
	info->data_offset = (u32)table_end;
	info->size = (u64)(info->nr_chunks - 1) * info->chunk_size +
		     info->last_chunk_size;
	return SZIP_OK;
}

/**
 * szip_check_table() - validate the offset table
 * @info: a header accepted by szip_parse_header()
 * @table: the @info->nr_chunks * 4 bytes of the table
 * @bad_chunk: on failure, the index of the first bad entry (may be NULL)
 *
 * Entries must be strictly increasing, the first at or after the end of
 * the table and the last below totalSize, so that every chunk has at least
 * one byte and no chunk overlaps the header, dictionary, table or another
 * chunk.
 *
 * Return: %SZIP_OK or %SZIP_ERR_OFFSETS.
 */
int szip_check_table(const struct szip_info *info, const u8 *table,
		     u32 *bad_chunk)
{
	u32 prev = info->data_offset;
	u32 i;

	for (i = 0; i < info->nr_chunks; i++) {
		u32 off = szip_le32(table + (size_t)i * SZIP_OFFSET_SIZE);

		if (off < prev || off >= info->total_size ||
		    (i && off == prev)) {
			if (bad_chunk)
				*bad_chunk = i;
			return SZIP_ERR_OFFSETS;
		}
		prev = off;
	}
	return SZIP_OK;
}

/**
 * szip_chunk_offset() - file offset of chunk @i's compressed data
 * @table: validated offset table
 * @i: chunk index, below the number of chunks
 *
 * Return: the absolute file offset.
 */
u32 szip_chunk_offset(const u8 *table, u32 i)
{
	return szip_le32(table + (size_t)i * SZIP_OFFSET_SIZE);
}

/**
 * szip_chunk_clen() - compressed length of chunk @i
 * @info: validated header
 * @table: validated offset table
 * @i: chunk index, below @info->nr_chunks
 *
 * Return: the number of compressed bytes, at least 1.
 */
u32 szip_chunk_clen(const struct szip_info *info, const u8 *table, u32 i)
{
	u32 end = i + 1 < info->nr_chunks ?
		  szip_chunk_offset(table, i + 1) : info->total_size;

	return end - szip_chunk_offset(table, i);
}

/**
 * szip_chunk_ulen() - uncompressed length of chunk @i
 * @info: validated header
 * @i: chunk index, below @info->nr_chunks
 *
 * Return: @info->chunk_size, or @info->last_chunk_size for the last chunk.
 */
u32 szip_chunk_ulen(const struct szip_info *info, u32 i)
{
	return i + 1 < info->nr_chunks ? info->chunk_size :
					 info->last_chunk_size;
}
