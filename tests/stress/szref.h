/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference decoding of an szip file, shared by the hostile-file generator
 * (host) and the hostile-file test (guest): what the module must return
 * for a file, chunk by chunk, according to the userspace build of the
 * szip library.
 *
 * A file is "valid" when its header and offset table pass the library's
 * checks; the module must refuse every other file.  A valid file may
 * still have chunks that do not decode ("bad" chunks): reads of their
 * pages must fail with EIO, reads of the other chunks must return the
 * decoded bytes.  The module also refuses some valid files by policy
 * (REF_MAX_CLEN below); for those, refusal and activation are both
 * acceptable.  So is a refusal with EOPNOTSUPP of a file that needs what
 * a kernel may lack (ref_optional()), valid or not.
 */
#ifndef _SZREF_H
#define _SZREF_H

#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "szip_env.h"
#include "szip.h"

/*
 * The module's limit on a chunk's compressed length (EXT4DEC_MAX_CLEN in
 * ext4dec/ext4dec.h): activation of a file with a longer chunk is refused.
 */
#define REF_MAX_CLEN	(2 * SZIP_MAX_CHUNK_SIZE + 4096 > SZIP2_MAX_CHUNK_SIZE ? \
			 2 * SZIP_MAX_CHUNK_SIZE + 4096 : SZIP2_MAX_CHUNK_SIZE)

/* The module's limit on dictionary + offset table (EXT4DEC_MAX_META) */
#define REF_MAX_META	(16U << 20)

/* Largest uncompressed size the reference decodes in full */
#define REF_MAX_SIZE	(64ULL << 20)

enum ref_act { REF_REFUSE, REF_ACCEPT, REF_EITHER };

static const char *const ref_act_names[] = { "refuse", "accept", "either" };

/**
 * struct ref - what reading a file through the module must give
 * @act: what activation must do
 * @f: the parsed file (valid files)
 * @info: its header
 * @err: the library's first complaint (%SZIP_OK for a valid file;
 *	%SZIP_ERR_INTERNAL if memory ran out here)
 * @data: @info.size bytes, the decoded chunks (zeros in bad chunks)
 * @bad: one flag per chunk, nonzero if the chunk does not decode
 * @nr_bad: number of bad chunks
 * @hash: FNV-1a of the per-chunk flags and the good chunks' bytes
 * @max_clen: largest compressed chunk
 */
struct ref {
	enum ref_act act;
	struct szip_file f;
	struct szip_info info;
	enum szip_ret err;
	u8 *data;
	u8 *bad;
	u32 nr_bad;
	u64 hash;
	u32 max_clen;
};

static inline u64 ref_fnv(u64 h, const u8 *p, size_t n)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline void ref_free(struct ref *r)
{
	if (!r->err)
		szip_file_release(&r->f);
	free(r->data);
	free(r->bad);
	r->data = NULL;
	r->bad = NULL;
}

/*
 * Decode @file (@len bytes) with @dec into @r.  Returns 0, or -1 if the
 * file is valid but too large to decode here (or memory ran out).
 */
static inline int ref_compute(struct szip_decoder *dec, const u8 *file,
			      size_t len, struct ref *r)
{
	u32 i;

	memset(r, 0, sizeof(*r));
	r->hash = 0xcbf29ce484222325ULL;
	r->err = szip_open_buffer(&r->f, file, len, NULL);
	if (!r->err)
		r->err = szip_file_prepare(&r->f);
	if (r->err) {
		r->act = REF_REFUSE;
		return 0;
	}
	r->info = r->f.info;
	if (r->info.size > REF_MAX_SIZE) {
		szip_file_release(&r->f);
		return -1;
	}
	r->data = calloc(1, r->info.size ? r->info.size : 1);
	r->bad = calloc(1, r->info.nr_chunks);
	if (!r->data || !r->bad) {
		ref_free(r);
		r->err = SZIP_ERR_INTERNAL;
		return -1;
	}
	for (i = 0; i < r->info.nr_chunks; i++) {
		u64 off = szip_chunk_offset(&r->f, i);
		u32 clen = szip_chunk_clen(&r->f, i);
		u32 ulen = szip_chunk_ulen(&r->info, i);
		u8 *out = r->data + (u64)i * r->info.chunk_size;
		u8 flag;

		if (clen > r->max_clen)
			r->max_clen = clen;
		if (szip_decode_chunk(dec, &r->f, i, file + off, clen, out)) {
			memset(out, 0, ulen);
			r->bad[i] = 1;
			r->nr_bad++;
		}
		flag = r->bad[i];
		r->hash = ref_fnv(r->hash, &flag, 1);
		if (!flag)
			r->hash = ref_fnv(r->hash, out, ulen);
	}
	if (r->max_clen > REF_MAX_CLEN ||
	    r->info.data_offset - r->info.dict_offset > REF_MAX_META)
		r->act = REF_EITHER;
	else
		r->act = REF_ACCEPT;
	return 0;
}

/*
 * A file a kernel may refuse as unsupported (EOPNOTSUPP), whatever else
 * is wrong with it: a v2 header asking for zstd with a dictionary, which
 * Linux 6.1's zstd cannot decompress.
 */
static inline int ref_optional(const u8 *file, size_t len)
{
	struct szip2_header h;

	if (len < sizeof(h) || szip_format_of(file, len) != 2)
		return 0;
	memcpy(&h, file, sizeof(h));
	return h.codec == SZIP_CODEC_ZSTD && le32toh(h.dict_size);
}

#endif /* _SZREF_H */
