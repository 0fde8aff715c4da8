#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/lib/kernels.sh - reads tests/kernels, the list of kernel lines.
# Sourced, it defines:
#   kernels_list [STATE...]  the series of the lines in STATE (default:
#                            check), oldest first, one per line
#   kernels_last             the last "check" line: the kernel the suites
#                            that run on one kernel take by default
# Run, it prints kernels_list's output on one line (for the Makefile):
#   tests/lib/kernels.sh [STATE...]

_kernels_file=$(dirname "${BASH_SOURCE[0]}")/../kernels

# A line other than "SERIES check" or "SERIES trial", or no line in the
# states asked for, is an error (on stderr, status 1): a typo must not
# drop a kernel from the tests unnoticed.
kernels_list() {
	[[ $# -gt 0 ]] || set -- check
	awk -v states=" $* " -v file="$_kernels_file" '
		/^[[:space:]]*(#|$)/ { next }
		NF != 2 || ($2 != "check" && $2 != "trial") {
			printf "%s:%d: not \"SERIES check|trial\": %s\n", file, FNR, $0 >"/dev/stderr"
			bad = 1
			next
		}
		index(states, " " $2 " ") { print $1; n++ }
		END {
			if (!bad && !n)
				printf "%s: no kernel line in state%s\n", file, states >"/dev/stderr"
			exit bad || !n
		}' "$_kernels_file"
}

kernels_last() { kernels_list check | tail -n 1; }

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -eu -o pipefail
	kernels_list "$@" | paste -sd ' '
fi
