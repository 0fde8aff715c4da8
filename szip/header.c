// SPDX-License-Identifier: GPL-2.0
/*
 * szip header and table validation, v1 (faulty.lib) and v2.
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
	[SZIP_ERR_V2_SHORT] = "shorter than the 64-byte szip v2 header",
	[SZIP_ERR_CHUNK_SHIFT] = "v2 chunk size not a power of two in 4 KiB..128 KiB",
	[SZIP_ERR_CODEC] = "unknown codec id",
	[SZIP_ERR_CSUM_ID] = "unknown checksum id",
	[SZIP_ERR_RESERVED] = "reserved header bytes set (a newer format revision)",
	[SZIP_ERR_SIZE] = "uncompressed size not matching the chunk count, or empty file with data",
	[SZIP_ERR_DICT_SIZE] = "dictionary larger than 256 KiB",
	[SZIP_ERR_NO_ZSTD] = "zstd chunks, and this build has no zstd decoder",
	[SZIP_ERR_NO_ZSTD_DICT] = "zstd dictionary, and this kernel's zstd cannot use one",
	[SZIP_ERR_NO_LZ4] = "LZ4 chunks, and this build has no LZ4 decoder",
	[SZIP_ERR_CHECKSUM] = "chunk checksum mismatch (corrupt data)",
	[SZIP_ERR_CODEC_DATA] = "corrupt zstd or LZ4 data",
};

/**
 * szip_strerror() - describe a library result
 * @ret: an &enum szip_ret value
 *
 * Return: a static, human-readable message; never NULL.
 */
const char *szip_strerror(enum szip_ret ret)
{
	/* unsigned: an out-of-range value may be negative */
	if ((unsigned int)ret >= SZIP_NR_ERRORS)
		return "unknown szip error";
	return messages[ret];
}

static bool szip_window_bits_valid(int wbits)
{
	if (wbits < 0)
		wbits = -wbits;
	return wbits == 0 ||
	       (wbits >= SZIP_WBITS_MIN && wbits <= SZIP_WBITS_MAX);
}

/* The bytes of @field of the on-disk header struct @type in @p */
#define FIELD(p, type, field)	((p) + offsetof(struct type, field))

/* v1: faulty.lib's 20-byte header */
static enum szip_ret szip_parse_v1(struct szip_info *info, const u8 *p,
				   u64 file_size)
{
	u64 table_end;

	info->version = 1;
	info->codec = SZIP_CODEC_DEFLATE;
	info->checksum = SZIP_CSUM_NONE;
	info->total_size = szip_le32(FIELD(p, szip_header, total_size));
	info->chunk_size = szip_le16(FIELD(p, szip_header, chunk_size));
	info->dict_size = szip_le16(FIELD(p, szip_header, dict_size));
	info->nr_chunks = szip_le32(FIELD(p, szip_header, nr_chunks));
	info->last_chunk_size = szip_le16(FIELD(p, szip_header, last_chunk_size));
	info->window_bits = (s8)*FIELD(p, szip_header, window_bits);
	info->filter = *FIELD(p, szip_header, filter);

	if (!info->chunk_size || info->chunk_size % SZIP_CHUNK_ALIGN ||
	    info->chunk_size > SZIP_MAX_CHUNK_SIZE)
		return SZIP_ERR_CHUNK_SIZE;
	if (!info->nr_chunks)
		return SZIP_ERR_NR_CHUNKS;
	if (!info->last_chunk_size || info->last_chunk_size > info->chunk_size)
		return SZIP_ERR_LAST_CHUNK;
	if (!szip_window_bits_valid(info->window_bits))
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

	info->dict_offset = SZIP_HEADER_SIZE;
	info->table_offset = SZIP_HEADER_SIZE + info->dict_size;
	info->csum_offset = table_end;
	info->data_offset = table_end;
	info->size = (u64)(info->nr_chunks - 1) * info->chunk_size +
		     info->last_chunk_size;
	return SZIP_OK;
}

/**
 * szip_csum_size() - bytes per checksum table entry in format 2
 * @checksum: a SZIP_CSUM_* id
 *
 * Return: 8 for xxh64, 4 for CRC-32C, 0 without a checksum.
 */
u32 szip_csum_size(u8 checksum)
{
	switch (checksum) {
	case SZIP_CSUM_XXH64:
		return 8;
	case SZIP_CSUM_CRC32C:
		return 4;
	default:
		return 0;
	}
}

/* v2: this project's 64-byte header (docs/szip-format.md, section 9) */
static enum szip_ret szip_parse_v2(struct szip_info *info, const u8 *p,
				   u64 file_size)
{
	u64 nr_chunks, table_end;
	u32 shift, i;

	info->version = 2;
	info->codec = *FIELD(p, szip2_header, codec);
	shift = *FIELD(p, szip2_header, chunk_shift);
	info->filter = *FIELD(p, szip2_header, filter);
	info->checksum = *FIELD(p, szip2_header, checksum);
	info->size = szip_le64(FIELD(p, szip2_header, size));
	info->total_size = szip_le64(FIELD(p, szip2_header, total_size));
	info->dict_size = szip_le32(FIELD(p, szip2_header, dict_size));
	info->nr_chunks = szip_le32(FIELD(p, szip2_header, nr_chunks));
	info->window_bits = SZIP_WBITS_DEFAULT;

	if (!info->codec || info->codec >= SZIP_NR_CODECS)
		return SZIP_ERR_CODEC;
	if (shift < SZIP2_MIN_CHUNK_SHIFT || shift > SZIP2_MAX_CHUNK_SHIFT)
		return SZIP_ERR_CHUNK_SHIFT;
	if (info->filter >= SZIP_NR_FILTERS)
		return SZIP_ERR_FILTER;
	if (info->checksum >= SZIP_NR_CSUMS)
		return SZIP_ERR_CSUM_ID;
	for (i = offsetof(struct szip2_header, reserved); i < SZIP2_HEADER_SIZE; i++)
		if (p[i])
			return SZIP_ERR_RESERVED;
	info->chunk_size = 1U << shift;
	/* an empty file (size 0) has no chunks */
	nr_chunks = info->size ? ((info->size - 1) >> shift) + 1 : 0;
	if (nr_chunks != info->nr_chunks)
		return SZIP_ERR_SIZE;
	if (info->dict_size > SZIP2_MAX_DICT_SIZE)
		return SZIP_ERR_DICT_SIZE;
	if (info->total_size > file_size)
		return SZIP_ERR_TRUNCATED;

	/* no overflow: at most 2^32 chunks of 16 table bytes each */
	info->dict_offset = SZIP2_HEADER_SIZE;
	info->table_offset = SZIP2_HEADER_SIZE + (u64)info->dict_size;
	info->csum_offset = info->table_offset + nr_chunks * SZIP2_OFFSET_SIZE;
	table_end = info->csum_offset +
		    nr_chunks * szip_csum_size(info->checksum);
	if (table_end + nr_chunks > info->total_size)
		return SZIP_ERR_TABLE;
	/* the last chunk ends at totalSize; without chunks, so do the tables */
	if (!nr_chunks && info->total_size != table_end)
		return SZIP_ERR_SIZE;
	info->data_offset = table_end;
	info->last_chunk_size = nr_chunks ?
		(u32)(info->size - ((nr_chunks - 1) << shift)) : 0;
	return SZIP_OK;
}

/**
 * szip_format_of() - the szip format a file's first bytes announce
 * @buf: the first bytes of the file
 * @len: number of bytes available at @buf
 *
 * The one magic test: every reader of szip files asks it.
 *
 * Return: 1 for the v1 magic, 2 for the v2 magic, 0 for neither or for
 * fewer than 4 bytes.
 */
int szip_format_of(const void *buf, size_t len)
{
	u32 magic;

	if (len < sizeof(magic))
		return 0;
	magic = szip_le32(buf);
	if (magic == SZIP_MAGIC)
		return 1;
	if (magic == SZIP2_MAGIC)
		return 2;
	return 0;
}

/**
 * szip_parse_header() - validate an szip header, v1 or v2
 * @info: filled in on success
 * @buf: the first bytes of the file (%SZIP2_HEADER_SIZE are enough)
 * @len: number of bytes available at @buf
 * @file_size: length of the whole file, to check totalSize against
 *
 * Checks every header field and that the dictionary and the tables lie
 * inside totalSize, which lies inside the file.  Bytes after totalSize are
 * allowed (the original reader ignores them).  The offset table itself is
 * checked by szip_check_table(), and whether this build can decode the
 * file by szip_check_support().
 *
 * Return: %SZIP_OK or the &enum szip_ret naming the first problem found.
 */
enum szip_ret szip_parse_header(struct szip_info *info, const void *buf,
				size_t len, u64 file_size)
{
	int format = szip_format_of(buf, len < file_size ? len : (size_t)file_size);

	if (format == 2) {
		if (len < SZIP2_HEADER_SIZE || file_size < SZIP2_HEADER_SIZE)
			return SZIP_ERR_V2_SHORT;
		return szip_parse_v2(info, buf, file_size);
	}
	if (len < SZIP_HEADER_SIZE || file_size < SZIP_HEADER_SIZE)
		return SZIP_ERR_SHORT;
	if (format != 1)
		return SZIP_ERR_MAGIC;
	return szip_parse_v1(info, buf, file_size);
}

/**
 * szip_check_support() - can this build decode a file with this header?
 * @info: a header accepted by szip_parse_header()
 *
 * Return: %SZIP_OK, or the error naming the missing capability
 * (%SZIP_ERR_NO_ZSTD, %SZIP_ERR_NO_ZSTD_DICT, %SZIP_ERR_NO_LZ4).
 */
enum szip_ret szip_check_support(const struct szip_info *info)
{
	if (info->codec == SZIP_CODEC_ZSTD) {
		if (!SZIP_HAVE_ZSTD)
			return SZIP_ERR_NO_ZSTD;
		if (info->dict_size && !SZIP_HAVE_ZSTD_DICT)
			return SZIP_ERR_NO_ZSTD_DICT;
	}
	if (info->codec == SZIP_CODEC_LZ4 && !SZIP_HAVE_LZ4)
		return SZIP_ERR_NO_LZ4;
	return SZIP_OK;
}

/**
 * szip_file_set_meta() - point a file's tables into its metadata bytes
 * @f: its @info filled in by szip_parse_header()
 * @meta: the file's bytes from @f->info.dict_offset to
 *	@f->info.data_offset (dictionary, offset table, checksum table)
 *
 * Clears @f->zstd_dict.
 */
void szip_file_set_meta(struct szip_file *f, const u8 *meta)
{
	const struct szip_info *info = &f->info;

	f->dict = info->dict_size ? meta : NULL;
	f->table = meta + (info->table_offset - info->dict_offset);
	f->csums = info->checksum ?
		   meta + (info->csum_offset - info->dict_offset) : NULL;
	f->zstd_dict = NULL;
}

static enum szip_ret szip_table_error(u32 *bad_chunk, u32 i)
{
	if (bad_chunk)
		*bad_chunk = i;
	return SZIP_ERR_OFFSETS;
}

/**
 * szip_check_table() - validate the offset table
 * @f: a file set up by szip_parse_header() and szip_file_set_meta()
 * @bad_chunk: on failure, the index of the first bad entry (may be NULL)
 *
 * Entries must be strictly increasing, the first at or after the end of
 * the tables and the last below totalSize, so that every chunk has at least
 * one byte and no chunk overlaps the header, dictionary, tables or another
 * chunk.  In v2 no chunk may be longer than its uncompressed size.
 *
 * Return: %SZIP_OK or %SZIP_ERR_OFFSETS.
 */
enum szip_ret szip_check_table(const struct szip_file *f, u32 *bad_chunk)
{
	const struct szip_info *info = &f->info;
	u64 prev = info->data_offset;
	u32 i;

	for (i = 0; i < info->nr_chunks; i++) {
		u64 off = szip_chunk_offset(f, i);

		if (off < prev || off >= info->total_size ||
		    (i && off == prev))
			return szip_table_error(bad_chunk, i);
		/* v2: chunk i - 1 (not the last) at most chunk_size bytes */
		if (info->version >= 2 && i && off - prev > info->chunk_size)
			return szip_table_error(bad_chunk, i - 1);
		prev = off;
	}
	if (info->version >= 2 &&
	    info->total_size - prev > info->last_chunk_size)
		return szip_table_error(bad_chunk, info->nr_chunks - 1);
	return SZIP_OK;
}

/**
 * szip_open_buffer() - validate a whole szip file held in memory
 * @f: filled in on success, its pointers into @buf
 * @buf: the file's bytes
 * @len: their number
 * @bad_chunk: see szip_check_table() (may be NULL)
 *
 * szip_parse_header(), szip_check_support(), szip_file_set_meta() and
 * szip_check_table() in one call, for callers that have the whole file.
 * A zstd file with a dictionary also needs szip_file_prepare().
 *
 * Return: %SZIP_OK or the first problem found.
 */
enum szip_ret szip_open_buffer(struct szip_file *f, const void *buf,
			       size_t len, u32 *bad_chunk)
{
	enum szip_ret ret = szip_parse_header(&f->info, buf, len, len);

	if (!ret)
		ret = szip_check_support(&f->info);
	if (ret)
		return ret;
	szip_file_set_meta(f, (const u8 *)buf + f->info.dict_offset);
	return szip_check_table(f, bad_chunk);
}

/**
 * szip_chunk_offset() - file offset of chunk @i's compressed data
 * @f: a file whose offset table has been validated
 * @i: chunk index, below the number of chunks
 *
 * Return: the absolute file offset.
 */
u64 szip_chunk_offset(const struct szip_file *f, u32 i)
{
	if (f->info.version >= 2)
		return szip_le64(f->table + (size_t)i * SZIP2_OFFSET_SIZE);
	return szip_le32(f->table + (size_t)i * SZIP_OFFSET_SIZE);
}

/**
 * szip_chunk_clen() - compressed length of chunk @i
 * @f: a file whose offset table has been validated
 * @i: chunk index, below the number of chunks
 *
 * Return: the number of compressed bytes, at least 1.
 */
u32 szip_chunk_clen(const struct szip_file *f, u32 i)
{
	u64 end = i + 1 < f->info.nr_chunks ?
		  szip_chunk_offset(f, i + 1) : f->info.total_size;

	return (u32)(end - szip_chunk_offset(f, i));
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

/**
 * szip_chunk_csum() - the checksum chunk @i's bytes must have
 * @f: a v2 file with a checksum (@f->csums set)
 * @i: chunk index, below the number of chunks
 *
 * Return: the stored xxh64 or CRC-32C value.
 */
u64 szip_chunk_csum(const struct szip_file *f, u32 i)
{
	if (f->info.checksum == SZIP_CSUM_XXH64)
		return szip_le64(f->csums + (size_t)i * 8);
	return szip_le32(f->csums + (size_t)i * 4);
}
