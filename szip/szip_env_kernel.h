/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel half of the szip library's environment (see szip_env.h):
 * lib/zlib_inflate, lib/zstd, lib/lz4, xxhash and libcrc32c.  Everything
 * here is allocation-free except the zstd dictionary, made once per file
 * by szip_file_prepare() (szip_env_kernel.c).
 */
#ifndef _SZIP_ENV_KERNEL_H
#define _SZIP_ENV_KERNEL_H

#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zlib.h>
#include <linux/zstd.h>
#include <linux/lz4.h>
#include <linux/xxhash.h>
#include <linux/crc32c.h>

/*
 * szip tests no kernel version.  What differs between the kernels it is
 * built for, the module that builds it says in szip_kernel_config.h, found
 * on the module's include path (ext4dec's takes it from its compat.h):
 *
 *   SZIP_HAVE_ZSTD_DICT: 1 if the kernel's zstd can decompress with a
 *	dictionary (zstd_create_ddict_byreference(), zstd_free_ddict(),
 *	zstd_decompress_using_ddict()), else 0
 */
#include "szip_kernel_config.h"

#if !defined(SZIP_HAVE_ZSTD_DICT)
#error "szip_kernel_config.h must define SZIP_HAVE_ZSTD_DICT to 0 or 1"
#endif

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

#endif /* _SZIP_ENV_KERNEL_H */
