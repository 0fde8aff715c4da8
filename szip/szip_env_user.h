/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace half of the szip library's environment (see szip_env.h): libc,
 * the system zlib, libzstd, liblz4 and libxxhash; CRC-32C is computed here
 * (no common library has it).
 */
#ifndef _SZIP_ENV_USER_H
#define _SZIP_ENV_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>
#include <zstd.h>
#include <lz4.h>
#include <xxhash.h>

#include <linux/types.h>

static inline size_t szip_zws_size(void)
{
	return 0;	/* system zlib allocates its own state */
}

static inline int szip_zinit(z_stream *zs, void *ws)
{
	(void)ws;
	memset(zs, 0, sizeof(*zs));
	return inflateInit2(zs, -15) == Z_OK ? 0 : -1;
}

static inline int szip_zreset(z_stream *zs, int wbits)
{
	return inflateReset2(zs, wbits) == Z_OK ? 0 : -1;
}

static inline int szip_zinflate(z_stream *zs, int flush)
{
	return inflate(zs, flush);
}

static inline void szip_zend(z_stream *zs)
{
	inflateEnd(zs);
}

#define SZIP_HAVE_ZSTD		1
#define SZIP_HAVE_ZSTD_DICT	1
#define SZIP_HAVE_LZ4		1

static inline size_t szip_zstd_ws_size(void)
{
	return 0;	/* libzstd allocates its own context */
}

static inline void *szip_zstd_init(void *ws)
{
	(void)ws;
	return ZSTD_createDCtx();
}

static inline void szip_zstd_end(void *zstd)
{
	ZSTD_freeDCtx(zstd);
}

/* Length of the zstd frame at @in (0 if none is there whole) */
static inline size_t szip_zstd_frame_size(const __u8 *in, size_t len)
{
	size_t n = ZSTD_findFrameCompressedSize(in, len);

	return ZSTD_isError(n) ? 0 : n;
}

static inline void *szip_zstd_dict_new(const __u8 *dict, size_t len)
{
	return ZSTD_createDDict(dict, len);
}

static inline void szip_zstd_dict_free(void *ddict)
{
	ZSTD_freeDDict(ddict);
}

static inline long szip_zstd_decompress(void *zstd, __u8 *out, size_t cap,
					const __u8 *in, size_t len,
					void *ddict)
{
	size_t ret;

	if (ddict)
		ret = ZSTD_decompress_usingDDict(zstd, out, cap, in, len, ddict);
	else
		ret = ZSTD_decompressDCtx(zstd, out, cap, in, len);
	return ZSTD_isError(ret) ? -1 : (long)ret;
}

static inline long szip_lz4_decompress(const __u8 *in, size_t len, __u8 *out,
				       size_t cap, const __u8 *dict,
				       size_t dict_len)
{
	if (len > LZ4_MAX_INPUT_SIZE || cap > LZ4_MAX_INPUT_SIZE)
		return -1;
	return LZ4_decompress_safe_usingDict((const char *)in, (char *)out,
					     (int)len, (int)cap,
					     (const char *)dict, (int)dict_len);
}

static inline __u64 szip_xxh64(const __u8 *buf, size_t len)
{
	return XXH64(buf, len, 0);
}

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bytewise */
static inline __u32 szip_crc32c(const __u8 *buf, size_t len)
{
	__u32 crc = ~0U;
	int k;

	while (len--) {
		crc ^= *buf++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78U & -(crc & 1));
	}
	return ~crc;
}

#endif /* _SZIP_ENV_USER_H */
