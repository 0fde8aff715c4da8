#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/run-fuzz.sh - a bounded libFuzzer run of the szip decoder.
#
# Seeds: tests/fuzz/corpus (kept in the project), small files the szip tool
# makes here (each filter, a dictionary, 4 KiB chunks, one byte; format 2
# with each codec and checksum), and the
# small conformance vectors when present.  The run works on a copy in
# build/fuzz/work; a crash leaves its input in build/fuzz/ and fails.
#
# Usage: run-fuzz.sh [--seconds=N] [--szip=TOOL] [--vectors=DIR]
# Prints TAP and "# fuzz: P passed, F failed, S skipped".

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1

seconds=45 szip=tools/szip/szip vectors=
for arg in "$@"; do
	case $arg in
	--seconds=*) seconds=${arg#*=} ;;
	--szip=*) szip=${arg#*=} ;;
	--vectors=*) vectors=${arg#*=} ;;
	*) echo "usage: $0 [--seconds=N] [--szip=TOOL] [--vectors=DIR]" >&2; exit 2 ;;
	esac
done

fuzzer=build/fuzz/fuzz_decode
work=build/fuzz/work
seeds=build/fuzz/seeds
rm -rf "$work" "$seeds"
mkdir -p "$work" "$seeds"

# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
echo "TAP version 13"
# Small generated seeds: text and pseudo-code through every option.  A
# seed that cannot be made fails the run: the fuzzer would start without
# the inputs that reach a codec or a filter.
seed_errors=()
python3 - "$seeds" <<'EOF' || seed_errors+=("the Python seed generator failed")
import random, sys
r = random.Random(7)
words = [b"szip ", b"chunk ", b"ext4 ", b"page ", b"\n", b"inflate "]
text = b"".join(r.choice(words) for _ in range(4000))[:20000]
code = bytearray(text)
for i in range(0, len(code) - 8, 13):
    code[i] = 0xE8
    code[i + 4] = 0
    code[i + 7] = 0xEB
open(sys.argv[1] + "/text.in", "wb").write(text)
open(sys.argv[1] + "/code.in", "wb").write(bytes(code))
open(sys.argv[1] + "/one.in", "wb").write(b"x")
EOF
n=0
for opts in "" "--dict=4096" "--chunk-size=4096" "--filter=x86" \
	    "--filter=arm" "--filter=thumb" "--chunk-size=4096 --dict" \
	    "--codec=zstd --level=1 --chunk-size=4096" \
	    "--codec=zstd --level=3 --dict=8192 --checksum=xxh64" \
	    "--codec=lz4 --chunk-size=4096 --checksum=crc32c" \
	    "--codec=lz4 --level=1 --dict=4096" \
	    "--format=2 --chunk-size=4096 --checksum=crc32c --filter=x86"; do
	for f in "$seeds"/*.in; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		"$szip" -qc $opts "$f" >"$seeds/seed-$n.sz" 2>"$seeds/err" ||
			seed_errors+=("szip -qc $opts $(basename "$f"): $(head -n 1 "$seeds/err")")
	done
done
rm -f "$seeds"/*.in "$seeds/err"
cp tests/fuzz/corpus/* "$work"/ || seed_errors+=("cannot copy tests/fuzz/corpus")
cp "$seeds"/*.sz "$work"/ || seed_errors+=("cannot copy the generated seeds")
if [[ -n $vectors && -d $vectors ]]; then
	find "$vectors" -name '*.sz' -size -64k -exec cp {} "$work"/ \;
fi
if [[ ${#seed_errors[@]} -eq 0 && $n -gt 0 ]]; then
	ok "$n seeds made from every codec, filter and option"
else
	not_ok "seeds: $n tried, ${#seed_errors[@]} failed"
	printf '# %s\n' "${seed_errors[@]}"
fi

echo "# fuzzing for $seconds s from $(find "$work" -type f | wc -l) seeds"
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
	-rss_limit_mb=2048 -artifact_prefix=build/fuzz/ "$work" \
	>build/fuzz/log 2>&1
rc=$?
grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)' \
	build/fuzz/log | sed 's/^/# /'
grep -oE 'cov: [0-9]+ ft: [0-9]+' build/fuzz/log | tail -n 1 | sed 's/^/# final /'
if [[ $rc -eq 0 ]]; then
	ok "decoder fuzzed for $seconds s without a finding"
else
	grep -E 'ERROR|SUMMARY|Test unit written' build/fuzz/log | sed 's/^/# /'
	not_ok "decoder fuzzing found a problem (exit $rc)"
fi
tap_plan
tap_summary fuzz
[[ $tap_fail -eq 0 ]]
