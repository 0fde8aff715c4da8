#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/harness.sh - tests of the test harness itself: the TAP helper
# (tests/lib/tap.sh) on the host, then tests/vm/run-vm.sh on payloads that
# must fail it, each for its own reason: a "not ok", a plan left short, no
# plan, a WARNING or a hook error in the guest's kernel log, a payload that
# hangs.  (Every other VM suite is the check that a good run passes.)
# Then a module built with a wrong hook target (Kbuild's
# EXT4DEC_TEST_TARGET), which must refuse to load and leave ext4 as it was
# (tests/vm/payloads/wrong-target).
#
# Usage: tests/vm/harness.sh [SERIES]
#        (default: the last "check" line of tests/kernels)
#
# Prints TAP and "# harness: P passed, F failed, S skipped" last; exit 1 on
# any failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
series=${1:-$(kernels_last)}
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/vm/suite.sh
. tests/vm/suite.sh

tap_sep=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# plan CASE WANT TEXT: tap_plan_problem on TEXT says WANT ("" for nothing)
plan() {
	local got
	printf '%s' "$3" >"$tmp/t"
	got=$(tap_plan_problem "$tmp/t")
	if [[ $got == "$2" ]]; then
		ok "tap_plan_problem: $1"
	else
		not_ok "tap_plan_problem: $1"
		echo "# got '$got', wanted '$2'"
	fi
}
plan "plan last" "" $'TAP version 13\nok 1 a\nnot ok 2 b\n# c\n1..2\n'
plan "plan first" "" $'1..2\nok 1 a\nok 2 b # SKIP x\n'
plan "skip all" "" $'1..0 # SKIP setup failed\n'
plan "short" "TAP plan 1..3 but 2 results" $'ok 1 a\nok 2 b\n1..3\n'
plan "long" "TAP plan 1..1 but 2 results" $'1..1\nok 1 a\nok 2 b\n'
plan "none" "no TAP plan (1..N): the run stopped early" $'ok 1 a\n'
plan "two" "2 TAP plans" $'1..1\nok 1 a\n1..1\n'
plan "diagnostics are no results" "" $'1..1\nok 1 a\n# ok 2 b\n  not ok 3\n'

# tests/lib/kernels.sh: a line it cannot read, or no line in the states
# asked for, is an error, not a kernel quietly left out of the tests
mkdir -p "$tmp/k/lib"
cp tests/lib/kernels.sh "$tmp/k/lib/"
printf '6.1\tcheck\n6.12\tchek\n' >"$tmp/k/kernels"
if "$tmp/k/lib/kernels.sh" >/dev/null 2>&1; then
	not_ok "kernels.sh: a malformed line is an error"
else
	ok "kernels.sh: a malformed line is an error"
fi
printf '# c\n6.1\tcheck\n\n7.3\ttrial\n' >"$tmp/k/kernels"
if [[ $("$tmp/k/lib/kernels.sh" 2>/dev/null) == 6.1 &&
	$("$tmp/k/lib/kernels.sh" check trial 2>/dev/null) == "6.1 7.3" ]] &&
	! "$tmp/k/lib/kernels.sh" none >/dev/null 2>&1; then
	ok "kernels.sh: the lines of the states asked for; none is an error"
else
	not_ok "kernels.sh: the lines of the states asked for; none is an error"
fi

# apt_private: runs of the suites side by side (tests/run-tests.sh) set up
# one private configuration at once; none may delete the package lists
# another is reading
mkdir -p "$tmp/apt/lists"
(
	. scripts/lib/apt.sh
	apt_private "$tmp/apt" trixie trixie-backports
) >/dev/null 2>&1
touch "$tmp/apt/lists/x_Packages" "$tmp/apt/lists/x_InRelease"
for i in $(seq 48); do
	(
		. scripts/lib/apt.sh
		apt_private "$tmp/apt" trixie trixie-backports
	) >"$tmp/apt.$i" 2>&1 &
done
wait
if [[ -f $tmp/apt/lists/x_Packages && -f $tmp/apt/lists/x_InRelease ]] &&
	! grep -q . "$tmp"/apt.[0-9]*; then
	ok "apt_private: side by side, the lists stay"
else
	not_ok "apt_private: side by side, the lists stay"
	cat "$tmp"/apt.[0-9]* | sort | uniq -c | sed 's/^/# /'
fi

# tap_part: a part that dies after its first result gets a "not ok"
printf 'TAP version 13\nok 1 a\nok 2 b\n1..2\n' >"$tmp/p1"
printf 'ok 1 c\n' >"$tmp/p2"
(
	tap_n=0 tap_rc=0 # a stream of its own
	tap_part one "$tmp/p1" 0
	tap_part two "$tmp/p2" 0
	tap_result passes true
	tap_result fails false
	tap_plan
	echo "rc $tap_rc"
) >"$tmp/joined"
if [[ $(grep -c '^ok' "$tmp/joined") == 4 ]] && grep -q '^not ok 4 two_plan # no TAP plan' "$tmp/joined" &&
	grep -qx 'ok 5 passes' "$tmp/joined" && grep -qx 'not ok 6 fails' "$tmp/joined" &&
	grep -qx '1..6' "$tmp/joined" && grep -qx 'rc 1' "$tmp/joined"; then
	ok "tap_part, tap_result: renumber, and a part without its plan fails"
else
	not_ok "tap_part, tap_result: renumber, and a part without its plan fails"
	sed 's/^/# /' "$tmp/joined"
fi

# boot WANT-STATUS WHY NAME SCRIPT [RUN-VM ARGS...]: boot SCRIPT (the
# text of run.sh, or a payload directory) as the payload; run-vm.sh must
# exit WANT-STATUS and, when failing, give WHY (an extended regex) as its
# reason
boot() {
	local want=$1 why=$2 name=$3 script=$4 payload=$tmp/$3 rc
	shift 4
	if [[ -d $script ]]; then
		payload=$script
	else
		mkdir -p "$payload"
		printf '#!/bin/sh\n%s\n' "$script" >"$payload/run.sh"
	fi
	tests/vm/run-vm.sh -k "$series" -p "$payload" -o "$tmp/$name.out" "$@" \
		>"$tmp/$name.tap" 2>"$tmp/$name.log"
	rc=$?
	if [[ $rc -ne $want ]]; then
		not_ok "run-vm.sh: $name: exit $rc, not $want"
		grep -E '^ext4dec-vm: (  |result|error)' "$tmp/$name.log" | sed 's/^/# /'
	elif [[ $want -ne 0 ]] && ! grep -Eq "^ext4dec-vm:   ($why)" "$tmp/$name.log"; then
		not_ok "run-vm.sh: $name: failed without saying '$why'"
		grep -E '^ext4dec-vm: (  |result|error)' "$tmp/$name.log" | sed 's/^/# /'
	else
		ok "run-vm.sh: $name${why:+: fails with \"$why\"}"
	fi
}
boot 1 "TAP output contains 'not ok'" not_ok 'echo "ok 1 a"; echo "not ok 2 b"; echo "1..2"; exit 0'
boot 1 "TAP plan 1..3 but 1 results" short_plan 'echo "1..3"; echo "ok 1 a"'
boot 1 "no TAP plan" no_plan 'echo "ok 1 a"'
boot 1 "kernel log has 2 suspicious line" warning \
	'echo "WARNING: ext4dec harness test" >/dev/kmsg
	echo "ext4dec: hook ext4_x: harness test" >/dev/kmsg; echo "ok 1 a"; echo "1..1"'
boot 1 "payload timed out" hang 'echo "ok 1 a"; sleep 600; echo "1..1"' -t 5

# A module that expects ext4_llseek where ext4 keeps ext4_ioctl, and
# finds no ext4_journalled_aops: its two refusals, and those lines alone,
# are what the log must have.
start=$SECONDS
suite_module_src "$tmp/wrong-target"
EXT4DEC_VM_DMESG_IGNORE='ext4dec: (hook ext4_llseek: ext4_file_operations\.unlocked_ioctl is ext4_ioctl, not ext4_llseek|ext4_journalled_aops not found: data=journal files cannot be recognised)$' \
	boot 0 "" wrong_target tests/vm/payloads/wrong-target --module-src "$tmp/wrong-target" \
	--make-arg EXT4DEC_TEST_TARGET=ext4_ioctl=ext4_llseek \
	--make-arg EXT4DEC_TEST_SYMBOL=ext4_journalled_aops=ext4dec_no_such_symbol
grep -v '^1\.\.' "$tmp/wrong_target.tap" | sed 's/^/#   /'
echo "#   built and run in $((SECONDS - start)) s"

tap_plan
tap_summary harness
[[ $tap_fail -eq 0 ]]
