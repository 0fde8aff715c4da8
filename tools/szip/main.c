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
#include <unistd.h>

#include "szip_tool.h"

#define EXIT_ERROR	1
#define EXIT_USAGE	2
#define SZIP_VERSION	"0.1"

static const struct command {
	szip_cmd_fn run;
	void (*end)(const struct szip_opts *o);	/* after the last file */
	bool writes;		/* has an output: -o, --in-out, -c apply */
} commands[] = {
	[MODE_COMPRESS] = { szip_cmd_compress, NULL, true },
	[MODE_DECOMPRESS] = { szip_cmd_decompress, NULL, true },
	[MODE_TEST] = { szip_cmd_test, NULL, false },
	[MODE_LIST] = { szip_cmd_list, szip_list_totals, false },
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
"  -v, --verbose         sizes, choices made, progress; -vv also the time\n"
"                        and speed, and with -l a line per chunk\n"
"  -N, --level=N         compression level, all digits of -N (-19 is 19):\n"
"                        deflate 1..9 (default 9), zstd 1..22 (default 19;\n"
"                        -20 and up with --ultra), lz4 1 fast, 2..12\n"
"                        (default 12)\n"
"      --ultra           allow zstd's -20, -21 and -22, as zstd does\n"
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
"  -T, --threads=N       compress with N threads (default 0: one per CPU\n"
"                        online); the output is the same for any N\n"
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
	OPT_DIGITS = 1,		/* -N: split_levels() makes "-19" this */
	OPT_CHUNK_SIZE = 256, OPT_DICT, OPT_FILTER, OPT_LEVEL, OPT_CODEC,
	OPT_CHECKSUM, OPT_FORMAT, OPT_IN_OUT, OPT_ULTRA
};

/* The short options; digits reach getopt as OPT_DIGITS ("\001:") */
static const char short_options[] = "zdtlco:kfqvhVT:\001:";

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
	{ "ultra", no_argument, NULL, OPT_ULTRA },
	{ "codec", required_argument, NULL, OPT_CODEC },
	{ "checksum", required_argument, NULL, OPT_CHECKSUM },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "threads", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 },
};

/* "szip: invalid WHAT 'ARG'HINT"; returns -1 */
static int invalid(const char *what, const char *arg, const char *hint)
{
	szip_fail(NULL, "invalid %s '%s'%s", what, arg, hint);
	return -1;
}

/* One encoder option (--chunk-size and the others after it, -N) */
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
	case 'T':
		if (parse_uint(arg, SZIP_MAX_THREADS, &v))
			return invalid("number of threads", arg, ": 0..256");
		p->threads = (int)v;	/* 0: one per CPU online (pack.c) */
		return 0;
	case OPT_LEVEL:
	case OPT_DIGITS:
		if (parse_uint(arg, SZIP_MAX_LEVEL_ARG, &v) || v < 1)
			return invalid("level", arg, "");
		p->level = (int)v;
		return 0;
	default:
		return -1;
	}
}

/* Does the long option @arg (after "--", no "=") take the next word? */
static bool long_takes_next(const char *arg)
{
	const struct option *l;
	bool takes = false;

	for (l = long_options; l->name; l++) {
		if (strncmp(l->name, arg, strlen(arg)))
			continue;
		if (!strcmp(l->name, arg))	/* exact: no abbreviation */
			return l->has_arg == required_argument;
		takes |= l->has_arg == required_argument;
	}
	return takes;
}

/* Does short option @c take an argument? */
static bool short_takes_arg(char c)
{
	const char *p = c ? strchr(short_options, c) : NULL;

	return p && p[1] == ':';
}

/* Append "-", @lead (unless 0) and the @len bytes at @s to @out as a word */
static int push(char **out, int *n, char lead, const char *s, size_t len)
{
	char *a = malloc(len + 3), *p = a;

	if (!a)
		return -1;
	*p++ = '-';
	if (lead)
		*p++ = lead;
	memcpy(p, s, len);
	p[len] = 0;
	out[(*n)++] = a;
	return 0;
}

/*
 * Split one cluster of short options (@a without its "-") so that each
 * run of digits is an OPT_DIGITS option of its own: "-k19c" becomes "-k"
 * "-\00119" "-c".  Sets *@next_is_arg when the cluster ends in an option
 * whose argument is the next word.
 */
static int split_cluster(const char *a, char **out, int *n, bool *next_is_arg)
{
	size_t i = 0, start = 0;

	while (a[i]) {
		size_t d = strspn(a + i, "0123456789");

		if (!d && short_takes_arg(a[i])) {
			*next_is_arg = !a[i + 1];
			return push(out, n, 0, a + start, strlen(a + start));
		}
		if (!d) {
			i++;
			continue;
		}
		if (i > start && push(out, n, 0, a + start, i - start))
			return -1;
		if (push(out, n, OPT_DIGITS, a + i, d))
			return -1;
		i += d;
		start = i;
	}
	return i > start ? push(out, n, 0, a + start, i - start) : 0;
}

/*
 * -N reads every digit, as zstd does: -19 is level 19, never -1 then -9.
 * getopt takes a cluster a letter at a time, so each run of digits in
 * one becomes an option of its own first.  Option arguments ("-o 19",
 * "--level 5"), operands and everything after "--" are left as they are.
 * The new vector stays reachable (static) until exit.
 */
static char **split_levels(int argc, char **argv, int *new_argc)
{
	static char **out;
	bool next_is_arg = false;
	size_t cap = (size_t)argc + 1;
	int i, n = 0;

	for (i = 0; i < argc; i++)
		cap += strlen(argv[i]);
	out = calloc(cap, sizeof(*out));
	if (!out)
		return NULL;
	out[n++] = "szip";	/* getopt's messages begin with argv[0] */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (next_is_arg || a[0] != '-' || !a[1]) {
			next_is_arg = false;
			out[n++] = argv[i];
		} else if (!strcmp(a, "--")) {
			while (i < argc)
				out[n++] = argv[i++];
		} else if (a[1] == '-') {
			next_is_arg = !strchr(a, '=') && long_takes_next(a + 2);
			out[n++] = argv[i];
		} else if (split_cluster(a + 1, out, &n, &next_is_arg)) {
			return NULL;
		}
	}
	*new_argc = n;
	return out;
}

/* The command line into @o; then the defaults, and checks when compressing */
static int parse_options(struct szip_opts *o, int argc, char **argv)
{
	char err[128];
	int c;

	while ((c = getopt_long(argc, argv, short_options, long_options,
				NULL)) != -1) {
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
		case OPT_ULTRA: o->ultra = true; break;
		default:
			if (parse_pack_option(c, optarg, &o->pack))
				return -1;
			if (c == OPT_LEVEL || c == OPT_DIGITS)
				o->level_digits = c == OPT_DIGITS;
			o->format_given |= c == OPT_FORMAT;
		}
	}
	pack_set_defaults(&o->pack);
	if (o->mode != MODE_COMPRESS)
		return 0;
	if (pack_check_opts(&o->pack, err, sizeof(err))) {
		szip_fail(NULL, "%s", err);
		return -1;
	}
	/* zstd's own -20 and up need --ultra; --level=N is szip's spelling */
	if (o->level_digits && o->pack.level > SZIP_MAX_LEVEL_NO_ULTRA &&
	    !o->ultra) {
		szip_fail(NULL, "level %d needs --ultra, as in zstd (or --level=%d)",
			  o->pack.level, o->pack.level);
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

	argv = split_levels(argc, argv, &argc);
	if (!argv) {
		szip_fail(NULL, "out of memory");
		return EXIT_ERROR;
	}
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
	if (commands[o.mode].end)
		commands[o.mode].end(&o);
	free(ids);
	return ret ? EXIT_ERROR : 0;
}
