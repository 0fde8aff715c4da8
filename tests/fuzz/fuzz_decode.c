// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the szip decoder: the input is an szip file.  It is
 * validated as a reader would (header, offset table) and every chunk is
 * decoded, with the bounds the library promises: no read outside the input
 * and no write outside the chunk's output size.
 */
#include <stdlib.h>

#include "szip_config.h"
#include "szip.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

/* Bound the work per input; the fuzzer finds depth through coverage. */
#define MAX_CHUNKS	64

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct szip_decoder *d;
	struct szip_info info;
	const u8 *table;
	u8 *out;
	u32 i;

	if (!d) {
		d = malloc(szip_decoder_size());
		if (!d || szip_decoder_init(d))
			abort();
	}
	if (szip_parse_header(&info, data, size, size))
		return 0;
	table = data + info.table_offset;
	if (szip_check_table(&info, table, NULL))
		return 0;
	for (i = 0; i < info.nr_chunks && i < MAX_CHUNKS; i++) {
		u32 off = szip_chunk_offset(table, i);
		u32 clen = szip_chunk_clen(&info, table, i);
		u32 ulen = szip_chunk_ulen(&info, i);

		if (off < info.data_offset || (u64)off + clen > info.total_size)
			abort();	/* the table check let a bad extent through */
		/* exactly ulen bytes, so ASan catches any overrun */
		out = malloc(ulen);
		if (!out)
			abort();
		szip_decode_chunk(d, &info, data + SZIP_HEADER_SIZE, i,
				  data + off, clen, out);
		free(out);
	}
	return 0;
}
