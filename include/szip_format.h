/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * szip ("seekable zstream") on-disk format, as written by Mozilla's
 * faulty.lib szip tool.  See docs/szip-format.md for the full description.
 *
 * Shared verbatim by the kernel module, the decoder library and the packer.
 * Layout of a file:
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

#endif /* _SZIP_FORMAT_H */
