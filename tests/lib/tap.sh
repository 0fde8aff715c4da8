# shellcheck shell=sh disable=SC2034 # tap_rc is for the scripts that source this
# SPDX-License-Identifier: GPL-2.0
#
# tests/lib/tap.sh - the one place that reads TAP, for POSIX sh (busybox in
# the guests) and bash (the host harness).  A TAP stream counts only if it
# has exactly one plan line ("1..N", possibly "1..0 # SKIP ...") and N
# results ("ok" or "not ok" lines): a program that dies part-way, or
# prints fewer results than it planned, fails the run.
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
#   tap_plan                print the joined stream's plan, last
#
# tap_n counts the joined stream's results; tap_rc becomes 1 on a failure.

tap_n=0
tap_rc=0

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
	_tr_name=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@"; then
		echo "ok $tap_n $_tr_name"
	else
		echo "not ok $tap_n $_tr_name"
		tap_rc=1
	fi
}

tap_plan() {
	echo "1..$tap_n"
}
