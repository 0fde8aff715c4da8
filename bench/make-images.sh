#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/make-images.sh - build the benchmark's disk images on the host.
#
# Usage: bench/make-images.sh --manifest FILE --szip PATH [--szip-src DIR] CONFIG...
#
#   --manifest FILE   the output of bench/fetch-data.sh (the data files)
#   --szip PATH       the szip tool used to pack the szip configurations
#   --szip-src DIR    the source tree it was built from: packed files are
#                     then keyed by its sources, the compiler and the
#                     libdeflate and zlib versions (not by the binary,
#                     which holds its build directory)
#   CONFIG            configuration names from bench/lib.sh
#
# One raw disk image per configuration, cached in <cache>/bench/images/
# under a key made of the configuration, the data files' packages and
# versions, and the version of the tool that builds it (for szip images,
# see --szip-src), so a later run reuses it:
#   ext4, szip   mkfs.ext4 -d (4 KiB blocks, no lazy init, so the guest
#                writes nothing in the background); szip files are packed
#                once per file and option set into <cache>/bench/sz/
#   squashfs     mksquashfs
#   erofs        mkfs.erofs
#   btrfs        an empty file system from mkfs.btrfs: the guest fills it
#                (bench/run-bench.sh), since btrfs compresses on write
#
# Output, tab-separated, one line per item:
#   IMAGE  CONFIG KIND PATH        an image ready (btrfs: to be filled)
#   SIZE   CONFIG FILE SIZE STORED bytes of FILE stored compressed (szip: the
#                                  .sz file; squashfs, erofs: an image of
#                                  FILE alone)
#   SZFILE CONFIG FILE PATH        the packed szip file of FILE
#   SKIP   CONFIG REASON           configuration not available here
# Exit status: 0 success, 1 failure (named on stderr), 2 usage.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

# The whole script is one function: bash parses it all before running it.
main() {
	manifest='' szip='' szip_src=''
	configs=()
	while [[ $# -gt 0 ]]; do
		case $1 in
		--manifest) manifest=${2:?--manifest needs a file}; shift 2 ;;
		--szip) szip=${2:?--szip needs a path}; shift 2 ;;
		--szip-src) szip_src=${2:?--szip-src needs a directory}; shift 2 ;;
		-h | --help) sed -n '4,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
		-*) bench_log "unknown option $1"; exit 2 ;;
		*) configs+=("$1"); shift ;;
		esac
	done
	[[ -f $manifest ]] || { bench_log "--manifest: no such file '$manifest'"; exit 2; }
	[[ ${#configs[@]} -gt 0 ]] || { bench_log "no configuration given"; exit 2; }

	export PATH="$PATH:/usr/sbin:/sbin"
	jobs=${BENCH_JOBS:-$(nproc)}
	cache=$(bench_cache_dir)
	imgdir=$cache/images
	mkdir -p "$imgdir"
	# one build at a time: concurrent runs would pack the same files
	exec 9>"$imgdir/.lock"
	flock -x 9

	# The data: NAME PATH PACKAGE VERSION SIZE
	names=() paths=()
	while IFS=$'\t' read -r n p _ _ _; do
		[[ -f $p ]] || bench_die "$manifest: data file $p is missing"
		names+=("$n") paths+=("$p")
	done <"$manifest"
	[[ ${#names[@]} -gt 0 ]] || bench_die "$manifest: no data files"
	data_key=$(cut -f1,3,4,5 "$manifest" | sha256sum | cut -c1-12)

	# quiet CMD...: run CMD, showing its output only if it fails
	quiet() {
		local log rc=0
		log=$(mktemp)
		"$@" >"$log" 2>&1 || rc=$?
		[[ $rc -eq 0 ]] || cat "$log" >&2
		rm -f "$log"
		return $rc
	}

	pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }

	# key PARTS...: short hash of the parts (and the data)
	key() { printf '%s\n' "$data_key" "$@" | sha256sum | cut -c1-12; }

	# stage DIR FILE...: a directory holding hard links (or copies) of FILEs
	# under the data files' names.
	stage() {
		local dir=$1 i=0 f
		shift
		rm -rf "$dir"
		mkdir -p "$dir"
		for f in "$@"; do
			ln "$f" "$dir/${names[i]}" 2>/dev/null || cp "$f" "$dir/${names[i]}"
			i=$((i + 1))
		done
	}

	# mkext4 IMG DIR: an ext4 image holding DIR's files, 4 KiB blocks.
	mkext4() {
		local img=$1 dir=$2 bytes mb
		bytes=$(du -sb "$dir" | cut -f1)
		mb=$((bytes * 11 / 10 / 1048576 + 48))
		rm -f "$img.tmp"
		quiet mkfs.ext4 -q -F -b 4096 -m 0 -L bench \
			-E lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0 \
			-d "$dir" "$img.tmp" "${mb}M" || bench_die "mkfs.ext4 -d $dir $img.tmp failed"
		mv "$img.tmp" "$img"
	}

	# pack FILE OUT OPTS...: szip-pack FILE into OUT (cached: skipped if OUT exists).
	pack() {
		local in=$1 out=$2
		shift 2
		[[ -s $out ]] && return 0
		# -c: the same in every szip version --src may build
		if ! "$szip" -q -f -c "$@" "$in" >"$out.tmp" 2>"$out.err"; then
			bench_log "szip $* $in failed: $(cat "$out.err")"
			rm -f "$out.tmp"
			return 1
		fi
		rm -f "$out.err"
		mv "$out.tmp" "$out"
	}

	# szip_opts_for FILE: C_OPTS, without --filter= for files that are not ELF
	szip_opts_for() {
		local o
		SZ_OPTS=()
		for o in "${C_OPTS[@]}"; do
			if [[ $o == --filter=* ]] && ! bench_is_elf "$1"; then continue; fi
			SZ_OPTS+=("$o")
		done
	}

	# --- szip files, packed in parallel first (the slow part) --------------------
	szip_sha=''
	declare -A sz_path=()
	pending=()
	for c in "${configs[@]}"; do
		bench_config "$c" || bench_die "unknown configuration '$c'"
		[[ $C_KIND == szip ]] || continue
		[[ -x $szip ]] || bench_die "--szip: '$szip' is not executable"
		if [[ -z $szip_sha && -n $szip_src ]]; then
			szip_sha=$({
				cat "$szip_src"/tools/szip/*.[ch] "$szip_src"/szip/*.[ch] "$szip_src"/include/*.h
				"${CC:-cc}" --version | head -n1
				pkg_version libdeflate0
				pkg_version zlib1g
			} | sha256sum | cut -c1-12)
		fi
		[[ -n $szip_sha ]] || szip_sha=$(bench_sha "$szip")
		for i in "${!names[@]}"; do
			szip_opts_for "${paths[i]}"
			slug=$(printf '%s' "${SZ_OPTS[*]:-none}" | tr -c 'A-Za-z0-9=.\n-' '_')
			d=$cache/sz/$szip_sha/$(key "${names[i]}")
			mkdir -p "$d"
			sz_path[$c/$i]=$d/${names[i]}.$slug.sz
			[[ -s ${sz_path[$c/$i]} ]] && continue
			pending+=("$c/$i")
		done
	done
	if [[ ${#pending[@]} -gt 0 ]]; then
		bench_log "packing ${#pending[@]} file(s) with $szip ($jobs in parallel; libxul.so takes about a minute per option set)"
		t0=$SECONDS
		declare -A seen=()
		for p in "${pending[@]}"; do
			[[ -z ${seen[${sz_path[$p]}]:-} ]] || continue
			seen[${sz_path[$p]}]=1
			bench_config "${p%/*}"
			i=${p#*/}
			szip_opts_for "${paths[i]}"
			while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
			pack "${paths[i]}" "${sz_path[$p]}" ${SZ_OPTS[@]+"${SZ_OPTS[@]}"} &
		done
		wait || true
		for p in "${pending[@]}"; do
			[[ -s ${sz_path[$p]} ]] || bench_die "packing ${names[${p#*/}]} for ${p%/*} failed"
		done
		bench_log "packed in $((SECONDS - t0))s"
	fi

	# --- images --------------------------------------------------------------------
	work=$(mktemp -d "$imgdir/.work.XXXXXX")
	trap 'rm -rf "$work"' EXIT

	# (only asked when an EROFS configuration needs it)
	erofs_compressors=
	if [[ " ${configs[*]} " == *" erofs-"* ]]; then
		erofs_compressors=$(mkfs.erofs --help 2>&1 | sed -n 's/^Available compressors are: //p' | tr -d ',')
	fi

	for c in "${configs[@]}"; do
		bench_config "$c"
		case $C_KIND in
		ext4)
			img=$imgdir/$c-$(key ext4 "$(pkg_version e2fsprogs)").img
			if [[ ! -f $img ]]; then
				bench_log "building $img"
				stage "$work/stage" "${paths[@]}"
				mkext4 "$img" "$work/stage"
			fi
			for i in "${!names[@]}"; do
				s=$(stat -c %s "${paths[i]}")
				printf 'SIZE\t%s\t%s\t%s\t%s\n' "$c" "${names[i]}" "$s" "$s"
			done
			;;
		szip)
			img=$imgdir/$c-$(key szip "$szip_sha" "${C_OPTS[*]}" "$(pkg_version e2fsprogs)").img
			files=()
			for i in "${!names[@]}"; do files+=("${sz_path[$c/$i]}"); done
			if [[ ! -f $img ]]; then
				bench_log "building $img"
				stage "$work/stage" "${files[@]}"
				mkext4 "$img" "$work/stage"
			fi
			for i in "${!names[@]}"; do
				printf 'SIZE\t%s\t%s\t%s\t%s\n' "$c" "${names[i]}" "$(stat -c %s "${paths[i]}")" \
					"$(stat -c %s "${files[i]}")"
				printf 'SZFILE\t%s\t%s\t%s\n' "$c" "${names[i]}" "${files[i]}"
			done
			;;
		squashfs | erofs)
			if [[ $C_KIND == erofs ]]; then
				z=${C_OPTS[0]#-z}
				z=${z%%,*}
				if [[ " $erofs_compressors " != *" $z "* ]]; then
					printf 'SKIP\t%s\tmkfs.erofs (erofs-utils %s) has no %s compressor (it has: %s)\n' \
						"$c" "$(pkg_version erofs-utils)" "$z" "$erofs_compressors"
					continue
				fi
				tool=erofs-utils
			else
				tool=squashfs-tools
			fi
			img=$imgdir/$c-$(key "$C_KIND" "${C_OPTS[*]}" "$(pkg_version "$tool")").img
			# build DIR OUT: one image of DIR's files
			build() {
				if [[ $C_KIND == squashfs ]]; then
					quiet mksquashfs "$1" "$2.tmp" -noappend -no-xattrs -all-root -quiet \
						-no-progress -processors "$jobs" "${C_OPTS[@]}" ||
						bench_die "mksquashfs ${C_OPTS[*]} $1 failed"
				else
					rm -f "$2.tmp"
					quiet mkfs.erofs --quiet --all-root -T0 "${C_OPTS[@]}" "$2.tmp" "$1" ||
						bench_die "mkfs.erofs ${C_OPTS[*]} $1 failed"
				fi
				# whole 4 KiB blocks, so the disk has no partial sector
				truncate -s %4096 "$2.tmp"
				mv "$2.tmp" "$2"
			}
			if [[ ! -f $img ]]; then
				bench_log "building $img"
				stage "$work/stage" "${paths[@]}"
				build "$work/stage" "$img"
			fi
			sizes=$img.sizes
			if [[ ! -f $sizes ]]; then
				: >"$sizes.tmp"
				for i in "${!names[@]}"; do
					rm -rf "$work/one"
					mkdir -p "$work/one"
					ln "${paths[i]}" "$work/one/" 2>/dev/null || cp "${paths[i]}" "$work/one/"
					build "$work/one" "$work/one.img"
					printf 'SIZE\t%s\t%s\t%s\t%s\n' "$c" "${names[i]}" "$(stat -c %s "${paths[i]}")" \
						"$(stat -c %s "$work/one.img")" >>"$sizes.tmp"
				done
				mv "$sizes.tmp" "$sizes"
			fi
			cat "$sizes"
			;;
		btrfs)
			img=$imgdir/$c-$(key btrfs "${C_OPTS[*]}" "$(pkg_version btrfs-progs)").img
			if [[ ! -f $img ]]; then
				bench_log "building $img (empty; filled in the guest)"
				rm -f "$img.tmp"
				truncate -s 1G "$img.tmp"
				quiet mkfs.btrfs -q -f -m single -d single -L bench "$img.tmp" ||
					bench_die "mkfs.btrfs $img.tmp failed"
				mv "$img.tmp" "$img"
			fi
			;;
		*) bench_die "configuration $c: unknown kind $C_KIND" ;;
		esac
		printf 'IMAGE\t%s\t%s\t%s\n' "$c" "$C_KIND" "$img"
	done
}

main "$@"
