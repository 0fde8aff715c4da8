// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the szip decoder: the input is an szip file.  It is
 * validated as a reader would (header, tables; v1 and v2) and every chunk is
 * decoded, with the bounds the library promises: no read outside the input
 * and no write outside the chunk's output size.
 */
#include <stdlib.h>

#include "szip_env.h"
#include "szip.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

/* Bound the work per input; the fuzzer finds depth through coverage. */
#define MAX_CHUNKS	64

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct szip_decoder *d;
	struct szip_file f;
	u8 *out;
	u32 i;

	if (!d) {
		d = malloc(szip_decoder_size());
		if (!d || szip_decoder_init(d))
			abort();
	}
	if (szip_open_buffer(&f, data, size, NULL))
		return 0;
	if (szip_file_prepare(&f))
		return 0;
	for (i = 0; i < f.info.nr_chunks && i < MAX_CHUNKS; i++) {
		u64 off = szip_chunk_offset(&f, i);
		u32 clen = szip_chunk_clen(&f, i);
		u32 ulen = szip_chunk_ulen(&f.info, i);

		if (off < f.info.data_offset || off + clen > f.info.total_size ||
		    (f.info.version >= 2 && clen > ulen))
			abort();	/* the table check let a bad extent through */
		/* exactly ulen bytes, so ASan catches any overrun */
		out = malloc(ulen);
		if (!out)
			abort();
		szip_decode_chunk(d, &f, i, data + off, clen, out);
		free(out);
	}
	szip_file_release(&f);
	return 0;
}
