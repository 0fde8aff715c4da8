#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/run-tests.sh - run every test suite (built by `make check`):
#   unit  build/san/test_szip       the szip library and encoder (ASan/UBSan)
#   cli   tests/cli/test_cli.sh     the szip command line, with build/san/szip
#   query tests/cli/test_query.sh   ext4dec-query's command line and errors,
#         with build/san/ext4dec-query
#   fuzz  tests/fuzz/run-fuzz.sh    libFuzzer on the decoder, bounded time
#   lint  scripts/kernel-lint.sh    checkpatch, kernel-doc, W=1 + sparse
#   packaging tests/packaging/      make install/uninstall, DKMS, man pages
#   harness tests/vm/harness.sh     the TAP helper, and QEMU runs that must
#         fail (not ok, short or missing plan, kernel WARNING, hang), on
#         the last of the --kernels
#   vm    tests/vm/selftests.sh     the module's selftests in QEMU, per kernel
#         (the --kernels, then the --debug-kernels: KASAN/lockdep builds)
#   stress tests/vm/stress.sh      hostile files, concurrency stress and
#         fault injection in QEMU, on the --debug-kernels and every one of
#         the --kernels
#   libxul tests/vm/firefox-demo.sh --quick   Firefox's libxul.so converted
#         in place in a Debian image and loaded by Firefox, in QEMU on each
#         of the --kernels
#   boot  tests/vm/boot-test.sh    (full tier only) that Debian image
#         booted with systemd as init: the module loaded at boot,
#         /usr/lib/firefox-esr converted, init's libraries refused,
#         rebooted, then booted without the module and recovered; on 6.12
#         when it is one of the --kernels, else on the last of them
# and print a closing "N passed, N failed" line over all of them.
#
# Two tiers.  --tier=check (make check, what CI runs) is the above, with
# the stress suite cut down on the debug kernel (tests/vm/stress.sh).
# --tier=full (make check-full) runs every suite whole: the stress suite
# uncut on the debug kernel too, the fuzzer for 300 s, and the whole
# Firefox demo (screenshots before and after; suite "firefox") after the
# libxul checks, and the boot test (suite "boot").
#
# Two lanes.  With --jobs=2 (the default on a machine with two or more
# CPUs) the vm suite runs beside the others, which run one after another
# as before: QEMU emulates the 7.x and debug guests on one host thread
# (tests/vm/lib.sh, vm_tcg_thread), and the stress suite's parts last a
# fixed time, so on one lane a CPU sat idle for most of the run.  Each
# suite's lines are printed whole when it ends, the lanes' blocks one after
# another; --jobs=1 runs every suite in turn.
#
# Options: --tier=check|full, --fuzz-seconds=N (default 45, 300 in the
# full tier), --vectors=DIR (default ../shared/vectors/szip next to the
# project; tests that need it skip visibly when it is absent, except under
# CI=true, where that is a failure), --kernels=LIST (lint,
# packaging, vm; default: the "check" lines of tests/kernels), --debug-kernels="debug" (vm and stress; "" for none),
# --jobs=1|2 (EXT4DEC_TEST_JOBS), --host-only.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 1

tier=check
fuzz_seconds=
vectors=$top/../shared/vectors/szip
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
kernels=$(kernels_list | paste -sd " ")
debug_kernels=debug
host_only=0
jobs=${EXT4DEC_TEST_JOBS:-}
usage="usage: $0 [--tier=check|full] [--fuzz-seconds=N] [--vectors=DIR] [--kernels=LIST] [--debug-kernels=LIST] [--jobs=1|2] [--host-only]"
for arg in "$@"; do
	case $arg in
	--tier=check | --tier=full) tier=${arg#*=} ;;
	--fuzz-seconds=*) fuzz_seconds=${arg#*=} ;;
	--vectors=*) vectors=${arg#*=} ;;
	--kernels=*) kernels=${arg#*=} ;;
	--debug-kernels=*) debug_kernels=${arg#*=} ;;
	--jobs=*) jobs=${arg#*=} ;;
	--host-only) host_only=1 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
if [[ -z $jobs ]]; then
	jobs=1
	[[ $(nproc) -lt 2 ]] || jobs=2
fi
[[ $jobs == [12] ]] || { echo "$usage" >&2; exit 2; }
# the suites that run on one kernel take the last of --kernels that is a
# "check" line (a trial line only when none is)
last_kernel=${kernels##* }
for k in $kernels; do
	if kernels_list check | grep -qxF -- "$k"; then
		last_kernel=$k
	fi
done
# shellcheck disable=SC2206 # lists of kernel series
stress_args=($debug_kernels $kernels)
vm_full=
if [[ $tier == full ]]; then
	fuzz_seconds=${fuzz_seconds:-300}
	stress_args=(--full "${stress_args[@]}")
	vm_full=--full
else
	fuzz_seconds=${fuzz_seconds:-45}
fi
echo "# tier: $tier"
pass=0 fail=0 skip=0
log=$(mktemp -d)
if [[ ! -f $vectors/MANIFEST.tsv ]]; then
	if [[ ${CI:-} == true ]]; then
		# CI always has them: their absence is a broken checkout, not a skip
		echo "# vectors: no conformance vectors at $vectors (CI=true): counted as 1 failure"
		fail=1
		printf '# vectors:\n#   none at %s\n' "$vectors" >"$log/recap.vectors"
	else
		echo "# NOTE: no conformance vectors at $vectors: vector tests skip"
	fi
fi
vm_pid=
# the vm lane (a process group of its own) ends with the run, whatever ends it
cleanup() {
	if [[ -n $vm_pid ]]; then
		kill -TERM -- "-$vm_pid" 2>/dev/null
		wait "$vm_pid" 2>/dev/null
	fi
	rm -rf "$log"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# tally NAME OUT RC: print what counts as a failure beyond the suite's own
# summary line ("# NAME: P passed, F failed, S skipped"), and add the
# suite's counts to $log/counts ("NAME P F S")
tally() {
	local name=$1 out=$2 rc=$3 line p f s
	line=$(grep -E "^# $name: [0-9]+ passed, [0-9]+ failed" "$out" | tail -n 1)
	if [[ -z $line ]]; then
		echo "# $name: no summary line (exit $rc): counted as 1 failure"
		echo "$name 0 1 0" >>"$log/counts"
		return
	fi
	read -r p f s < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/' <<<"$line")
	if [[ $rc -ne 0 && $f -eq 0 ]]; then
		echo "# $name: exit $rc without a failed test: counted as 1 failure"
		f=1
	fi
	echo "$name $p $f ${s:-0}" >>"$log/counts"
}

# recap NAME BLOCK: a failed suite's failures and the harness's reasons
# (at most 12 lines), kept for the end of the run, where a CI log cut to
# its last lines still shows them
recap() {
	local f
	awk -v n="$1" '$1 == n { f = $3 } END { exit f > 0 }' "$log/counts" && return
	f=$(mktemp "$log/recap.$1.XXXXXX") || return
	{
		echo "# $1:"
		grep -E '^not ok|^# (ext4dec-vm: (result|error|  )|.*counted as 1 failure|.*: [0-9]+ passed, [1-9][0-9]* failed)' "$2" |
			head -n 12 | sed 's/^# //; s/^/#   /'
	} >"$f"
}

# run_suite NAME CMD...: run a suite, then print its lines but the passed
# tests, its time and what tally says, in one block (the other lane's
# blocks never come in between)
run_suite() {
	local name=$1 rc start out
	shift
	out=$(mktemp "$log/$name.XXXXXX")
	echo "# $name: started"
	start=$SECONDS
	"$@" >"$out" 2>&1
	rc=$?
	{
		echo "# ---- $name: $*"
		grep -Ev '^ok ' "$out"
		echo "# $name took $((SECONDS - start)) s"
		tally "$name" "$out" "$rc"
	} >"$out.block"
	recap "$name" "$out.block"
	flock "$log/print" cat "$out.block" || cat "$out.block"
}

# The vm suite's lane: the debug kernels first, then the newest line down
# (guests of 7.x and the debug kernel run on one host thread), while the
# other lane runs the host's suites, then stress and libxul.
vm_lane() {
	local k order=
	for k in $kernels; do
		order="$k $order"
	done
	order="$debug_kernels $order"
	# shellcheck disable=SC2086 # a list of kernel series
	run_suite vm tests/vm/selftests.sh $vm_full $order
}
if [[ $host_only -eq 0 && $jobs -eq 2 ]]; then
	set -m
	vm_lane &
	vm_pid=$!
	set +m
fi
run_suite unit build/san/test_szip "$vectors"
run_suite cli tests/cli/test_cli.sh --szip=build/san/szip --vectors="$vectors" --big
run_suite query tests/cli/test_query.sh --query=build/san/ext4dec-query
run_suite fuzz tests/fuzz/run-fuzz.sh --seconds="$fuzz_seconds" \
	--szip=tools/szip/szip --vectors="$vectors"
if [[ $host_only -eq 0 ]]; then
	# shellcheck disable=SC2086 # a list of kernel series
	run_suite lint scripts/kernel-lint.sh $kernels
	# shellcheck disable=SC2086
	run_suite packaging tests/packaging/test-packaging.sh $kernels
	run_suite harness tests/vm/harness.sh "$last_kernel"
	[[ $jobs -eq 2 ]] || vm_lane
	run_suite stress tests/vm/stress.sh "${stress_args[@]}"
	for k in $kernels; do
		run_suite libxul tests/vm/firefox-demo.sh --quick -k "$k"
	done
	if [[ $tier == full ]]; then
		run_suite firefox tests/vm/firefox-demo.sh -k "$last_kernel"
		boot_kernel=$last_kernel
		if [[ " $kernels " == *" 6.12 "* ]]; then boot_kernel=6.12; fi
		run_suite boot tests/vm/boot-test.sh -k "$boot_kernel"
	fi
fi
if [[ -n $vm_pid ]]; then
	echo "# waiting for the vm suite"
	wait "$vm_pid"
	vm_pid=
	# a lane that died before its tally must not pass for one that passed
	if ! grep -q '^vm ' "$log/counts" 2>/dev/null; then
		echo "# vm: its lane ended without a result: counted as 1 failure"
		echo "vm 0 1 0" >>"$log/counts"
		printf '# vm:\n#   its lane ended without a result\n' >"$log/recap.vm"
	fi
fi

read -r p f s < <(awk '{ p += $2; f += $3; s += $4 } END { print p + 0, f + 0, s + 0 }' \
	"$log/counts" 2>/dev/null)
if [[ -z ${p:-} ]]; then
	echo "# no suite left a result: counted as 1 failure"
	p=0 f=1 s=0
fi
pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
# each suite's counts on one line, then what failed
echo "# suites (passed/failed/skipped): $(awk '{ printf "%s%s %d/%d/%d", (NR > 1 ? ", " : ""), $1, $2, $3, $4 }' "$log/counts" 2>/dev/null)"
if compgen -G "$log/recap.*" >/dev/null; then
	echo "# failed:"
	cat "$log"/recap.*
fi
echo "# all: $pass passed, $fail failed, $skip skipped"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
