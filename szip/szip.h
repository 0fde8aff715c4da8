/* SPDX-License-Identifier: GPL-2.0 */
/*
 * szip decoder library: header and table validation for v1 (faulty.lib)
 * and v2 files, chunk decoding (deflate, zstd, LZ4), checksums, BCJ
 * filters.  One source for the kernel module, the packer,
 * the unit tests and the fuzzer; see szip_env.h for the environment
 * switch.  The library never allocates: callers provide the decoder's
 * memory (szip_decoder_size() bytes).
 */
#ifndef _SZIP_H
#define _SZIP_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
#endif

#include "szip_format.h"

/**
 * enum szip_ret - result of a library call
 * @SZIP_OK: success
 * @SZIP_ERR_SHORT: fewer bytes than the 20-byte header
 * @SZIP_ERR_MAGIC: neither the v1 ("SeZz") nor the v2 ("SeZ2") magic
 * @SZIP_ERR_CHUNK_SIZE: chunk size 0, not a multiple of 4096 or above 32768
 * @SZIP_ERR_NR_CHUNKS: zero chunks
 * @SZIP_ERR_LAST_CHUNK: last chunk size 0 or above the chunk size
 * @SZIP_ERR_WINDOW_BITS: windowBits zlib would not accept
 * @SZIP_ERR_FILTER: unknown filter id
 * @SZIP_ERR_DICT_WRAPPED: dictionary with zlib-wrapped (windowBits >= 0)
 *	chunks, which zlib cannot decode
 * @SZIP_ERR_TRUNCATED: totalSize larger than the file
 * @SZIP_ERR_TABLE: header, dictionary and offset table overrun totalSize
 * @SZIP_ERR_OFFSETS: offset table entry out of order or out of range
 * @SZIP_ERR_CHUNK_INDEX: chunk index beyond the last chunk
 * @SZIP_ERR_DATA: invalid deflate data in a chunk
 * @SZIP_ERR_CHUNK_LONG: chunk inflates to more than its size
 * @SZIP_ERR_CHUNK_SHORT: chunk inflates to less than its size
 * @SZIP_ERR_CHUNK_TRUNCATED: compressed data ends before the deflate stream
 * @SZIP_ERR_CHUNK_TRAILING: bytes left in a chunk after its deflate stream
 * @SZIP_ERR_INTERNAL: the inflate backend failed to initialise
 * @SZIP_ERR_V2_SHORT: fewer bytes than the 64-byte v2 header
 * @SZIP_ERR_CHUNK_SHIFT: v2 chunk size not a power of two in 4 KiB..128 KiB
 * @SZIP_ERR_CODEC: unknown codec id
 * @SZIP_ERR_CSUM_ID: unknown checksum id
 * @SZIP_ERR_RESERVED: reserved header bytes not zero
 * @SZIP_ERR_SIZE: uncompressed size not matching the chunk count, or an
 *	empty (v2, 0-chunk) file whose totalSize is not the end of its tables
 * @SZIP_ERR_DICT_SIZE: dictionary larger than 256 KiB
 * @SZIP_ERR_NO_ZSTD: zstd chunks, and this build has no zstd decoder
 * @SZIP_ERR_NO_ZSTD_DICT: zstd chunks with a dictionary, and this build's
 *	zstd cannot decompress with one (Linux 6.1)
 * @SZIP_ERR_NO_LZ4: LZ4 chunks, and this build has no LZ4 decoder
 * @SZIP_ERR_CHECKSUM: a chunk's bytes do not match its checksum
 * @SZIP_ERR_CODEC_DATA: invalid zstd or LZ4 data in a chunk
 * @SZIP_NR_ERRORS: number of codes, not a code
 */
enum szip_ret {
	SZIP_OK = 0,
	SZIP_ERR_SHORT,
	SZIP_ERR_MAGIC,
	SZIP_ERR_CHUNK_SIZE,
	SZIP_ERR_NR_CHUNKS,
	SZIP_ERR_LAST_CHUNK,
	SZIP_ERR_WINDOW_BITS,
	SZIP_ERR_FILTER,
	SZIP_ERR_DICT_WRAPPED,
	SZIP_ERR_TRUNCATED,
	SZIP_ERR_TABLE,
	SZIP_ERR_OFFSETS,
	SZIP_ERR_CHUNK_INDEX,
	SZIP_ERR_DATA,
	SZIP_ERR_CHUNK_LONG,
	SZIP_ERR_CHUNK_SHORT,
	SZIP_ERR_CHUNK_TRUNCATED,
	SZIP_ERR_CHUNK_TRAILING,
	SZIP_ERR_INTERNAL,
	SZIP_ERR_V2_SHORT,
	SZIP_ERR_CHUNK_SHIFT,
	SZIP_ERR_CODEC,
	SZIP_ERR_CSUM_ID,
	SZIP_ERR_RESERVED,
	SZIP_ERR_SIZE,
	SZIP_ERR_DICT_SIZE,
	SZIP_ERR_NO_ZSTD,
	SZIP_ERR_NO_ZSTD_DICT,
	SZIP_ERR_NO_LZ4,
	SZIP_ERR_CHECKSUM,
	SZIP_ERR_CODEC_DATA,
	SZIP_NR_ERRORS
};

/**
 * struct szip_info - a validated header, in host byte order
 * @size: uncompressed size in bytes
 * @total_size: end of the szip data in the file
 * @table_offset: file offset of the offset table
 * @csum_offset: file offset of the checksum table (v2 with a checksum;
 *	otherwise equal to @data_offset)
 * @data_offset: first byte after the tables
 * @chunk_size: uncompressed bytes per chunk
 * @last_chunk_size: uncompressed bytes in the last chunk (0 without chunks)
 * @nr_chunks: number of chunks (0 only for an empty v2 file)
 * @dict_offset: file offset of the dictionary (the header's size)
 * @dict_size: dictionary length
 * @version: 1 (faulty.lib's format) or 2
 * @codec: SZIP_CODEC_* id (%SZIP_CODEC_DEFLATE for v1)
 * @checksum: SZIP_CSUM_* id (%SZIP_CSUM_NONE for v1)
 * @window_bits: v1 windowBits; -15 for v2 deflate
 * @filter: SZIP_FILTER_* id
 */
struct szip_info {
	u64 size;
	u64 total_size;
	u64 table_offset;
	u64 csum_offset;
	u64 data_offset;
	u32 chunk_size;
	u32 last_chunk_size;
	u32 nr_chunks;
	u32 dict_offset;
	u32 dict_size;
	u8 version;
	u8 codec;
	u8 checksum;
	s8 window_bits;
	u8 filter;
};

/**
 * struct szip_file - what decoding a chunk needs besides the chunk
 * @info: the validated header
 * @dict: the @info.dict_size dictionary bytes, or NULL if there are none
 * @table: the offset table (@info.nr_chunks entries)
 * @csums: the checksum table, or NULL if the file has no checksums
 * @zstd_dict: the dictionary as prepared for zstd by the environment, or
 *	NULL (zstd files with a dictionary need it; see szip_env.h)
 */
struct szip_file {
	struct szip_info info;
	const u8 *dict;
	const u8 *table;
	const u8 *csums;
	void *zstd_dict;
};

struct szip_decoder;

const char *szip_strerror(enum szip_ret ret);

int szip_format_of(const void *buf, size_t len);
enum szip_ret szip_parse_header(struct szip_info *info, const void *buf,
				size_t len, u64 file_size);
enum szip_ret szip_check_support(const struct szip_info *info);
void szip_file_set_meta(struct szip_file *f, const u8 *meta);
enum szip_ret szip_check_table(const struct szip_file *f, u32 *bad_chunk);
enum szip_ret szip_open_buffer(struct szip_file *f, const void *buf,
			       size_t len, u32 *bad_chunk);
u64 szip_chunk_offset(const struct szip_file *f, u32 i);
u32 szip_chunk_clen(const struct szip_file *f, u32 i);
u32 szip_chunk_ulen(const struct szip_info *info, u32 i);
u64 szip_chunk_csum(const struct szip_file *f, u32 i);
u64 szip_csum(u8 checksum, const u8 *buf, size_t len);
u32 szip_csum_size(u8 checksum);

size_t szip_decoder_size(void);
enum szip_ret szip_decoder_init(struct szip_decoder *d);
void szip_decoder_end(struct szip_decoder *d);
enum szip_ret szip_file_prepare(struct szip_file *f);
void szip_file_release(struct szip_file *f);
enum szip_ret szip_decode_chunk(struct szip_decoder *d,
				const struct szip_file *f, u32 index,
				const u8 *in, size_t in_len, u8 *out);

void szip_bcj(u8 filter, u8 *buf, size_t len, u32 pos, bool encode);

#endif /* _SZIP_H */
