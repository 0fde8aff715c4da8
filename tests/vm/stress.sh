#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/stress.sh - hostile szip files, concurrency stress and fault
# injection against ext4dec, in QEMU (tests/stress/).
#
# Usage: tests/vm/stress.sh [--seconds=N] [--mutations=N] [--full]
#                           [--no-kmemleak] [SERIES...]
#        (default: debug and the last "check" line of tests/kernels)
#
# Builds, on the host, the hostile-file generator and the guest programs
# (ext4dec_hostile, ext4dec_stress, ext4dec_faults), writes the hostile
# files (--mutations random mutations, default 900, fixed seed), then per
# kernel boots one VM that runs tests/stress/run.sh: the hostile files,
# --seconds of concurrency stress (default 120) and, on kernels with fault
# injection (the debug kernel), the fault-injection tests.  On the debug
# kernel, which is several times slower, the run is cut down unless
# --full: the first 300 mutated files, 8 random reads per file, 60 s of
# stress, 20 rounds of random allocation failures; it boots with
# kmemleak=on unless --no-kmemleak.  A bad dmesg line, a crash or a
# timeout fails the kernel's run even when every test passed.  Logs stay
# in build/stress/<series>/.  Prints "# stress: P passed, F failed,
# S skipped" last; exit 1 on any failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
seconds='' mutations=900 kmemleak=1 full=0 series=()
for arg in "$@"; do
	case $arg in
	--seconds=*) seconds=${arg#*=} ;;
	--mutations=*) mutations=${arg#*=} ;;
	--no-kmemleak) kmemleak=0 ;;
	--full) full=1 ;;
	-*) echo "usage: $0 [--seconds=N] [--mutations=N] [--full] [--no-kmemleak] [SERIES...]" >&2; exit 2 ;;
	*) series+=("$arg") ;;
	esac
done
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
[[ ${#series[@]} -gt 0 ]] || series=(debug "$(kernels_last)")
out=build/stress

# --- host side: programs and hostile files ----------------------------------
cc=${CC:-cc}
warn=(-std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
	-Wmissing-prototypes -Wno-missing-field-initializers)
incs=(-Iinclude -Iszip -Itools/szip)
# the szip library's userspace dependencies, as the Makefile links them
read -r -a libs <<<"$(sed -n 's/^LIBS[[:space:]]*:=[[:space:]]*//p' Makefile)"
szip_srcs=(szip/header.c szip/decode.c szip/bcj.c)
mkdir -p "$out"
build() {
	local bin=$1
	shift
	"$cc" "${warn[@]}" -o "$out/$bin" "$@" || {
		echo "not ok - building $bin"
		echo "# stress: 0 passed, 1 failed, 0 skipped"
		exit 1
	}
}
build gen_hostile "${incs[@]}" tests/stress/gen_hostile.c "${szip_srcs[@]}" "${libs[@]}"
build ext4dec_hostile "${incs[@]}" tests/stress/hostile.c "${szip_srcs[@]}" "${libs[@]}"
build ext4dec_stress tests/stress/stress.c
build ext4dec_faults tests/stress/faults.c
[[ -x tools/szip/szip ]] || make -s tool >/dev/null || exit 2

payload=$out/payload
rm -rf "$payload"
mkdir -p "$payload"
cp tests/stress/run.sh "$payload/"
# the stress part's szip files, made here: szip is slow in an emulated guest
if ! PATH=$top/tools/szip:$PATH "$out/ext4dec_stress" --pack "$payload/packed" >"$out/pack.log" 2>&1; then
	sed 's/^/# /' "$out/pack.log"
	echo "not ok - packing the stress part's files"
	echo "# stress: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
if ! "$out/gen_hostile" "$payload/hostile" "$mutations" 1 >"$out/gen.log" 2>&1; then
	sed 's/^/# /' "$out/gen.log"
	echo "not ok - generating the hostile files"
	echo "# stress: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
sed 's/^/# /' "$out/gen.log"

# shellcheck source=tests/vm/suite.sh
. tests/vm/suite.sh
src=$out/module-src
suite_module_src "$src"

# --- per kernel ----------------------------------------------------------------
for s in "${series[@]}"; do
	append=() secs=120 hostile_opts="-j 2" fault_opts="" strict=0
	case $s in
	debug*)
		# built for fault injection: whatever of it is missing fails
		strict=1 fault_opts="-s"
		if [[ $full -eq 0 ]]; then
			secs=60 hostile_opts="-j 2 -p 8 -m 300" fault_opts="-s -r 20"
		fi
		if [[ $kmemleak -eq 1 ]]; then
			append=(--append "kmemleak=on")
			fault_opts+=" -K"
		fi
		;;
	esac
	{
		echo "STRESS_PARTS=\"hostile stress faults\""
		echo "STRESS_SECONDS=${seconds:-$secs}"
		echo "STRESS_HOSTILE_OPTS=\"$hostile_opts\""
		echo "STRESS_FAULT_OPTS=\"$fault_opts\""
		echo "STRESS_FAULTS_STRICT=$strict"
	} >"$payload/stress.conf"
	suite_boot stress "$s" "$out/$s" -p "$payload" --module-src "$src" \
		--bin tools/szip/szip --bin "$out/ext4dec_hostile" \
		--bin "$out/ext4dec_stress" --bin "$out/ext4dec_faults" \
		"${append[@]}" -t 1500
done

suite_end stress
