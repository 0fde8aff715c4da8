// SPDX-License-Identifier: GPL-2.0
/*
 * szip chunk decoding: inflate one chunk, then undo its filter.
 *
 * Preset dictionaries without inflateSetDictionary: the kernel's zlib has
 * none, so both builds install the dictionary the same way.  A raw deflate
 * stream may start with a non-final stored block; feeding
 * "00 | LEN | ~LEN | dictionary" ahead of the chunk's own (byte-aligned)
 * deflate data makes the inflater emit the dictionary and keep it as
 * history, exactly as if it had been set as a preset dictionary.  The
 * dictionary is inflated into a scratch buffer and the chunk into the
 * caller's buffer, so the caller sees only the chunk.
 */
#include "szip_private.h"

/* Length of a stored block header: BFINAL=0/BTYPE=00 byte, LEN, NLEN */
#define STORED_HDR_LEN	5

/**
 * szip_decoder_size() - bytes to allocate for a &struct szip_decoder
 *
 * Return: the size, including the dictionary scratch buffer and, in the
 * kernel, zlib's workspace.
 */
size_t szip_decoder_size(void)
{
	return sizeof(struct szip_decoder) + SZIP_WINDOW_SIZE + szip_zws_size();
}

/**
 * szip_decoder_init() - prepare decoder memory for use
 * @d: szip_decoder_size() bytes, suitably aligned for any type
 *
 * Context: may sleep in userspace (zlib allocates); allocation-free in the
 * kernel.
 * Return: %SZIP_OK or %SZIP_ERR_INTERNAL.
 */
int szip_decoder_init(struct szip_decoder *d)
{
	u8 *mem = (u8 *)(d + 1);

	d->scratch = mem;
	if (szip_zinit(&d->zs, mem + SZIP_WINDOW_SIZE))
		return SZIP_ERR_INTERNAL;
	return SZIP_OK;
}

/**
 * szip_decoder_end() - release what szip_decoder_init() set up
 * @d: an initialised decoder
 */
void szip_decoder_end(struct szip_decoder *d)
{
	szip_zend(&d->zs);
}

/* Run the dictionary through the inflater as a leading stored block. */
static int feed_dictionary(struct szip_decoder *d, const u8 *dict, u32 len)
{
	z_stream *zs = &d->zs;
	u8 hdr[STORED_HDR_LEN];

	/* only the last window's worth of a dictionary can be referenced */
	if (len > SZIP_WINDOW_SIZE) {
		dict += len - SZIP_WINDOW_SIZE;
		len = SZIP_WINDOW_SIZE;
	}
	hdr[0] = 0;
	hdr[1] = len & 0xff;
	hdr[2] = len >> 8;
	hdr[3] = ~len & 0xff;
	hdr[4] = (~len >> 8) & 0xff;

	zs->next_out = d->scratch;
	zs->avail_out = len;
	zs->next_in = hdr;
	zs->avail_in = STORED_HDR_LEN;
	if (szip_zinflate(zs, Z_NO_FLUSH) != Z_OK || zs->avail_in)
		return SZIP_ERR_INTERNAL;
	zs->next_in = dict;
	zs->avail_in = len;
	if (szip_zinflate(zs, Z_NO_FLUSH) != Z_OK || zs->avail_in ||
	    zs->avail_out)
		return SZIP_ERR_INTERNAL;
	return SZIP_OK;
}

/*
 * The stream stopped without reaching its end.  With output room left the
 * input ran out; with input left the output did.  With both used up, ask
 * for one more byte to tell a long chunk from a truncated one.
 */
static int stopped_early(z_stream *zs)
{
	u8 probe;

	if (zs->avail_out)
		return SZIP_ERR_CHUNK_TRUNCATED;
	if (zs->avail_in)
		return SZIP_ERR_CHUNK_LONG;
	zs->next_out = &probe;
	zs->avail_out = 1;
	szip_zinflate(zs, Z_FINISH);
	return zs->avail_out ? SZIP_ERR_CHUNK_TRUNCATED : SZIP_ERR_CHUNK_LONG;
}

/* Map the end state of a Z_FINISH inflate to a result. */
static int inflate_result(z_stream *zs, int zret)
{
	if (zret == Z_STREAM_END) {
		if (zs->avail_out)
			return SZIP_ERR_CHUNK_SHORT;
		if (zs->avail_in)
			return SZIP_ERR_CHUNK_TRAILING;
		return SZIP_OK;
	}
	if (zret == Z_DATA_ERROR)
		return SZIP_ERR_DATA;
	if (zret == Z_OK || zret == Z_BUF_ERROR)
		return stopped_early(zs);
	return SZIP_ERR_INTERNAL;
}

/**
 * szip_decode_chunk() - inflate and unfilter one chunk
 * @d: an initialised decoder, not used concurrently
 * @info: validated header of the file
 * @dict: the file's @info->dict_size dictionary bytes (unused if 0)
 * @index: chunk number
 * @in: the chunk's compressed bytes
 * @in_len: their number, szip_chunk_clen()
 * @out: receives szip_chunk_ulen() bytes
 *
 * The chunk must inflate to exactly its uncompressed length and use all of
 * its compressed bytes.  On failure the contents of @out are undefined.
 *
 * Return: %SZIP_OK or the &enum szip_ret describing the corruption.
 */
int szip_decode_chunk(struct szip_decoder *d, const struct szip_info *info,
		      const u8 *dict, u32 index, const u8 *in, size_t in_len,
		      u8 *out)
{
	z_stream *zs = &d->zs;
	int wbits = info->window_bits;
	u32 ulen;
	int ret;

	if (index >= info->nr_chunks)
		return SZIP_ERR_CHUNK_INDEX;
	ulen = szip_chunk_ulen(info, index);

	/* legacy files (0): zlib-wrapped, window size from the zlib header */
	if (wbits == SZIP_WBITS_LEGACY)
		wbits = SZIP_WBITS_MAX;
	if (szip_zreset(zs, wbits))
		return SZIP_ERR_INTERNAL;
	if (info->dict_size) {
		ret = feed_dictionary(d, dict, info->dict_size);
		if (ret)
			return ret;
	}

	zs->next_in = in;
	zs->avail_in = in_len;
	zs->next_out = out;
	zs->avail_out = ulen;
	ret = inflate_result(zs, szip_zinflate(zs, Z_FINISH));
	if (ret)
		return ret;

	szip_bcj(info->filter, out, ulen, index * info->chunk_size, false);
	return SZIP_OK;
}
