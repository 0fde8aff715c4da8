#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/overhead.sh - what loading ext4dec costs everyone else, and what
# the largest tables cost an activation, in QEMU.
#
# Usage: bench/overhead.sh [--rounds=N] [--module-src=DIR] [SERIES...]
#        (default: the last "check" line of tests/kernels; make
#        bench-overhead)
#
# Per kernel, one VM (bench/overhead/run.sh) on the scratch ext4:
#   plain-seq   read() of a cached 64 MiB plain file, 128 KiB at a time
#   plain-rand  100000 cached 4 KiB preads of it at random offsets
#   plain-direct 20000 O_DIRECT 4 KiB preads of it at random offsets (the
#               module's hook on ext4's iomap_begin is in their path)
#   plain-stat  stat(1) of it after drop_caches
# each without the module and with it, alternately, N rounds (default 3);
# then, module loaded:
#   tables-stat stat(1) after drop_caches of a +c file whose tables are the
#               largest the module takes (16 MiB: 2^20 - 16 chunks of 4 KiB,
#               lz4, xxh64 checksums), which the stat activates
#   inode-mem   the memory an active inode holds: per set of files, what
#               a fresh memory cgroup is charged when a process in it stats
#               (so activates) every file, whose inode was cached before,
#               divided by the number of files (memory.current, and
#               memory.stat's kernel, slab_unreclaimable, vmalloc); sets:
#               zstd32k (64 files of 3 MiB of code, --format=2 --codec=zstd
#               --chunk-size=32K), v1-16k (32 of it at --format=1
#               --chunk-size=16K), dict (16 of it zstd 32K --dict=16384),
#               xul (one file of 180 MiB of code, zstd 32K, made in the
#               guest), tables (the largest tables, above); then what is left
#               charged after chattr -c (zstd32k) and after rmmod
# Prints, per kernel and measure, the median of the rounds (ns, and for
# the random reads p50 and p99; bytes per file for inode-mem); with
# --module-src another checkout's module is measured (the same benchmark
# over an older module).  TCG: the times are relative, for comparing with
# and without, not absolute.
# Results in build/bench-overhead/<series>/.

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
rounds=3 module_src=$top series=()
for arg in "$@"; do
	case $arg in
	--rounds=*) rounds=${arg#*=} ;;
	--module-src=*) module_src=$(cd "${arg#*=}" && pwd) || exit 2 ;;
	-*) echo "usage: $0 [--rounds=N] [--module-src=DIR] [SERIES...]" >&2; exit 2 ;;
	*) series+=("$arg") ;;
	esac
done
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
[[ ${#series[@]} -gt 0 ]] || series=("$(kernels_last)")
out=build/bench-overhead
mkdir -p "$out"

gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -o "$out/benchio" bench/benchio.c || exit 1
make -s tools/szip/szip || exit 1

payload=$out/payload
rm -rf "$payload"
mkdir -p "$payload"
cp bench/overhead/run.sh "$payload/"
echo "$rounds" >"$payload/rounds"
# 16 MiB of offset and checksum tables, the most the module reads
chunks=$(((1 << 20) - 16))
echo $((chunks * 4096)) >"$payload/tables.size"
head -c $((chunks * 4096)) /dev/zero |
	tools/szip/szip -c --codec=lz4 --level=1 --chunk-size=4096 --checksum=xxh64 \
		>"$payload/tables.sz" || exit 1
# 3 MiB of code (the shared libraries szip uses), and it packed three ways,
# for inode-mem; the guest makes the 180 MiB file from 60 copies of it
# shellcheck disable=SC2046 # one path a line
cat $(ldd tools/szip/szip | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' | sort -u) \
	tools/szip/szip | head -c $((3 << 20)) >"$payload/code.bin"
[[ $(stat -c %s "$payload/code.bin") -eq $((3 << 20)) ]] || { echo "$0: no 3 MiB of code" >&2; exit 1; }
for p in "zstd32k --format=2 --codec=zstd --chunk-size=32K" \
	"v1-16k --format=1 --chunk-size=16K" \
	"dict --format=2 --codec=zstd --chunk-size=32K --dict=16384"; do
	# shellcheck disable=SC2086 # options
	tools/szip/szip -c -q ${p#* } "$payload/code.bin" >"$payload/lib-${p%% *}.sz" || exit 1
done

# tests/vm/suite.sh's suite_module_src, from the checkout measured
rm -rf "$out/module-src"
mkdir -p "$out/module-src"
(cd "$module_src" && cp -r Kbuild dkms.conf include szip ext4dec "$top/$out/module-src/") || exit 1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
sfield() { sed -n "s/.* $1=\(-\{0,1\}[0-9]*\).*/\1/p"; }

for s in "${series[@]}"; do
	dir=$out/$s
	rm -rf "$dir"
	tests/vm/run-vm.sh -k "$s" -p "$payload" --module-src "$out/module-src" \
		--bin "$out/benchio" --bin tools/szip/szip --disk-size 768M --mem 2048 -t 1800 -o "$dir" \
		>"$dir.tap" 2>"$dir.log" || { cat "$dir.tap" "$dir.log" >&2; exit 1; }
	echo "# $s ($(grep -m1 'kernel:' "$dir.log" | sed 's/.*kernel: //'))"
	printf '# %-12s %-8s %14s %12s %12s\n' measure module "median ns" "p50 ns" "p99 ns"
	for m in plain-seq plain-rand plain-direct plain-stat tables-stat; do
		for w in without with cold; do
			lines=$(grep "BENCH tag=$m|$w|" "$dir.tap") || continue
			printf '# %-12s %-8s %14s %12s %12s\n' "$m" "$w" \
				"$(field ns <<<"$lines" | median)" \
				"$(field p50_ns <<<"$lines" | median)" \
				"$(field p99_ns <<<"$lines" | median)"
		done
	done
	printf '# %-14s %-8s %9s %9s %9s %9s %9s\n' "inode-mem" set "current" kernel slab vmalloc "ctl total"
	for m in zstd32k v1-16k dict xul tables; do
		lines=$(grep "BENCH tag=inode-mem|$m|" "$dir.tap") || continue
		printf '# %-14s %-8s %9s %9s %9s %9s %9s\n' "bytes/inode" "$m" \
			"$(sfield current <<<"$lines" | median)" \
			"$(sfield kernel <<<"$lines" | median)" \
			"$(sfield slab <<<"$lines" | median)" \
			"$(sfield vmalloc <<<"$lines" | median)" \
			"$(sfield ctl_kernel <<<"$lines" | median)"
	done
	# the last round's: after chattr -c of zstd32k, then after rmmod
	grep "BENCH tag=inode-mem-left|" "$dir.tap" | tail -n 6 | while read -r line; do
		tag=${line#*tag=inode-mem-left|}
		tag=${tag%% *}
		printf '# %-14s %-8s %9s %9s %9s %9s\n' "left ${tag#*|}" "${tag%|*}" \
			"$(sfield current <<<"$line")" "$(sfield kernel <<<"$line")" \
			"$(sfield slab <<<"$line")" "$(sfield vmalloc <<<"$line")"
	done
done
