/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the szip library: the environment (szip_env.h), the
 * decoder's state, byte-order helpers.
 */
#ifndef _SZIP_PRIVATE_H
#define _SZIP_PRIVATE_H

#include "szip_env.h"

#include "szip.h"

/* Largest history zlib keeps: only this much of a dictionary matters */
#define SZIP_WINDOW_SIZE	SZIP_DEFLATE_WINDOW	/* 2^SZIP_WBITS_MAX */

/**
 * struct szip_decoder - per-thread decoding state (caller-allocated)
 * @zs: the inflate stream
 * @zstd: the zstd decompression context, or NULL without zstd
 * @scratch: %SZIP_WINDOW_SIZE bytes that receive the inflated dictionary
 *
 * In the kernel, zlib's and zstd's workspaces follow @scratch in the same
 * allocation.
 */
struct szip_decoder {
	z_stream zs;
	void *zstd;
	u8 *scratch;
};

/* Little-endian loads from byte arrays (the tables are unaligned). */
static inline u16 szip_le16(const u8 *p)
{
	return (u16)(p[0] | (p[1] << 8));
}

static inline u32 szip_le32(const u8 *p)
{
	return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) |
	       ((u32)p[3] << 24);
}

static inline u64 szip_le64(const u8 *p)
{
	return szip_le32(p) | ((u64)szip_le32(p + 4) << 32);
}

#endif /* _SZIP_PRIVATE_H */
