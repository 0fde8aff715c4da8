/* SPDX-License-Identifier: GPL-2.0 */
/*
 * szip decoder library: header and offset-table validation, chunk
 * inflation, BCJ filters.  One source for the kernel module, the packer,
 * the unit tests and the fuzzer; see szip_private.h for the environment
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
 * @SZIP_ERR_MAGIC: no "SeZz" magic
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
	SZIP_NR_ERRORS
};

/**
 * struct szip_info - a validated header, in host byte order
 * @size: uncompressed size in bytes
 * @total_size: end of the szip data in the file
 * @chunk_size: uncompressed bytes per chunk
 * @last_chunk_size: uncompressed bytes in the last chunk
 * @nr_chunks: number of chunks
 * @dict_size: dictionary length (it starts at %SZIP_HEADER_SIZE)
 * @table_offset: file offset of the offset table
 * @data_offset: first byte after the offset table
 * @window_bits: windowBits from the header
 * @filter: SZIP_FILTER_* id
 */
struct szip_info {
	u64 size;
	u32 total_size;
	u32 chunk_size;
	u32 last_chunk_size;
	u32 nr_chunks;
	u32 dict_size;
	u32 table_offset;
	u32 data_offset;
	s8 window_bits;
	u8 filter;
};

struct szip_decoder;

const char *szip_strerror(int ret);

int szip_parse_header(struct szip_info *info, const void *buf, size_t len,
		      u64 file_size);
int szip_check_table(const struct szip_info *info, const u8 *table,
		     u32 *bad_chunk);
u32 szip_chunk_offset(const u8 *table, u32 i);
u32 szip_chunk_clen(const struct szip_info *info, const u8 *table, u32 i);
u32 szip_chunk_ulen(const struct szip_info *info, u32 i);

size_t szip_decoder_size(void);
int szip_decoder_init(struct szip_decoder *d);
void szip_decoder_end(struct szip_decoder *d);
int szip_decode_chunk(struct szip_decoder *d, const struct szip_info *info,
		      const u8 *dict, u32 index, const u8 *in, size_t in_len,
		      u8 *out);

void szip_bcj(u8 filter, u8 *buf, size_t len, u32 pos, bool encode);

#endif /* _SZIP_H */
