// SPDX-License-Identifier: GPL-2.0
/*
 * ext4dec_demo: small checks for the Firefox demo in the test VM
 * (tests/vm/payloads/firefox).  Built on the host by make, put into the
 * guest with run-vm.sh --bin, and copied into the demo's chroot.
 *
 *   ext4dec_demo mmapcat FILE          write FILE's bytes, read through one
 *                                      whole-file mmap, to stdout (pipe it
 *                                      into sha256sum)
 *   ext4dec_demo pngcmp A.png B.png    exit 0 if both PNG files have the
 *                                      same size and the same pixels
 *
 * Exit status: 0 yes/ok, 1 no/failure, 2 usage error or unsupported input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int mmapcat(const char *path)
{
	struct stat st;
	unsigned char *m;
	size_t off = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "ext4dec_demo: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (st.st_size == 0)
		return 0;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "ext4dec_demo: mmap %s: %s\n", path, strerror(errno));
		return 1;
	}
	close(fd);
	while (off < (size_t)st.st_size) {
		ssize_t n = write(1, m + off, st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* EFAULT here is a page of the mapping that failed */
			fprintf(stderr, "ext4dec_demo: write of %s's mapping at %zu: %s\n",
				path, off, n < 0 ? strerror(errno) : "short write");
			return 1;
		}
		off += n;
	}
	munmap(m, st.st_size);
	return 0;
}

/* --- PNG: 8-bit, non-interlaced, any colour type but palette ---------- */

struct image {
	uint32_t w, h;
	unsigned int bpp;		/* bytes per pixel */
	unsigned char *pix;		/* h rows of w * bpp bytes */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;
	FILE *f = fopen(path, "rb");

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t r = fread(buf + n, 1, cap - n, f);

		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Returns 0, 1 (cannot read) or 2 (not a PNG this decoder supports). */
static int png_load(const char *path, struct image *img)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *file, *idat = NULL, *raw = NULL;
	size_t len, pos = 8, idat_len = 0, stride, raw_len;
	unsigned int depth = 0, type = 0, interlace = 0, channels;
	uLongf out_len;
	int rc = 2;

	file = slurp(path, &len);
	if (!file) {
		fprintf(stderr, "ext4dec_demo: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (len < 8 || memcmp(file, sig, 8)) {
		fprintf(stderr, "ext4dec_demo: %s: not a PNG file\n", path);
		goto out;
	}
	img->w = img->h = 0;
	while (pos + 12 <= len) {
		uint32_t clen = be32(file + pos);
		const unsigned char *type_p = file + pos + 4, *data = file + pos + 8;

		if (clen > len - pos - 12) {
			fprintf(stderr, "ext4dec_demo: %s: truncated chunk\n", path);
			goto out;
		}
		if (!memcmp(type_p, "IHDR", 4) && clen >= 13) {
			img->w = be32(data);
			img->h = be32(data + 4);
			depth = data[8];
			type = data[9];
			interlace = data[12];
		} else if (!memcmp(type_p, "IDAT", 4)) {
			idat = realloc(idat, idat_len + clen);
			if (!idat)
				abort();
			memcpy(idat + idat_len, data, clen);
			idat_len += clen;
		} else if (!memcmp(type_p, "IEND", 4)) {
			break;
		}
		pos += 12 + clen;
	}
	switch (type) {
	case 0: channels = 1; break;
	case 2: channels = 3; break;
	case 4: channels = 2; break;
	case 6: channels = 4; break;
	default: channels = 0; break;
	}
	if (!img->w || !img->h || depth != 8 || !channels || interlace ||
	    img->w > 16384 || img->h > 16384) {
		fprintf(stderr, "ext4dec_demo: %s: unsupported PNG (%ux%u, depth %u, colour type %u, interlace %u)\n",
			path, img->w, img->h, depth, type, interlace);
		goto out;
	}
	img->bpp = channels;
	stride = (size_t)img->w * channels;
	raw_len = (stride + 1) * img->h;
	raw = malloc(raw_len);
	img->pix = malloc(stride * img->h);
	if (!raw || !img->pix)
		abort();
	out_len = raw_len;
	if (uncompress(raw, &out_len, idat, idat_len) != Z_OK || out_len != raw_len) {
		fprintf(stderr, "ext4dec_demo: %s: bad image data\n", path);
		rc = 1;
		goto out;
	}
	for (uint32_t y = 0; y < img->h; y++) {
		const unsigned char *in = raw + y * (stride + 1) + 1;
		unsigned char *row = img->pix + y * stride;
		const unsigned char *up = y ? row - stride : NULL;
		unsigned int filter = in[-1];

		for (size_t x = 0; x < stride; x++) {
			int a = x >= channels ? row[x - channels] : 0;
			int b = up ? up[x] : 0;
			int c = up && x >= channels ? up[x - channels] : 0;
			int v;

			switch (filter) {
			case 0: v = 0; break;
			case 1: v = a; break;
			case 2: v = b; break;
			case 3: v = (a + b) / 2; break;
			case 4: v = paeth(a, b, c); break;
			default:
				fprintf(stderr, "ext4dec_demo: %s: bad filter %u in row %u\n",
					path, filter, y);
				rc = 1;
				goto out;
			}
			row[x] = (unsigned char)(in[x] + v);
		}
	}
	rc = 0;
out:
	free(file);
	free(idat);
	free(raw);
	return rc;
}

static int pngcmp(const char *a, const char *b)
{
	struct image ia = { 0 }, ib = { 0 };
	int rc;

	rc = png_load(a, &ia);
	if (!rc)
		rc = png_load(b, &ib);
	if (rc)
		return 2;
	if (ia.w != ib.w || ia.h != ib.h) {
		printf("sizes differ: %ux%u and %ux%u\n", ia.w, ia.h, ib.w, ib.h);
		return 1;
	}
	/* compare as RGBA so that RGB and RGBA encodings of one image match */
	for (size_t i = 0; i < (size_t)ia.w * ia.h; i++) {
		unsigned char pa[4] = { 0, 0, 0, 255 }, pb[4] = { 0, 0, 0, 255 };
		struct image *im[2] = { &ia, &ib };
		unsigned char *px[2] = { pa, pb };

		for (int k = 0; k < 2; k++) {
			const unsigned char *p = im[k]->pix + i * im[k]->bpp;

			switch (im[k]->bpp) {
			case 1: px[k][0] = px[k][1] = px[k][2] = p[0]; break;
			case 2: px[k][0] = px[k][1] = px[k][2] = p[0]; px[k][3] = p[1]; break;
			default: memcpy(px[k], p, im[k]->bpp); break;
			}
		}
		if (memcmp(pa, pb, 4)) {
			printf("pixel %zu,%zu differs\n", i % ia.w, i / ia.w);
			return 1;
		}
	}
	printf("%ux%u, same pixels\n", ia.w, ia.h);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "mmapcat"))
		return mmapcat(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "pngcmp"))
		return pngcmp(argv[2], argv[3]);
	fprintf(stderr, "usage: ext4dec_demo mmapcat FILE | pngcmp A.png B.png\n");
	return 2;
}
