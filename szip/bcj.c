// SPDX-License-Identifier: GPL-2.0
/*
 * Branch/call/jump (BCJ) filters for x86, ARM and Thumb, as the szip format
 * uses them: each chunk is filtered on its own, with fresh state, at
 * position P = chunk index * chunk size.  The encoder turns relative branch
 * targets into absolute ones (they repeat more, so they deflate better);
 * the decoder turns them back.  The transforms are those of xz's public
 * domain "simple" filters; see docs/szip-format.md section 5.
 */
#include "szip_private.h"

static bool bcj_x86_ms_byte(u8 b)
{
	return b == 0x00 || b == 0xFF;
}

/*
 * Index of the first E8 or E9 byte (call, jmp) in @buf[@k..@end), or @end.
 * Eight bytes at a time: clearing bit 0 of each byte and XORing it with
 * E8 makes exactly those bytes zero, and (v - 0x01..01) & ~v & 0x80..80
 * is nonzero if and only if a byte of v is zero.
 */
static size_t bcj_x86_next(const u8 *buf, size_t k, size_t end)
{
	const u64 ones = 0x0101010101010101ULL;

	for (; k + 8 <= end; k += 8) {
		u64 v = (szip_le64(buf + k) & ~ones) ^ (0xE8 * ones);

		if ((v - ones) & ~v & (ones << 7))
			break;
	}
	while (k < end && (buf[k] & 0xFE) != 0xE8)
		k++;
	return k;
}

static void bcj_x86(u8 *buf, size_t len, u32 pos, bool encode)
{
	static const bool allowed[8] = { 1, 1, 1, 0, 1, 0, 0, 0 };
	static const u8 bit[8] = { 0, 1, 2, 2, 3, 3, 3, 3 };
	u32 mask = 0, prev = 0;
	size_t k = 0;

	if (len < 5)
		return;
	/* an opcode at k needs its 4-byte operand: k < len - 4 */
	while ((k = bcj_x86_next(buf, k, len - 4)) < len - 4) {
		u32 here, gap, v, d;
		u8 b;

		here = pos + (u32)k;
		gap = here - prev;
		prev = here;
		if (gap > 5)
			mask = 0;
		else
			while (gap--)
				mask = (mask & 0x77) << 1;

		b = buf[k + 4];
		if (!bcj_x86_ms_byte(b) || !allowed[(mask >> 1) & 7] ||
		    (mask >> 1) >= 0x10) {
			k++;
			mask |= 1;
			if (bcj_x86_ms_byte(b))
				mask |= 0x10;
			continue;
		}

		v = szip_le32(buf + k + 1);
		for (;;) {
			u32 j;

			d = encode ? v + (here + 5) : v - (here + 5);
			if (!mask)
				break;
			j = bit[mask >> 1];
			if (!bcj_x86_ms_byte((u8)(d >> (24 - 8 * j))))
				break;
			v = d ^ ((1U << (32 - 8 * j)) - 1);
		}
		buf[k + 1] = d & 0xff;
		buf[k + 2] = (d >> 8) & 0xff;
		buf[k + 3] = (d >> 16) & 0xff;
		buf[k + 4] = (d >> 24) & 1 ? 0xFF : 0x00;
		k += 5;
		mask = 0;
	}
}

static void bcj_arm(u8 *buf, size_t len, u32 pos, bool encode)
{
	size_t k;

	for (k = 0; k + 4 <= len; k += 4) {
		u32 v, a;

		if (buf[k + 3] != 0xEB)
			continue;
		v = (buf[k] | (buf[k + 1] << 8) | ((u32)buf[k + 2] << 16)) << 2;
		a = pos + (u32)k + 8;
		v = (encode ? v + a : v - a) >> 2;
		buf[k] = v & 0xff;
		buf[k + 1] = (v >> 8) & 0xff;
		buf[k + 2] = (v >> 16) & 0xff;
	}
}

static void bcj_thumb(u8 *buf, size_t len, u32 pos, bool encode)
{
	size_t k;

	for (k = 0; k + 4 <= len; k += 2) {
		u32 v, a;

		if ((buf[k + 1] & 0xF8) != 0xF0 || (buf[k + 3] & 0xF8) != 0xF8)
			continue;
		v = ((u32)(buf[k + 1] & 7) << 19) | ((u32)buf[k] << 11) |
		    ((u32)(buf[k + 3] & 7) << 8) | buf[k + 2];
		v <<= 1;
		a = pos + (u32)k + 4;
		v = (encode ? v + a : v - a) >> 1;
		buf[k + 1] = 0xF0 | ((v >> 19) & 7);
		buf[k] = (v >> 11) & 0xff;
		buf[k + 3] = 0xF8 | ((v >> 8) & 7);
		buf[k + 2] = v & 0xff;
		k += 2;
	}
}

/**
 * szip_bcj() - apply or undo a filter over one chunk
 * @filter: SZIP_FILTER_* id; %SZIP_FILTER_NONE and unknown ids do nothing
 * @buf: the chunk's uncompressed bytes, changed in place
 * @len: chunk length
 * @pos: uncompressed offset of the chunk in the file (mod 2^32)
 * @encode: true to filter (packer), false to unfilter (decoder)
 */
void szip_bcj(u8 filter, u8 *buf, size_t len, u32 pos, bool encode)
{
	switch (filter) {
	case SZIP_FILTER_X86:
		bcj_x86(buf, len, pos, encode);
		break;
	case SZIP_FILTER_ARM:
		bcj_arm(buf, len, pos, encode);
		break;
	case SZIP_FILTER_THUMB:
		bcj_thumb(buf, len, pos, encode);
		break;
	default:
		break;
	}
}
