// SPDX-License-Identifier: GPL-2.0
/*
 * szip - pack files into, and unpack them from, the seekable szip format.
 *
 * The dispatcher: a gzip-style command line (compress by default, -d, -t,
 * -l; the last mode given wins) is parsed into one struct szip_opts, which
 * the chosen command then only reads.  Every operand is an input, as in
 * gzip, zstd and xz: each FILE is packed to FILE.sz (-d: the reverse),
 * and one failing does not stop the others.  -o names the output of a
 * single input; faulty.lib's "szip IN OUT" is spelled --in-out, which no
 * glob can produce.  The commands are in cmd_*.c, the rules the option
 * values follow in options.c, file handling and atomic output in utils.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "szip_tool.h"

#define EXIT_ERROR	1
#define EXIT_USAGE	2
#define SZIP_VERSION	"0.1"

static const struct command {
	szip_cmd_fn run;
	bool writes;		/* has an output: -o, --in-out, -c apply */
} commands[] = {
	[MODE_COMPRESS] = { szip_cmd_compress, true },
	[MODE_DECOMPRESS] = { szip_cmd_decompress, true },
	[MODE_TEST] = { szip_cmd_test, false },
	[MODE_LIST] = { szip_cmd_list, false },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: szip [OPTION]... [FILE]...\n"
"       szip [OPTION]... -o OUTPUT [FILE]\n"
"       szip [OPTION]... --in-out INPUT OUTPUT\n"
"Compress each FILE into the seekable szip format (FILE.sz, FILE removed),\n"
"or decompress, test or list szip files.  FILE '-' or none: stdin.\n"
"\n"
"  -z, --compress        compress (default)\n"
"  -d, --decompress      decompress (FILE.sz -> FILE)\n"
"  -t, --test            decode and check every chunk, write nothing\n"
"  -l, --list            show header fields, sizes and ratio\n"
"  -c, --stdout          write to standard output, keep FILE\n"
"  -o, --output=OUTPUT   write OUTPUT (one input only), keep the input\n"
"      --in-out          faulty.lib's form: exactly two operands, INPUT and\n"
"                        OUTPUT; keep INPUT\n"
"  -k, --keep            keep FILE (it is removed after success otherwise)\n"
"  -f, --force           overwrite outputs; accept symlinks, hard-linked\n"
"                        or already compressed inputs, and terminals\n"
"  -q, --quiet           no warnings\n"
"  -v, --verbose         sizes, choices made, progress (repeatable)\n"
"  -1 .. -9, --level=N   compression level: deflate 1..9 (default 9), zstd\n"
"                        1..22 (default 19), lz4 1 fast, 2..12 (default 12)\n"
"      --chunk-size=N    bytes per chunk (default 16384; K suffix accepted):\n"
"                        format 1 4096..32768, a multiple of 4096; format 2\n"
"                        a power of two in 4096..131072\n"
"      --dict[=SIZE]     preset dictionary of SIZE bytes built from the\n"
"                        input (deflate up to 32768, lz4 65536, zstd 262144,\n"
"                        trained); without SIZE or 'auto': best size\n"
"      --filter=F        branch filter: none, x86, arm, thumb, auto\n"
"                        (default none; auto keeps the smallest)\n"
"      --codec=C         deflate (default), zstd or lz4 (format 2)\n"
"      --checksum=C      none (default), xxh64 or crc32c per chunk, checked\n"
"                        after decompression (format 2)\n"
"      --format=N        1: faulty.lib's szip (the default unless another\n"
"                        option needs format 2); 2: this project's v2\n"
"  -h, --help            this help\n"
"  -V, --version         version\n"
"\n"
"Exit status: 0 success, 1 error, 2 usage error.\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	if (*end == 'k' || *end == 'K') {
		if (*v > max / 1024)
			return -1;
		*v *= 1024;
		end++;
		if (!strcmp(end, "iB"))
			end += 2;
	}
	return *end || *v > max ? -1 : 0;
}

enum {
	OPT_CHUNK_SIZE = 256, OPT_DICT, OPT_FILTER, OPT_LEVEL, OPT_CODEC,
	OPT_CHECKSUM, OPT_FORMAT, OPT_IN_OUT
};

static const struct option long_options[] = {
	{ "compress", no_argument, NULL, 'z' },
	{ "decompress", no_argument, NULL, 'd' },
	{ "uncompress", no_argument, NULL, 'd' },
	{ "test", no_argument, NULL, 't' },
	{ "list", no_argument, NULL, 'l' },
	{ "stdout", no_argument, NULL, 'c' },
	{ "to-stdout", no_argument, NULL, 'c' },
	{ "keep", no_argument, NULL, 'k' },
	{ "output", required_argument, NULL, 'o' },
	{ "in-out", no_argument, NULL, OPT_IN_OUT },
	{ "force", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "chunk-size", required_argument, NULL, OPT_CHUNK_SIZE },
	{ "dict", optional_argument, NULL, OPT_DICT },
	{ "filter", required_argument, NULL, OPT_FILTER },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "codec", required_argument, NULL, OPT_CODEC },
	{ "checksum", required_argument, NULL, OPT_CHECKSUM },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

/* "szip: invalid WHAT 'ARG'HINT"; returns -1 */
static int invalid(const char *what, const char *arg, const char *hint)
{
	szip_fail(NULL, "invalid %s '%s'%s", what, arg, hint);
	return -1;
}

/* One encoder option (--chunk-size and the others after it, -1..-9) */
static int parse_pack_option(int c, const char *arg, struct pack_opts *p)
{
	unsigned long v;

	switch (c) {
	case OPT_CHUNK_SIZE:
		if (parse_uint(arg, ULONG_MAX, &v) || !szip_chunk_size_ok(0, v))
			return invalid("chunk size", arg,
				       ": a multiple of 4096 in 4096..32768 (format 1) or a power of two in 4096..131072 (format 2)");
		p->chunk_size = (u32)v;
		return 0;
	case OPT_DICT:
		if (!arg || !strcmp(arg, "auto")) {
			p->dict_size = PACK_DICT_AUTO;
			return 0;
		}
		if (parse_uint(arg, SZIP2_MAX_DICT_SIZE, &v))
			return invalid("dictionary size", arg, ": 0..262144 or auto");
		p->dict_size = (int)v;
		return 0;
	case OPT_CODEC:
		if (!szip_codec_by_name(arg, &p->codec))
			return invalid("codec", arg, ": deflate, zstd or lz4");
		return 0;
	case OPT_CHECKSUM:
		if (!szip_csum_by_name(arg, &p->checksum))
			return invalid("checksum", arg, ": none, xxh64 or crc32c");
		return 0;
	case OPT_FORMAT:
		if (parse_uint(arg, LONG_MAX, &v) || !szip_format_ok((long)v))
			return invalid("format", arg, ": 1 or 2");
		p->format = (int)v;
		return 0;
	case OPT_FILTER:
		if (!szip_filter_by_name(arg, &p->filter))
			return invalid("filter", arg,
				       ": none, x86, arm, thumb or auto");
		return 0;
	case OPT_LEVEL:
		if (parse_uint(arg, SZIP_MAX_LEVEL_ARG, &v) || v < 1)
			return invalid("level", arg, "");
		p->level = (int)v;
		return 0;
	default:
		if (c < '1' || c > '9')
			return -1;
		p->level = c - '0';
		return 0;
	}
}

/* The command line into @o; then the defaults, and checks when compressing */
static int parse_options(struct szip_opts *o, int argc, char **argv)
{
	char err[128];
	int c;

	while ((c = getopt_long(argc, argv, "zdtlco:kfqvhV123456789",
				long_options, NULL)) != -1) {
		switch (c) {
		case 'z': o->mode = MODE_COMPRESS; break;
		case 'd': o->mode = MODE_DECOMPRESS; break;
		case 't': o->mode = MODE_TEST; break;
		case 'l': o->mode = MODE_LIST; break;
		case 'c': o->to_stdout = true; break;
		case 'o': o->output = optarg; break;
		case OPT_IN_OUT: o->in_out = true; break;
		case 'k': o->keep = true; break;
		case 'f': o->force = true; break;
		case 'q': o->verbose = -1; break;
		case 'v': o->verbose = o->verbose < 0 ? 1 : o->verbose + 1; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("szip %s\n", SZIP_VERSION); exit(0);
		default:
			if (parse_pack_option(c, optarg, &o->pack))
				return -1;
		}
	}
	pack_set_defaults(&o->pack);
	if (o->mode == MODE_COMPRESS &&
	    pack_check_opts(&o->pack, err, sizeof(err))) {
		szip_fail(NULL, "%s", err);
		return -1;
	}
	return 0;
}

/* "szip: @msg" (if any), the hint; returns the exit status */
static int usage_error(const char *msg)
{
	if (msg)
		szip_fail(NULL, "%s", msg);
	fprintf(stderr, "Try 'szip --help' for more information.\n");
	return EXIT_USAGE;
}

/*
 * The identities of the operands that exist: an output named after one
 * input must not replace another (szip -f a a.sz).
 */
static struct szip_file_id *operand_ids(char **files, int n, size_t *nr)
{
	struct szip_file_id *ids = calloc(n ? n : 1, sizeof(*ids));
	struct stat st;
	int i;

	*nr = 0;
	for (i = 0; ids && i < n; i++) {
		if (strcmp(files[i], "-") && !stat(files[i], &st)) {
			ids[*nr].dev = st.st_dev;
			ids[*nr].ino = st.st_ino;
			(*nr)++;
		}
	}
	return ids;
}

/*
 * The operands against -o, --in-out and -c: NULL if they fit, else the
 * usage error.
 */
static const char *check_operands(const struct szip_opts *o, int nargs,
				  char **files)
{
	int i, to_stdout = 0;

	if (!commands[o->mode].writes) {
		if (o->output || o->in_out)
			return "-o and --in-out apply to compression and decompression only";
		return NULL;
	}
	if (o->in_out) {
		if (nargs != 2)
			return "--in-out takes exactly two operands, INPUT and OUTPUT";
		if (o->output || o->to_stdout)
			return "--in-out names the output: no -o or -c with it";
		return NULL;
	}
	if (o->output && nargs > 1)
		return "-o names the output of a single input";
	if (o->output && o->to_stdout)
		return "-o and -c both name the output";
	if (o->mode != MODE_COMPRESS || o->output)
		return NULL;
	/* szip files do not concatenate: one compressed stream to stdout */
	for (i = 0; i < nargs; i++)
		to_stdout += o->to_stdout || !strcmp(files[i], "-");
	if (to_stdout > 1)
		return "only one input can be compressed to standard output (szip files do not concatenate)";
	return NULL;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct szip_opts o = {
		.mode = MODE_COMPRESS,
		.pack = PACK_OPTS_DEFAULT,
	};
	struct szip_file_id *ids = NULL;
	int nargs, i, ret = 0;
	const char *err;
	char **files;

	if (parse_options(&o, argc, argv))
		return usage_error(NULL);
	nargs = argc - optind;
	files = nargs ? argv + optind : stdin_only;
	err = check_operands(&o, nargs, files);
	if (err)
		return usage_error(err);
	szip_catch_signals();

	if (o.in_out)
		return commands[o.mode].run(&o, files[0], files[1]) ?
		       EXIT_ERROR : 0;
	if (commands[o.mode].writes && !o.output) {
		ids = operand_ids(files, nargs, &o.nr_inputs);
		if (!ids) {
			szip_fail(NULL, "out of memory");
			return EXIT_ERROR;
		}
		o.inputs = ids;
	}
	for (i = 0; i < (nargs ? nargs : 1); i++)
		ret |= commands[o.mode].run(&o, files[i], o.output);
	free(ids);
	return ret ? EXIT_ERROR : 0;
}
