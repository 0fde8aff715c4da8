// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of the szip library's kernel environment (szip_env_kernel.h)
 * that are not inline: zstd decompression, with a per-file dictionary
 * where the kernel can use one (SZIP_HAVE_ZSTD_DICT).  Built only into
 * the kernel module.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "szip_private.h"

#if SZIP_HAVE_ZSTD_DICT
static void *szip_ddict_alloc(void *opaque, size_t size)
{
	return kvmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

static void szip_ddict_free(void *opaque, void *address)
{
	kvfree(address);
}

/**
 * szip_zstd_dict_new() - prepare a file's dictionary for zstd
 * @dict: the dictionary bytes; they must outlive the result
 * @len: their number
 *
 * Context: process context, may sleep.
 * Return: the prepared dictionary, or NULL if out of memory.
 */
void *szip_zstd_dict_new(const u8 *dict, size_t len)
{
	zstd_custom_mem mem = {
		.customAlloc = szip_ddict_alloc,
		.customFree = szip_ddict_free,
	};

	return zstd_create_ddict_byreference(dict, len, mem);
}

/**
 * szip_zstd_dict_free() - free what szip_zstd_dict_new() returned
 * @ddict: the prepared dictionary, or NULL
 */
void szip_zstd_dict_free(void *ddict)
{
	if (ddict)
		zstd_free_ddict(ddict);
}
#else
void *szip_zstd_dict_new(const u8 *dict, size_t len)
{
	return NULL;
}

void szip_zstd_dict_free(void *ddict)
{
}
#endif

/**
 * szip_zstd_decompress() - decompress one zstd chunk
 * @zstd: the decoder's zstd context
 * @out: receives at most @cap bytes
 * @cap: the chunk's uncompressed length
 * @in: the chunk's compressed bytes
 * @len: their number
 * @ddict: the file's prepared dictionary, or NULL if it has none
 *
 * Return: the number of bytes written, or -1 if the data is corrupt or
 * would not fit in @cap bytes.
 */
long szip_zstd_decompress(void *zstd, u8 *out, size_t cap, const u8 *in,
			  size_t len, void *ddict)
{
	size_t ret;

#if SZIP_HAVE_ZSTD_DICT
	if (ddict)
		ret = zstd_decompress_using_ddict(zstd, out, cap, in, len, ddict);
	else
#endif
		ret = zstd_decompress_dctx(zstd, out, cap, in, len);
	return zstd_is_error(ret) ? -1 : (long)ret;
}
