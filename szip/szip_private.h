/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one environment switch of the szip library.  The kernel side maps the
 * inflate backend onto lib/zlib_inflate; the userspace side comes from
 * tools/szip/szip_config.h (system zlib, libc).  the library sources use only the names
 * defined here.
 */
#ifndef _SZIP_PRIVATE_H
#define _SZIP_PRIVATE_H

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zlib.h>
#else
#include "szip_config.h"
#endif

#include "szip.h"

/* Largest history zlib keeps: only this much of a dictionary matters */
#define SZIP_WINDOW_SIZE	32768U	/* 2^SZIP_WBITS_MAX */

/**
 * struct szip_decoder - per-thread decoding state (caller-allocated)
 * @zs: the inflate stream
 * @scratch: %SZIP_WINDOW_SIZE bytes that receive the inflated dictionary
 *
 * In the kernel, zlib's workspace follows @scratch in the same allocation.
 */
struct szip_decoder {
	z_stream zs;
	u8 *scratch;
};

#ifdef __KERNEL__

static inline size_t szip_zws_size(void)
{
	return zlib_inflate_workspacesize();
}

static inline int szip_zinit(z_stream *zs, void *ws)
{
	zs->workspace = ws;
	return 0;
}

/* Kernel zlib has no inflateReset2; init is cheap and allocation-free. */
static inline int szip_zreset(z_stream *zs, int wbits)
{
	return zlib_inflateInit2(zs, wbits) == Z_OK ? 0 : -1;
}

static inline int szip_zinflate(z_stream *zs, int flush)
{
	return zlib_inflate(zs, flush);
}

static inline void szip_zend(z_stream *zs)
{
}

#endif /* __KERNEL__ */

/* Little-endian loads from byte arrays (the offset table is unaligned). */
static inline u16 szip_le16(const u8 *p)
{
	return (u16)(p[0] | (p[1] << 8));
}

static inline u32 szip_le32(const u8 *p)
{
	return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) |
	       ((u32)p[3] << 24);
}

#endif /* _SZIP_PRIVATE_H */
