#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/firefox.sh - Firefox's cold start from a plain and from compressed
# libxul.so, in QEMU, on a slow and on a fast disk (make bench runs it).
#
# Usage: bench/firefox.sh [options]
#
#   -o, --out DIR        results directory (default: build/bench): writes
#                        firefox.txt (the result lines) and firefox-bwN.log
#       --src DIR        build szip and the module from DIR (as run-bench.sh)
#   -k, --kernel SPEC    guest kernel (default 6.12)
#   -n, --repeats N      timed starts of each workload and configuration (3)
#       --bw "A B ..."   disk read bandwidths in MB/s, one boot each; 0 is
#                        unthrottled, cache=none (default "20 0")
#       --configs "A B"  ext4 and szip configurations of bench/lib.sh
#                        (default "ext4 szip-16k szip2-zstd-32k-x86":
#                        format 1 zlib 16K and ext4dec-compress's default)
#       --workloads "W"  help (firefox-esr --headless --help) and shot
#                        (--screenshot of a local page); default both
#       --trace "A B"    configurations whose start is traced once at the
#                        first bandwidth (default: the compressed ones)
#       --modparams "P=V ..."  ext4dec module parameters in the guest
#       --record FILE    record the order in which a plain start touches
#                        libxul.so's pages into FILE (the format of
#                        bench/firefox-libxul.trace) instead
#   -h, --help
#
# The image is the Firefox demo's (scripts/build-demo-image.sh, cached),
# copied once per set of configurations with each configuration's libxul.so
# (packed on the host by bench/make-images.sh, cached) written next to the
# original; the copy is cached in <cache>/bench/firefox/.  Each boot runs
# bench/firefox-guest.sh with the copy attached through tests/vm/run-vm.sh
# --image-bw: QEMU reads it with cache=none (the host's page cache holds
# none of it), throttled to the bandwidth.  Exit status: 0 success,
# 1 failure, 2 usage error.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

main() {
	out=$top/build/bench src=$top kspec=${BENCH_KERNEL:-6.12} repeats=3 bws="20 0"
	configs="ext4 szip-16k szip2-zstd-32k-x86" workloads="help shot" trace=- modparams=
	record=
	while [[ $# -gt 0 ]]; do
		case $1 in
		--workloads) bench_need_arg "$@"; workloads=$2; shift 2 ;;
		--record) bench_need_arg "$@"; record=$2; shift 2 ;;
		-h | --help) bench_usage "${BASH_SOURCE[0]}" ;;
		*)
			bench_option "$@" || { bench_log "unknown argument: $1"; bench_usage "${BASH_SOURCE[0]}" 2 >&2; }
			shift 2
			;;
		esac
	done
	bench_check_runs "$repeats" "$bws"
	for w in $workloads; do
		[[ $w == help || $w == shot ]] || { bench_log "--workloads: unknown workload $w"; exit 2; }
	done
	szconfigs=()
	for c in $configs; do
		bench_config "$c" || { bench_log "unknown configuration '$c' (see bench/lib.sh)"; exit 2; }
		case $C_KIND in
		ext4) ;;
		szip) szconfigs+=("$c") ;;
		*) bench_log "$c: only ext4 and szip configurations replace libxul.so"; exit 2 ;;
		esac
	done
	[[ " $configs " == *" ext4 "* ]] || configs="ext4 $configs"
	[[ $trace != - ]] || trace=${szconfigs[*]-}
	src=$(cd "$src" && pwd)
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	work=$(mktemp -d "$out/.firefox.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	export PATH="$PATH:/usr/sbin:/sbin"

	# --- tools, the image, libxul.so --------------------------------------------
	make -s -C "$src" tool >&2 || bench_die "building szip in $src failed"
	make -s -C "$top" build/demo/ext4dec_demo >&2 || bench_die "building ext4dec_demo failed"
	image=$("$top/scripts/build-demo-image.sh") || bench_die "scripts/build-demo-image.sh failed"
	info=$(dirname "$image")/info
	ver=$(sed -n 's/^firefox_version=//p' "$info")
	sha=$(sed -n 's/^libxul_sha256=//p' "$info")
	lib=/usr/lib/firefox-esr/libxul.so
	debugfs -R "dump $lib $work/libxul.so" "$image" >/dev/null 2>&1 ||
		bench_die "cannot copy $lib out of $image"
	[[ $(sha256sum <"$work/libxul.so" | cut -d' ' -f1) == "$sha" ]] ||
		bench_die "$lib in $image does not have the sha256 of $info"

	# each configuration's libxul.so, packed (and cached) by make-images.sh
	printf 'libxul.so\t%s\tfirefox-esr\t%s\t%s\n' "$work/libxul.so" "$ver" \
		"$(stat -c %s "$work/libxul.so")" >"$work/manifest.tsv"
	declare -A sz=()
	if [[ ${#szconfigs[@]} -gt 0 ]]; then
		"$here/make-images.sh" --manifest "$work/manifest.tsv" --szip "$src/tools/szip/szip" \
			--szip-src "$src" "${szconfigs[@]}" >"$work/images.tsv" ||
			bench_die "packing libxul.so failed"
		for c in "${szconfigs[@]}"; do
			sz[$c]=$(awk -F'\t' -v c="$c" '$1 == "SZFILE" && $2 == c { print $4 }' "$work/images.tsv")
			[[ -s ${sz[$c]} ]] || bench_die "no packed libxul.so for $c"
		done
	fi

	# the demo image with the packed files next to libxul.so (cached)
	dir=$(bench_cache_dir)/firefox
	mkdir -p "$dir"
	key=$({
		echo "$image"
		for c in "${szconfigs[@]}"; do echo "$c ${sz[$c]}"; done
	} | sha256sum | cut -c1-12)
	img=$dir/$key.img
	if [[ ! -f $img ]]; then
		bench_log "making $img from $image"
		cp --sparse=always "$image" "$img.tmp"
		for c in "${szconfigs[@]}"; do
			debugfs -w -R "write ${sz[$c]} $lib.$c" "$img.tmp" >/dev/null 2>&1 || true
			if [[ $(debugfs -R "stat $lib.$c" "$img.tmp" 2>/dev/null |
				awk '/^User:/ { print $NF }') != "$(stat -c %s "${sz[$c]}")" ]]; then
				rm -f "$img.tmp"
				bench_die "cannot write $lib.$c into the image"
			fi
		done
		find "$dir" -name '*.img' ! -name "$key.img" -delete
		mv "$img.tmp" "$img"
	fi

	# --- the payload and the boots -----------------------------------------------
	payload=$work/payload
	mkdir -p "$payload/bin" "$work/module-src"
	cp "$here/firefox-guest.sh" "$payload/run.sh"
	cp "$here/graph-sum.awk" "$top/tests/vm/payloads/firefox/lib.sh" \
		"$top/tests/vm/payloads/firefox/page.html" "$top/tests/vm/payloads/firefox/user.js" \
		"$payload/"
	cp -L "$top/scripts/ext4dec-compress" "$payload/bin/"
	cp -r "$src/Kbuild" "$src/dkms.conf" "$src/include" "$src/szip" "$src/ext4dec" "$work/module-src/"

	: >"$out/firefox.txt"
	read -r -a bwlist <<<"$bws"
	[[ -z $record ]] || bwlist=("${bwlist[0]}")
	first=1
	for bw in "${bwlist[@]}"; do
		{
			printf 'FF_BW=%q\nFF_CONFIGS=%q\nFF_WORKLOADS=%q\n' "$bw" "$configs" "$workloads"
			printf 'FF_REPEATS=%q\nFF_RECORD=%q\n' "$repeats" "$([[ -n $record ]] && echo 1 || echo 0)"
			printf 'FF_TRACE=%q\n' "$([[ $first == 1 ]] && echo "$trace")"
			printf 'FF_MODPARAMS=%q\n' "$modparams"
		} >"$payload/config"
		bench_log "firefox: boot at $([[ $bw -gt 0 ]] && echo "$bw MB/s" || echo "unthrottled"), configurations $configs"
		local t0=$SECONDS rc=0
		"$top/tests/vm/run-vm.sh" -k "$kspec" -p "$payload" --module-src "$work/module-src" \
			--bin "$src/tools/szip/szip" --bin "$top/build/demo/ext4dec_demo" \
			--bin "$top/tools/ext4dec-query/ext4dec-query" \
			--image "$img" --image-bw "$bw" --mem 3072 -t 3000 -o "$work/run-$bw" \
			>"$out/firefox-bw$bw.log" 2>&1 || rc=$?
		grep -E '^# (FIREFOX|FFTRACE) ' "$out/firefox-bw$bw.log" | sed 's/^# //' >>"$out/firefox.txt" || true
		echo "FFBOOT bw=$bw s=$((SECONDS - t0)) load=$(cut -d' ' -f1 /proc/loadavg)" >>"$out/firefox.txt"
		bench_log "firefox: boot took $((SECONDS - t0)) s"
		if [[ $rc -ne 0 ]]; then
			grep -E '^not ok|^# ext4dec-vm' "$out/firefox-bw$bw.log" | head -n 20 >&2 || true
			bench_die "firefox: the boot at $bw MB/s failed; see $out/firefox-bw$bw.log"
		fi
		first=0
	done
	if [[ -n $record ]]; then
		{
			cat <<-EOF
			# The order in which a cold start of Firefox first touches the pages
			# of libxul.so: each line "FIRST COUNT" is a run of COUNT 4 KiB pages
			# from page FIRST.  Recorded by bench/firefox.sh --record: a cold
			# "firefox-esr --headless --help" in the demo image, libxul.so on
			# plain ext4 with the disk's readahead off, pages in the order the
			# mm_filemap_add_to_page_cache tracepoint saw them added (read() and
			# page faults alike).  Replayed by "benchio replay" (make bench).
			# firefox-esr $ver, libxul.so of $(stat -c %s "$work/libxul.so") bytes, $(date -u +%Y-%m-%d).
			EOF
			sed -n 's/^# FFRECORD //p' "$out/firefox-bw${bwlist[0]}.log"
		} >"$record"
		bench_log "firefox: $(grep -vc '^#' "$record") runs of pages written to $record"
	fi
}

main "$@"
