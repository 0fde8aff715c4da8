# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# bench/lib.sh - helpers shared by the benchmark scripts (sourced).
#
# Builds on tests/vm/lib.sh (cache directory, apt helpers, kernel cache, the
# guest's initramfs and QEMU command line).
# Cache layout under $EXT4DEC_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/ext4dec):
#   bench/data/<package>_<version>/   files extracted from downloaded .debs
#   bench/images/<config>-<key>.img   disk images, keyed by their inputs
#   bench/tools/                      guest binaries fetched from .debs

_bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../tests/vm/lib.sh
. "$_bench_here/../tests/vm/lib.sh"

bench_log() { printf 'ext4dec-bench: %s\n' "$*" >&2; }
bench_die() {
	printf 'ext4dec-bench: error: %s\n' "$*" >&2
	exit 1
}

# bench_usage SCRIPT [STATUS]: print the usage in SCRIPT's header comment
# (from its fourth line, after the SPDX line, to the first blank line) and
# exit with STATUS (default 0).
bench_usage() {
	sed -n '4,/^$/{s/^# \{0,1\}//;p}' "$1"
	exit "${2:-0}"
}

# bench_need_arg OPTION ARGS...: stop (status 2) unless OPTION has a value.
bench_need_arg() { [[ $# -ge 2 ]] || { bench_log "$1 needs an argument"; exit 2; }; }

# bench_option OPTION VALUE: the options with a value that run-bench.sh and
# firefox.sh share: set the caller's out (-o, --out), src (--src), kspec (-k,
# --kernel), repeats (-n, --repeats), bws (--bw), configs (--configs), trace
# (--trace) or modparams (--modparams) to VALUE; the caller shifts both
# words.  False for any other option; stops (status 2) without a VALUE.
# (run-bench.sh reads -k itself, as one of its --kernels.)
# shellcheck disable=SC2034 # the variables are the caller's
bench_option() {
	case $1 in
	-o | --out) bench_need_arg "$@"; out=$2 ;;
	--src) bench_need_arg "$@"; src=$2 ;;
	-k | --kernel) bench_need_arg "$@"; kspec=$2 ;;
	-n | --repeats) bench_need_arg "$@"; repeats=$2 ;;
	--bw) bench_need_arg "$@"; bws=$2 ;;
	--configs) bench_need_arg "$@"; configs=$2 ;;
	--trace) bench_need_arg "$@"; trace=$2 ;;
	--modparams) bench_need_arg "$@"; modparams=$2 ;;
	*) return 1 ;;
	esac
}

# bench_check_runs REPEATS BANDWIDTHS: stop (status 2) unless REPEATS is a
# positive number and BANDWIDTHS a list of numbers of MB/s.
bench_check_runs() {
	local b
	[[ $1 =~ ^[1-9][0-9]*$ ]] || { bench_log "--repeats: not a positive number: $1"; exit 2; }
	for b in $2; do
		[[ $b =~ ^[0-9]+$ ]] || { bench_log "--bw: not a number of MB/s: $b"; exit 2; }
	done
}

# bench_cache_dir: print (and create) <cache>/bench.
bench_cache_dir() {
	local d
	d="$(vm_cache_dir)/bench"
	mkdir -p "$d"
	printf '%s\n' "$d"
}

# bench_install_missing PKG...: install those of PKG... that are not
# installed (scripts/lib/apt.sh), or stop.
bench_install_missing() {
	apt_install_missing "$@" || bench_die "cannot install $*"
}

# bench_deb_extract PKG VERSION DEST PATH...: download PKG=VERSION with
# apt-get download (nothing is installed) and copy each PATH (absolute, as
# in the package) to DEST/<basename>.  Symlinks inside the package are
# followed.
bench_deb_extract() {
	local pkg=$1 ver=$2 dest=$3 dl p src
	shift 3
	dl=$(mktemp -d "${TMPDIR:-/tmp}/ext4dec-bench-dl.XXXXXX")
	if ! apt_download "$dl" "$pkg=$ver"; then
		rm -rf "$dl"
		bench_die "apt-get download $pkg=$ver failed"
	fi
	mkdir -p "$dl/root"
	dpkg-deb -x "$dl"/*.deb "$dl/root" || {
		rm -rf "$dl"
		bench_die "dpkg-deb -x of $pkg=$ver failed"
	}
	mkdir -p "$dest"
	for p in "$@"; do
		src=$dl/root$p
		# resolve symlinks inside the unpacked tree
		while [[ -L $src ]]; do
			local t
			t=$(readlink "$src")
			if [[ $t == /* ]]; then src=$dl/root$t; else src=$(dirname "$src")/$t; fi
		done
		[[ -f $src ]] || {
			rm -rf "$dl"
			bench_die "$pkg=$ver has no file $p"
		}
		cp "$src" "$dest/$(basename "$p")"
	done
	rm -rf "$dl"
}

# bench_sha FILE...: short content hash of files (for cache keys).
bench_sha() { cat "$@" | sha256sum | cut -c1-12; }

# --- configurations ----------------------------------------------------------
#
# NAME KIND OPTIONS (options comma-separated).  Kinds:
#   ext4      the files as they are, on ext4 (mkfs.ext4 -d on the host)
#   szip      each file packed by tools/szip/szip with OPTIONS (--filter=
#             only for ELF files, as ext4dec-compress does), on ext4, made
#             active with chattr +c in the guest
#   squashfs  mksquashfs OPTIONS
#   erofs     mkfs.erofs OPTIONS (skipped when this mkfs.erofs lacks the
#             compressor)
#   btrfs     mkfs.btrfs on the host, files copied in the guest with mount
#             option OPTIONS
# Names are at most 20 characters: they are the disks' virtio serial numbers.
bench_all_configs=(
	"ext4 ext4 -"
	"szip-4k-x86 szip --chunk-size=4K,--filter=x86"
	"szip-4k-x86-dict szip --chunk-size=4K,--filter=x86,--dict"
	"szip-16k szip --chunk-size=16K"
	"szip-16k-x86 szip --chunk-size=16K,--filter=x86"
	"szip-16k-x86-dict szip --chunk-size=16K,--filter=x86,--dict"
	"szip-32k-x86 szip --chunk-size=32K,--filter=x86"
	"szip2-zlib-128k-x86 szip --format=2,--codec=deflate,--chunk-size=128K,--filter=x86"
	"szip2-zstd-32k-x86 szip --format=2,--codec=zstd,--chunk-size=32K,--filter=x86"
	"szip2-zstd-128k-x86 szip --format=2,--codec=zstd,--chunk-size=128K,--filter=x86"
	"szip2-lz4-64k-x86 szip --format=2,--codec=lz4,--chunk-size=64K,--filter=x86"
	"sqfs-gzip-16k squashfs -comp,gzip,-b,16K"
	"sqfs-gzip-128k squashfs -comp,gzip,-b,128K"
	"sqfs-zstd-128k squashfs -comp,zstd,-b,128K"
	"sqfs-lz4hc-128k squashfs -comp,lz4,-Xhc,-b,128K"
	"erofs-lz4hc-16k erofs -zlz4hc,-C16384"
	"erofs-deflate-16k erofs -zdeflate,-C16384"
	"btrfs-zlib btrfs compress-force=zlib"
	"btrfs-zstd btrfs compress-force=zstd"
)
# shellcheck disable=SC2034 # used by run-bench.sh
{
	# the default run: every kind; szip format 1 at 4K, 16K, 32K, with and
	# without the filter (16K) and the dictionary (16K); format 2 with zstd
	# (32K, 128K) and LZ4 (64K)
	bench_default_configs="ext4 szip-4k-x86 szip-16k szip-16k-x86 szip-16k-x86-dict
		szip-32k-x86 szip2-zstd-32k-x86 szip2-zstd-128k-x86 szip2-lz4-64k-x86
		sqfs-gzip-16k sqfs-gzip-128k sqfs-zstd-128k sqfs-lz4hc-128k
		erofs-lz4hc-16k erofs-deflate-16k btrfs-zlib btrfs-zstd"
	# BENCH_QUICK=1: one of each kind
	bench_quick_configs="ext4 szip-16k-x86 sqfs-gzip-128k erofs-lz4hc-16k btrfs-zlib"
}

# bench_config NAME: set C_NAME, C_KIND, C_OPTS (array) for NAME; false if
# there is no such configuration.
# shellcheck disable=SC2034 # the C_* globals are used by the callers
bench_config() {
	local line n k o
	for line in "${bench_all_configs[@]}"; do
		read -r n k o <<<"$line"
		[[ $n == "$1" ]] || continue
		C_NAME=$n C_KIND=$k
		C_OPTS=()
		[[ $o == - ]] || IFS=, read -r -a C_OPTS <<<"$o"
		return 0
	done
	return 1
}

# bench_is_elf FILE: true if FILE starts with the ELF magic.
bench_is_elf() { [[ $(head -c 4 "$1" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; }
