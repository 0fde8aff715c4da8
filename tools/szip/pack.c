// SPDX-License-Identifier: GPL-2.0
/*
 * szip encoder, formats 1 (faulty.lib's) and 2 (docs/szip-format.md, 9).
 *
 * Each chunk is filtered (BCJ) and compressed on its own.  Deflate chunks
 * are raw deflate with a 32 KiB window, the layout faulty.lib reads.  Without a dictionary the
 * chunk is compressed by libdeflate and, at level 9, also by zlib at level 9
 * (faulty.lib's settings); the smaller stream wins, so output is never
 * larger than faulty.lib's at the same chunk size.  libdeflate has no
 * preset dictionaries: with one, zlib's stream using it competes with
 * libdeflate's stream ignoring it.
 *
 * In format 2, zstd and LZ4 chunks are one zstd frame (without content
 * size, checksum or dictionary id: the reader knows them) or one LZ4 block
 * each, and a chunk the codec does not shrink is stored as it is.  zstd
 * dictionaries are trained with ZDICT on the filtered chunks (or, with too
 * few chunks to train on, are the word dictionary below as raw content);
 * deflate and LZ4 use the word dictionary.
 *
 * "auto" filter and dictionary choices are made on a sample of chunks
 * spread over the input, so that they cost a fraction of a full pass.
 *
 * With threads (-T), batches of chunks are compressed in parallel, each
 * thread with an encoder of its own, and appended in order: every chunk
 * is compressed alone, so the file is the same for any number of threads.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libdeflate.h>
#include <lz4hc.h>
#include <zdict.h>

#include "szip_env.h"
#include "options.h"

#define SAMPLE_CHUNKS	128
#define DICT_WORD	8
#define MAX_CHUNK	SZIP2_MAX_CHUNK_SIZE
#define OUT_CAP		(MAX_CHUNK * 2)
#define DICT_BUF	SZIP2_MAX_DICT_SIZE
#define ZSTD_AUTO_DICT	(64 * 1024)	/* the size --dict=auto trains */
#define BATCH_CHUNKS	16		/* chunks per thread and batch */

struct encoder {
	int format;
	int codec;
	int level;
	int filter;
	const u8 *dict;
	u32 dict_size;
	struct libdeflate_compressor *ld;
	z_stream zs;
	bool zs_ready;
	ZSTD_CCtx *zc;
	ZSTD_CDict *zdict;
	LZ4_stream_t *lz4;
	LZ4_streamHC_t *lz4hc;
	u8 tmp[MAX_CHUNK];
	u8 alt[OUT_CAP];
};

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

static struct encoder *encoder_new(const struct pack_opts *o)
{
	struct encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->format = o->format < 2 ? 1 : 2;
	e->codec = e->format < 2 ? SZIP_CODEC_DEFLATE : o->codec;
	e->level = o->level;
	switch (e->codec) {
	case SZIP_CODEC_ZSTD:
		e->zc = ZSTD_createCCtx();
		if (!e->zc ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_compressionLevel, e->level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_contentSizeFlag, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_checksumFlag, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(e->zc, ZSTD_c_dictIDFlag, 0)))
			goto fail;
		return e;
	case SZIP_CODEC_LZ4:
		e->lz4 = LZ4_createStream();
		e->lz4hc = LZ4_createStreamHC();
		if (!e->lz4 || !e->lz4hc)
			goto fail;
		return e;
	default:
		break;
	}
	e->ld = libdeflate_alloc_compressor(e->level == 9 ? 12 : e->level);
	if (!e->ld)
		goto fail;
	if (deflateInit2(&e->zs, e->level, Z_DEFLATED, SZIP_WBITS_DEFAULT, 9,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto fail;
	e->zs_ready = true;
	return e;
fail:
	ZSTD_freeCCtx(e->zc);
	LZ4_freeStream(e->lz4);
	LZ4_freeStreamHC(e->lz4hc);
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
	ZSTD_freeCCtx(e->zc);
	ZSTD_freeCDict(e->zdict);
	LZ4_freeStream(e->lz4);
	LZ4_freeStreamHC(e->lz4hc);
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

static size_t deflate_chunk(struct encoder *e, u32 len, u8 *out)
{
	size_t n, z;

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

static size_t zstd_chunk(struct encoder *e, u32 len, u8 *out)
{
	size_t n = ZSTD_compress2(e->zc, out, OUT_CAP, e->tmp, len);

	return ZSTD_isError(n) ? 0 : n;
}

static size_t lz4_chunk(struct encoder *e, u32 len, u8 *out)
{
	const char *dict = (const char *)e->dict;
	int n;

	if (e->level <= 1) {
		LZ4_resetStream_fast(e->lz4);
		if (e->dict_size)
			LZ4_loadDict(e->lz4, dict, (int)e->dict_size);
		n = LZ4_compress_fast_continue(e->lz4, (const char *)e->tmp,
					       (char *)out, (int)len, OUT_CAP, 1);
	} else {
		LZ4_resetStreamHC_fast(e->lz4hc, e->level);
		if (e->dict_size)
			LZ4_loadDictHC(e->lz4hc, dict, (int)e->dict_size);
		n = LZ4_compress_HC_continue(e->lz4hc, (const char *)e->tmp,
					     (char *)out, (int)len, OUT_CAP);
	}
	return n > 0 ? (size_t)n : 0;
}

/*
 * Compress chunk data @src (@len bytes at uncompressed offset @pos) into
 * @out (OUT_CAP bytes).  Returns the compressed length, 0 on failure.  In
 * format 2 a chunk the codec does not shrink is stored: @len bytes.
 */
static size_t encode_chunk(struct encoder *e, const u8 *src, u32 len, u32 pos,
			   u8 *out)
{
	size_t n;

	memcpy(e->tmp, src, len);
	szip_bcj(e->filter, e->tmp, len, pos, true);

	switch (e->codec) {
	case SZIP_CODEC_ZSTD:
		n = zstd_chunk(e, len, out);
		break;
	case SZIP_CODEC_LZ4:
		n = lz4_chunk(e, len, out);
		break;
	default:
		n = deflate_chunk(e, len, out);
		break;
	}
	if (e->format >= 2 && (!n || n >= len)) {
		memcpy(out, e->tmp, len);
		n = len;
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
struct word_table {
	struct word_count *t;
	size_t cap;
	size_t used;
};

/* Grow @wt to twice its size, rehashing every word */
static int grow_words(struct word_table *wt)
{
	struct word_count *n = calloc(wt->cap * 2, sizeof(*n));
	size_t i, h, mask = wt->cap * 2 - 1;

	if (!n)
		return -ENOMEM;
	for (i = 0; i < wt->cap; i++) {
		if (!wt->t[i].count)
			continue;
		h = hash_word(wt->t[i].word) & mask;
		while (n[h].count)
			h = (h + 1) & mask;
		n[h] = wt->t[i];
	}
	free(wt->t);
	wt->t = n;
	wt->cap *= 2;
	return 0;
}

/* Count word @w, seen in chunk @chunk */
static int add_word(struct word_table *wt, u64 w, u32 chunk)
{
	size_t h = hash_word(w) & (wt->cap - 1);

	while (wt->t[h].count && wt->t[h].word != w)
		h = (h + 1) & (wt->cap - 1);
	if (!wt->t[h].count) {
		wt->t[h].word = w;
		wt->t[h].last_chunk = UINT32_MAX;
		wt->used++;
	}
	wt->t[h].count++;
	if (wt->t[h].last_chunk != chunk) {
		wt->t[h].last_chunk = chunk;
		wt->t[h].chunks++;
	}
	return wt->used * 2 <= wt->cap ? 0 : grow_words(wt);
}

/*
 * The 8-byte words at 8-byte-aligned positions of the input as filtered
 * by @filter, chunk by chunk (chunk sizes are multiples of 8, so no word
 * straddles two): no copy of the whole input is made.
 */
static struct word_count *count_words(const u8 *in, size_t len,
				      u32 chunk_size, int filter, size_t *nr)
{
	struct word_table wt = { .cap = 1 << 16 };
	u8 *chunk = malloc(chunk_size);
	u32 c, n = nr_chunks_of(len, chunk_size);
	size_t i, pos;

	wt.t = calloc(wt.cap, sizeof(*wt.t));
	for (c = 0; chunk && wt.t && c < n; c++) {
		u32 l = chunk_len(len, chunk_size, c);

		memcpy(chunk, in + (size_t)c * chunk_size, l);
		szip_bcj(filter, chunk, l, c * chunk_size, true);
		for (pos = 0; pos + DICT_WORD <= l; pos += DICT_WORD) {
			u64 w;

			memcpy(&w, chunk + pos, DICT_WORD);
			if (add_word(&wt, w, c)) {
				free(wt.t);
				wt.t = NULL;
				break;
			}
		}
	}
	free(chunk);
	if (!wt.t)
		return NULL;
	/* compact and sort, most frequent first */
	for (i = 0, wt.used = 0; i < wt.cap; i++)
		if (wt.t[i].count)
			wt.t[wt.used++] = wt.t[i];
	qsort(wt.t, wt.used, sizeof(*wt.t), by_count);
	*nr = wt.used;
	return wt.t;
}

/*
 * faulty.lib's dictionary: the most frequent 8-byte words of the filtered
 * input at 8-byte-aligned positions, most frequent last, in a zeroed
 * 32 KiB buffer; a dictionary of size d is the buffer's last d bytes.
 * Ours ranks words by the number of chunks they occur in first, then by
 * count, then by value (descending, as faulty.lib's reversed walk of an
 * ordered map does for a stable sort); it compresses better.  LZ4 gets the
 * same, in a 64 KiB buffer (@cap).
 */
static int build_dictionary(const u8 *in, size_t len, u32 chunk_size,
			    int filter, u8 *dict, u32 cap)
{
	struct word_count *words;
	size_t nr = 0, i, slots = cap / DICT_WORD;

	words = count_words(in, len, chunk_size, filter, &nr);
	if (!words)
		return -ENOMEM;

	memset(dict, 0, cap);
	for (i = 0; i < nr && i < slots; i++)
		memcpy(dict + cap - (i + 1) * DICT_WORD, &words[i].word,
		       DICT_WORD);
	free(words);
	return 0;
}

/*
 * A zstd dictionary of at most @size bytes trained by ZDICT on the
 * filtered chunks (at most 256 per dictionary KiB, spread over the input),
 * at the end of @dict (DICT_BUF bytes).  Returns its size, 0 if ZDICT
 * could not train one (too few chunks), or a negative errno.
 */
static long train_zstd_dictionary(const u8 *in, size_t len, u32 chunk_size,
				  int filter, u8 *dict, u32 size)
{
	u32 n = nr_chunks_of(len, chunk_size), want = size / 4, s;
	size_t *sizes, got, used = 0;
	u8 *samples;

	want = want < n ? want : n;
	samples = malloc((size_t)want * chunk_size + 1);
	sizes = malloc(sizeof(*sizes) * (want + 1));
	if (!samples || !sizes) {
		free(samples);
		free(sizes);
		return -ENOMEM;
	}
	/* the sampled chunks, filtered as the compressor will see them */
	for (s = 0; s < want; s++) {
		u32 i = (u32)((u64)s * n / want);
		u32 l = chunk_len(len, chunk_size, i);

		memcpy(samples + used, in + (size_t)i * chunk_size, l);
		szip_bcj(filter, samples + used, l, i * chunk_size, true);
		sizes[s] = l;
		used += l;
	}
	got = ZDICT_trainFromBuffer(dict + DICT_BUF - size, size, samples,
				    sizes, want);
	free(samples);
	free(sizes);
	if (ZDICT_isError(got))
		return 0;
	memmove(dict + DICT_BUF - got, dict + DICT_BUF - size, got);
	return (long)got;
}

/* Make the last @size bytes of @dict_buf the dictionary (0: none). */
static int use_dict(struct encoder *e, const u8 *dict_buf, u32 size)
{
	e->dict_size = size;
	e->dict = dict_buf + DICT_BUF - size;
	if (e->codec != SZIP_CODEC_ZSTD)
		return 0;
	ZSTD_CCtx_refCDict(e->zc, NULL);
	ZSTD_freeCDict(e->zdict);
	e->zdict = NULL;
	if (!size)
		return 0;
	e->zdict = ZSTD_createCDict(e->dict, size, e->level);
	if (!e->zdict || ZSTD_isError(ZSTD_CCtx_refCDict(e->zc, e->zdict)))
		return -ENOMEM;
	return 0;
}

/* The dictionary for a format 2 zstd file */
static int choose_zstd_dict(struct encoder *e, const u8 *in, size_t len,
			    const struct pack_opts *o, u8 *dict_buf, u64 best)
{
	u32 size = o->dict_size == PACK_DICT_AUTO ? ZSTD_AUTO_DICT :
						    (u32)o->dict_size;
	long got = train_zstd_dictionary(in, len, o->chunk_size, e->filter,
					 dict_buf, size);

	if (got < 0)
		return (int)got;
	if (!got) {
		/* too few samples for ZDICT: a raw-content dictionary */
		int err = build_dictionary(in, len, o->chunk_size, e->filter,
					   dict_buf + DICT_BUF - size, size);

		if (err)
			return err;
		got = size;
	}
	if (use_dict(e, dict_buf, (u32)got))
		return -ENOMEM;
	if (o->dict_size == PACK_DICT_AUTO &&
	    sample_cost(e, in, len, o->chunk_size) >= best)
		return use_dict(e, dict_buf, 0);
	return 0;
}

/* Decide the filter and dictionary size for "auto" options. */
static int choose_variant(struct encoder *e, const u8 *in, size_t len,
			  const struct pack_opts *o, u8 *dict_buf)
{
	u32 cap = pack_max_dict(e->format, e->codec), d;
	u64 best, cost;
	int f, err;

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
	if (e->codec == SZIP_CODEC_ZSTD)
		return choose_zstd_dict(e, in, len, o, dict_buf, best);

	err = build_dictionary(in, len, o->chunk_size, e->filter,
			       dict_buf + DICT_BUF - cap, cap);
	if (err)
		return err;
	if (o->dict_size != PACK_DICT_AUTO)
		return use_dict(e, dict_buf, (u32)o->dict_size);
	for (d = SZIP_CHUNK_ALIGN, f = 0; d <= cap; d += SZIP_CHUNK_ALIGN) {
		use_dict(e, dict_buf, d);
		cost = sample_cost(e, in, len, o->chunk_size);
		if (cost < best) {
			best = cost;
			f = (int)d;
		}
	}
	return use_dict(e, dict_buf, (u32)f);
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

/*
 * Where the file goes: built whole in memory (@fd -1), or written to @fd
 * as it is made, only the header, dictionary and tables (@meta_len bytes,
 * written last at offset 0) held in memory, so that the memory taken does
 * not grow with the input.
 */
struct sink {
	int fd;
	u8 *data;		/* the file, or (@fd >= 0) its first @meta_len bytes */
	size_t cap;
	size_t meta_len;
	size_t pos;		/* where the next chunk goes */
};

static int sink_start(struct sink *s, size_t meta_len)
{
	s->meta_len = meta_len;
	s->pos = meta_len;
	if (s->fd < 0)
		return grow(&s->data, &s->cap, meta_len);
	s->data = calloc(1, meta_len);
	return s->data ? 0 : -ENOMEM;
}

static int pwrite_all(int fd, const u8 *p, size_t len, size_t pos)
{
	while (len) {
		ssize_t w = pwrite(fd, p, len, (off_t)pos);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		pos += (size_t)w;
		len -= (size_t)w;
	}
	return 0;
}

/* Append @c bytes at @p after what the sink holds */
static int sink_put(struct sink *s, const u8 *p, size_t c)
{
	int ret;

	if (s->fd >= 0) {
		ret = pwrite_all(s->fd, p, c, s->pos);
	} else {
		ret = grow(&s->data, &s->cap, s->pos + c);
		if (!ret)
			memcpy(s->data + s->pos, p, c);
	}
	if (!ret)
		s->pos += c;
	return ret;
}

/* The header, dictionary and tables are complete: write them */
static int sink_finish(struct sink *s)
{
	return s->fd < 0 ? 0 : pwrite_all(s->fd, s->data, s->meta_len, 0);
}

static void put_le(u8 *p, u64 v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (u8)(v >> (8 * i));
}

/* Where the chunk data starts: after the header, dictionary and tables */
static size_t tables_end(const struct encoder *e, u32 n, int checksum,
			 size_t *table, size_t *csums)
{
	if (e->format < 2) {
		*table = SZIP_HEADER_SIZE + e->dict_size;
		*csums = *table + (size_t)n * SZIP_OFFSET_SIZE;
		return *csums;
	}
	*table = SZIP2_HEADER_SIZE + e->dict_size;
	*csums = *table + (size_t)n * SZIP2_OFFSET_SIZE;
	return *csums + (size_t)n * szip_csum_size((u8)checksum);
}

/*
 * A batch of consecutive chunks compressed by one or more threads, each
 * with an encoder of its own, into a buffer per chunk.  Which thread
 * takes a chunk varies from run to run; what a chunk compresses to does
 * not (each is compressed alone), so the output is the same for any
 * number of threads.
 */
struct batch {
	const u8 *in;
	size_t len;
	u32 chunk_size;
	u32 first;		/* the batch's first chunk */
	u32 count;		/* its number of chunks */
	u32 next;		/* the next one to take (atomic), from 0 */
	u8 *out;		/* OUT_CAP bytes per chunk */
	size_t *clen;		/* compressed length per chunk, 0: failed */
};

struct worker {
	struct batch *b;
	struct encoder *e;
	pthread_t thread;
	bool started;
};

/* Take chunks of @b until none is left */
static void *compress_batch(void *arg)
{
	struct worker *w = arg;
	struct batch *b = w->b;
	u32 k;

	while ((k = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->count) {
		u32 i = b->first + k;

		b->clen[k] = encode_chunk(w->e, b->in + (size_t)i * b->chunk_size,
					  chunk_len(b->len, b->chunk_size, i),
					  i * b->chunk_size,
					  b->out + (size_t)k * OUT_CAP);
	}
	return NULL;
}

/*
 * Compress the chunks of @b with @nr workers, the caller being the first;
 * a thread that cannot be started leaves its share to the others.
 */
static void run_batch(struct batch *b, struct worker *w, int nr)
{
	int t;

	b->next = 0;
	for (t = 0; t < nr; t++)
		w[t].b = b;
	for (t = 1; t < nr; t++)
		w[t].started = !pthread_create(&w[t].thread, NULL,
					       compress_batch, &w[t]);
	compress_batch(&w[0]);
	for (t = 1; t < nr; t++)
		if (w[t].started)
			pthread_join(w[t].thread, NULL);
}

/* The threads -T asks for: 0 is one per CPU online */
static int pack_threads(const struct pack_opts *o)
{
	long cpus;

	if (o->threads)
		return o->threads;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 1 ? 1 : cpus > SZIP_MAX_THREADS ? SZIP_MAX_THREADS : (int)cpus;
}

/* Workers for @nr threads, each encoder set up as @e (its own is @e) */
static struct worker *workers_new(struct encoder *e, int nr,
				  const struct pack_opts *o, const u8 *dict_buf)
{
	struct worker *w = calloc(nr, sizeof(*w));
	int t;

	if (!w)
		return NULL;
	w[0].e = e;
	for (t = 1; t < nr; t++) {
		w[t].e = encoder_new(o);
		if (!w[t].e || use_dict(w[t].e, dict_buf, e->dict_size))
			break;
		w[t].e->filter = e->filter;
	}
	if (t == nr)
		return w;
	while (t > 0)
		encoder_free(w[t--].e);
	free(w);
	return NULL;
}

static void workers_free(struct worker *w, int nr)
{
	int t;

	for (t = 1; w && t < nr; t++)
		encoder_free(w[t].e);
	free(w);
}

/* Append chunk @i (@c bytes at @out) to @s, with its table entries */
static int put_chunk(const struct encoder *e, const struct pack_opts *o,
		     const u8 *in, size_t len, u32 i, const u8 *out, size_t c,
		     struct sink *s, char *err, size_t err_len)
{
	u32 n = nr_chunks_of(len, o->chunk_size), ulen = chunk_len(len, o->chunk_size, i);
	int csum = e->format < 2 ? SZIP_CSUM_NONE : o->checksum;
	const u8 *src = in + (size_t)i * o->chunk_size;
	size_t table, csums, pos = s->pos;
	int ret;

	tables_end(e, n, csum, &table, &csums);
	if (!c) {
		set_err(err, err_len, "compression failed on chunk %u", i);
		return -EIO;
	}
	if (e->format < 2 && pos > SZIP_MAX_TOTAL_SIZE - c) {
		set_err(err, err_len,
			"compressed data exceeds format 1's 4 GiB limit (32-bit offsets); use format 2");
		return -EFBIG;
	}
	ret = sink_put(s, out, c);
	if (ret) {
		set_err(err, err_len, "%s", ret == -ENOMEM ? "out of memory" :
			strerror(-ret));
		return ret;
	}
	if (e->format < 2) {
		put_le(s->data + table + (size_t)i * SZIP_OFFSET_SIZE, pos, 4);
	} else {
		put_le(s->data + table + (size_t)i * SZIP2_OFFSET_SIZE, pos, 8);
		if (csum == SZIP_CSUM_XXH64)
			put_le(s->data + csums + (size_t)i * 8,
			       szip_csum(csum, src, ulen), 8);
		else if (csum == SZIP_CSUM_CRC32C)
			put_le(s->data + csums + (size_t)i * 4,
			       szip_csum(csum, src, ulen), 4);
	}
	if (o->progress && (i % 256 == 255 || i + 1 == n))
		o->progress(o->progress_arg, (u64)i * o->chunk_size + ulen, len);
	return 0;
}

/*
 * Compress every chunk after the header, dictionary and tables, a batch
 * of BATCH_CHUNKS per thread at a time, and append them in order.
 */
static int pack_chunks(struct encoder *e, const u8 *in, size_t len,
		       const struct pack_opts *o, const u8 *dict_buf,
		       struct sink *s, char *err, size_t err_len)
{
	u32 n = nr_chunks_of(len, o->chunk_size), k;
	int csum = e->format < 2 ? SZIP_CSUM_NONE : o->checksum;
	int nr = n > 1 ? pack_threads(o) : 1;
	size_t table, csums, meta = tables_end(e, n, csum, &table, &csums);
	struct batch b = { .in = in, .len = len, .chunk_size = o->chunk_size };
	u32 per = (u32)nr * BATCH_CHUNKS;
	struct worker *w = NULL;
	int ret = -ENOMEM;

	b.out = malloc((size_t)per * OUT_CAP);
	b.clen = calloc(per, sizeof(*b.clen));
	w = b.out && b.clen ? workers_new(e, nr, o, dict_buf) : NULL;
	if (!w || sink_start(s, meta)) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	ret = 0;
	for (b.first = 0; !ret && b.first < n; b.first += b.count) {
		b.count = n - b.first < per ? n - b.first : per;
		run_batch(&b, w, nr);
		for (k = 0; !ret && k < b.count; k++)
			ret = put_chunk(e, o, in, len, b.first + k,
					b.out + (size_t)k * OUT_CAP, b.clen[k],
					s, err, err_len);
	}
out:
	workers_free(w, nr);
	free(b.out);
	free(b.clen);
	return ret;
}

/* The header and dictionary, at the start of @s->data */
static void put_header(const struct encoder *e, size_t len,
		       const struct pack_opts *o, struct sink *s)
{
	u32 n = nr_chunks_of(len, o->chunk_size);

	if (e->format < 2) {
		struct szip_header h = {
			.magic = htole32(SZIP_MAGIC),
			.total_size = htole32(s->pos),
			.chunk_size = htole16(o->chunk_size),
			.dict_size = htole16(e->dict_size),
			.nr_chunks = htole32(n),
			.last_chunk_size = htole16(chunk_len(len, o->chunk_size, n - 1)),
			.window_bits = SZIP_WBITS_DEFAULT,
			.filter = e->filter,
		};

		memcpy(s->data, &h, sizeof(h));
		memcpy(s->data + sizeof(h), e->dict, e->dict_size);
	} else {
		struct szip2_header h = {
			.magic = htole32(SZIP2_MAGIC),
			.codec = e->codec,
			.chunk_shift = __builtin_ctz(o->chunk_size),
			.filter = e->filter,
			.checksum = o->checksum,
			.size = htole64(len),
			.total_size = htole64(s->pos),
			.dict_size = htole32(e->dict_size),
			.nr_chunks = htole32(n),
		};

		memcpy(s->data, &h, sizeof(h));
		memcpy(s->data + sizeof(h), e->dict, e->dict_size);
	}
}

static int check_input(const struct pack_opts *o, size_t len, char *err,
		       size_t err_len)
{
	if (!len && o->format < 2) {
		set_err(err, err_len,
			"empty: format 1 cannot represent an empty file (format 2 can)");
		return -EINVAL;
	}
	if (len / o->chunk_size >= 0xFFFFFFFFULL) {
		set_err(err, err_len, "input too large for 32-bit chunk count");
		return -EFBIG;
	}
	return 0;
}

/* szip_pack() to memory (@fd -1), szip_pack_fd() to @fd */
static int pack(const u8 *in, size_t len, const struct pack_opts *opts,
		int fd, struct pack_result *res, char *err, size_t err_len)
{
	struct sink s = { .fd = fd };
	struct encoder *e = NULL;
	u8 *dict_buf = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	ret = pack_check_opts(opts, err, err_len);
	if (!ret)
		ret = check_input(opts, len, err, err_len);
	if (ret)
		return ret;
	ret = -ENOMEM;
	dict_buf = calloc(1, DICT_BUF);
	e = encoder_new(opts);
	if (!e || !dict_buf) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	if (len) {
		ret = choose_variant(e, in, len, opts, dict_buf);
	} else {
		/* nothing to measure or build a dictionary from */
		ret = use_dict(e, dict_buf, 0);
		e->filter = opts->filter == PACK_FILTER_AUTO ? SZIP_FILTER_NONE :
							       opts->filter;
	}
	if (ret) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	ret = pack_chunks(e, in, len, opts, dict_buf, &s, err, err_len);
	if (ret)
		goto out;
	put_header(e, len, opts, &s);
	ret = sink_finish(&s);
	if (ret) {
		set_err(err, err_len, "%s", strerror(-ret));
		goto out;
	}
	res->len = s.pos;
	res->filter = e->filter;
	res->dict_size = e->dict_size;
	if (fd < 0) {
		res->data = s.data;
		s.data = NULL;
	}
out:
	free(s.data);
	encoder_free(e);
	free(dict_buf);
	return ret;
}

/**
 * szip_pack() - encode a buffer as an szip file in memory
 * @in: input bytes
 * @len: input length; 0 only in format 2 (a header and no chunks)
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
	return pack(in, len, opts, -1, res, err, err_len);
}

/**
 * szip_pack_fd() - encode a buffer as an szip file written to a file
 * @in: input bytes
 * @len: input length; 0 only in format 2 (a header and no chunks)
 * @opts: encoding options
 * @fd: an empty file open for writing, which pwrite() can write anywhere
 *	in: chunks go out as they are made, the header and tables last
 * @res: on success, what was written (@res->data stays NULL)
 * @err: receives a message on failure
 * @err_len: size of @err
 *
 * The same bytes as szip_pack(), without ever holding the chunk data: the
 * memory taken is that of the tables, not of the file.
 *
 * Return: 0 or a negative errno (a failed write: its errno).
 */
int szip_pack_fd(const u8 *in, size_t len, const struct pack_opts *opts,
		 int fd, struct pack_result *res, char *err, size_t err_len)
{
	return pack(in, len, opts, fd, res, err, err_len);
}
