/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel half of the szip library's environment (see szip/szip_private.h):
 * lib/zlib_inflate, lib/zstd, lib/lz4, xxhash and libcrc32c.  Everything
 * here is allocation-free except the zstd dictionary, made once per file
 * at activation (codec.c).
 */
#ifndef _EXT4DEC_SZIP_ENV_H
#define _EXT4DEC_SZIP_ENV_H

#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zlib.h>
#include <linux/zstd.h>
#include <linux/lz4.h>
#include <linux/xxhash.h>
#include <linux/crc32c.h>

#include "compat.h"

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

#define SZIP_HAVE_ZSTD		1
#define SZIP_HAVE_ZSTD_DICT	EXT4DEC_HAVE_ZSTD_DDICT
#define SZIP_HAVE_LZ4		1

static inline size_t szip_zstd_ws_size(void)
{
	return zstd_dctx_workspace_bound();
}

static inline void *szip_zstd_init(void *ws)
{
	return zstd_init_dctx(ws, zstd_dctx_workspace_bound());
}

static inline void szip_zstd_end(void *zstd)
{
}

/* Length of the zstd frame at @in (0 if none is there whole) */
static inline size_t szip_zstd_frame_size(const u8 *in, size_t len)
{
	size_t n = zstd_find_frame_compressed_size(in, len);

	return zstd_is_error(n) ? 0 : n;
}

void *szip_zstd_dict_new(const u8 *dict, size_t len);
void szip_zstd_dict_free(void *ddict);
long szip_zstd_decompress(void *zstd, u8 *out, size_t cap, const u8 *in,
			  size_t len, void *ddict);

static inline long szip_lz4_decompress(const u8 *in, size_t len, u8 *out,
				       size_t cap, const u8 *dict,
				       size_t dict_len)
{
	if (dict_len)
		return LZ4_decompress_safe_usingDict((const char *)in,
						     (char *)out, len, cap,
						     (const char *)dict,
						     dict_len);
	return LZ4_decompress_safe((const char *)in, (char *)out, len, cap);
}

static inline u64 szip_xxh64(const u8 *buf, size_t len)
{
	return xxh64(buf, len, 0);
}

static inline u32 szip_crc32c(const u8 *buf, size_t len)
{
	return ~crc32c(~0U, buf, len);
}

#endif /* _EXT4DEC_SZIP_ENV_H */
