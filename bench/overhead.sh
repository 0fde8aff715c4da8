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
#   plain-stat  stat(1) of it after drop_caches
# each without the module and with it, alternately, N rounds (default 3);
# then, module loaded:
#   tables-stat stat(1) after drop_caches of a +c file whose tables are the
#               largest the module takes (16 MiB: 2^20 - 16 chunks of 4 KiB,
#               lz4, xxh64 checksums), which the stat activates
# Prints, per kernel and measure, the median of the rounds (ns, and for
# the random reads p50 and p99); with --module-src another checkout's
# module is measured (the same benchmark over an older module).  TCG: the
# figures are relative, for comparing with and without, not absolute.
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
# 16 MiB of offset and checksum tables, the most the module reads
chunks=$(((1 << 20) - 16))
echo $((chunks * 4096)) >"$payload/tables.size"
head -c $((chunks * 4096)) /dev/zero |
	tools/szip/szip -c --codec=lz4 --level=1 --chunk-size=4096 --checksum=xxh64 \
		>"$payload/tables.sz" || exit 1

# tests/vm/suite.sh's suite_module_src, from the checkout measured
rm -rf "$out/module-src"
mkdir -p "$out/module-src"
(cd "$module_src" && cp -r Kbuild dkms.conf include szip ext4dec "$top/$out/module-src/") || exit 1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

for s in "${series[@]}"; do
	dir=$out/$s
	rm -rf "$dir"
	OVERHEAD_ROUNDS=$rounds tests/vm/run-vm.sh -k "$s" -p "$payload" --module-src "$out/module-src" \
		--bin "$out/benchio" --disk-size 512M --mem 2048 -t 1800 -o "$dir" \
		>"$dir.tap" 2>"$dir.log" || { cat "$dir.tap" "$dir.log" >&2; exit 1; }
	echo "# $s ($(grep -m1 'kernel:' "$dir.log" | sed 's/.*kernel: //'))"
	printf '# %-12s %-8s %14s %12s %12s\n' measure module "median ns" "p50 ns" "p99 ns"
	for m in plain-seq plain-rand plain-stat tables-stat; do
		for w in without with cold; do
			lines=$(grep "BENCH tag=$m|$w|" "$dir.tap") || continue
			printf '# %-12s %-8s %14s %12s %12s\n' "$m" "$w" \
				"$(field ns <<<"$lines" | median)" \
				"$(field p50_ns <<<"$lines" | median)" \
				"$(field p99_ns <<<"$lines" | median)"
		done
	done
done
