// SPDX-License-Identifier: GPL-2.0
/*
 * gen_hostile - write a deterministic set of malformed and odd szip files
 * for tests/stress/hostile.c, which feeds them to the module in the VM.
 *
 * Usage: gen_hostile OUTDIR [MUTATIONS [SEED]]
 *
 * Classes of files (the first word of each file's description):
 *   valid     valid files at every chunk size, filter, dictionary size,
 *             windowBits, odd but legal deflate streams, trailing bytes,
 *             zero blocks (holes in the guest), many chunks
 *   header    every header field at and around its boundaries (windowBits
 *             -16..16 and the extremes, filter and codec ids likewise)
 *   table     offsets into the header, dictionary, table, past the end,
 *             equal, decreasing, shifted chunk boundaries
 *   stream    chunks that inflate to more or less than their size, never
 *             end (endless empty stored or fixed blocks), trailing or
 *             missing bytes, invalid codes, distances too far back,
 *             dictionary distance boundaries, bad zlib wrappers
 *   filter    BCJ filters on chunks of 1 to 9 bytes
 *   mutation  MUTATIONS (default 900) random mutations of valid files
 *             from a fixed SEED (default 1)
 * All of these for format 1 (faulty.lib's); "v2" files, this project's
 * format 2, cover each codec (deflate, zstd, LZ4), checksum and chunk
 * size, stored chunks, every v2 header field (codec, chunkShift, 64-bit
 * sizes, reserved bytes), 64-bit offsets, zstd frames and LZ4 blocks that
 * are short, long, cut, padded or lying, wrong checksums; a third of the
 * mutations start from v2 files.
 *
 * Every file but the mutations has a designed outcome (refused; or
 * accepted, with the original bytes in the chunks that decode and a list
 * of chunks that must fail), checked here against the szip library's
 * verdict: a disagreement stops the generator.  OUTDIR/MANIFEST has one
 * line per file: "NAME ACT SIZE NR_BAD HASH WHAT", ACT being refuse,
 * accept or either (valid, but the module may refuse it by policy), and
 * HASH the FNV-1a hash of the reference decode (see szref.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "szref.h"
#include "../lib/testlib.h"

/* ------------------------------------------------------------ helpers */

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gen_hostile: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

struct buf {
	u8 *p;
	size_t n, cap;
};

static void reserve(struct buf *b, size_t n)
{
	if (b->n + n <= b->cap)
		return;
	while (b->n + n > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->p = realloc(b->p, b->cap);
	if (!b->p)
		die("out of memory");
}

static void put(struct buf *b, const void *p, size_t n)
{
	reserve(b, n);
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, u8 v)
{
	put(b, &v, 1);
}

static void set16(struct buf *b, size_t at, u32 v)
{
	b->p[at] = (u8)v;
	b->p[at + 1] = (u8)(v >> 8);
}

static void set32(struct buf *b, size_t at, u32 v)
{
	set16(b, at, v & 0xffff);
	set16(b, at + 2, v >> 16);
}

static u32 get32(const struct buf *b, size_t at)
{
	return (u32)b->p[at] | (u32)b->p[at + 1] << 8 |
	       (u32)b->p[at + 2] << 16 | (u32)b->p[at + 3] << 24;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static struct buf buf_copy(const struct buf *b)
{
	struct buf c = { 0 };

	put(&c, b->p, b->n);
	return c;
}

static u32 rnd(u32 n)
{
	return n ? (u32)(rng() % n) : 0;
}

/* Compressible bytes that look like code, full of filter candidates. */
static u8 *gen_code(size_t n, u64 seed)
{
	u64 saved = rng_state;
	u8 *p = xmalloc(n);
	size_t i = 0;

	rng_seed(seed);
	while (i < n) {
		u64 r = rng();
		const char *w;

		if (r % 7 == 0) {
			/* x86 call/jmp, ARM BL, Thumb BL pair */
			static const u8 ops[][4] = {
				{ 0xE8, 0x10, 0x00, 0x00 }, { 0xE9, 0xF0, 0xFF, 0xFF },
				{ 0x12, 0x34, 0x00, 0xEB }, { 0x01, 0xF0, 0x02, 0xF8 },
			};
			const u8 *op = ops[(r >> 8) % 4];

			for (size_t k = 0; k < 4 && i < n; k++)
				p[i++] = op[k];
			if (i < n)
				p[i++] = (r >> 16) & 1 ? 0x00 : 0xFF;
			continue;
		}
		w = code_words[(r >> 16) % 16];
		for (size_t k = 0; w[k] && i < n; k++)
			p[i++] = (u8)w[k];
	}
	rng_state = saved;
	return p;
}

static u8 *gen_random(size_t n)
{
	u8 *p = xmalloc(n);

	for (size_t i = 0; i < n; i++)
		p[i] = (u8)rng();
	return p;
}

/* ---------------------------------------------------------- deflate */

/*
 * Deflate @n bytes at @in as a chunk of a file with windowBits @wbits (the
 * header's value): raw for negative values, zlib-wrapped otherwise.
 */
static struct buf zdeflate(const u8 *in, size_t n, int wbits, int level,
			   int strategy, const u8 *dict, u32 dict_size)
{
	struct buf out = { 0 };
	int w = wbits < 0 ? -wbits : wbits ? wbits : 15;
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	if (w < 9)
		w = 9;		/* zlib's deflate has no 256-byte window */
	if (deflateInit2(&zs, level, Z_DEFLATED, wbits < 0 ? -w : w, 9,
			 strategy) != Z_OK)
		die("deflateInit2");
	if (dict_size && deflateSetDictionary(&zs, dict, dict_size) != Z_OK)
		die("deflateSetDictionary");
	reserve(&out, deflateBound(&zs, n) + 16);
	zs.next_in = in;
	zs.avail_in = n;
	zs.next_out = out.p;
	zs.avail_out = out.cap;
	ret = deflate(&zs, Z_FINISH);
	if (ret != Z_STREAM_END)
		die("deflate: %d", ret);
	out.n = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* The same, flushing (Z_SYNC_FLUSH or Z_FULL_FLUSH) every @every bytes. */
static struct buf zdeflate_flushing(const u8 *in, size_t n, int flush,
				    size_t every)
{
	struct buf out = { 0 };
	z_stream zs;
	size_t done = 0;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		die("deflateInit2");
	reserve(&out, deflateBound(&zs, n) + 6 * (n / every + 2) + 64);
	zs.next_out = out.p;
	zs.avail_out = out.cap;
	while (done < n) {
		size_t k = n - done < every ? n - done : every;

		zs.next_in = in + done;
		zs.avail_in = k;
		done += k;
		if (deflate(&zs, done < n ? flush : Z_FINISH) == Z_STREAM_ERROR)
			die("deflate");
	}
	out.n = zs.total_out;
	deflateEnd(&zs);
	return out;
}

/* ------------------------------------------- hand-made deflate streams */

struct bw {
	struct buf *b;
	u32 acc;
	int n;
};

static void bw_put(struct bw *w, u32 v, int bits)
{
	while (bits--) {
		w->acc |= (v & 1) << w->n;
		v >>= 1;
		if (++w->n == 8) {
			put8(w->b, (u8)w->acc);
			w->acc = 0;
			w->n = 0;
		}
	}
}

static void bw_flush(struct bw *w)
{
	if (w->n)
		bw_put(w, 0, 8 - w->n);
}

/* A Huffman code, most significant bit first. */
static void bw_code(struct bw *w, u32 code, int bits)
{
	while (bits--)
		bw_put(w, code >> bits, 1);
}

/* Fixed-Huffman literal/length symbol @c (0..287). */
static void fx_sym(struct bw *w, int c)
{
	if (c < 144)
		bw_code(w, 0x30 + c, 8);
	else if (c < 256)
		bw_code(w, 0x190 + c - 144, 9);
	else if (c < 280)
		bw_code(w, c - 256, 7);
	else
		bw_code(w, 0xC0 + c - 280, 8);
}

static const u16 len_base[] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51,
	59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const u8 len_extra[] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4,
	4, 5, 5, 5, 5, 0,
};
static const u16 dist_base[] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385,
	513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
};
static const u8 dist_extra[] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10,
	10, 11, 11, 12, 12, 13, 13,
};

/* A match of @len (3..258) bytes at distance @dist (1..32768). */
static void fx_match(struct bw *w, int len, int dist)
{
	int i = 28, d = 29;

	while (len_base[i] > len)
		i--;
	if (len == 258)
		i = 28;
	else if (i == 28)
		i = 27;
	fx_sym(w, 257 + i);
	bw_put(w, len - len_base[i], len_extra[i]);
	while (dist_base[d] > dist)
		d--;
	bw_code(w, d, 5);
	bw_put(w, dist - dist_base[d], dist_extra[d]);
}

static void fx_start(struct bw *w, bool final)
{
	bw_put(w, final, 1);
	bw_put(w, 1, 2);	/* BTYPE 01: fixed Huffman codes */
}

/* Literals only, in one fixed block. */
static void fx_literals(struct bw *w, const u8 *p, size_t n, bool final)
{
	fx_start(w, final);
	for (size_t i = 0; i < n; i++)
		fx_sym(w, p[i]);
	fx_sym(w, 256);
}

/* Stored blocks of at most @per bytes holding @p; the last one final. */
static void stored(struct buf *b, const u8 *p, size_t n, size_t per,
		   bool final)
{
	do {
		size_t k = n < per ? n : per;

		put8(b, final && k == n);
		put8(b, k & 0xff);
		put8(b, k >> 8);
		put8(b, ~k & 0xff);
		put8(b, (~k >> 8) & 0xff);
		put(b, p, k);
		p += k;
		n -= k;
	} while (n);
}

static void empty_stored(struct buf *b, size_t count)
{
	static const u8 blk[] = { 0x00, 0x00, 0x00, 0xFF, 0xFF };

	while (count--)
		put(b, blk, sizeof(blk));
}

/* Output of @n bytes equal to @c: a literal, then matches at distance 1. */
static void fx_run(struct bw *w, u8 c, size_t n)
{
	if (!n)
		return;
	fx_sym(w, c);
	n--;
	while (n >= 3) {
		size_t k = n > 258 ? 258 : n;

		if (n - k && n - k < 3)
			k -= 3;
		fx_match(w, (int)k, 1);
		n -= k;
	}
	while (n--)
		fx_sym(w, c);
}

/* Bits of fixed-Huffman literal @c */
static int fx_bits(u8 c)
{
	return c < 144 ? 8 : 9;
}

/*
 * A valid stream of exactly @len bytes inflating to @n bytes of @p:
 * stored blocks, empty stored blocks, then a final fixed block holding
 * the last few bytes as literals, after some empty fixed blocks.
 */
static struct buf stream_exact(const u8 *p, size_t n, size_t len)
{
	for (size_t j = 1; j <= 4 && j <= n; j++) {
		int lit_bits = 0;

		for (size_t k = n - j; k < n; k++)
			lit_bits += fx_bits(p[k]);
		for (int empties = 0; empties < 8; empties++) {
			size_t tail = (10 * empties + 3 + lit_bits + 7 + 7) / 8;
			size_t blocks = (n - j + 65534) / 65535;
			size_t head = 5 * (blocks ? blocks : 1) + n - j;
			struct buf s = { 0 };
			struct bw w = { &s, 0, 0 };

			if (head + tail > len || (len - head - tail) % 5)
				continue;
			stored(&s, p, n - j, 65535, false);
			empty_stored(&s, (len - head - tail) / 5);
			for (int e = 0; e < empties; e++) {
				fx_start(&w, false);
				fx_sym(&w, 256);
			}
			fx_literals(&w, p + n - j, j, true);
			bw_flush(&w);
			if (s.n != len)
				die("stream_exact: %zu bytes, wanted %zu", s.n, len);
			return s;
		}
	}
	die("stream_exact: no stream of %zu bytes for %zu", len, n);
}

/* ------------------------------------------------------------ files */

/**
 * struct szfile - the parts of an szip file, before assembly
 * @chunk_size: header chunkSize
 * @last: header lastChunkSize
 * @wbits: header windowBits
 * @filter: header filter id
 * @dict: dictionary bytes
 * @dict_size: their number (header dictSize)
 * @nr: number of chunks (header nChunks)
 * @streams: compressed chunks
 * @orig: uncompressed bytes, the expected decode
 * @size: their number
 */
struct szfile {
	u32 chunk_size, last;
	int wbits, filter;
	const u8 *dict;
	u32 dict_size;
	u32 nr;
	struct buf *streams;
	const u8 *orig;
	size_t size;
};

static void sz_free(struct szfile *f)
{
	for (u32 i = 0; i < f->nr; i++)
		buf_free(&f->streams[i]);
	free(f->streams);
	f->streams = NULL;
}

/* Chunk, filter and deflate @size bytes of @data into @f. */
static void encode(struct szfile *f, const u8 *data, size_t size,
		   u32 chunk_size, int filter, int wbits, const u8 *dict,
		   u32 dict_size, int level, int strategy)
{
	u8 *tmp = xmalloc(chunk_size);

	memset(f, 0, sizeof(*f));
	f->chunk_size = chunk_size;
	f->nr = (u32)((size + chunk_size - 1) / chunk_size);
	f->last = (u32)(size - (size_t)(f->nr - 1) * chunk_size);
	f->wbits = wbits;
	f->filter = filter;
	f->dict = dict;
	f->dict_size = dict_size;
	f->orig = data;
	f->size = size;
	f->streams = calloc(f->nr, sizeof(*f->streams));
	if (!f->streams)
		die("out of memory");
	for (u32 i = 0; i < f->nr; i++) {
		u32 ulen = i + 1 < f->nr ? chunk_size : f->last;

		memcpy(tmp, data + (size_t)i * chunk_size, ulen);
		szip_bcj((u8)filter, tmp, ulen, i * chunk_size, true);
		f->streams[i] = zdeflate(tmp, ulen, wbits, level, strategy, dict,
					 dict_size);
	}
	free(tmp);
}

static void replace_stream(struct szfile *f, u32 i, struct buf s)
{
	buf_free(&f->streams[i]);
	f->streams[i] = s;
}

/* The file's bytes: header, dictionary, table, chunks. */
static struct buf assemble(const struct szfile *f)
{
	struct buf b = { 0 };
	u32 off = SZIP_HEADER_SIZE + f->dict_size + SZIP_OFFSET_SIZE * f->nr;
	u32 total = off;

	for (u32 i = 0; i < f->nr; i++)
		total += (u32)f->streams[i].n;
	reserve(&b, total);
	b.n = SZIP_HEADER_SIZE;
	set32(&b, 0, SZIP_MAGIC);
	set32(&b, 4, total);
	set16(&b, 8, f->chunk_size);
	set16(&b, 10, f->dict_size);
	set32(&b, 12, f->nr);
	set16(&b, 16, f->last);
	b.p[18] = (u8)(s8)f->wbits;
	b.p[19] = (u8)f->filter;
	put(&b, f->dict, f->dict_size);
	for (u32 i = 0; i < f->nr; i++) {
		u8 le[4] = { (u8)off, (u8)(off >> 8), (u8)(off >> 16),
			     (u8)(off >> 24) };

		put(&b, le, 4);
		off += (u32)f->streams[i].n;
	}
	for (u32 i = 0; i < f->nr; i++)
		put(&b, f->streams[i].p, f->streams[i].n);
	return b;
}

static size_t table_at(const struct szfile *f, u32 i)
{
	return SZIP_HEADER_SIZE + f->dict_size + (size_t)SZIP_OFFSET_SIZE * i;
}

/* ---------------------------------------------------------- emitting */

enum design { D_REFUSE, D_ACCEPT, D_LIB };

#define ALL_BAD	(~0ULL)

static const char *outdir;
static FILE *manifest;
static struct szip_decoder *dec;
static unsigned int nr_files, nr_designed;
static unsigned int by_act[3];

/*
 * Write @b as the next file.  @d: the designed outcome; for D_ACCEPT,
 * @bad is the set of chunks that must fail (bit i: chunk i; ALL_BAD:
 * every chunk) and @orig/@size the expected bytes of the other chunks
 * (@orig NULL: not checked).
 */
static void __attribute__((format(printf, 6, 7)))
emit(const struct buf *b, enum design d, u64 bad, const u8 *orig,
     size_t size, const char *fmt, ...)
{
	char what[160], name[512];
	struct ref r;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (char *c = what; *c; c++)
		if (*c == ' ')
			*c = '_';
	if (ref_compute(dec, b->p, b->n, &r)) {
		if (d != D_LIB)
			die("%s: too large to decode", what);
		return;		/* a mutation with a huge size: skip it */
	}
	if (d == D_REFUSE && r.act != REF_REFUSE)
		die("%s: designed to be refused, the library accepts it", what);
	if (d == D_ACCEPT) {
		if (r.act == REF_REFUSE)
			die("%s: designed to be valid, the library says: %s", what,
			    szip_strerror(r.err));
		/* a wrong lastChunkSize changes the size, and fails */
		if (orig && !bad && r.info.size != size)
			die("%s: size %llu, designed %zu", what,
			    (unsigned long long)r.info.size, size);
		for (u32 i = 0; i < r.info.nr_chunks; i++) {
			bool want_bad = bad == ALL_BAD || (i < 64 && (bad >> i & 1));
			u64 at = (u64)i * r.info.chunk_size;

			if (want_bad != !!r.bad[i])
				die("%s: chunk %u is %s, designed %s", what, i,
				    r.bad[i] ? "bad" : "good",
				    want_bad ? "bad" : "good");
			if (!want_bad && orig &&
			    memcmp(r.data + at, orig + at, szip_chunk_ulen(&r.info, i)))
				die("%s: chunk %u decodes to other bytes", what, i);
		}
	}
	if (d != D_LIB)
		nr_designed++;
	snprintf(name, sizeof(name), "%s/h%04u.sz", outdir, nr_files);
	f = fopen(name, "wb");
	if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f))
		die("%s: %s", name, strerror(errno));
	fprintf(manifest, "h%04u.sz %s %llu %u %016llx %s\n", nr_files,
		ref_act_names[r.act],
		r.act == REF_REFUSE ? 0ULL : (unsigned long long)r.info.size,
		r.nr_bad, (unsigned long long)r.hash, what);
	by_act[r.act]++;
	nr_files++;
	ref_free(&r);
}

/* Assemble @f and emit it as a valid file with the given bad chunks. */
static void emit_sz(const struct szfile *f, u64 bad, const char *what)
{
	struct buf b = assemble(f);

	emit(&b, D_ACCEPT, bad, f->orig, f->size, "%s", what);
	buf_free(&b);
}

/* ------------------------------------------------------------ valid */

static void gen_valid(void)
{
	static const u32 chunk_sizes[] = { 4096, 8192, 12288, 16384, 20480, 32768 };
	struct szfile f;
	struct buf b, s;
	u8 *code = gen_code(200000, 1), *rnd_data = gen_random(40000);
	u8 *dict = gen_code(65535, 1);

	/* every chunk size, sizes around the chunk boundaries, two filters */
	for (size_t c = 0; c < sizeof(chunk_sizes) / sizeof(chunk_sizes[0]); c++) {
		u32 cs = chunk_sizes[c];
		size_t sizes[] = { 1, cs - 1, cs, cs + 1, 3 * (size_t)cs + 17 };

		for (size_t k = 0; k < 5; k++) {
			for (int filter = 0; filter <= 3; filter += 3) {
				char what[64];

				snprintf(what, sizeof(what), "valid chunk %u size %zu filter %d",
					 cs, sizes[k], filter);
				encode(&f, code, sizes[k], cs, filter, -15, NULL, 0, 9,
				       Z_DEFAULT_STRATEGY);
				emit_sz(&f, 0, what);
				sz_free(&f);
			}
		}
	}

	/* dictionaries up to the largest representable, two window sizes */
	{
		static const u32 dsizes[] = { 1, 100, 4096, 32767, 32768, 32769, 65535 };

		for (size_t k = 0; k < sizeof(dsizes) / sizeof(dsizes[0]); k++) {
			for (int w = -15; w <= -9; w += 6) {
				char what[64];

				snprintf(what, sizeof(what), "valid dict %u wbits %d",
					 dsizes[k], w);
				/* the data's own words: matches into it */
				encode(&f, code + 1000, 30000, 8192, 0, w,
				       dict + 65535 - dsizes[k], dsizes[k], 9,
				       Z_DEFAULT_STRATEGY);
				emit_sz(&f, 0, what);
				sz_free(&f);
			}
		}
	}

	/* every windowBits a file may have */
	for (int w = -15; w <= 15; w++) {
		char what[64];

		if (w > -8 && w < 8 && w != 0)
			continue;
		snprintf(what, sizeof(what), "valid wbits %d", w);
		encode(&f, code + 5000, 9000, 4096, 0, w, NULL, 0, 9,
		       Z_DEFAULT_STRATEGY);
		b = assemble(&f);
		/* 256-byte windows: zlib's deflate cannot target them */
		emit(&b, w == -8 || w == 8 ? D_LIB : D_ACCEPT, 0, f.orig, f.size,
		     "%s", what);
		buf_free(&b);
		sz_free(&f);
	}

	/* odd but legal deflate streams */
	{
		static const int strategies[] = { Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE,
						  Z_FIXED };

		for (int k = 0; k < 4; k++) {
			encode(&f, code, 40000, 16384, 3, -15, NULL, 0, 9,
			       strategies[k]);
			emit_sz(&f, 0, k == 0 ? "valid strategy filtered" :
				k == 1 ? "valid strategy huffman-only" :
				k == 2 ? "valid strategy rle" : "valid strategy fixed");
			sz_free(&f);
		}
		encode(&f, code, 40000, 16384, 0, -15, NULL, 0, 0,
		       Z_DEFAULT_STRATEGY);
		emit_sz(&f, 0, "valid level 0 stored blocks");
		sz_free(&f);
		encode(&f, rnd_data, 40000, 32768, 0, -15, NULL, 0, 9,
		       Z_DEFAULT_STRATEGY);
		emit_sz(&f, 0, "valid incompressible");
		sz_free(&f);

		encode(&f, code, 20000, 8192, 0, -15, NULL, 0, 9,
		       Z_DEFAULT_STRATEGY);
		replace_stream(&f, 1, zdeflate_flushing(code + 8192, 8192,
							Z_SYNC_FLUSH, 50));
		replace_stream(&f, 2, zdeflate_flushing(code + 16384, 20000 - 16384,
							Z_FULL_FLUSH, 7));
		emit_sz(&f, 0, "valid sync and full flushes");

		/* many empty blocks before the final one */
		s = (struct buf){ 0 };
		stored(&s, code + 8192, 8192, 8192, false);
		empty_stored(&s, 2000);
		put8(&s, 0x03);		/* final, empty fixed block */
		put8(&s, 0x00);
		replace_stream(&f, 1, s);
		s = (struct buf){ 0 };
		{
			struct bw w = { &s, 0, 0 };

			for (int k = 0; k < 3000; k++) {
				fx_start(&w, false);
				fx_sym(&w, 256);
			}
			fx_literals(&w, code + 16384, 20000 - 16384, true);
			bw_flush(&w);
		}
		replace_stream(&f, 2, s);
		emit_sz(&f, 0, "valid empty stored and fixed blocks then data");

		/* one-byte stored blocks */
		s = (struct buf){ 0 };
		stored(&s, code, 8192, 1, true);
		replace_stream(&f, 0, s);
		emit_sz(&f, 0, "valid one-byte stored blocks");
		sz_free(&f);
	}

	/* compressed length at the module's limit and just above it */
	for (int extra = 0; extra <= 1; extra++) {
		encode(&f, rnd_data, 32768 * 2, 32768, 0, -15, NULL, 0, 9,
		       Z_DEFAULT_STRATEGY);
		replace_stream(&f, 0, stream_exact(rnd_data, 32768,
						   REF_MAX_CLEN + extra));
		emit_sz(&f, 0, extra ? "valid chunk one byte over the module's length limit" :
			"valid chunk at the module's length limit");
		sz_free(&f);
	}

	/* bytes after totalSize */
	{
		static const size_t tails[] = { 1, 4095, 100000 };

		for (int k = 0; k < 3; k++) {
			encode(&f, code, 30000, 16384, 0, -15, NULL, 0, 9,
			       Z_DEFAULT_STRATEGY);
			b = assemble(&f);
			put(&b, rnd_data, tails[k] < 40000 ? tails[k] : 40000);
			for (size_t t = 40000; t < tails[k]; t++)
				put8(&b, 0);
			emit(&b, D_ACCEPT, 0, f.orig, f.size,
			     "valid %zu bytes after totalSize", tails[k]);
			buf_free(&b);
			sz_free(&f);
		}
	}

	/* zero blocks in the compressed file: holes once copied */
	{
		u8 *zeros = calloc(1, 3 * 32768);

		if (!zeros)
			die("out of memory");
		memcpy(zeros + 20000, code, 9000);
		encode(&f, zeros, 3 * 32768, 32768, 0, -15, NULL, 0, 0,
		       Z_DEFAULT_STRATEGY);
		emit_sz(&f, 0, "valid stored zeros (holes in the copy)");
		sz_free(&f);
		encode(&f, zeros, 3 * 32768 - 5, 32768, 0, -15, zeros, 32768, 0,
		       Z_DEFAULT_STRATEGY);
		emit_sz(&f, 0, "valid zero dictionary and stored zeros");
		sz_free(&f);
		free(zeros);
	}

	/* many chunks: 8000 chunks of 4 KiB made of runs, 32 MB */
	{
		u8 *big = xmalloc(8000 * 4096);

		for (u32 i = 0; i < 8000; i++)
			memset(big + (size_t)i * 4096, (int)(i * 7 % 251), 4096);
		memset(&f, 0, sizeof(f));
		f.chunk_size = 4096;
		f.nr = 8000;
		f.last = 4096;
		f.wbits = -15;
		f.orig = big;
		f.size = 8000 * 4096;
		f.streams = calloc(f.nr, sizeof(*f.streams));
		if (!f.streams)
			die("out of memory");
		for (u32 i = 0; i < f.nr; i++) {
			struct bw w = { &f.streams[i], 0, 0 };

			fx_start(&w, true);
			fx_run(&w, (u8)(i * 7 % 251), 4096);
			fx_sym(&w, 256);
			bw_flush(&w);
		}
		emit_sz(&f, 0, "valid 8000 chunks of runs");
		sz_free(&f);
		free(big);
	}
	free(dict);
	free(code);
	free(rnd_data);
}

/* ------------------------------------------------------------ header */

/* The base of the header cases: 3 chunks of 4 KiB, last one 1000 bytes. */
static u8 *hdr_data;

static void header_base(struct szfile *f)
{
	encode(f, hdr_data, 2 * 4096 + 1000, 4096, 0, -15, NULL, 0, 9,
	       Z_DEFAULT_STRATEGY);
}

/* Emit the base file with the little-endian field at @at set to @v. */
static void hdr_case(size_t at, int width, u32 v, enum design d, u64 bad,
		     const char *what)
{
	struct szfile f;
	struct buf b;

	header_base(&f);
	b = assemble(&f);
	if (width == 1)
		b.p[at] = (u8)v;
	else if (width == 2)
		set16(&b, at, v);
	else
		set32(&b, at, v);
	emit(&b, d, bad, f.orig, f.size, "header %s %#x", what, v);
	buf_free(&b);
	sz_free(&f);
}

static void gen_header(void)
{
	struct szfile f;
	struct buf b;
	u32 total, data_off, last_off;

	hdr_data = gen_code(3 * 4096, 3);
	header_base(&f);
	b = assemble(&f);
	total = (u32)b.n;
	data_off = SZIP_HEADER_SIZE + 3 * 4;
	last_off = get32(&b, table_at(&f, 2));
	emit(&b, D_ACCEPT, 0, f.orig, f.size, "header base");
	buf_free(&b);
	sz_free(&f);

	/* magic */
	for (int k = 0; k < 4; k++) {
		u32 m = SZIP_MAGIC ^ (1U << (8 * k));

		hdr_case(0, 4, m, D_REFUSE, 0, "magic bit");
		hdr_case(0, 4, SZIP_MAGIC + (1U << (8 * k)), D_REFUSE, 0, "magic +1");
	}
	hdr_case(0, 4, 0, D_REFUSE, 0, "magic");

	/* totalSize */
	{
		const struct { u32 v; enum design d; u64 bad; } t[] = {
			{ 0, D_REFUSE, 0 }, { 1, D_REFUSE, 0 }, { 19, D_REFUSE, 0 },
			{ 20, D_REFUSE, 0 }, { data_off - 1, D_REFUSE, 0 },
			{ data_off, D_REFUSE, 0 }, { data_off + 2, D_REFUSE, 0 },
			{ data_off + 3, D_REFUSE, 0 }, { last_off, D_REFUSE, 0 },
			{ last_off + 1, D_ACCEPT, 1 << 2 },
			{ total - 1, D_ACCEPT, 1 << 2 }, { total, D_ACCEPT, 0 },
			{ total + 1, D_REFUSE, 0 }, { 0x7FFFFFFF, D_REFUSE, 0 },
			{ 0x80000000, D_REFUSE, 0 }, { 0xFFFFFFFF, D_REFUSE, 0 },
		};

		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			hdr_case(4, 4, t[k].v, t[k].d, t[k].bad, "totalSize");
		/* totalSize past the szip data into trailing bytes */
		header_base(&f);
		b = assemble(&f);
		put8(&b, 0);
		set32(&b, 4, total + 1);
		emit(&b, D_ACCEPT, 1 << 2, f.orig, f.size,
		     "header totalSize covers a trailing byte");
		buf_free(&b);
		sz_free(&f);
	}

	/* chunkSize: the base data only decodes at 4096 */
	{
		static const u32 v[] = {
			0, 1, 2048, 4095, 4097, 8191, 8193, 32767, 32769, 36864,
			40960, 61440, 65535,
		};
		static const u32 valid[] = { 8192, 12288, 32768 };

		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			hdr_case(8, 2, v[k], D_REFUSE, 0, "chunkSize");
		for (size_t k = 0; k < 3; k++)
			/* every chunk but the last inflates short */
			hdr_case(8, 2, valid[k], D_LIB, 0, "chunkSize");
	}

	/* dictSize: shifts the table into the chunk data */
	{
		static const u32 v[] = { 1, 2, 3, 4, 5, 100, 4096, 32768, 65535 };

		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
			hdr_case(10, 2, v[k], D_LIB, 0, "dictSize");
	}

	/* nChunks */
	{
		static const u32 refused[] = {
			0, 4, 5, 1000, 0x3FFFFFFF, 0x40000000, 0x7FFFFFFF,
			0x80000000, 0xFFFFFFFF,
		};

		for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++)
			hdr_case(12, 4, refused[k], D_REFUSE, 0, "nChunks");
		/* fewer chunks: the last one spans the rest of the data */
		hdr_case(12, 4, 1, D_LIB, 0, "nChunks");
		hdr_case(12, 4, 2, D_LIB, 0, "nChunks");
	}

	/* lastChunkSize */
	{
		const struct { u32 v; enum design d; u64 bad; } t[] = {
			{ 0, D_REFUSE, 0 }, { 1, D_ACCEPT, 1 << 2 },
			{ 999, D_ACCEPT, 1 << 2 }, { 1000, D_ACCEPT, 0 },
			{ 1001, D_ACCEPT, 1 << 2 }, { 4095, D_ACCEPT, 1 << 2 },
			{ 4096, D_ACCEPT, 1 << 2 }, { 4097, D_REFUSE, 0 },
			{ 0x8000, D_REFUSE, 0 }, { 0xFFFF, D_REFUSE, 0 },
		};

		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			hdr_case(16, 2, t[k].v, t[k].d, t[k].bad, "lastChunkSize");
	}

	/* windowBits -16..16 and the extremes, on a raw -15 file */
	for (int k = -20; k <= 20; k++) {
		static const int extremes[] = { -128, -127, -64, -17, 17, 64, 126, 127 };
		int w = k < -16 ? extremes[k + 20] : k > 16 ? extremes[k - 13] : k;
		enum design d;

		if (w == -15)
			d = D_ACCEPT;
		else if (w <= -8 && w >= -14)
			d = D_LIB;	/* smaller window: depends on distances */
		else if (w == 0 || (w >= 8 && w <= 15))
			d = D_ACCEPT;	/* zlib-wrapped: no chunk decodes */
		else
			d = D_REFUSE;
		hdr_case(18, 1, (u8)w, d, (w == 0 || (w >= 8 && w <= 15)) ? ALL_BAD : 0,
			 "windowBits");
	}

	/* filter ids around the last one, and the extremes */
	{
		static const u32 ids[] = { 0, 1, 2, 3, 4, 5, 127, 128, 254, 255 };

		for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
			hdr_case(19, 1, ids[k], !ids[k] ? D_ACCEPT : ids[k] < 4 ? D_LIB :
				 D_REFUSE, 0, "filter");
	}

	/* a dictionary with zlib-wrapped chunks */
	encode(&f, hdr_data, 5000, 4096, 0, 15, NULL, 0, 9, Z_DEFAULT_STRATEGY);
	f.dict = hdr_data;
	f.dict_size = 100;
	b = assemble(&f);
	emit(&b, D_REFUSE, 0, NULL, 0, "header dictionary with zlib chunks");
	buf_free(&b);
	sz_free(&f);

	/* shorter than the header, at every length */
	header_base(&f);
	b = assemble(&f);
	for (size_t n = 0; n < SZIP_HEADER_SIZE; n++) {
		struct buf c = buf_copy(&b);

		c.n = n;
		emit(&c, D_REFUSE, 0, NULL, 0, "header truncated to %zu", n);
		buf_free(&c);
	}
	buf_free(&b);
	sz_free(&f);
}

/* ------------------------------------------------------------- table */

static void table_case(u32 i, u32 (*val)(const struct szfile *, const struct buf *, u32),
		       enum design d, u64 bad, const char *what)
{
	struct szfile f;
	struct buf b;
	u8 *data = gen_code(4 * 4096, 4);
	u32 v;

	encode(&f, data, 4 * 4096, 4096, 0, -15, data + 9000, 64, 9,
	       Z_DEFAULT_STRATEGY);
	b = assemble(&f);
	v = val(&f, &b, i);
	set32(&b, table_at(&f, i), v);
	emit(&b, d, bad, f.orig, f.size, "table entry %u %s (%u)", i, what, v);
	buf_free(&b);
	sz_free(&f);
	free(data);
}

static u32 off_of(const struct szfile *f, const struct buf *b, u32 i)
{
	return get32(b, table_at(f, i));
}

#define TV(name, expr)							\
	static u32 name(const struct szfile *f, const struct buf *b, u32 i) \
	{								\
		(void)f; (void)b; (void)i;				\
		return (expr);						\
	}

TV(v_zero, 0)
TV(v_one, 1)
TV(v_hdr_end, SZIP_HEADER_SIZE - 1)
TV(v_dict, SZIP_HEADER_SIZE)
TV(v_dict_mid, SZIP_HEADER_SIZE + 32)
TV(v_table, (u32)table_at(f, 0))
TV(v_table_end, (u32)table_at(f, f->nr) - 1)
TV(v_prev, off_of(f, b, i - 1))
TV(v_prev1, off_of(f, b, i - 1) + 1)
TV(v_next, off_of(f, b, i + 1))
TV(v_next1, off_of(f, b, i + 1) - 1)
TV(v_minus1, off_of(f, b, i) - 1)
TV(v_plus1, off_of(f, b, i) + 1)
TV(v_total, (u32)b->n)
TV(v_total1, (u32)b->n - 1)
TV(v_past, (u32)b->n + 1)
TV(v_huge, 0xFFFFFFFF)
TV(v_neg, 0x80000000)

static void gen_table(void)
{
	table_case(0, v_zero, D_REFUSE, 0, "at 0");
	table_case(0, v_one, D_REFUSE, 0, "in the magic");
	table_case(0, v_hdr_end, D_REFUSE, 0, "at the header's last byte");
	table_case(0, v_dict, D_REFUSE, 0, "at the dictionary");
	table_case(0, v_dict_mid, D_REFUSE, 0, "inside the dictionary");
	table_case(0, v_table, D_REFUSE, 0, "at the table");
	table_case(0, v_table_end, D_REFUSE, 0, "at the table's last byte");
	table_case(1, v_table, D_REFUSE, 0, "at the table");
	table_case(1, v_one, D_REFUSE, 0, "in the magic");
	table_case(1, v_prev, D_REFUSE, 0, "equal to the previous one");
	table_case(2, v_next, D_REFUSE, 0, "equal to the next one");
	table_case(1, v_prev1, D_ACCEPT, 0x3, "one byte after the previous one");
	table_case(2, v_next1, D_ACCEPT, 0x6, "one byte before the next one");
	table_case(1, v_minus1, D_ACCEPT, 0x3, "one byte early");
	table_case(1, v_plus1, D_ACCEPT, 0x3, "one byte late");
	table_case(3, v_minus1, D_ACCEPT, 0xC, "one byte early");
	table_case(3, v_plus1, D_ACCEPT, 0xC, "one byte late");
	table_case(3, v_total1, D_ACCEPT, 0xC, "at the last byte");
	table_case(3, v_total, D_REFUSE, 0, "at totalSize");
	table_case(3, v_past, D_REFUSE, 0, "past the end");
	table_case(3, v_huge, D_REFUSE, 0, "at 4 GiB - 1");
	table_case(2, v_neg, D_REFUSE, 0, "at 2 GiB");
	table_case(1, v_next1, D_ACCEPT, 0x3, "one byte before the next one");
	table_case(0, v_plus1, D_ACCEPT, 0x1, "one byte late");

	/* swapped entries, all entries equal */
	{
		struct szfile f;
		struct buf b;
		u8 *data = gen_code(4 * 4096, 4);
		u32 a, c;

		encode(&f, data, 4 * 4096, 4096, 0, -15, NULL, 0, 9,
		       Z_DEFAULT_STRATEGY);
		b = assemble(&f);
		a = get32(&b, table_at(&f, 1));
		c = get32(&b, table_at(&f, 2));
		set32(&b, table_at(&f, 1), c);
		set32(&b, table_at(&f, 2), a);
		emit(&b, D_REFUSE, 0, NULL, 0, "table entries 1 and 2 swapped");
		for (u32 i = 0; i < 4; i++)
			set32(&b, table_at(&f, i), a);
		emit(&b, D_REFUSE, 0, NULL, 0, "table entries all equal");
		buf_free(&b);

		/* chunks stored in another order: valid, other data */
		{
			struct buf t = f.streams[1];

			f.streams[1] = f.streams[2];
			f.streams[2] = t;
			b = assemble(&f);
			emit(&b, D_LIB, 0, NULL, 0, "table chunks 1 and 2 swapped on disk");
			buf_free(&b);
		}
		sz_free(&f);
		free(data);
	}

	/* 16000 chunks of two bytes: an empty final block, all short */
	{
		struct szfile f = { .chunk_size = 4096, .last = 4096, .wbits = -15,
				    .nr = 16000 };

		f.streams = calloc(f.nr, sizeof(*f.streams));
		if (!f.streams)
			die("out of memory");
		for (u32 i = 0; i < f.nr; i++) {
			put8(&f.streams[i], 0x03);
			put8(&f.streams[i], 0x00);
		}
		emit_sz(&f, ALL_BAD, "table 16000 empty chunks");
		sz_free(&f);
	}
}

/* ------------------------------------------------------------ stream */

/* 3 chunks of 8 KiB, the last one 3000 bytes; chunk @i gets stream @s. */
static u8 *st_data;

static void stream_case(u32 i, struct buf s, enum design d, u64 bad,
			const char *what)
{
	struct szfile f;
	struct buf b;

	encode(&f, st_data, 2 * 8192 + 3000, 8192, 0, -15, NULL, 0, 9,
	       Z_DEFAULT_STRATEGY);
	replace_stream(&f, i, s);
	b = assemble(&f);
	emit(&b, d, bad, f.orig, f.size, "stream chunk %u %s", i, what);
	buf_free(&b);
	sz_free(&f);
}

static u32 st_ulen(u32 i)
{
	return i < 2 ? 8192 : 3000;
}

static const u8 *st_chunk(u32 i)
{
	return st_data + (size_t)i * 8192;
}

static struct buf s_deflate(u32 i, long delta)
{
	u8 *tmp = xmalloc(st_ulen(i) + 100);
	struct buf s;

	memcpy(tmp, st_chunk(i), st_ulen(i));
	memcpy(tmp + st_ulen(i), "0123456789012345678901234567890123456789", 40);
	s = zdeflate(tmp, st_ulen(i) + delta, -15, 9, Z_DEFAULT_STRATEGY, NULL, 0);
	free(tmp);
	return s;
}

/* A zlib FLG byte with FDICT set and a valid FCHECK for @cmf */
static u8 fdict_flg(u8 cmf, u8 flg)
{
	flg = (flg & 0xC0) | 0x20;
	return flg | (31 - (cmf * 256 + flg) % 31) % 31;
}

static void gen_stream(void)
{
	u8 *junk = gen_random(70000);
	struct buf s;

	st_data = gen_code(3 * 8192, 5);
	for (u32 i = 0; i < 3; i += 2) {
		u64 bit = 1ULL << i;
		struct bw w;

		/* one byte more, one less, nothing, far more */
		stream_case(i, s_deflate(i, 1), D_ACCEPT, bit, "one byte long");
		stream_case(i, s_deflate(i, 40), D_ACCEPT, bit, "40 bytes long");
		stream_case(i, s_deflate(i, -1), D_ACCEPT, bit, "one byte short");
		stream_case(i, s_deflate(i, -(long)st_ulen(i) + 1), D_ACCEPT, bit,
			    "one byte in all");
		s = (struct buf){ 0 };
		put8(&s, 0x03);
		put8(&s, 0x00);
		stream_case(i, s, D_ACCEPT, bit, "empty");
		s = (struct buf){ 0 };
		w = (struct bw){ &s, 0, 0 };
		fx_start(&w, true);
		fx_run(&w, 'A', 1 << 20);
		fx_sym(&w, 256);
		bw_flush(&w);
		stream_case(i, s, D_ACCEPT, bit, "inflates to 1 MiB");

		/* never ends: empty stored or fixed blocks, none final */
		s = (struct buf){ 0 };
		empty_stored(&s, 12000);
		stream_case(i, s, D_ACCEPT, bit, "60000 bytes of empty stored blocks");
		s = (struct buf){ 0 };
		empty_stored(&s, 14000);
		stream_case(i, s, D_ACCEPT, bit, "70000 bytes of empty stored blocks");
		s = (struct buf){ 0 };
		w = (struct bw){ &s, 0, 0 };
		for (int k = 0; k < 50000; k++) {
			fx_start(&w, false);
			fx_sym(&w, 256);
		}
		bw_flush(&w);
		stream_case(i, s, D_ACCEPT, bit, "50000 empty fixed blocks");
		s = (struct buf){ 0 };
		stored(&s, st_chunk(i), st_ulen(i), 65535, false);
		empty_stored(&s, 5000);
		stream_case(i, s, D_ACCEPT, bit, "data then endless empty blocks");
		s = (struct buf){ 0 };
		w = (struct bw){ &s, 0, 0 };
		fx_literals(&w, st_chunk(i), st_ulen(i), false);
		for (int k = 0; k < 20000; k++) {
			fx_start(&w, false);
			fx_sym(&w, 256);
		}
		bw_flush(&w);
		stream_case(i, s, D_ACCEPT, bit, "fixed data then endless empty blocks");

		/* trailing and missing bytes */
		s = s_deflate(i, 0);
		put8(&s, 0);
		stream_case(i, s, D_ACCEPT, bit, "one trailing byte");
		s = s_deflate(i, 0);
		put(&s, junk, 4096);
		stream_case(i, s, D_ACCEPT, bit, "4096 trailing bytes");
		s = s_deflate(i, 0);
		s.n--;
		stream_case(i, s, D_ACCEPT, bit, "last byte missing");
		s = s_deflate(i, 0);
		s.n /= 2;
		stream_case(i, s, D_ACCEPT, bit, "cut in half");

		/* invalid codes */
		s = (struct buf){ 0 };
		put8(&s, 0x07);		/* final, BTYPE 11 */
		put8(&s, 0);
		stream_case(i, s, D_ACCEPT, bit, "reserved block type");
		for (int c = 286; c <= 287; c++) {
			s = (struct buf){ 0 };
			w = (struct bw){ &s, 0, 0 };
			fx_start(&w, true);
			fx_sym(&w, 'x');
			fx_sym(&w, c);
			bw_put(&w, 0, 16);
			bw_flush(&w);
			stream_case(i, s, D_ACCEPT, bit, c == 286 ?
				    "length symbol 286" : "length symbol 287");
		}
		for (int c = 30; c <= 31; c++) {
			s = (struct buf){ 0 };
			w = (struct bw){ &s, 0, 0 };
			fx_start(&w, true);
			fx_sym(&w, 'x');
			fx_sym(&w, 257);
			bw_code(&w, (u32)c, 5);
			bw_put(&w, 0, 16);
			bw_flush(&w);
			stream_case(i, s, D_ACCEPT, bit, c == 30 ?
				    "distance symbol 30" : "distance symbol 31");
		}
		s = (struct buf){ 0 };
		stored(&s, st_chunk(i), st_ulen(i), 65535, true);
		s.p[3] ^= 1;	/* NLEN no longer ~LEN */
		stream_case(i, s, D_ACCEPT, bit, "stored block NLEN mismatch");
		s = (struct buf){ 0 };
		put8(&s, 0x05);	/* final, dynamic: then random code lengths */
		put(&s, junk + 100, 300);
		stream_case(i, s, D_ACCEPT, bit, "dynamic block of random bytes");
		s = (struct buf){ 0 };
		put(&s, junk, 1);
		stream_case(i, s, D_ACCEPT, bit, "one random byte");
		s = (struct buf){ 0 };
		put(&s, junk + 7, st_ulen(i));
		stream_case(i, s, D_ACCEPT, bit, "random bytes");

		/* distances too far back */
		for (int dist = 1; dist <= 32768; dist *= 32) {
			s = (struct buf){ 0 };
			w = (struct bw){ &s, 0, 0 };
			fx_start(&w, true);
			fx_match(&w, 3, dist);
			fx_literals(&w, st_chunk(i), 0, true);
			bw_flush(&w);
			stream_case(i, s, D_ACCEPT, bit, "distance before the start");
		}
		s = (struct buf){ 0 };
		w = (struct bw){ &s, 0, 0 };
		fx_start(&w, true);
		fx_sym(&w, 'a');
		fx_sym(&w, 'b');
		fx_match(&w, 258, 3);
		fx_sym(&w, 256);
		bw_flush(&w);
		stream_case(i, s, D_ACCEPT, bit, "distance one past the output");

		/* zlib-wrapped chunk in a raw file */
		s = zdeflate(st_chunk(i), st_ulen(i), 15, 9, Z_DEFAULT_STRATEGY,
			     NULL, 0);
		stream_case(i, s, D_ACCEPT, bit, "zlib stream in a raw file");
	}

	/* zlib-wrapped files (windowBits 0 and 15): bad wrappers */
	for (int wb = 0; wb <= 15; wb += 15) {
		for (int k = 0; k < 4; k++) {
			struct szfile f;
			struct buf b, *c;

			encode(&f, st_data, 2 * 8192 + 3000, 8192, 0, wb, NULL, 0, 9,
			       Z_DEFAULT_STRATEGY);
			c = &f.streams[1];
			if (k == 0)
				c->p[c->n - 1] ^= 0x40;		/* Adler-32 */
			else if (k == 1)
				c->p[1] = fdict_flg(c->p[0], c->p[1]);
			else if (k == 2)
				c->p[1] ^= 1;			/* FCHECK */
			else
				c->n -= 4;			/* no Adler-32 */
			if (k == 1 && (c->p[0] * 256 + c->p[1]) % 31)
				die("FDICT header");
			b = assemble(&f);
			emit(&b, D_ACCEPT, 1 << 1, f.orig, f.size,
			     "stream wbits %d zlib %s", wb,
			     k == 0 ? "bad Adler-32" : k == 1 ? "wants a dictionary" :
			     k == 2 ? "bad header check" : "without Adler-32");
			buf_free(&b);
			sz_free(&f);
		}
		{
			/* window in the zlib header larger than windowBits */
			struct szfile f;
			struct buf b;

			encode(&f, st_data, 2 * 8192 + 3000, 8192, 0, 15, NULL, 0, 9,
			       Z_DEFAULT_STRATEGY);
			b = assemble(&f);
			b.p[18] = 9;
			emit(&b, D_ACCEPT, ALL_BAD, f.orig, f.size,
			     "stream zlib window 32K with windowBits 9");
			buf_free(&b);
			sz_free(&f);
		}
	}

	/* matches into the dictionary, at and past its start */
	{
		static const struct { u32 dsize; int wbits; u32 dist; bool ok; } m[] = {
			{ 300, -15, 300, true }, { 300, -15, 301, false },
			{ 1, -15, 1, true }, { 1, -15, 2, false },
			{ 1000, -9, 512, true }, { 1000, -9, 513, false },
			{ 32768, -15, 32768, true }, { 65535, -15, 32768, true },
			{ 40000, -15, 32768, true }, { 32767, -15, 32768, false },
		};
		u8 *dict = gen_code(65535, 6);

		for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
			struct szfile f;
			struct buf b;
			struct bw w = { &s, 0, 0 };
			u8 *exp = xmalloc(4096 + 2000);
			u32 win = m[k].dsize < 32768 ? m[k].dsize : 32768;
			const u8 *d = dict + m[k].dsize - win;

			s = (struct buf){ 0 };
			/* chunk 0: a 10-byte match at the distance, literals */
			for (u32 j = 0; j < 10; j++)
				exp[j] = m[k].dist > win ? 0 : j < m[k].dist ?
					 d[win - m[k].dist + j] : exp[j - m[k].dist];
			memcpy(exp + 10, st_data, 4086);
			memcpy(exp + 4096, st_data + 4096, 2000);
			encode(&f, exp, 4096 + 2000, 4096, 0, m[k].wbits, dict,
			       m[k].dsize > 40000 ? 40000 : m[k].dsize, 9,
			       Z_DEFAULT_STRATEGY);
			f.dict_size = m[k].dsize;
			fx_start(&w, true);
			fx_match(&w, 10, (int)m[k].dist);
			for (int j = 10; j < 4096; j++)
				fx_sym(&w, exp[j]);
			fx_sym(&w, 256);
			bw_flush(&w);
			replace_stream(&f, 0, s);
			if (m[k].dsize > 40000) {
				/* chunk 1 is not checked (it matched into a
				 * different dictionary); chunk 0 is the point
				 */
				b = assemble(&f);
				emit(&b, D_LIB, 0, NULL, 0, "stream dict %u distance %u",
				     m[k].dsize, m[k].dist);
			} else {
				b = assemble(&f);
				emit(&b, D_ACCEPT, m[k].ok ? 0 : 1, exp, 4096 + 2000,
				     "stream dict %u wbits %d distance %u", m[k].dsize,
				     m[k].wbits, m[k].dist);
			}
			buf_free(&b);
			sz_free(&f);
			free(exp);
		}
		free(dict);
	}
	free(junk);
}

/* ------------------------------------------------------------ filter */

static void gen_filter(void)
{
	u8 *data = gen_code(4096 + 16, 7);

	/* make the tail a run of call/branch candidates */
	for (int k = 0; k < 16; k++)
		data[4096 + k] = (u8[]){ 0xE8, 0xEB, 0xF0, 0xF8 }[k % 4];
	for (int filter = 1; filter <= 3; filter++) {
		for (u32 tiny = 1; tiny <= 9; tiny++) {
			struct szfile f;

			/* one chunk of @tiny bytes */
			encode(&f, data + 4096 - tiny, tiny, 4096, filter, -15, NULL,
			       0, 9, Z_DEFAULT_STRATEGY);
			emit_sz(&f, 0, "filter tiny file");
			sz_free(&f);
			/* a full chunk, then a last chunk of @tiny bytes */
			encode(&f, data, 4096 + tiny, 4096, filter, -15, NULL, 0, 9,
			       Z_DEFAULT_STRATEGY);
			emit_sz(&f, 0, "filter tiny last chunk");
			sz_free(&f);
			/* with a dictionary too */
			encode(&f, data, 4096 + tiny, 4096, filter, -15, data, 333, 9,
			       Z_DEFAULT_STRATEGY);
			emit_sz(&f, 0, "filter tiny last chunk and dictionary");
			sz_free(&f);
		}
	}
	free(data);
}

/* ---------------------------------------------------------------- v2 */

/* CRC-32C, bitwise: independent of the library's */
static u32 crc32c(const u8 *p, size_t n)
{
	u32 crc = ~0U;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78U & -(crc & 1));
	}
	return ~crc;
}

static u64 csum_of(int type, const u8 *p, size_t n)
{
	if (type == SZIP_CSUM_XXH64)
		return XXH64(p, n, 0);
	return type == SZIP_CSUM_CRC32C ? crc32c(p, n) : 0;
}

static u32 csum_size(int type)
{
	return type == SZIP_CSUM_XXH64 ? 8 : type == SZIP_CSUM_CRC32C ? 4 : 0;
}

static void set64(struct buf *b, size_t at, u64 v)
{
	set32(b, at, (u32)v);
	set32(b, at + 4, (u32)(v >> 32));
}

static u64 get64(const struct buf *b, size_t at)
{
	return get32(b, at) | (u64)get32(b, at + 4) << 32;
}

/**
 * struct sz2file - the parts of a v2 file, before assembly
 * @codec: header codec
 * @shift: header chunkShift
 * @filter: header filter
 * @csum: header checksum
 * @dict: dictionary bytes
 * @dict_size: their number
 * @nr: number of chunks
 * @streams: compressed (or stored) chunks
 * @sums: checksums of the original chunks
 * @orig: uncompressed bytes
 * @size: their number (header size)
 */
struct sz2file {
	int codec, shift, filter, csum;
	const u8 *dict;
	u32 dict_size;
	u32 nr;
	struct buf *streams;
	u64 *sums;
	const u8 *orig;
	size_t size;
};

static void sz2_free(struct sz2file *f)
{
	for (u32 i = 0; i < f->nr; i++)
		buf_free(&f->streams[i]);
	free(f->streams);
	free(f->sums);
	f->streams = NULL;
	f->sums = NULL;
}

static struct buf codec_compress(int codec, const u8 *in, size_t n,
				 const u8 *dict, u32 dict_size, int level)
{
	struct buf out = { 0 };

	if (codec == SZIP_CODEC_ZSTD) {
		ZSTD_CCtx *c = ZSTD_createCCtx();
		size_t cap = ZSTD_compressBound(n), r;

		reserve(&out, cap);
		r = dict_size ? ZSTD_compress_usingDict(c, out.p, cap, in, n, dict,
							dict_size, level) :
				ZSTD_compressCCtx(c, out.p, cap, in, n, level);
		if (ZSTD_isError(r))
			die("zstd: %s", ZSTD_getErrorName(r));
		out.n = r;
		ZSTD_freeCCtx(c);
	} else if (codec == SZIP_CODEC_LZ4) {
		LZ4_stream_t *st = LZ4_createStream();
		int cap = LZ4_compressBound((int)n), r;
		u32 dl = dict_size > SZIP_LZ4_WINDOW ? SZIP_LZ4_WINDOW : dict_size;

		reserve(&out, cap);
		if (dl)
			LZ4_loadDict(st, (const char *)dict + dict_size - dl, (int)dl);
		r = LZ4_compress_fast_continue(st, (const char *)in, (char *)out.p,
					       (int)n, cap, 1);
		if (r <= 0)
			die("lz4: %d", r);
		out.n = r;
		LZ4_freeStream(st);
	} else {
		out = zdeflate(in, n, -15, level, Z_DEFAULT_STRATEGY, dict,
			       dict_size);
	}
	return out;
}

static u32 ulen2(const struct sz2file *f, u32 i)
{
	size_t cs = (size_t)1 << f->shift;

	return i + 1 < f->nr ? (u32)cs : (u32)(f->size - (size_t)i * cs);
}

/* Chunk, filter and compress (or store) @size bytes of @data into @f. */
static void encode2(struct sz2file *f, const u8 *data, size_t size, int codec,
		    int shift, int filter, int csum, const u8 *dict,
		    u32 dict_size, int level)
{
	size_t cs = (size_t)1 << shift;
	u8 *tmp = xmalloc(cs);

	memset(f, 0, sizeof(*f));
	f->codec = codec;
	f->shift = shift;
	f->filter = filter;
	f->csum = csum;
	f->dict = dict;
	f->dict_size = dict_size;
	f->orig = data;
	f->size = size;
	f->nr = (u32)((size + cs - 1) / cs);
	f->streams = calloc(f->nr, sizeof(*f->streams));
	f->sums = calloc(f->nr, sizeof(*f->sums));
	if (!f->streams || !f->sums)
		die("out of memory");
	for (u32 i = 0; i < f->nr; i++) {
		u32 ulen = ulen2(f, i);
		const u8 *chunk = data + (size_t)i * cs;

		memcpy(tmp, chunk, ulen);
		szip_bcj((u8)filter, tmp, ulen, (u32)(i * cs), true);
		f->streams[i] = codec_compress(codec, tmp, ulen, dict, dict_size,
					       level);
		if (f->streams[i].n >= ulen) {
			/* not smaller: stored */
			f->streams[i].n = 0;
			put(&f->streams[i], tmp, ulen);
		}
		f->sums[i] = csum_of(csum, chunk, ulen);
	}
	free(tmp);
}

static size_t table2_at(const struct sz2file *f, u32 i)
{
	return SZIP2_HEADER_SIZE + f->dict_size + (size_t)SZIP2_OFFSET_SIZE * i;
}

static size_t csum2_at(const struct sz2file *f, u32 i)
{
	return table2_at(f, f->nr) + (size_t)csum_size(f->csum) * i;
}

static struct buf assemble2(const struct sz2file *f)
{
	struct buf b = { 0 };
	u64 off = csum2_at(f, f->nr), total = off;

	for (u32 i = 0; i < f->nr; i++)
		total += f->streams[i].n;
	reserve(&b, total);
	memset(b.p, 0, SZIP2_HEADER_SIZE);
	b.n = SZIP2_HEADER_SIZE;
	set32(&b, 0, SZIP2_MAGIC);
	b.p[4] = (u8)f->codec;
	b.p[5] = (u8)f->shift;
	b.p[6] = (u8)f->filter;
	b.p[7] = (u8)f->csum;
	set64(&b, 8, f->size);
	set64(&b, 16, total);
	set32(&b, 24, f->dict_size);
	set32(&b, 28, f->nr);
	put(&b, f->dict, f->dict_size);
	b.n += (size_t)SZIP2_OFFSET_SIZE * f->nr + (size_t)csum_size(f->csum) * f->nr;
	for (u32 i = 0; i < f->nr; i++) {
		set64(&b, table2_at(f, i), off);
		if (f->csum == SZIP_CSUM_XXH64)
			set64(&b, csum2_at(f, i), f->sums[i]);
		else if (f->csum == SZIP_CSUM_CRC32C)
			set32(&b, csum2_at(f, i), (u32)f->sums[i]);
		off += f->streams[i].n;
	}
	for (u32 i = 0; i < f->nr; i++)
		put(&b, f->streams[i].p, f->streams[i].n);
	return b;
}

static void emit_sz2(const struct sz2file *f, u64 bad, const char *what)
{
	struct buf b = assemble2(f);

	emit(&b, D_ACCEPT, bad, f->orig, f->size, "%s", what);
	buf_free(&b);
}

static const char *const codec_names[] = { "?", "deflate", "zstd", "lz4" };
static const char *const csum_names[] = { "none", "xxh64", "crc32c" };

static void gen_v2_valid(void)
{
	static const struct { int shift, csum; } v[] = {
		{ 12, 0 }, { 13, 1 }, { 14, 2 }, { 17, 1 }, { 12, 2 },
	};
	u8 *code = gen_code(400000, 21), *rnd_data = gen_random(3 * 16384);
	u8 *dict = gen_code(262144, 21);
	struct sz2file f;
	char what[128];

	for (int codec = 1; codec <= 3; codec++) {
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			size_t cs = (size_t)1 << v[k].shift;
			size_t size = v[k].shift == 17 ? 2 * cs + 5 : 3 * cs + 123;

			snprintf(what, sizeof(what), "valid v2 %s chunk %zu checksum %s",
				 codec_names[codec], cs, csum_names[v[k].csum]);
			encode2(&f, code, size, codec, v[k].shift, 0, v[k].csum, NULL,
				0, 6);
			emit_sz2(&f, 0, what);
			sz2_free(&f);
		}
		/* stored chunks */
		snprintf(what, sizeof(what), "valid v2 %s stored chunks",
			 codec_names[codec]);
		encode2(&f, rnd_data, 3 * 16384 - 7, codec, 14, 0, 2, NULL, 0, 6);
		emit_sz2(&f, 0, what);
		sz2_free(&f);
		/* one byte */
		snprintf(what, sizeof(what), "valid v2 %s one byte", codec_names[codec]);
		encode2(&f, code, 1, codec, 12, 0, 1, NULL, 0, 6);
		emit_sz2(&f, 0, what);
		sz2_free(&f);
		/* filters on tiny last chunks */
		for (int tiny = 1; tiny <= 5; tiny += 2) {
			snprintf(what, sizeof(what), "valid v2 %s x86 last chunk %d",
				 codec_names[codec], tiny);
			encode2(&f, code, 4096 + tiny, codec, 12, 3, 2, NULL, 0, 6);
			emit_sz2(&f, 0, what);
			sz2_free(&f);
		}
	}
	/* dictionaries, up to each codec's largest */
	{
		static const struct { int codec; u32 dsize; } d[] = {
			{ 1, 40000 }, { 1, 262144 }, { 2, 1000 }, { 2, 262144 },
			{ 3, 65536 }, { 3, 100000 }, { 3, 5 },
		};

		for (size_t k = 0; k < sizeof(d) / sizeof(d[0]); k++) {
			snprintf(what, sizeof(what), "valid v2 %s dict %u",
				 codec_names[d[k].codec], d[k].dsize);
			encode2(&f, code + 1000, 40000, d[k].codec, 13, 0, 1,
				dict + 262144 - d[k].dsize, d[k].dsize, 6);
			emit_sz2(&f, 0, what);
			sz2_free(&f);
		}
	}
	/* bytes after totalSize; a zstd frame with its own checksum */
	{
		struct buf b;

		encode2(&f, code, 20000, 2, 13, 0, 1, NULL, 0, 6);
		b = assemble2(&f);
		put(&b, rnd_data, 5000);
		emit(&b, D_ACCEPT, 0, f.orig, f.size, "valid v2 bytes after totalSize");
		buf_free(&b);
		sz2_free(&f);
	}
	free(code);
	free(rnd_data);
	free(dict);
}

/* The base of the v2 header and table cases: deflate, 3 x 4 KiB, CRC-32C */
static u8 *v2_data;

static void v2_base(struct sz2file *f, int codec, int csum)
{
	encode2(f, v2_data, 2 * 4096 + 1000, codec, 12, 0, csum, NULL, 0, 6);
}

static void hdr2_case(size_t at, int width, u64 v, enum design d, u64 bad,
		      const char *what)
{
	struct sz2file f;
	struct buf b;

	v2_base(&f, 1, 2);
	b = assemble2(&f);
	if (width == 1)
		b.p[at] = (u8)v;
	else if (width == 4)
		set32(&b, at, (u32)v);
	else
		set64(&b, at, v);
	emit(&b, d, bad, f.orig, f.size, "header v2 %s %#llx", what,
	     (unsigned long long)v);
	buf_free(&b);
	sz2_free(&f);
}

static void gen_v2_header(void)
{
	struct sz2file f;
	struct buf b;
	u64 total, data_off, last_off;

	v2_data = gen_code(3 * 4096, 23);
	v2_base(&f, 1, 2);
	b = assemble2(&f);
	total = b.n;
	data_off = csum2_at(&f, f.nr);
	last_off = get64(&b, table2_at(&f, 2));
	emit(&b, D_ACCEPT, 0, f.orig, f.size, "header v2 base");
	buf_free(&b);
	sz2_free(&f);

	hdr2_case(0, 4, 0x315A6553, D_REFUSE, 0, "magic SeZ1");
	hdr2_case(0, 4, 0x335A6553, D_REFUSE, 0, "magic SeZ3");
	{
		static const u32 codecs[] = { 0, 2, 3, 4, 5, 127, 128, 255 };

		for (size_t k = 0; k < sizeof(codecs) / sizeof(codecs[0]); k++)
			hdr2_case(4, 1, codecs[k], codecs[k] && codecs[k] < 4 ? D_LIB :
				  D_REFUSE, 0, "codec");
	}
	{
		static const u32 shifts[] = { 0, 1, 11, 13, 16, 17, 18, 31, 32, 255 };

		for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++)
			/* 3 chunks of 9192 bytes fit no other chunk size */
			hdr2_case(5, 1, shifts[k], D_REFUSE, 0, "chunkShift");
	}
	hdr2_case(6, 1, 3, D_LIB, 0, "filter");
	hdr2_case(6, 1, 4, D_REFUSE, 0, "filter");
	hdr2_case(6, 1, 255, D_REFUSE, 0, "filter");
	/* without checksums the CRC table is a gap before chunk 0 */
	hdr2_case(7, 1, 0, D_ACCEPT, 0, "checksum");
	hdr2_case(7, 1, 1, D_REFUSE, 0, "checksum");
	hdr2_case(7, 1, 3, D_REFUSE, 0, "checksum");
	hdr2_case(7, 1, 255, D_REFUSE, 0, "checksum");
	{
		const struct { u64 v; enum design d; u64 bad; } t[] = {
			{ 0, D_REFUSE, 0 }, { 9191, D_ACCEPT, 1 << 2 },
			{ 9193, D_ACCEPT, 1 << 2 }, { 3 * 4096, D_ACCEPT, 1 << 2 },
			{ 3 * 4096 + 1, D_REFUSE, 0 }, { 2 * 4096, D_REFUSE, 0 },
			{ 1ULL << 32, D_REFUSE, 0 }, { (1ULL << 32) + 9192, D_REFUSE, 0 },
			{ 1ULL << 63, D_REFUSE, 0 }, { ~0ULL, D_REFUSE, 0 },
		};

		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			hdr2_case(8, 8, t[k].v, t[k].d, t[k].bad, "size");
	}
	{
		const struct { u64 v; enum design d; u64 bad; } t[] = {
			{ 0, D_REFUSE, 0 }, { 63, D_REFUSE, 0 }, { 64, D_REFUSE, 0 },
			{ data_off, D_REFUSE, 0 }, { last_off, D_REFUSE, 0 },
			{ last_off + 1, D_ACCEPT, 1 << 2 }, { total - 1, D_ACCEPT, 1 << 2 },
			{ total + 1, D_REFUSE, 0 }, { total + (1ULL << 32), D_REFUSE, 0 },
			{ ~0ULL, D_REFUSE, 0 },
		};

		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
			hdr2_case(16, 8, t[k].v, t[k].d, t[k].bad, "totalSize");
	}
	hdr2_case(24, 4, 1, D_LIB, 0, "dictSize");
	hdr2_case(24, 4, 262144, D_REFUSE, 0, "dictSize");
	hdr2_case(24, 4, 262145, D_REFUSE, 0, "dictSize");
	hdr2_case(24, 4, 0xFFFFFFFF, D_REFUSE, 0, "dictSize");
	hdr2_case(28, 4, 0, D_REFUSE, 0, "nChunks");
	hdr2_case(28, 4, 2, D_REFUSE, 0, "nChunks");
	hdr2_case(28, 4, 4, D_REFUSE, 0, "nChunks");
	hdr2_case(28, 4, 0xFFFFFFFF, D_REFUSE, 0, "nChunks");
	for (u32 k = 32; k < 64; k++)
		hdr2_case(k, 1, k == 63 ? 0x80 : 1, D_REFUSE, 0, "reserved byte");

	/* shorter than the v2 header */
	v2_base(&f, 1, 2);
	b = assemble2(&f);
	for (size_t n = 4; n < SZIP2_HEADER_SIZE; n += 9) {
		struct buf c = buf_copy(&b);

		c.n = n;
		emit(&c, D_REFUSE, 0, NULL, 0, "header v2 truncated to %zu", n);
		buf_free(&c);
	}
	buf_free(&b);
	sz2_free(&f);
}

/* Table entry @i of a 4-chunk v2 file set to @v (@add: added to it). */
static void table2_case(bool random_data, u32 i, u64 v, bool add,
			enum design d, u64 bad, const char *what)
{
	u8 *data = random_data ? gen_random(4 * 4096) : gen_code(4 * 4096, 24);
	struct sz2file f;
	struct buf b;

	encode2(&f, data, 4 * 4096, 1, 12, 0, 1, NULL, 0, 6);
	b = assemble2(&f);
	set64(&b, table2_at(&f, i), add ? get64(&b, table2_at(&f, i)) + v : v);
	emit(&b, d, bad, f.orig, f.size, "table v2 entry %u %s", i, what);
	buf_free(&b);
	sz2_free(&f);
	free(data);
}

static void gen_v2_table(void)
{
	table2_case(false, 0, 0, false, D_REFUSE, 0, "at 0");
	table2_case(false, 0, 64, false, D_REFUSE, 0, "at the table");
	table2_case(false, 0, 64 + 4 * 8 + 8, false, D_REFUSE, 0, "in the checksum table");
	table2_case(false, 0, (u64)-1, true, D_REFUSE, 0, "one byte early");
	table2_case(false, 0, 1, true, D_ACCEPT, 0x1, "one byte late");
	table2_case(false, 1, 1, true, D_ACCEPT, 0x3, "one byte late");
	table2_case(false, 1, (u64)-1, true, D_ACCEPT, 0x3, "one byte early");
	table2_case(false, 1, 1ULL << 32, true, D_REFUSE, 0, "4 GiB late");
	table2_case(false, 1, 1ULL << 63, false, D_REFUSE, 0, "at 2^63");
	table2_case(false, 3, ~0ULL, false, D_REFUSE, 0, "at 2^64 - 1");
	/* stored chunks of random data: a longer chunk is refused */
	table2_case(true, 1, 1, true, D_REFUSE, 0, "one byte late (chunk 0 too long)");
	table2_case(true, 1, (u64)-1, true, D_REFUSE, 0,
		    "one byte early (chunk 1 too long)");
	table2_case(true, 3, 1, true, D_REFUSE, 0, "one byte late (chunk 2 too long)");
}

/* 3 chunks of 8 KiB, the last 3000 bytes; chunk 1 gets stream @s */
static void stream2_case(int codec, int csum, struct buf s, enum design d,
			 u64 bad, const char *what)
{
	struct sz2file f;
	struct buf b;

	encode2(&f, st_data, 2 * 8192 + 3000, codec, 13, 0, csum, NULL, 0, 6);
	buf_free(&f.streams[1]);
	f.streams[1] = s;
	b = assemble2(&f);
	emit(&b, d, bad, f.orig, f.size, "stream v2 %s checksum %s chunk 1 %s",
	     codec_names[codec], csum_names[csum], what);
	buf_free(&b);
	sz2_free(&f);
}

static struct buf zstd_with(const u8 *in, size_t n, int param, int value)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	struct buf out = { 0 };
	size_t r;

	reserve(&out, ZSTD_compressBound(n) + 64);
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 6);
	if (param)
		ZSTD_CCtx_setParameter(c, (ZSTD_cParameter)param, value);
	r = ZSTD_compress2(c, out.p, out.cap, in, n);
	if (ZSTD_isError(r))
		die("zstd: %s", ZSTD_getErrorName(r));
	out.n = r;
	ZSTD_freeCCtx(c);
	return out;
}

/* An LZ4 block: one sequence of @lit literals then a match, then @tail
 * literals (the last sequence).
 */
static struct buf lz4_block(const u8 *lit, u32 nlit, u32 offset, u32 mlen,
			    const u8 *tail, u32 ntail)
{
	struct buf b = { 0 };
	u32 ml = mlen - 4;

	put8(&b, (u8)((nlit < 15 ? nlit : 15) << 4 | (ml < 15 ? ml : 15)));
	for (u32 n = nlit - 15; nlit >= 15; n -= 255) {
		put8(&b, n < 255 ? (u8)n : 255);
		if (n < 255)
			break;
	}
	put(&b, lit, nlit);
	put8(&b, (u8)offset);
	put8(&b, (u8)(offset >> 8));
	for (u32 n = ml - 15; ml >= 15; n -= 255) {
		put8(&b, n < 255 ? (u8)n : 255);
		if (n < 255)
			break;
	}
	put8(&b, (u8)((ntail < 15 ? ntail : 15) << 4));
	for (u32 n = ntail - 15; ntail >= 15; n -= 255) {
		put8(&b, n < 255 ? (u8)n : 255);
		if (n < 255)
			break;
	}
	put(&b, tail, ntail);
	return b;
}

static void gen_v2_stream(void)
{
	const u8 *c1 = st_data + 8192;
	u8 *junk = gen_random(9000);
	struct buf s;

	for (int codec = 1; codec <= 3; codec++) {
		for (int csum = 0; csum <= 1; csum++) {
			u64 bit = 1 << 1;
			u8 *tmp = xmalloc(8192 + 64);

			memcpy(tmp, c1, 8192);
			memset(tmp + 8192, 'z', 64);
			stream2_case(codec, csum, codec_compress(codec, tmp, 8191, NULL, 0, 6),
				     D_ACCEPT, bit, "one byte short");
			stream2_case(codec, csum, codec_compress(codec, tmp, 8193, NULL, 0, 6),
				     D_ACCEPT, bit, "one byte long");
			stream2_case(codec, csum, codec_compress(codec, tmp, 1, NULL, 0, 6),
				     D_ACCEPT, bit, "one byte in all");
			s = codec_compress(codec, tmp, 8192, NULL, 0, 6);
			s.n--;
			stream2_case(codec, csum, s, D_ACCEPT, bit, "last byte missing");
			s = codec_compress(codec, tmp, 8192, NULL, 0, 6);
			s.n /= 2;
			stream2_case(codec, csum, s, D_ACCEPT, bit, "cut in half");
			s = codec_compress(codec, tmp, 8192, NULL, 0, 6);
			put8(&s, 0);
			stream2_case(codec, csum, s, D_LIB, 0, "one trailing byte");
			s = (struct buf){ 0 };
			put(&s, junk, 3000);
			stream2_case(codec, csum, s, D_ACCEPT, bit, "random bytes");
			s = (struct buf){ 0 };
			put(&s, junk, 8192);
			stream2_case(codec, csum, s, csum ? D_ACCEPT : D_LIB, bit,
				     "stored, other bytes");
			free(tmp);
		}
	}
	/* zstd: frames that are odd, or lie */
	s = zstd_with(c1, 8192, ZSTD_c_checksumFlag, 1);
	stream2_case(2, 0, s, D_ACCEPT, 0, "zstd frame with its own checksum");
	s = zstd_with(c1, 8192, ZSTD_c_checksumFlag, 1);
	s.p[s.n - 1] ^= 1;
	stream2_case(2, 0, s, D_ACCEPT, 1 << 1, "zstd frame checksum wrong");
	s = zstd_with(c1, 8192, ZSTD_c_contentSizeFlag, 0);
	stream2_case(2, 0, s, D_ACCEPT, 0, "zstd frame without content size");
	s = zstd_with(c1, 8192, ZSTD_c_windowLog, 27);
	stream2_case(2, 1, s, D_LIB, 0, "zstd frame with a 128 MiB window");
	{
		struct buf a = zstd_with(c1, 4096, 0, 0);
		struct buf z = zstd_with(c1 + 4096, 4096, 0, 0);

		put(&a, z.p, z.n);
		buf_free(&z);
		stream2_case(2, 1, a, D_LIB, 0, "two zstd frames");
		a = (struct buf){ 0 };
		put(&a, "\x50\x2A\x4D\x18\x04\x00\x00\x00skip", 12);
		z = zstd_with(c1, 8192, 0, 0);
		put(&a, z.p, z.n);
		buf_free(&z);
		stream2_case(2, 1, a, D_LIB, 0, "skippable frame then a frame");
		a = zstd_with(c1, 8192, 0, 0);
		/* single-segment frame: content size after the descriptor */
		if ((a.p[4] & 0x23) == 0x20) {
			a.p[5] ^= 1;	/* no dictionary id: the size is next */
			stream2_case(2, 1, a, D_ACCEPT, 1 << 1, "zstd content size lies");
		} else {
			buf_free(&a);
		}
		a = (struct buf){ 0 };
		put(&a, "\x28\xB5\x2F\xFD", 4);
		put(&a, junk, 500);
		stream2_case(2, 0, a, D_ACCEPT, 1 << 1, "zstd magic then random bytes");
	}
	/* LZ4: hand-made blocks */
	{
		u8 lit[8192];

		memcpy(lit, c1, 8192);
		s = (struct buf){ 0 };
		put8(&s, 0xF0);
		for (u32 n = 8192 - 15; ; n -= 255) {
			put8(&s, n < 255 ? (u8)n : 255);
			if (n < 255)
				break;
		}
		put(&s, lit, 8192);
		/* longer than the chunk: v2 refuses the file */
		stream2_case(3, 1, s, D_REFUSE, 0, "lz4 literals only");
		/* a run made by an overlapping match */
		memset(lit, 'q', 8192);
		s = lz4_block(lit, 1, 1, 8192 - 1 - 5, lit, 5);
		stream2_case(3, 0, s, D_LIB, 0, "lz4 run by an overlapping match");
		s = lz4_block(c1, 10, 0, 100, c1, 8192 - 110);
		stream2_case(3, 0, s, D_LIB, 0, "lz4 match offset 0");
		s = lz4_block(c1, 10, 11, 100, c1, 8192 - 110);
		stream2_case(3, 0, s, D_ACCEPT, 1 << 1, "lz4 match before the start");
		s = lz4_block(c1, 10, 10, 100, c1, 8192 - 110);
		stream2_case(3, 0, s, D_LIB, 0, "lz4 match at the start");
		s = lz4_block(c1, 10, 5, 8192, c1, 5);
		stream2_case(3, 0, s, D_ACCEPT, 1 << 1, "lz4 match past the end");
		s = (struct buf){ 0 };
		put8(&s, 0xF0);
		for (int k = 0; k < 200; k++)
			put8(&s, 255);
		put(&s, c1, 100);
		stream2_case(3, 0, s, D_ACCEPT, 1 << 1, "lz4 literal length past the input");
	}
	/* checksums that do not match */
	for (int csum = 1; csum <= 2; csum++) {
		for (int codec = 1; codec <= 3; codec += 2) {
			struct sz2file f;
			struct buf b;

			encode2(&f, st_data, 2 * 8192 + 3000, codec, 13, 0, csum, NULL, 0, 6);
			f.sums[1] ^= 1ULL << 7;
			b = assemble2(&f);
			emit(&b, D_ACCEPT, 1 << 1, f.orig, f.size,
			     "stream v2 %s %s checksum of chunk 1 wrong",
			     codec_names[codec], csum_names[csum]);
			buf_free(&b);
			sz2_free(&f);
		}
	}
	free(junk);
}

/* ---------------------------------------------------------- mutation */

static const u32 interesting[] = {
	0, 1, 2, 3, 4, 5, 19, 20, 21, 0x7F, 0x80, 0xFF, 0x100, 0xFFF, 0x1000,
	0x1001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x10000, 0x7FFFFFFF,
	0x80000000, 0xFFFFFFFE, 0xFFFFFFFF,
};

static void mutate(struct buf *b, const struct buf *base)
{
	u32 nr = 1 + rnd(4);

	while (nr--) {
		u32 kind = rnd(10);
		/* half of the changes hit the header and table */
		u32 span = rnd(2) ? (b->n < 200 ? (u32)b->n : 200) : (u32)b->n;
		u32 at = rnd(span ? span : 1);

		if (!b->n)
			kind = 8;
		switch (kind) {
		case 0:
		case 1:
			b->p[at] ^= (u8)(1 << rnd(8));
			break;
		case 2:
			b->p[at] = (u8)rng();
			break;
		case 3:
			if (at + 2 <= b->n)
				set16(b, at, interesting[rnd(sizeof(interesting) / 4)]);
			break;
		case 4:
			if (at + 4 <= b->n)
				set32(b, at, rnd(3) ? interesting[rnd(sizeof(interesting) / 4)] :
					     (u32)b->n - 2 + rnd(5));
			break;
		case 5: {
			/* nudge a table entry, or totalSize */
			u32 e = rnd(8) ? 20 + 4 * rnd(8) : 4;

			if (e + 4 <= b->n)
				set32(b, e, get32(b, e) + rnd(9) - 4);
			break;
		}
		case 6:
			b->n = at;	/* truncate */
			break;
		case 7: {
			/* delete a range */
			u32 len = 1 + rnd(64);

			if (at + len <= b->n) {
				memmove(b->p + at, b->p + at + len, b->n - at - len);
				b->n -= len;
			}
			break;
		}
		case 8: {
			/* append or insert bytes from the original */
			u32 len = 1 + rnd(256);
			u32 from = base->n ? rnd((u32)base->n) : 0;

			if (from + len > base->n)
				len = (u32)base->n - from;
			reserve(b, len);
			if (at > b->n)
				at = (u32)b->n;
			memmove(b->p + at + len, b->p + at, b->n - at);
			memcpy(b->p + at, base->p + from, len);
			b->n += len;
			break;
		}
		default:
			/* randomize a run of bytes */
			for (u32 k = 0; k < 16 && at + k < b->n; k++)
				b->p[at + k] = (u8)rng();
			break;
		}
	}
}

static void gen_mutations(unsigned int count)
{
	struct base {
		u32 size, chunk_size, dict_size;
		int filter, wbits;
	} bases[] = {
		{ 9000, 4096, 0, 0, -15 }, { 20000, 8192, 0, 3, -15 },
		{ 30000, 12288, 0, 2, -15 }, { 40000, 32768, 0, 1, -15 },
		{ 12000, 4096, 1000, 0, -15 }, { 20000, 16384, 4096, 3, -15 },
		{ 9000, 4096, 0, 0, 0 }, { 9000, 4096, 0, 0, 15 },
		{ 9000, 4096, 0, 0, -9 }, { 5000, 4096, 32768, 0, -15 },
		{ 100, 4096, 0, 3, -15 }, { 25000, 4096, 700, 3, -12 },
	};
	/* v2: codec, chunk shift, checksum, dictionary */
	static const struct base2 {
		u32 size;
		int codec, shift, csum;
		u32 dict_size;
		int filter;
	} bases2[] = {
		{ 20000, 1, 12, 2, 0, 0 }, { 30000, 2, 13, 1, 0, 3 },
		{ 30000, 3, 12, 0, 0, 0 }, { 20000, 2, 12, 2, 2000, 0 },
		{ 40000, 3, 14, 1, 4096, 2 }, { 9000, 1, 12, 0, 1000, 0 },
	};
	size_t nb1 = sizeof(bases) / sizeof(bases[0]);
	size_t nb = nb1 + sizeof(bases2) / sizeof(bases2[0]);
	struct buf built[sizeof(bases) / sizeof(bases[0]) +
			 sizeof(bases2) / sizeof(bases2[0])];
	u8 *data = gen_code(65536 + 40000, 8);

	for (size_t k = 0; k < nb1; k++) {
		struct szfile f;

		encode(&f, data, bases[k].size, bases[k].chunk_size,
		       bases[k].filter, bases[k].wbits, data + 65536,
		       bases[k].dict_size, 6, Z_DEFAULT_STRATEGY);
		built[k] = assemble(&f);
		sz_free(&f);
	}
	for (size_t k = nb1; k < nb; k++) {
		const struct base2 *b2 = &bases2[k - nb1];
		struct sz2file f;

		encode2(&f, data, b2->size, b2->codec, b2->shift, b2->filter,
			b2->csum, data + 65536, b2->dict_size, 6);
		built[k] = assemble2(&f);
		sz2_free(&f);
	}
	for (unsigned int k = 0; k < count; k++) {
		size_t which = rnd((u32)nb);
		struct buf b = buf_copy(&built[which]);

		mutate(&b, &built[which]);
		emit(&b, D_LIB, 0, NULL, 0, "mutation %u of base %zu", k, which);
		buf_free(&b);
	}
	for (size_t k = 0; k < nb; k++)
		buf_free(&built[k]);
	free(data);
}

int main(int argc, char **argv)
{
	unsigned int mutations = 900;
	char name[512];

	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: %s OUTDIR [MUTATIONS [SEED]]\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	if (argc > 2)
		mutations = (unsigned int)strtoul(argv[2], NULL, 0);
	if (argc > 3)
		rng_state = strtoull(argv[3], NULL, 0) | 1;
	if (mkdir(outdir, 0755) && errno != EEXIST)
		die("%s: %s", outdir, strerror(errno));
	snprintf(name, sizeof(name), "%s/MANIFEST", outdir);
	manifest = fopen(name, "w");
	if (!manifest)
		die("%s: %s", name, strerror(errno));
	dec = xmalloc(szip_decoder_size());
	if (szip_decoder_init(dec))
		die("szip_decoder_init");

	gen_valid();
	gen_header();
	gen_table();
	gen_stream();
	gen_filter();
	gen_v2_valid();
	gen_v2_header();
	gen_v2_table();
	gen_v2_stream();
	gen_mutations(mutations);

	if (fclose(manifest))
		die("%s: %s", name, strerror(errno));
	szip_decoder_end(dec);
	free(dec);
	printf("gen_hostile: %u files (%u with a designed outcome, %u checked against the library only): %u to refuse, %u to accept, %u either\n",
	       nr_files, nr_designed, nr_files - nr_designed, by_act[REF_REFUSE],
	       by_act[REF_ACCEPT], by_act[REF_EITHER]);
	return 0;
}
