/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one environment switch of the szip library: the kernel half is
 * szip_env_kernel.h and szip_env_kernel.c (lib/zlib_inflate, lib/zstd,
 * lib/lz4, xxhash, libcrc32c), the userspace half szip_env_user.h (libc,
 * the system zlib, libzstd, liblz4, libxxhash).  Each provides:
 *
 *   z_stream, Z_* and szip_zws_size(), szip_zinit(), szip_zreset(),
 *	szip_zinflate(), szip_zend(): raw inflate
 *   SZIP_HAVE_ZSTD, SZIP_HAVE_ZSTD_DICT, SZIP_HAVE_LZ4: 0 or 1
 *   szip_zstd_ws_size(), szip_zstd_init(), szip_zstd_end(),
 *	szip_zstd_frame_size(), szip_zstd_decompress(),
 *	szip_zstd_dict_new(), szip_zstd_dict_free()
 *   szip_lz4_decompress()
 *   szip_xxh64(), szip_crc32c()
 *
 * The library sources use only these names.  Userspace programs built
 * with the library (the szip tool, the tests) include this header too, for
 * the same libc and codec headers.
 */
#ifndef _SZIP_ENV_H
#define _SZIP_ENV_H

#ifdef __KERNEL__
#include "szip_env_kernel.h"
#else
#include "szip_env_user.h"
#endif

#endif /* _SZIP_ENV_H */
