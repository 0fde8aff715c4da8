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

kernels_list() {
	[[ $# -gt 0 ]] || set -- check
	awk -v states=" $* " '!/^[[:space:]]*(#|$)/ && index(states, " " $2 " ") { print $1 }' \
		"$_kernels_file"
}

kernels_last() { kernels_list check | tail -n 1; }

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -eu
	kernels_list "$@" | paste -sd ' '
fi
