// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the szip library (szip/) and the encoder (tools/szip/pack.c).
 *
 * Usage: test_szip [VECTORS_DIR]
 *
 * Decodes every conformance vector (when VECTORS_DIR exists), checks that
 * every malformed file yields its specific error, round-trips generated and
 * system data over chunk sizes, dictionaries and filters, and builds each
 * malformed-input class from a valid file.  Output is TAP; the last line
 * reads "# unit: P passed, F failed, S skipped".
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "szip_env.h"
#include "szip.h"
#include "pack.h"

static int nr_tests, nr_pass, nr_fail, nr_skip;

static void __attribute__((format(printf, 2, 3)))
result(bool ok, const char *fmt, ...)
{
	va_list ap;

	nr_tests++;
	if (ok)
		nr_pass++;
	else
		nr_fail++;
	printf("%sok %d - ", ok ? "" : "not ", nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void __attribute__((format(printf, 1, 2))) skip(const char *fmt, ...)
{
	va_list ap;

	nr_tests++;
	nr_skip++;
	printf("ok %d - ", nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP\n");
}

static u8 *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	u8 *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = (size_t)n;
out:
	fclose(f);
	return buf;
}

/*
 * Decode a whole szip buffer the way a reader of the file would: header,
 * table, then every chunk.  Returns the first error; *out gets the output.
 */
static enum szip_ret decode_all(const u8 *buf, size_t len, u8 **out,
				size_t *out_len, u32 *bad_chunk)
{
	struct szip_decoder *d;
	struct szip_file f;
	enum szip_ret ret;
	u32 i;

	*out = NULL;
	ret = szip_open_buffer(&f, buf, len, bad_chunk);
	if (ret)
		return ret;
	d = malloc(szip_decoder_size());
	*out = malloc(f.info.size ? f.info.size : 1);
	if (!d || !*out || szip_decoder_init(d)) {
		free(d);
		return SZIP_ERR_INTERNAL;
	}
	ret = szip_file_prepare(&f);
	for (i = 0; !ret && i < f.info.nr_chunks; i++) {
		ret = szip_decode_chunk(d, &f, i, buf + szip_chunk_offset(&f, i),
					szip_chunk_clen(&f, i),
					*out + (size_t)i * f.info.chunk_size);
		if (ret && bad_chunk)
			*bad_chunk = i;
	}
	*out_len = f.info.size;
	szip_file_release(&f);
	szip_decoder_end(d);
	free(d);
	return ret;
}

/* ------------------------------------------------------ shared vectors */

static void test_vector_dir(const char *dir)
{
	char path[8192];
	struct dirent *de;
	int count = 0;
	DIR *dp = opendir(dir);

	if (!dp) {
		skip("vectors in %s (directory absent)", dir);
		return;
	}
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name), sz_len, in_len, out_len;
		u8 *sz, *in, *out;
		enum szip_ret ret;

		if (n < 4 || strcmp(de->d_name + n - 3, ".sz"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		sz = read_file(path, &sz_len);
		snprintf(path, sizeof(path), "%s/%.*s.in", dir, (int)(n - 3),
			 de->d_name);
		in = read_file(path, &in_len);
		if (!sz || !in) {
			result(false, "vector %s: cannot read", de->d_name);
			free(sz);
			free(in);
			continue;
		}
		ret = decode_all(sz, sz_len, &out, &out_len, NULL);
		result(!ret && out_len == in_len && !memcmp(out, in, in_len),
		       "vector %s decodes bit-exactly (%s)", de->d_name,
		       szip_strerror(ret));
		free(out);
		free(sz);
		free(in);
		count++;
	}
	closedir(dp);
	if (!count)
		result(false, "no vectors found in %s", dir);
}

static const struct {
	const char *name;
	enum szip_ret ret;
} bad_cases[] = {
	{ "bad-magic", SZIP_ERR_MAGIC },
	{ "short-header", SZIP_ERR_SHORT },
	{ "chunksize-0", SZIP_ERR_CHUNK_SIZE },
	{ "chunksize-5000", SZIP_ERR_CHUNK_SIZE },
	{ "chunksize-36864", SZIP_ERR_CHUNK_SIZE },
	{ "nchunks-0", SZIP_ERR_NR_CHUNKS },
	{ "lastchunk-0", SZIP_ERR_LAST_CHUNK },
	{ "lastchunk-gt-chunk", SZIP_ERR_LAST_CHUNK },
	{ "truncated", SZIP_ERR_TRUNCATED },
	{ "offset-past-end", SZIP_ERR_OFFSETS },
	{ "offsets-decreasing", SZIP_ERR_OFFSETS },
	{ "table-past-end", SZIP_ERR_TABLE },
	{ "corrupt-deflate", SZIP_ERR_CHUNK_LONG },
	{ "last-chunk-long", SZIP_ERR_CHUNK_LONG },
	{ "last-chunk-short", SZIP_ERR_CHUNK_SHORT },
	{ "wbits-minus7", SZIP_ERR_WINDOW_BITS },
	{ "wbits-16", SZIP_ERR_WINDOW_BITS },
	{ "filter-7", SZIP_ERR_FILTER },
	{ "trailing-bytes", SZIP_OK },	/* policy: accepted */
	{ "dict-zlib-wrapper", SZIP_ERR_DICT_WRAPPED },
};

static void test_bad_vectors(const char *dir)
{
	char path[8192];
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		size_t len, out_len;
		u8 *buf, *out;
		enum szip_ret ret;

		snprintf(path, sizeof(path), "%s/%s.sz", dir, bad_cases[i].name);
		buf = read_file(path, &len);
		if (!buf) {
			skip("bad vector %s (absent)", bad_cases[i].name);
			continue;
		}
		ret = decode_all(buf, len, &out, &out_len, NULL);
		result(ret == bad_cases[i].ret, "bad vector %s: %s (expected %s)",
		       bad_cases[i].name, szip_strerror(ret),
		       szip_strerror(bad_cases[i].ret));
		free(out);
		free(buf);
	}
}

/* --------------------------------------------------------- round trips */

static u64 rng_state = 0x9E3779B97F4A7C15ULL;

static u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(u8 *p, size_t n)
{
	while (n--)
		*p++ = (u8)rng();
}

static void fill_text(u8 *p, size_t n)
{
	static const char *const words[] = {
		"the ", "szip ", "chunk ", "of ", "ext4 ", "inflate ",
		"page ", "cache ", "read ", "mmap ", "kernel ", "module ",
		"\n", "offset ", "table ", "dictionary ", "filter ", ", ",
	};
	size_t i = 0;

	while (i < n) {
		const char *w = words[rng() % (sizeof(words) / sizeof(words[0]))];
		size_t l = strlen(w);

		memcpy(p + i, w, l < n - i ? l : n - i);
		i += l;
	}
}

/*
 * Pseudo machine code: mostly random, with x86 CALLs, ARM BLs and Thumb
 * BL pairs sprinkled in so every filter has something to convert.
 */
static void fill_code(u8 *p, size_t n)
{
	size_t i;

	fill_text(p, n);
	for (i = 0; i + 8 <= n; i += 8 + rng() % 24) {
		switch (rng() % 3) {
		case 0:
			p[i] = 0xE8;
			p[i + 4] = rng() & 1 ? 0x00 : 0xFF;
			break;
		case 1:
			p[i + 3] = 0xEB;
			break;
		default:
			p[i + 1] = 0xF0 | (rng() & 7);
			p[i + 3] = 0xF8 | (rng() & 7);
			break;
		}
	}
}

/*
 * Pack @in with @o, decode it again and compare; *packed: the file size.
 * Returns 0 if the round trip gives @in back, else -1.
 */
static int pack_and_check(const struct pack_opts *o, const u8 *in, size_t len,
			  size_t *packed)
{
	struct pack_result res;
	size_t out_len = 0;
	char err[256];
	u8 *out = NULL;
	enum szip_ret ret;
	bool same;

	if (szip_pack(in, len, o, &res, err, sizeof(err)))
		return -1;
	*packed = res.len;
	ret = decode_all(res.data, res.len, &out, &out_len, NULL);
	same = !ret && out_len == len && !memcmp(out, in, len);
	free(out);
	free(res.data);
	return same ? 0 : -1;
}

static int round_trip(const u8 *in, size_t len, u32 chunk, int level,
		      int filter, int dict, size_t *packed)
{
	struct pack_opts o = {
		.format = 1, .codec = SZIP_CODEC_DEFLATE,
		.chunk_size = chunk, .level = level,
		.filter = filter, .dict_size = dict,
	};

	return pack_and_check(&o, in, len, packed);
}

static const char *const filter_names[] = { "none", "thumb", "arm", "x86" };

static void test_round_trips(void)
{
	static const u32 chunks[] = { 4096, 8192, 16384, 32768 };
	static const int dicts[] = { 0, 4096, PACK_DICT_AUTO };
	size_t len = 3 << 20, packed, ci, di;
	u8 *data = malloc(len);
	int f, ret;

	fill_code(data, len);
	for (ci = 0; ci < 4; ci++) {
		u32 c = chunks[ci];
		const size_t sizes[] = { 1, c - 1, c, c + 1, 5 * c + 123, len };
		size_t si;

		for (di = 0; di < 3; di++) {
			for (f = SZIP_FILTER_NONE; f < SZIP_NR_FILTERS; f++) {
				ret = round_trip(data, 200000, c, 9, f,
						 dicts[di], &packed);
				result(!ret, "round trip 200000 bytes, chunk %u, dict %d, filter %s (%zu bytes)",
				       c, dicts[di], filter_names[f], packed);
			}
		}
		for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			ret = round_trip(data, sizes[si], c, 6, PACK_FILTER_AUTO,
					 0, &packed);
			result(!ret, "round trip %zu bytes, chunk %u, filter auto",
			       sizes[si], c);
		}
	}

	fill_random(data, len);
	ret = round_trip(data, len, 16384, 9, SZIP_FILTER_NONE, 0, &packed);
	result(!ret && packed > len, "incompressible %zu bytes round-trip as stored blocks (%zu bytes)",
	       len, packed);
	memset(data, 0, len);
	ret = round_trip(data, len, 32768, 9, SZIP_FILTER_NONE, 0, &packed);
	result(!ret && packed < len / 100, "zeros %zu bytes -> %zu bytes",
	       len, packed);
	free(data);
}

static void test_system_libraries(void)
{
	/* each library once: with merged /usr, /lib is /usr/lib */
	static const char *const names[] = { "libc.so.6", "libz.so.1" };
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
		"/lib64",
	};
	size_t i, d;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		size_t len = 0, packed, plain;
		u8 *buf = NULL;
		int ret;

		for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]) && !buf; d++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[d], names[i]);
			buf = read_file(path, &len);
		}
		if (!buf) {
			skip("system library %s (not found)", names[i]);
			continue;
		}
		ret = round_trip(buf, len, 16384, 9, SZIP_FILTER_NONE, 0, &plain) ||
		      round_trip(buf, len, 16384, 9, SZIP_FILTER_X86, 0, &packed);
		result(!ret && packed < plain,
		       "%s round-trips; x86 filter %zu < unfiltered %zu bytes",
		       path, packed, plain);
		free(buf);
	}
}

/* -------------------------------------------------- malformed classes */

static void put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

static void put_le16(u8 *p, u16 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
}

static u32 get_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

/* A valid 3-chunk file to corrupt: 3 x 4096 - 100 bytes of text. */
static u8 *make_base(size_t *len, int dict)
{
	struct pack_opts o = {
		.format = 1, .codec = SZIP_CODEC_DEFLATE,
		.chunk_size = 4096, .level = 9,
		.filter = SZIP_FILTER_NONE, .dict_size = dict,
	};
	struct pack_result res;
	u8 in[3 * 4096 - 100];
	char err[256];

	rng_state = 42;
	fill_text(in, sizeof(in));
	if (szip_pack(in, sizeof(in), &o, &res, err, sizeof(err)))
		return NULL;
	*len = res.len;
	return res.data;
}

/* Insert @n bytes of @fill at @at, shifting the later offsets. */
static u8 *insert_bytes(const u8 *buf, size_t *len, size_t at, size_t n,
			u8 fill)
{
	struct szip_info info;
	u8 *b = malloc(*len + n);
	u32 i;

	if (!b || szip_parse_header(&info, buf, *len, *len))
		return b;
	memcpy(b, buf, at);
	memset(b + at, fill, n);
	memcpy(b + at + n, buf + at, *len - at);
	for (i = 0; i < info.nr_chunks; i++) {
		u8 *e = b + info.table_offset + 4 * i;
		u32 off = get_le32(e);

		if (off >= at)
			put_le32(e, off + (u32)n);
	}
	put_le32(b + 4, (u32)info.total_size + (u32)n);
	*len += n;
	return b;
}

/* Remove @n bytes at @at (inside chunk data), shifting later offsets. */
static u8 *remove_bytes(const u8 *buf, size_t *len, size_t at, size_t n)
{
	struct szip_info info;
	u8 *b = malloc(*len);
	u32 i;

	if (!b || szip_parse_header(&info, buf, *len, *len))
		return b;
	memcpy(b, buf, at);
	memcpy(b + at, buf + at + n, *len - at - n);
	for (i = 0; i < info.nr_chunks; i++) {
		u8 *e = b + info.table_offset + 4 * i;
		u32 off = get_le32(e);

		if (off > at)
			put_le32(e, off - (u32)n);
	}
	put_le32(b + 4, (u32)info.total_size - (u32)n);
	*len -= n;
	return b;
}

enum mutation {
	M_MAGIC, M_SHORT, M_CHUNK_UNALIGNED, M_CHUNK_BIG, M_CHUNK_ZERO,
	M_NR_CHUNKS_ZERO, M_LAST_ZERO, M_LAST_BIG, M_WBITS, M_FILTER,
	M_DICT_WRAPPED, M_TOTAL_PAST_EOF, M_TABLE_PAST_EOF, M_OFFSET_BACK,
	M_OFFSET_INTO_TABLE, M_OFFSET_PAST_END, M_OFFSET_EQUAL, M_BAD_BLOCK,
	M_CHUNK_TRAILING, M_CHUNK_TRUNCATED, M_LAST_SHORTER, M_LAST_LONGER,
	M_FILE_TRUNCATED, M_FILE_TRAILING, M_NR_MUTATIONS
};

static const struct {
	const char *name;
	enum szip_ret ret;
} mutations[M_NR_MUTATIONS] = {
	[M_MAGIC] = { "bad magic", SZIP_ERR_MAGIC },
	[M_SHORT] = { "truncated header (19 bytes)", SZIP_ERR_SHORT },
	[M_CHUNK_UNALIGNED] = { "chunk size 6000", SZIP_ERR_CHUNK_SIZE },
	[M_CHUNK_BIG] = { "chunk size 65536-4096", SZIP_ERR_CHUNK_SIZE },
	[M_CHUNK_ZERO] = { "chunk size 0", SZIP_ERR_CHUNK_SIZE },
	[M_NR_CHUNKS_ZERO] = { "zero chunks", SZIP_ERR_NR_CHUNKS },
	[M_LAST_ZERO] = { "lastChunkSize 0", SZIP_ERR_LAST_CHUNK },
	[M_LAST_BIG] = { "lastChunkSize > chunkSize", SZIP_ERR_LAST_CHUNK },
	[M_WBITS] = { "windowBits -16", SZIP_ERR_WINDOW_BITS },
	[M_FILTER] = { "filter id 4", SZIP_ERR_FILTER },
	[M_DICT_WRAPPED] = { "dictionary with windowBits 15", SZIP_ERR_DICT_WRAPPED },
	[M_TOTAL_PAST_EOF] = { "totalSize > file size", SZIP_ERR_TRUNCATED },
	[M_TABLE_PAST_EOF] = { "offset table past EOF", SZIP_ERR_TABLE },
	[M_OFFSET_BACK] = { "non-monotone offsets", SZIP_ERR_OFFSETS },
	[M_OFFSET_INTO_TABLE] = { "offset into the table", SZIP_ERR_OFFSETS },
	[M_OFFSET_PAST_END] = { "offset past totalSize", SZIP_ERR_OFFSETS },
	[M_OFFSET_EQUAL] = { "empty chunk (equal offsets)", SZIP_ERR_OFFSETS },
	[M_BAD_BLOCK] = { "corrupt deflate block type", SZIP_ERR_DATA },
	[M_CHUNK_TRAILING] = { "garbage after a chunk's stream", SZIP_ERR_CHUNK_TRAILING },
	[M_CHUNK_TRUNCATED] = { "chunk missing its last byte", SZIP_ERR_CHUNK_TRUNCATED },
	[M_LAST_SHORTER] = { "lastChunkSize larger than its data", SZIP_ERR_CHUNK_SHORT },
	[M_LAST_LONGER] = { "lastChunkSize smaller than its data", SZIP_ERR_CHUNK_LONG },
	[M_FILE_TRUNCATED] = { "file cut inside the last chunk", SZIP_ERR_TRUNCATED },
	[M_FILE_TRAILING] = { "bytes after totalSize (accepted)", SZIP_OK },
};

/* Apply mutation @m to a copy of @base; returns the new buffer. */
static u8 *mutate(const u8 *base, size_t *len, enum mutation m)
{
	u8 *b = malloc(*len + 64);
	u32 table = SZIP_HEADER_SIZE + (u32)(b ? base[10] | base[11] << 8 : 0);
	u32 off0, off1;

	if (!b)
		return NULL;
	memcpy(b, base, *len);
	off0 = get_le32(b + table);
	off1 = get_le32(b + table + 4);
	switch (m) {
	case M_MAGIC: b[0] = 'X'; break;
	case M_SHORT: *len = 19; break;
	case M_CHUNK_UNALIGNED: put_le16(b + 8, 6000); break;
	case M_CHUNK_BIG: put_le16(b + 8, 61440); break;
	case M_CHUNK_ZERO: put_le16(b + 8, 0); break;
	case M_NR_CHUNKS_ZERO: put_le32(b + 12, 0); break;
	case M_LAST_ZERO: put_le16(b + 16, 0); break;
	case M_LAST_BIG: put_le16(b + 16, 4097); break;
	case M_WBITS: b[18] = (u8)-16; break;
	case M_FILTER: b[19] = 4; break;
	case M_DICT_WRAPPED: b[18] = 15; break;
	case M_TOTAL_PAST_EOF: put_le32(b + 4, (u32)*len + 1); break;
	case M_TABLE_PAST_EOF: put_le32(b + 12, (u32)*len / 4); break;
	case M_OFFSET_BACK:
		put_le32(b + table, off1);
		put_le32(b + table + 4, off0);
		break;
	case M_OFFSET_INTO_TABLE: put_le32(b + table, table + 4); break;
	case M_OFFSET_PAST_END: put_le32(b + table + 4, (u32)*len + 10); break;
	case M_OFFSET_EQUAL: put_le32(b + table + 4, off0); break;
	case M_BAD_BLOCK: b[off0] = 0xFF; break;
	case M_CHUNK_TRAILING:
		free(b);
		return insert_bytes(base, len, off1, 3, 0xAA);
	case M_CHUNK_TRUNCATED:
		free(b);
		return remove_bytes(base, len, off1 - 1, 1);
	case M_LAST_SHORTER: put_le16(b + 16, 4096); break;
	case M_LAST_LONGER: put_le16(b + 16, 100); break;
	case M_FILE_TRUNCATED: *len -= 1; break;
	case M_FILE_TRAILING:
		memset(b + *len, 0x5A, 64);
		*len += 64;
		break;
	default: break;
	}
	return b;
}

static void test_malformed(void)
{
	size_t base_len, dict_len;
	u8 *base = make_base(&base_len, 0);
	u8 *dict_base = make_base(&dict_len, 4096);
	int m;

	if (!base || !dict_base) {
		result(false, "malformed-input tests: cannot build base files");
		free(base);
		free(dict_base);
		return;
	}
	for (m = 0; m < M_NR_MUTATIONS; m++) {
		bool with_dict = m == M_DICT_WRAPPED;
		size_t len = with_dict ? dict_len : base_len, out_len;
		u8 *b = mutate(with_dict ? dict_base : base, &len, m);
		u8 *out = NULL;
		enum szip_ret ret;

		/* out of memory: as decode_all() says it */
		ret = b ? decode_all(b, len, &out, &out_len, NULL) :
			  SZIP_ERR_INTERNAL;
		result(ret == mutations[m].ret, "malformed: %s -> %s (expected %s)",
		       mutations[m].name, szip_strerror(ret),
		       szip_strerror(mutations[m].ret));
		free(out);
		free(b);
	}
	free(base);
	free(dict_base);
}

/* The library never reads outside the buffer it is given. */
static void test_api_edges(void)
{
	struct szip_info info;
	u8 hdr[SZIP_HEADER_SIZE] = { 'S', 'e', 'Z', 'z' };
	int i, bad = 0;

	for (i = -1; i <= SZIP_NR_ERRORS; i++)
		bad |= !szip_strerror(i) || !*szip_strerror(i);
	result(!bad, "szip_strerror() has a message for every value");
	result(szip_parse_header(&info, hdr, sizeof(hdr) - 1, 1000) ==
	       SZIP_ERR_SHORT, "header buffer of 19 bytes -> short");
	result(szip_parse_header(&info, hdr, sizeof(hdr), 10) == SZIP_ERR_SHORT,
	       "file of 10 bytes -> short");
	result(szip_format_of("SeZz", 4) == 1 && szip_format_of("SeZ2", 4) == 2 &&
	       !szip_format_of("SeZ", 3) && !szip_format_of("SeZ3", 4) &&
	       !szip_format_of("\x7f" "ELF", 4),
	       "szip_format_of(): v1, v2, 3 bytes, neither");
}

/* ----------------------------------------------------------- format 2 */

static const char *const codec_names[] = { "?", "deflate", "zstd", "lz4" };
static const char *const csum_names[] = { "none", "xxh64", "crc32c" };

static const int v2_levels[] = { 0, 6, 3, 9 };	/* per codec, for speed */

static struct pack_opts v2_opts(int codec, u32 chunk, int dict, int csum,
				int filter)
{
	struct pack_opts o = {
		.format = 2, .codec = codec, .checksum = csum,
		.chunk_size = chunk, .level = v2_levels[codec],
		.filter = filter, .dict_size = dict,
	};

	return o;
}

static int pack_v2(const u8 *in, size_t len, int codec, u32 chunk, int dict,
		   int csum, int filter, struct pack_result *res)
{
	struct pack_opts o = v2_opts(codec, chunk, dict, csum, filter);
	char err[256];

	return szip_pack(in, len, &o, res, err, sizeof(err));
}

static int v2_round_trip(const u8 *in, size_t len, int codec, u32 chunk,
			 int dict, int csum, int filter, size_t *packed)
{
	struct pack_opts o = v2_opts(codec, chunk, dict, csum, filter);

	return pack_and_check(&o, in, len, packed);
}

static void test_v2_round_trips(void)
{
	static const u32 chunks[] = { 4096, 16384, 131072 };
	static const int dicts[] = { 0, 8192, PACK_DICT_AUTO };
	size_t len = 1 << 20, packed, ci, di, si;
	u8 *data = malloc(len);
	int codec, csum, ret;

	fill_code(data, len);
	for (codec = SZIP_CODEC_DEFLATE; codec < SZIP_NR_CODECS; codec++) {
		for (ci = 0; ci < 3; ci++) {
			u32 c = chunks[ci];
			const size_t sizes[] = { 0, 1, c - 1, c, c + 1, 3 * c + 77 };

			for (di = 0; di < 3; di++) {
				csum = (int)((ci + di) % SZIP_NR_CSUMS);
				ret = v2_round_trip(data, 300000, codec, c, dicts[di],
						    csum, SZIP_FILTER_X86, &packed);
				result(!ret, "v2 round trip 300000 bytes, %s, chunk %u, dict %d, checksum %s, x86 (%zu bytes)",
				       codec_names[codec], c, dicts[di],
				       csum_names[csum], packed);
			}
			for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				ret = v2_round_trip(data, sizes[si], codec, c, 0,
						    SZIP_CSUM_XXH64,
						    SZIP_FILTER_NONE, &packed);
				result(!ret, "v2 round trip %zu bytes, %s, chunk %u",
				       sizes[si], codec_names[codec], c);
			}
		}
	}

	/* incompressible input: every chunk stored, still checked */
	fill_random(data, len);
	for (codec = SZIP_CODEC_DEFLATE; codec < SZIP_NR_CODECS; codec++) {
		struct pack_result res;
		struct szip_file f;
		u32 i, stored = 0;

		ret = pack_v2(data, 100000, codec, 16384, 0, SZIP_CSUM_CRC32C,
			      SZIP_FILTER_NONE, &res);
		if (!ret && !szip_open_buffer(&f, res.data, res.len, NULL))
			for (i = 0; i < f.info.nr_chunks; i++)
				stored += szip_chunk_clen(&f, i) ==
					  szip_chunk_ulen(&f.info, i);
		result(!ret && stored == 7 &&
		       !v2_round_trip(data, 100000, codec, 16384, 0,
				      SZIP_CSUM_CRC32C, SZIP_FILTER_NONE, &packed),
		       "v2 %s: random data -> %u of 7 chunks stored, round trip",
		       codec_names[codec], stored);
		if (!ret)
			free(res.data);
	}
	free(data);
}

static void put_le64(u8 *p, u64 v)
{
	put_le32(p, (u32)v);
	put_le32(p + 4, (u32)(v >> 32));
}

static u64 get_le64(const u8 *p)
{
	return get_le32(p) | (u64)get_le32(p + 4) << 32;
}

/* CRC-32C and xxh64 known answers: the stored values mean what the doc says */
static void test_checksum_values(void)
{
	const u8 *s = (const u8 *)"123456789";

	result(szip_csum(SZIP_CSUM_CRC32C, s, 9) == 0xE3069283,
	       "CRC-32C(\"123456789\") = 0xE3069283");
	result(szip_csum(SZIP_CSUM_XXH64, (const u8 *)"", 0) ==
	       0xEF46DB3751D8E999ULL, "xxh64(\"\", seed 0) = 0xEF46DB3751D8E999");
}

/*
 * A zstd chunk is exactly one frame: the same bytes as two frames, or a
 * skippable frame before the frame, or a byte after it, are corrupt.
 */
static void test_v2_zstd_frames(void)
{
	u8 data[8192], chunk[8192], out[8192];
	struct pack_result res;
	struct szip_decoder *d;
	struct szip_file f;
	size_t a, b;
	int ok;

	fill_code(data, sizeof(data));
	if (pack_v2(data, sizeof(data), SZIP_CODEC_ZSTD, 8192, 0,
		    SZIP_CSUM_NONE, SZIP_FILTER_NONE, &res) ||
	    szip_open_buffer(&f, res.data, res.len, NULL)) {
		result(0, "v2 zstd: a one-chunk file to decode frames with");
		return;
	}
	d = malloc(szip_decoder_size());
	if (!d || szip_decoder_init(d)) {
		result(0, "v2 zstd: a decoder");
		free(d);
		free(res.data);
		return;
	}
	a = ZSTD_compress(chunk, sizeof(chunk), data, 4096, 3);
	ok = !ZSTD_isError(a) && a < 4000;
	b = ZSTD_compress(chunk + a, sizeof(chunk) - a, data + 4096, 4096, 3);
	result(ok && !ZSTD_isError(b) &&
	       szip_decode_chunk(d, &f, 0, chunk, a + b, out) == SZIP_ERR_CODEC_DATA,
	       "v2 zstd: a chunk of two frames -> corrupt data");

	a = ZSTD_compress(chunk + 12, sizeof(chunk) - 12, data, 8192, 3);
	ok = !ZSTD_isError(a);
	result(ok && !szip_decode_chunk(d, &f, 0, chunk + 12, a, out) &&
	       !memcmp(out, data, 8192), "v2 zstd: a chunk of one frame decodes");
	memcpy(chunk, "\x50\x2A\x4D\x18\x04\x00\x00\x00skip", 12);
	result(ok && szip_decode_chunk(d, &f, 0, chunk, a + 12, out) ==
	       SZIP_ERR_CODEC_DATA,
	       "v2 zstd: a skippable frame before the frame -> corrupt data");
	chunk[12 + a] = 0;
	result(ok && szip_decode_chunk(d, &f, 0, chunk + 12, a + 1, out) ==
	       SZIP_ERR_CODEC_DATA, "v2 zstd: a byte after the frame -> corrupt data");
	szip_file_release(&f);
	szip_decoder_end(d);
	free(d);
	free(res.data);
}

/* Threads change how fast, never what: the same bytes for 1, 2 and 5 */
static void test_threads(void)
{
	static const int threads[] = { 2, 5 };
	size_t len = 700000, t;
	u8 *data = malloc(len);
	int codec;

	fill_code(data, len);
	for (codec = SZIP_CODEC_DEFLATE; codec < SZIP_NR_CODECS; codec++) {
		struct pack_opts o = v2_opts(codec, 4096, PACK_DICT_AUTO,
					     SZIP_CSUM_XXH64, PACK_FILTER_AUTO);
		struct pack_result one, many;
		char err[256];
		bool same;

		if (codec == SZIP_CODEC_DEFLATE) {	/* format 1 too */
			o.format = 1;
			o.checksum = SZIP_CSUM_NONE;
		}
		if (szip_pack(data, len, &o, &one, err, sizeof(err))) {
			result(false, "threads: %s: %s", codec_names[codec], err);
			continue;
		}
		for (t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			o.threads = threads[t];
			same = !szip_pack(data, len, &o, &many, err, sizeof(err)) &&
			       many.len == one.len &&
			       !memcmp(many.data, one.data, one.len);
			result(same, "%s, %d threads: the same %zu bytes as 1 thread",
			       codec_names[codec], threads[t], one.len);
			free(many.data);
		}
		free(one.data);
	}
	free(data);
}

/* szip_pack_fd() writes, chunk by chunk, the bytes szip_pack() returns */
static void test_pack_fd(void)
{
	size_t len = 300000;
	u8 *data = malloc(len), *back = malloc(len);
	int codec;

	fill_code(data, len);
	for (codec = SZIP_CODEC_DEFLATE; codec < SZIP_NR_CODECS; codec++) {
		struct pack_opts o = v2_opts(codec, 8192, PACK_DICT_AUTO,
					     SZIP_CSUM_CRC32C, PACK_FILTER_AUTO);
		struct pack_result mem, file;
		FILE *f = tmpfile();
		char err[256];
		bool same;

		o.threads = 3;
		same = f && !szip_pack(data, len, &o, &mem, err, sizeof(err)) &&
		       !szip_pack_fd(data, len, &o, fileno(f), &file, err,
				     sizeof(err)) &&
		       !file.data && file.len == mem.len &&
		       pread(fileno(f), back, mem.len, 0) == (ssize_t)mem.len &&
		       !memcmp(back, mem.data, mem.len);
		result(same, "%s: szip_pack_fd() writes what szip_pack() returns (%zu bytes)",
		       codec_names[codec], mem.len);
		if (f)
			fclose(f);
		free(mem.data);
	}
	free(back);
	free(data);
}

/* A header field set to a value, and what decoding must say */
struct header_case {
	const char *name;
	int off, width;		/* field to set; width 0: special */
	u64 value;
	enum szip_ret ret;
};

/* An empty input: format 2 holds it as a header alone, format 1 cannot */
static void test_v2_empty(void)
{
	static const struct header_case cases[] = {
		{ "as written", 0, 0, 0, SZIP_OK },
		{ "chunk count 1", 28, 4, 1, SZIP_ERR_SIZE },
		{ "size 1", 8, 8, 1, SZIP_ERR_SIZE },
		{ "a byte after the tables, inside totalSize", 16, 8, 65, SZIP_ERR_SIZE },
		{ "totalSize 63", 16, 8, 63, SZIP_ERR_TABLE },
		{ "bytes after totalSize (accepted)", -1, 0, 0, SZIP_OK },
	};
	u8 in[1] = { 0 }, b[SZIP2_HEADER_SIZE + 16], *out;
	struct pack_result res;
	struct szip_file f;
	size_t i, blen, out_len;
	char err[256];
	struct pack_opts o = v2_opts(SZIP_CODEC_ZSTD, 4096, PACK_DICT_AUTO,
				     SZIP_CSUM_CRC32C, PACK_FILTER_AUTO);

	o.format = 1;
	o.codec = SZIP_CODEC_DEFLATE;
	o.checksum = SZIP_CSUM_NONE;
	result(szip_pack(in, 0, &o, &res, err, sizeof(err)) == -EINVAL,
	       "format 1: empty input refused (%s)", err);
	o = v2_opts(SZIP_CODEC_ZSTD, 4096, PACK_DICT_AUTO, SZIP_CSUM_CRC32C,
		    PACK_FILTER_AUTO);
	if (szip_pack(in, 0, &o, &res, err, sizeof(err)) ||
	    szip_open_buffer(&f, res.data, res.len, NULL)) {
		result(false, "v2: cannot pack or open an empty input");
		return;
	}
	result(res.len == SZIP2_HEADER_SIZE && f.info.size == 0 &&
	       f.info.nr_chunks == 0 && f.info.total_size == res.len &&
	       f.info.last_chunk_size == 0 && f.info.dict_size == 0,
	       "v2 empty input: a 64-byte header, no chunks, no dictionary");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum szip_ret ret;

		memcpy(b, res.data, res.len);
		memset(b + res.len, 0x5A, sizeof(b) - res.len);
		blen = res.len;
		if (cases[i].width == 4)
			put_le32(b + cases[i].off, (u32)cases[i].value);
		else if (cases[i].width == 8)
			put_le64(b + cases[i].off, cases[i].value);
		if (cases[i].value == 65 || cases[i].off == -1)
			blen += cases[i].off == -1 ? 16 : 1;
		ret = decode_all(b, blen, &out, &out_len, NULL);
		result(ret == cases[i].ret && (ret || out_len == 0),
		       "v2 empty file: %s -> %s (expected %s)", cases[i].name,
		       szip_strerror(ret), szip_strerror(cases[i].ret));
		free(out);
	}
	free(res.data);
}

/* Every v2 header check and table check, from one valid file */
static void test_v2_malformed(void)
{
	static const struct header_case cases[] = {
		{ "codec 0", 4, 1, 0, SZIP_ERR_CODEC },
		{ "codec 4", 4, 1, 4, SZIP_ERR_CODEC },
		{ "chunk shift 11", 5, 1, 11, SZIP_ERR_CHUNK_SHIFT },
		{ "chunk shift 18", 5, 1, 18, SZIP_ERR_CHUNK_SHIFT },
		{ "filter 4", 6, 1, 4, SZIP_ERR_FILTER },
		{ "checksum 3", 7, 1, 3, SZIP_ERR_CSUM_ID },
		{ "size 0", 8, 8, 0, SZIP_ERR_SIZE },
		{ "size one chunk more", 8, 8, 100000 + 4096, SZIP_ERR_SIZE },
		{ "size 2^63", 8, 8, 1ULL << 63, SZIP_ERR_SIZE },
		{ "total size past EOF", 16, 8, 1ULL << 40, SZIP_ERR_TRUNCATED },
		{ "dictionary of 256 KiB + 1", 24, 4, SZIP2_MAX_DICT_SIZE + 1,
		  SZIP_ERR_DICT_SIZE },
		{ "dictionary overruns the data", 24, 4, SZIP2_MAX_DICT_SIZE,
		  SZIP_ERR_TABLE },
		{ "chunk count 0", 28, 4, 0, SZIP_ERR_SIZE },
		{ "reserved byte 32", 32, 1, 1, SZIP_ERR_RESERVED },
		{ "reserved byte 63", 63, 1, 0x80, SZIP_ERR_RESERVED },
		{ "offset 0 inside the tables", -1, 0, 0, SZIP_ERR_OFFSETS },
		{ "offsets 0 and 1 equal", -2, 0, 0, SZIP_ERR_OFFSETS },
		{ "chunk longer than its size", -3, 0, 0, SZIP_ERR_OFFSETS },
		{ "checksum of chunk 2 wrong", -4, 0, 0, SZIP_ERR_CHECKSUM },
		{ "byte of stored chunk 3 flipped", -5, 0, 0, SZIP_ERR_CHECKSUM },
		{ "file cut to 63 bytes", -6, 0, 0, SZIP_ERR_V2_SHORT },
		{ "bytes after totalSize (accepted)", -7, 0, 0, SZIP_OK },
	};
	size_t len = 100000, i;
	struct pack_result res;
	struct szip_file f;
	u8 *data = malloc(len);

	/* text with a random stretch: chunk 3 is stored */
	fill_text(data, len);
	fill_random(data + 3 * 4096, 4096);
	if (pack_v2(data, len, SZIP_CODEC_LZ4, 4096, 0, SZIP_CSUM_XXH64,
		    SZIP_FILTER_NONE, &res) ||
	    szip_open_buffer(&f, res.data, res.len, NULL) ||
	    szip_chunk_clen(&f, 3) != 4096) {
		result(false, "v2 malformed-input tests: cannot build the base file");
		free(data);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t blen = res.len;
		u8 *b = malloc(res.len + 16), *out = NULL;
		u64 tab = f.info.table_offset, cs = f.info.csum_offset;
		u32 bad = UINT32_MAX;
		enum szip_ret ret;

		memcpy(b, res.data, res.len);
		if (cases[i].width == 1)
			b[cases[i].off] = (u8)cases[i].value;
		else if (cases[i].width == 4)
			put_le32(b + cases[i].off, (u32)cases[i].value);
		else if (cases[i].width == 8)
			put_le64(b + cases[i].off, cases[i].value);
		else if (cases[i].off == -1)
			put_le64(b + tab, tab + 8);
		else if (cases[i].off == -2)
			put_le64(b + tab + 8, get_le64(b + tab));
		else if (cases[i].off == -3)
			put_le64(b + tab + 8, get_le64(b + tab) + 4097);
		else if (cases[i].off == -4)
			b[cs + 2 * 8] ^= 1;
		else if (cases[i].off == -5)
			b[get_le64(b + tab + 3 * 8) + 100] ^= 0x40;
		else if (cases[i].off == -6)
			blen = 63;
		else if (cases[i].off == -7)
			memset(b + blen, 0xAA, 16), blen += 16;

		ret = decode_all(b, blen, &out, &blen, &bad);
		if (cases[i].ret == SZIP_ERR_CHECKSUM)
			result(ret == cases[i].ret && bad == (cases[i].off == -4 ? 2 : 3),
			       "v2 malformed: %s -> %s at chunk %u", cases[i].name,
			       szip_strerror(ret), bad);
		else
			result(ret == cases[i].ret, "v2 malformed: %s -> %s (expected %s)",
			       cases[i].name, szip_strerror(ret),
			       szip_strerror(cases[i].ret));
		free(out);
		free(b);
	}
	free(res.data);
	free(data);
}

int main(int argc, char **argv)
{
	const char *vectors = argc > 1 ? argv[1] : "../shared/vectors/szip";
	char path[2048];

	printf("TAP version 13\n");
	test_vector_dir(vectors);
	snprintf(path, sizeof(path), "%s/synthetic", vectors);
	test_vector_dir(path);
	snprintf(path, sizeof(path), "%s/bad", vectors);
	test_bad_vectors(path);
	test_api_edges();
	test_malformed();
	test_round_trips();
	test_checksum_values();
	test_v2_malformed();
	test_v2_empty();
	test_threads();
	test_pack_fd();
	test_v2_zstd_frames();
	test_v2_round_trips();
	test_system_libraries();
	printf("1..%d\n", nr_tests);
	printf("# unit: %d passed, %d failed, %d skipped\n", nr_pass, nr_fail,
	       nr_skip);
	return nr_fail ? 1 : 0;
}
