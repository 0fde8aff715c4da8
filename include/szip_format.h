/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * szip ("seekable zstream") on-disk format, as written by Mozilla's
 * faulty.lib szip tool (v1), and this project's v2 extension.  See
 * docs/szip-format.md for the full description.
 *
 * Shared verbatim by the kernel module, the decoder library and the packer.
 * Layout of a v1 file:
 *
 *   +0                     struct szip_header
 *   +20                    dictionary (dict_size bytes, may be 0)
 *   +20+dict_size          offset table: nr_chunks x __le32 (not aligned)
 *   +20+dict_size+4*n      chunk data, contiguous, in order
 *   +total_size            end of the szip data
 */
#ifndef _SZIP_FORMAT_H
#define _SZIP_FORMAT_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#else
#include <assert.h>
#include <stddef.h>
#endif

/* "SeZz" read as a little-endian 32-bit word */
#define SZIP_MAGIC		0x7A5A6553U

/**
 * struct szip_header - the 20-byte szip header, all fields little-endian
 * @magic: %SZIP_MAGIC
 * @total_size: bytes of szip data from offset 0 (header included); the
 *	end of the last chunk.  Not the uncompressed size.
 * @chunk_size: uncompressed bytes per chunk: a non-zero multiple of
 *	%SZIP_CHUNK_ALIGN, at most %SZIP_MAX_CHUNK_SIZE
 * @dict_size: preset dictionary length in bytes, 0 for none
 * @nr_chunks: number of chunks, at least 1
 * @last_chunk_size: uncompressed size of the last chunk, 1..@chunk_size
 * @window_bits: zlib windowBits: -8..-15 raw deflate, 0 (legacy) or 8..15
 *	zlib-wrapped chunks
 * @filter: branch-call-jump filter, one of the SZIP_FILTER_* ids
 *
 * The uncompressed size is (nr_chunks - 1) * chunk_size + last_chunk_size.
 */
struct szip_header {
	__le32 magic;
	__le32 total_size;
	__le16 chunk_size;
	__le16 dict_size;
	__le32 nr_chunks;
	__le16 last_chunk_size;
	__s8 window_bits;
	__u8 filter;
};

#define SZIP_HEADER_SIZE	20
#define SZIP_OFFSET_SIZE	4	/* bytes per offset table entry */

/*
 * Readers and writers take every field's offset from the structs
 * (offsetof); these checks keep the structs equal to the tables of
 * docs/szip-format.md.
 */
#define SZIP_LAYOUT(type, field, offset) \
	static_assert(offsetof(struct type, field) == (offset), \
		       #type "." #field " is not at byte " #offset)

SZIP_LAYOUT(szip_header, magic, 0);
SZIP_LAYOUT(szip_header, total_size, 4);
SZIP_LAYOUT(szip_header, chunk_size, 8);
SZIP_LAYOUT(szip_header, dict_size, 10);
SZIP_LAYOUT(szip_header, nr_chunks, 12);
SZIP_LAYOUT(szip_header, last_chunk_size, 16);
SZIP_LAYOUT(szip_header, window_bits, 18);
SZIP_LAYOUT(szip_header, filter, 19);
static_assert(sizeof(struct szip_header) == SZIP_HEADER_SIZE, "szip_header size");

/* Chunk size limits (uncompressed bytes) */
#define SZIP_CHUNK_ALIGN	4096
#define SZIP_MIN_CHUNK_SIZE	4096
#define SZIP_MAX_CHUNK_SIZE	32768
#define SZIP_DEFAULT_CHUNK_SIZE	16384

/* Dictionary: any u16 is representable; writers stay within the window */
#define SZIP_MAX_DICT_SIZE	65535
#define SZIP_MAX_WRITE_DICT	32768

/* windowBits as passed to zlib's inflateInit2 */
#define SZIP_WBITS_DEFAULT	(-15)	/* raw deflate, 32 KiB window */
#define SZIP_WBITS_LEGACY	0	/* pre-2013 files: zlib-wrapped chunks */
#define SZIP_WBITS_MIN		8
#define SZIP_WBITS_MAX		15

/* Filter ids (byte 19) */
#define SZIP_FILTER_NONE	0
#define SZIP_FILTER_THUMB	1
#define SZIP_FILTER_ARM		2
#define SZIP_FILTER_X86		3
#define SZIP_NR_FILTERS		4

/* Offsets are 32-bit: an szip file is smaller than 4 GiB */
#define SZIP_MAX_TOTAL_SIZE	0xFFFFFFFFULL

/*
 * szip v2: this project's extension, with its own magic so that no v1
 * field is ever reinterpreted.  See docs/szip-format.md, section 9.
 *
 *   +0                     struct szip2_header (64 bytes)
 *   +64                    dictionary (dict_size bytes, may be 0)
 *   +64+dict_size          offset table: nr_chunks x __le64
 *   ...                    checksum table: nr_chunks x __le64 (xxh64) or
 *                          __le32 (crc32c), absent without a checksum
 *   ...                    chunk data, in order, up to total_size
 *
 * A chunk whose compressed length equals its uncompressed length is
 * stored: its bytes are the (filtered) chunk itself, not codec data.
 */

/* "SeZ2" read as a little-endian 32-bit word */
#define SZIP2_MAGIC		0x325A6553U

/**
 * struct szip2_header - the 64-byte szip v2 header, all fields little-endian
 * @magic: %SZIP2_MAGIC
 * @codec: how chunks are compressed, one of the SZIP_CODEC_* ids
 * @chunk_shift: log2 of the uncompressed chunk size, %SZIP2_MIN_CHUNK_SHIFT
 *	to %SZIP2_MAX_CHUNK_SHIFT
 * @filter: branch-call-jump filter, one of the SZIP_FILTER_* ids
 * @checksum: per-chunk checksum of the uncompressed bytes, one of the
 *	SZIP_CSUM_* ids
 * @size: uncompressed size in bytes; 0 for an empty file
 * @total_size: bytes of szip data from offset 0; the end of the last chunk,
 *	or of the tables in an empty file (which has no chunks)
 * @dict_size: dictionary length in bytes, at most %SZIP2_MAX_DICT_SIZE
 * @nr_chunks: number of chunks: @size divided by the chunk size, rounded up
 *	(0 for an empty file; format 1 cannot represent one)
 * @reserved: must be zero; a reader refuses a file that sets any of it
 */
struct szip2_header {
	__le32 magic;
	__u8 codec;
	__u8 chunk_shift;
	__u8 filter;
	__u8 checksum;
	__le64 size;
	__le64 total_size;
	__le32 dict_size;
	__le32 nr_chunks;
	__u8 reserved[32];
};

#define SZIP2_HEADER_SIZE	64
#define SZIP2_OFFSET_SIZE	8	/* bytes per offset table entry */

SZIP_LAYOUT(szip2_header, magic, 0);
SZIP_LAYOUT(szip2_header, codec, 4);
SZIP_LAYOUT(szip2_header, chunk_shift, 5);
SZIP_LAYOUT(szip2_header, filter, 6);
SZIP_LAYOUT(szip2_header, checksum, 7);
SZIP_LAYOUT(szip2_header, size, 8);
SZIP_LAYOUT(szip2_header, total_size, 16);
SZIP_LAYOUT(szip2_header, dict_size, 24);
SZIP_LAYOUT(szip2_header, nr_chunks, 28);
SZIP_LAYOUT(szip2_header, reserved, 32);
static_assert(sizeof(struct szip2_header) == SZIP2_HEADER_SIZE, "szip2_header size");

#define SZIP2_MIN_CHUNK_SHIFT	12	/* 4 KiB */
#define SZIP2_MAX_CHUNK_SHIFT	17	/* 128 KiB */
#define SZIP2_MAX_CHUNK_SIZE	131072U	/* 1 << SZIP2_MAX_CHUNK_SHIFT */
#define SZIP2_MAX_DICT_SIZE	(256U * 1024)

/* Codec ids (byte 4) */
#define SZIP_CODEC_DEFLATE	1	/* raw deflate, 32 KiB window */
#define SZIP_CODEC_ZSTD		2	/* one zstd frame per chunk */
#define SZIP_CODEC_LZ4		3	/* one LZ4 block per chunk */
#define SZIP_NR_CODECS		4

/* Checksum ids (byte 7) and their table entry sizes */
#define SZIP_CSUM_NONE		0
#define SZIP_CSUM_XXH64		1	/* xxh64, seed 0, __le64 */
#define SZIP_CSUM_CRC32C	2	/* CRC-32C (Castagnoli), __le32 */
#define SZIP_NR_CSUMS		3

/* Dictionary bytes each codec can refer back to (the end of the dictionary) */
#define SZIP_DEFLATE_WINDOW	32768U
#define SZIP_LZ4_WINDOW		65536U

#endif /* _SZIP_FORMAT_H */
