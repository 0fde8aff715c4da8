/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace half of the szip library's environment (see
 * szip/szip_private.h): libc and the system zlib.
 */
#ifndef _SZIP_CONFIG_H
#define _SZIP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

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

#endif /* _SZIP_CONFIG_H */
