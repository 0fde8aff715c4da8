// SPDX-License-Identifier: GPL-2.0
/*
 * szip chunk decoding: decompress one chunk (deflate, zstd or LZ4, or copy
 * a stored v2 chunk), undo its filter, verify its checksum.
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
	return sizeof(struct szip_decoder) + SZIP_WINDOW_SIZE +
	       szip_zws_size() + szip_zstd_ws_size();
}

/**
 * szip_decoder_init() - prepare decoder memory for use
 * @d: szip_decoder_size() bytes, suitably aligned for any type
 *
 * Context: may sleep in userspace (zlib and zstd allocate);
 * allocation-free in the kernel.
 * Return: %SZIP_OK or %SZIP_ERR_INTERNAL.
 */
enum szip_ret szip_decoder_init(struct szip_decoder *d)
{
	u8 *mem = (u8 *)(d + 1);

	d->scratch = mem;
	d->zstd = NULL;
	if (szip_zinit(&d->zs, mem + SZIP_WINDOW_SIZE))
		return SZIP_ERR_INTERNAL;
	if (SZIP_HAVE_ZSTD) {
		d->zstd = szip_zstd_init(mem + SZIP_WINDOW_SIZE +
					 szip_zws_size());
		if (!d->zstd) {
			szip_zend(&d->zs);
			return SZIP_ERR_INTERNAL;
		}
	}
	return SZIP_OK;
}

/**
 * szip_decoder_end() - release what szip_decoder_init() set up
 * @d: an initialised decoder
 */
void szip_decoder_end(struct szip_decoder *d)
{
	if (d->zstd)
		szip_zstd_end(d->zstd);
	szip_zend(&d->zs);
}

/**
 * szip_file_prepare() - set up what decoding a file's chunks needs beyond
 * its bytes: the zstd form of its dictionary
 * @f: a file accepted by szip_check_support() and szip_file_set_meta()
 *
 * Context: may sleep (allocates).  Call szip_file_release() when done.
 * Return: %SZIP_OK or %SZIP_ERR_INTERNAL (out of memory).
 */
enum szip_ret szip_file_prepare(struct szip_file *f)
{
	if (f->info.codec != SZIP_CODEC_ZSTD || !f->info.dict_size ||
	    f->zstd_dict)
		return SZIP_OK;
	f->zstd_dict = szip_zstd_dict_new(f->dict, f->info.dict_size);
	return f->zstd_dict ? SZIP_OK : SZIP_ERR_INTERNAL;
}

/**
 * szip_file_release() - free what szip_file_prepare() allocated
 * @f: the file
 */
void szip_file_release(struct szip_file *f)
{
	if (f->zstd_dict)
		szip_zstd_dict_free(f->zstd_dict);
	f->zstd_dict = NULL;
}

/* Run the dictionary through the inflater as a leading stored block. */
static enum szip_ret szip_feed_dictionary(struct szip_decoder *d, const u8 *dict,
					  u32 len)
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
static enum szip_ret szip_stopped_early(z_stream *zs)
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
static enum szip_ret szip_inflate_result(z_stream *zs, int zret)
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
		return szip_stopped_early(zs);
	return SZIP_ERR_INTERNAL;
}

/* Raw deflate of one chunk, with the dictionary as preset history */
static enum szip_ret szip_inflate_chunk(struct szip_decoder *d,
					const struct szip_info *info,
					const u8 *dict, const u8 *in, size_t in_len,
					u8 *out, u32 ulen)
{
	z_stream *zs = &d->zs;
	int wbits = info->window_bits;
	enum szip_ret ret;

	/* legacy files (0): zlib-wrapped, window size from the zlib header */
	if (wbits == SZIP_WBITS_LEGACY)
		wbits = SZIP_WBITS_MAX;
	if (szip_zreset(zs, wbits))
		return SZIP_ERR_INTERNAL;
	if (info->dict_size) {
		ret = szip_feed_dictionary(d, dict, info->dict_size);
		if (ret)
			return ret;
	}

	zs->next_in = in;
	zs->avail_in = in_len;
	zs->next_out = out;
	zs->avail_out = ulen;
	return szip_inflate_result(zs, szip_zinflate(zs, Z_FINISH));
}

/* A v2 chunk: stored, or one zstd frame / LZ4 block / deflate stream */
static enum szip_ret szip_decode_v2(struct szip_decoder *d,
				    const struct szip_file *f, const u8 *in,
				    size_t in_len, u8 *out, u32 ulen)
{
	const struct szip_info *info = &f->info;
	long n;

	if (in_len == ulen) {
		memcpy(out, in, ulen);
		return SZIP_OK;
	}
	if (in_len > ulen)
		return SZIP_ERR_CHUNK_LONG;

	switch (info->codec) {
	case SZIP_CODEC_DEFLATE:
		return szip_inflate_chunk(d, info, f->dict, in, in_len, out, ulen);
	case SZIP_CODEC_ZSTD:
		if (info->dict_size && !f->zstd_dict)
			return SZIP_ERR_INTERNAL;	/* not prepared */
		/* one frame: a second one or bytes after it are corruption */
		if (szip_zstd_frame_size(in, in_len) != in_len)
			return SZIP_ERR_CODEC_DATA;
		n = szip_zstd_decompress(d->zstd, out, ulen, in, in_len,
					 info->dict_size ? f->zstd_dict : NULL);
		break;
	case SZIP_CODEC_LZ4: {
		u32 dlen = info->dict_size;
		const u8 *dict = f->dict;

		if (dlen > SZIP_LZ4_WINDOW) {
			dict += dlen - SZIP_LZ4_WINDOW;
			dlen = SZIP_LZ4_WINDOW;
		}
		n = szip_lz4_decompress(in, in_len, out, ulen, dict, dlen);
		break;
	}
	default:
		return SZIP_ERR_CODEC;
	}
	if (n < 0)
		return SZIP_ERR_CODEC_DATA;
	return (u32)n == ulen ? SZIP_OK : SZIP_ERR_CHUNK_SHORT;
}

/**
 * szip_csum() - checksum of a buffer, as szip v2 stores it
 * @checksum: %SZIP_CSUM_XXH64 or %SZIP_CSUM_CRC32C
 * @buf: the bytes
 * @len: their number
 *
 * Return: the xxh64 (seed 0) or CRC-32C value; 0 for %SZIP_CSUM_NONE.
 */
u64 szip_csum(u8 checksum, const u8 *buf, size_t len)
{
	switch (checksum) {
	case SZIP_CSUM_XXH64:
		return szip_xxh64(buf, len);
	case SZIP_CSUM_CRC32C:
		return szip_crc32c(buf, len);
	default:
		return 0;
	}
}

/**
 * szip_decode_chunk() - decompress, unfilter and verify one chunk
 * @d: an initialised decoder, not used concurrently
 * @f: the file: validated header and tables (and, for zstd with a
 *	dictionary, szip_file_prepare())
 * @index: chunk number
 * @in: the chunk's compressed bytes
 * @in_len: their number, szip_chunk_clen()
 * @out: receives szip_chunk_ulen() bytes
 *
 * The chunk must decompress to exactly its uncompressed length and use all
 * of its compressed bytes, and match its checksum if the file has them.
 * On failure the contents of @out are undefined.
 *
 * Return: %SZIP_OK or the &enum szip_ret describing the corruption.
 */
enum szip_ret szip_decode_chunk(struct szip_decoder *d,
				const struct szip_file *f, u32 index,
				const u8 *in, size_t in_len, u8 *out)
{
	const struct szip_info *info = &f->info;
	u32 ulen;
	enum szip_ret ret;

	if (index >= info->nr_chunks)
		return SZIP_ERR_CHUNK_INDEX;
	ulen = szip_chunk_ulen(info, index);

	if (info->version >= 2) {
		ret = szip_check_support(info);
		if (!ret)
			ret = szip_decode_v2(d, f, in, in_len, out, ulen);
	} else {
		ret = szip_inflate_chunk(d, info, f->dict, in, in_len, out, ulen);
	}
	if (ret)
		return ret;

	/* positions are modulo 2^32 (docs/szip-format.md, sections 5, 9) */
	szip_bcj(info->filter, out, ulen, (u32)((u64)index * info->chunk_size),
		 false);
	if (info->checksum &&
	    szip_csum(info->checksum, out, ulen) != szip_chunk_csum(f, index))
		return SZIP_ERR_CHECKSUM;
	return SZIP_OK;
}
