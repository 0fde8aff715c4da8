/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the szip library's kernel half asks of the module that builds it
 * (szip/szip_env_kernel.h): the kernel differences it depends on, answered
 * from compat.h, so that szip/ itself tests no kernel version.
 */
#ifndef _EXT4DEC_SZIP_KERNEL_CONFIG_H
#define _EXT4DEC_SZIP_KERNEL_CONFIG_H

#include "compat.h"

#define SZIP_HAVE_ZSTD_DICT	EXT4DEC_HAVE_ZSTD_DDICT

#endif /* _EXT4DEC_SZIP_KERNEL_CONFIG_H */
