// SPDX-License-Identifier: GPL-2.0
/*
 * szip encoder.
 *
 * Each chunk is filtered (BCJ) and deflated on its own as raw deflate with
 * a 32 KiB window, the layout faulty.lib reads.  Without a dictionary the
 * chunk is compressed by libdeflate and, at level 9, also by zlib at level 9
 * (faulty.lib's settings); the smaller stream wins, so output is never
 * larger than faulty.lib's at the same chunk size.  libdeflate has no
 * preset dictionaries: with one, zlib's stream using it competes with
 * libdeflate's stream ignoring it.
 *
 * "auto" filter and dictionary choices are made on a sample of chunks
 * spread over the input, so that they cost a fraction of a full pass.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <libdeflate.h>

#include "szip_config.h"
#include "pack.h"

#define SAMPLE_CHUNKS	128
#define DICT_WORD	8
#define OUT_CAP		(SZIP_MAX_CHUNK_SIZE * 2)

struct encoder {
	int level;
	int filter;
	const u8 *dict;
	u32 dict_size;
	struct libdeflate_compressor *ld;
	z_stream zs;
	bool zs_ready;
	u8 tmp[SZIP_MAX_CHUNK_SIZE];
	u8 alt[OUT_CAP];
};

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

static struct encoder *encoder_new(int level)
{
	struct encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->level = level;
	e->ld = libdeflate_alloc_compressor(level == 9 ? 12 : level);
	if (!e->ld)
		goto fail;
	if (deflateInit2(&e->zs, level, Z_DEFLATED, SZIP_WBITS_DEFAULT, 9,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto fail;
	e->zs_ready = true;
	return e;
fail:
	libdeflate_free_compressor(e->ld);
	free(e);
	return NULL;
}

static void encoder_free(struct encoder *e)
{
	if (!e)
		return;
	if (e->zs_ready)
		deflateEnd(&e->zs);
	libdeflate_free_compressor(e->ld);
	free(e);
}

static size_t zlib_chunk(struct encoder *e, const u8 *src, u32 len, u8 *out)
{
	z_stream *zs = &e->zs;

	if (deflateReset(zs) != Z_OK)
		return 0;
	if (e->dict_size &&
	    deflateSetDictionary(zs, e->dict, e->dict_size) != Z_OK)
		return 0;
	zs->next_in = src;
	zs->avail_in = len;
	zs->next_out = out;
	zs->avail_out = OUT_CAP;
	if (deflate(zs, Z_FINISH) != Z_STREAM_END)
		return 0;
	return OUT_CAP - zs->avail_out;
}

/*
 * Compress chunk data @src (@len bytes at uncompressed offset @pos) into
 * @out (OUT_CAP bytes).  Returns the compressed length, 0 on failure.
 */
static size_t encode_chunk(struct encoder *e, const u8 *src, u32 len, u32 pos,
			   u8 *out)
{
	size_t n, z;

	memcpy(e->tmp, src, len);
	szip_bcj(e->filter, e->tmp, len, pos, true);

	/*
	 * A stream that ignores the dictionary decodes the same with it
	 * installed, so libdeflate's output is always a candidate.
	 */
	n = libdeflate_deflate_compress(e->ld, e->tmp, len, out, OUT_CAP);
	if (n && e->level < 9 && !e->dict_size)
		return n;
	z = zlib_chunk(e, e->tmp, len, e->alt);
	if (z && (!n || z < n)) {
		memcpy(out, e->alt, z);
		n = z;
	}
	return n;
}

static u32 nr_chunks_of(size_t len, u32 chunk_size)
{
	return (u32)((len + chunk_size - 1) / chunk_size);
}

static u32 chunk_len(size_t len, u32 chunk_size, u32 i)
{
	size_t start = (size_t)i * chunk_size;

	return (u32)(len - start < chunk_size ? len - start : chunk_size);
}

/*
 * Estimated output size of the current variant, for comparing variants: the
 * compressed size of a sample of chunks, scaled to the whole input, plus
 * the dictionary, which is stored in the file.
 */
static u64 sample_cost(struct encoder *e, const u8 *in, size_t len,
		       u32 chunk_size)
{
	u32 n = nr_chunks_of(len, chunk_size);
	u32 samples = n < SAMPLE_CHUNKS ? n : SAMPLE_CHUNKS;
	u8 out[OUT_CAP];
	u64 total = 0;
	u32 s;

	for (s = 0; s < samples; s++) {
		u32 i = (u32)((u64)s * n / samples);
		size_t c = encode_chunk(e, in + (size_t)i * chunk_size,
					chunk_len(len, chunk_size, i),
					i * chunk_size, out);

		total += c ? c : OUT_CAP;
	}
	return total * n / samples + e->dict_size;
}

/*
 * @chunks is the number of chunks the word occurs in: a word in many chunks
 * saves bytes in each, one repeated inside a single chunk is already in
 * that chunk's window.
 */
struct word_count {
	u64 word;
	u64 count;
	u32 chunks;
	u32 last_chunk;
};

static int by_count(const void *a, const void *b)
{
	const struct word_count *x = a, *y = b;

	if (x->chunks != y->chunks)
		return x->chunks < y->chunks ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->word > y->word ? -1 : x->word < y->word;
}

static u64 hash_word(u64 w)
{
	w ^= w >> 33;
	w *= 0xff51afd7ed558ccdULL;
	w ^= w >> 33;
	return w;
}

/* Open-addressing table of 8-byte words; count 0 marks an empty slot. */
static struct word_count *count_words(const u8 *buf, size_t len,
				      u32 chunk_size, size_t *nr)
{
	size_t cap = 1 << 16, used = 0, i, pos;
	struct word_count *t = calloc(cap, sizeof(*t));

	for (pos = 0; t && pos + DICT_WORD <= len; pos += DICT_WORD) {
		u64 w;
		size_t h;

		memcpy(&w, buf + pos, DICT_WORD);
		h = hash_word(w) & (cap - 1);
		while (t[h].count && t[h].word != w)
			h = (h + 1) & (cap - 1);
		if (!t[h].count) {
			t[h].word = w;
			t[h].last_chunk = UINT32_MAX;
			used++;
		}
		t[h].count++;
		if (t[h].last_chunk != pos / chunk_size) {
			t[h].last_chunk = (u32)(pos / chunk_size);
			t[h].chunks++;
		}
		if (used * 2 <= cap)
			continue;

		/* grow: rehash into a table twice the size */
		struct word_count *n = calloc(cap * 2, sizeof(*n));

		for (i = 0; n && i < cap; i++) {
			if (!t[i].count)
				continue;
			h = hash_word(t[i].word) & (cap * 2 - 1);
			while (n[h].count)
				h = (h + 1) & (cap * 2 - 1);
			n[h] = t[i];
		}
		free(t);
		t = n;
		cap *= 2;
	}
	if (!t)
		return NULL;
	/* compact and sort, most frequent first */
	for (i = 0, used = 0; i < cap; i++)
		if (t[i].count)
			t[used++] = t[i];
	qsort(t, used, sizeof(*t), by_count);
	*nr = used;
	return t;
}

/*
 * faulty.lib's dictionary: the most frequent 8-byte words of the filtered
 * input at 8-byte-aligned positions, most frequent last, in a zeroed
 * 32 KiB buffer; a dictionary of size d is the buffer's last d bytes.
 * Ours ranks words by the number of chunks they occur in first, then by
 * count, then by value (descending, as faulty.lib's reversed walk of an
 * ordered map does for a stable sort); it compresses better.
 */
static int build_dictionary(const u8 *in, size_t len, u32 chunk_size,
			    int filter, u8 *dict)
{
	u8 *filtered = malloc(len ? len : 1);
	struct word_count *words;
	size_t nr = 0, i, slots = SZIP_MAX_WRITE_DICT / DICT_WORD;
	u32 c;

	if (!filtered)
		return -ENOMEM;
	memcpy(filtered, in, len);
	for (c = 0; c < nr_chunks_of(len, chunk_size); c++)
		szip_bcj(filter, filtered + (size_t)c * chunk_size,
			 chunk_len(len, chunk_size, c), c * chunk_size, true);
	words = count_words(filtered, len, chunk_size, &nr);
	free(filtered);
	if (!words)
		return -ENOMEM;

	memset(dict, 0, SZIP_MAX_WRITE_DICT);
	for (i = 0; i < nr && i < slots; i++)
		memcpy(dict + SZIP_MAX_WRITE_DICT - (i + 1) * DICT_WORD,
		       &words[i].word, DICT_WORD);
	free(words);
	return 0;
}

static void use_dict(struct encoder *e, const u8 *dict_buf, u32 size)
{
	e->dict_size = size;
	e->dict = dict_buf + SZIP_MAX_WRITE_DICT - size;
}

/* Decide the filter and dictionary size for "auto" options. */
static int choose_variant(struct encoder *e, const u8 *in, size_t len,
			  const struct pack_opts *o, u8 *dict_buf)
{
	u64 best, cost;
	int f, err;
	u32 d;

	use_dict(e, dict_buf, 0);
	e->filter = o->filter == PACK_FILTER_AUTO ? SZIP_FILTER_NONE : o->filter;
	best = sample_cost(e, in, len, o->chunk_size);
	if (o->filter == PACK_FILTER_AUTO) {
		for (f = SZIP_FILTER_THUMB; f < SZIP_NR_FILTERS; f++) {
			int keep = e->filter;

			e->filter = f;
			cost = sample_cost(e, in, len, o->chunk_size);
			if (cost < best)
				best = cost;
			else
				e->filter = keep;
		}
	}
	if (!o->dict_size)
		return 0;

	err = build_dictionary(in, len, o->chunk_size, e->filter, dict_buf);
	if (err)
		return err;
	if (o->dict_size != PACK_DICT_AUTO) {
		use_dict(e, dict_buf, (u32)o->dict_size);
		return 0;
	}
	for (d = SZIP_CHUNK_ALIGN, f = 0; d <= SZIP_MAX_WRITE_DICT;
	     d += SZIP_CHUNK_ALIGN) {
		use_dict(e, dict_buf, d);
		cost = sample_cost(e, in, len, o->chunk_size);
		if (cost < best) {
			best = cost;
			f = (int)d;
		}
	}
	use_dict(e, dict_buf, (u32)f);
	return 0;
}

static int grow(u8 **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 1 << 16;
	u8 *p;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static void put_le(u8 *p, u64 v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (u8)(v >> (8 * i));
}

/* Compress every chunk after the header, dictionary and offset table. */
static int pack_chunks(struct encoder *e, const u8 *in, size_t len,
		       const struct pack_opts *o, struct pack_result *res,
		       size_t *cap, char *err, size_t err_len)
{
	u32 n = nr_chunks_of(len, o->chunk_size);
	size_t table = SZIP_HEADER_SIZE + e->dict_size;
	size_t pos = table + (size_t)n * SZIP_OFFSET_SIZE;
	u8 out[OUT_CAP];
	u32 i;

	for (i = 0; i < n; i++) {
		size_t c = encode_chunk(e, in + (size_t)i * o->chunk_size,
					chunk_len(len, o->chunk_size, i),
					i * o->chunk_size, out);

		if (!c) {
			set_err(err, err_len, "deflate failed on chunk %u", i);
			return -EIO;
		}
		if (pos > SZIP_MAX_TOTAL_SIZE - c) {
			set_err(err, err_len,
				"compressed data exceeds the format's 4 GiB limit (32-bit offsets)");
			return -EFBIG;
		}
		if (grow(&res->data, cap, pos + c)) {
			set_err(err, err_len, "out of memory");
			return -ENOMEM;
		}
		put_le(res->data + table + (size_t)i * SZIP_OFFSET_SIZE, pos, 4);
		memcpy(res->data + pos, out, c);
		pos += c;
		if (o->progress && (i % 256 == 255 || i + 1 == n))
			o->progress(o->progress_arg,
				    (u64)i * o->chunk_size +
				    chunk_len(len, o->chunk_size, i), len);
	}
	res->len = pos;
	return 0;
}

static void put_header(const struct encoder *e, size_t len,
		       const struct pack_opts *o, struct pack_result *res)
{
	u32 n = nr_chunks_of(len, o->chunk_size);
	u8 *h = res->data;

	put_le(h, SZIP_MAGIC, 4);
	put_le(h + 4, res->len, 4);
	put_le(h + 8, o->chunk_size, 2);
	put_le(h + 10, e->dict_size, 2);
	put_le(h + 12, n, 4);
	put_le(h + 16, chunk_len(len, o->chunk_size, n - 1), 2);
	h[18] = (u8)SZIP_WBITS_DEFAULT;
	h[19] = (u8)e->filter;
	memcpy(h + SZIP_HEADER_SIZE, e->dict, e->dict_size);
}

/**
 * szip_pack() - encode a buffer as an szip file
 * @in: input bytes
 * @len: input length, at least 1
 * @opts: encoding options
 * @res: on success, the encoded file (caller frees @res->data)
 * @err: receives a message on failure
 * @err_len: size of @err
 *
 * Return: 0 or a negative errno.
 */
int szip_pack(const u8 *in, size_t len, const struct pack_opts *opts,
	      struct pack_result *res, char *err, size_t err_len)
{
	u8 *dict_buf = calloc(1, SZIP_MAX_WRITE_DICT);
	struct encoder *e = encoder_new(opts->level);
	size_t cap = 0;
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!len) {
		set_err(err, err_len, "empty input cannot be represented in szip");
		ret = -EINVAL;
		goto out;
	}
	if (len / opts->chunk_size >= 0xFFFFFFFFULL) {
		set_err(err, err_len, "input too large for 32-bit chunk count");
		ret = -EFBIG;
		goto out;
	}
	if (!e || !dict_buf) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	ret = choose_variant(e, in, len, opts, dict_buf);
	if (ret) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	ret = pack_chunks(e, in, len, opts, res, &cap, err, err_len);
	if (ret)
		goto out;
	put_header(e, len, opts, res);
	res->filter = e->filter;
	res->dict_size = e->dict_size;
out:
	if (ret) {
		free(res->data);
		res->data = NULL;
	}
	encoder_free(e);
	free(dict_buf);
	return ret;
}
