# shellcheck shell=sh disable=SC2034 # tap_rc and tap_sep are for the scripts that source this
# SPDX-License-Identifier: GPL-2.0
#
# tests/lib/tap.sh - the one place that reads and writes TAP, for POSIX sh
# (busybox in the guests) and bash (the host scripts).  tests/vm/run-vm.sh
# puts it in every payload as /payload/tap.sh; the host scripts source it
# from here.
#
# Writing one TAP stream:
#
#   ok DESC...              a passed result: "ok N - DESC"
#   not_ok DESC...          a failed result: "not ok N - DESC"
#   skip DESC WHY           a skipped result: "ok N - DESC # SKIP WHY"
#   check DESC CMD...       ok when CMD (run in this shell, so it may be a
#                           function) succeeds, else not ok with the last
#                           40 lines of its output as diagnostics
#   tap_plan                the plan "1..N", last
#   tap_summary NAME        "# NAME: P passed, F failed, S skipped", the
#                           line tests/run-tests.sh tallies
#
# tap_sep goes between a result's number and its description: "- " unless
# the script sets it ("" gives "ok N DESC", the selftests' style).
# tap_pass, tap_fail and tap_skip count the results written with these.
#
# Reading: a TAP stream counts only if it has exactly one plan line ("1..N",
# possibly "1..0 # SKIP ...") and N results ("ok" or "not ok" lines): a
# program that dies part-way, or prints fewer results than it planned,
# fails the run.
#
#   tap_plan_problem FILE   print what is wrong with FILE's plan (nothing
#                           if the plan and the results agree); status 1
#                           when something is
#
# Several streams joined into one (the guest payloads run several programs):
#
#   tap_part NAME FILE RC   append FILE, one program's TAP, to the stream
#                           being written on stdout: its results renumbered
#                           after the earlier ones, its plan checked and
#                           dropped, other lines as diagnostics; RC, the
#                           program's exit status, or a plan problem, adds
#                           a "not ok NAME_..." result
#   tap_verdict NAME FILE RC  the checks of tap_part alone, for a part
#                           whose results are already in the stream
#                           (counted in tap_n) as they came
#   tap_result NAME CMD...  one more result: ok when CMD succeeds
#   tap_plan                the joined stream's plan, last
#
# tap_n counts the stream's results; tap_rc becomes 1 on a failure.

tap_n=0
tap_rc=0
tap_pass=0
tap_fail=0
tap_skip=0
tap_sep='- '

tap_plan_problem() {
	awk '
		/^1\.\.[0-9]+/ { plans++; split($1, a, "\\.\\."); planned = a[2] + 0; next }
		/^(not )?ok([ \t]|$)/ { results++ }
		END {
			if (plans == 0) { print "no TAP plan (1..N): the run stopped early"; exit 1 }
			if (plans > 1) { print plans " TAP plans"; exit 1 }
			if (planned != results) {
				print "TAP plan 1.." planned " but " results " results"; exit 1
			}
		}' "$1"
}

tap_part() {
	_tp_name=$1 _tp_file=$2 _tp_rc=$3
	while IFS= read -r _tp_line; do
		case $_tp_line in
		"TAP version"* | 1..*) ;;
		ok | "ok "* | "ok	"* | "not ok" | "not ok "* | "not ok	"*)
			tap_n=$((tap_n + 1))
			echo "$_tp_line" | sed -E "s/^(not )?ok([[:space:]]+[0-9]+)?/\\1ok $tap_n/"
			;;
		"#"*) echo "$_tp_line" ;;
		*) echo "# $_tp_line" ;;
		esac
	done <"$_tp_file"
	tap_verdict "$_tp_name" "$_tp_file" "$_tp_rc"
}

tap_verdict() {
	_tv_name=$1 _tv_file=$2 _tv_rc=$3
	grep -q '^not ok' "$_tv_file" && tap_rc=1
	if ! _tv_why=$(tap_plan_problem "$_tv_file"); then
		tap_n=$((tap_n + 1))
		tap_rc=1
		echo "not ok $tap_n ${_tv_name}_plan # $_tv_why"
	fi
	if [ "$_tv_rc" -ne 0 ]; then
		tap_rc=1
		if ! grep -q '^not ok' "$_tv_file"; then
			tap_n=$((tap_n + 1))
			echo "not ok $tap_n ${_tv_name}_exit_status # exit $_tv_rc"
		fi
	fi
}

tap_result() {
	_tr_name=$1 _tr_sep=$tap_sep tap_sep=
	shift
	if "$@"; then
		ok "$_tr_name"
	else
		not_ok "$_tr_name"
	fi
	tap_sep=$_tr_sep
}

tap_plan() {
	echo "1..$tap_n"
}

ok() { tap_n=$((tap_n + 1)) tap_pass=$((tap_pass + 1)); echo "ok $tap_n $tap_sep$*"; }
not_ok() { tap_n=$((tap_n + 1)) tap_fail=$((tap_fail + 1)) tap_rc=1; echo "not ok $tap_n $tap_sep$*"; }
skip() { tap_n=$((tap_n + 1)) tap_skip=$((tap_skip + 1)); echo "ok $tap_n $tap_sep$1 # SKIP $2"; }

check() {
	_tc_desc=$1
	shift
	_tc_out=$(mktemp) || { not_ok "$_tc_desc"; echo "# mktemp failed"; return; }
	if "$@" >"$_tc_out" 2>&1; then
		ok "$_tc_desc"
	else
		not_ok "$_tc_desc"
		sed 's/^/# /' "$_tc_out" | tail -n 40
	fi
	rm -f "$_tc_out"
}

tap_summary() {
	echo "# $1: $tap_pass passed, $tap_fail failed, $tap_skip skipped"
}
