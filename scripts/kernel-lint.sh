#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/kernel-lint.sh - the kernel-code gates, as TAP:
#   checkpatch.pl --strict on ext4dec/, szip/, include/ and the test module
#     tests/selftests/hookblock/ (from Debian's
#     linux-source package of the newest supported series, fetched into the
#     cache by scripts/kernel-files.sh; the LINUX_VERSION_CODE warning is
#     tolerated in compat.h only, and the CamelCase check in szip's
#     environment, for the names of the zlib, zstd and LZ4 it adapts to);
#   kernel-doc -none on every kernel source;
#   a W=1 build with sparse (C=2) against each kernel's headers: no warning.
#
# Usage: scripts/kernel-lint.sh [SERIES...]
#        (default: the "check" lines of tests/kernels)
# Prints "# lint: P passed, F failed, S skipped" last; exit 1 on failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
series=("$@")
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
[[ ${#series[@]} -gt 0 ]] || mapfile -t series < <(kernels_list)
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

show() { sed 's/^/# /' "$1" | head -n 40; }

# the test module's build in the VM suites fails on any warning (-Werror)
kernel_files=(ext4dec/*.[ch] szip/*.[ch] include/*.h tests/selftests/hookblock/*.c)

echo "TAP version 13"
# checkpatch.pl and kernel-doc from the newest linux-source-6.x package
if scripts=$(scripts/kernel-files.sh 2>"$work/fetch"); then
	echo "# checkpatch from $(cat "$scripts/source" 2>/dev/null)"
	others=()
	for f in "${kernel_files[@]}"; do
		case $f in
		ext4dec/compat.h | szip/szip_env_*.[ch]) ;;
		*) others+=("$f") ;;
		esac
	done
	# A clean file gives no output and status 0: anything else, a finding
	# or checkpatch itself failing (a missing file, a perl error), fails.
	cp_rc=0
	{
		perl "$scripts/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types -f "${others[@]}" || cp_rc=1
		perl "$scripts/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --ignore LINUX_VERSION_CODE -f ext4dec/compat.h || cp_rc=1
		# adapters to zlib, zstd and LZ4 (kernel and userspace), whose
		# names these are
		perl "$scripts/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types --ignore CAMELCASE -f szip/szip_env_*.[ch] || cp_rc=1
	} >"$work/cp" 2>&1
	# and it must still find what it should: a line with two findings
	printf 'int f(){return 0;}\n' >"$work/canary.c"
	perl "$scripts/scripts/checkpatch.pl" --strict --no-tree --terse -f "$work/canary.c" \
		>"$work/canary" 2>&1
	if [[ $cp_rc -ne 0 || -s $work/cp ]]; then
		not_ok "checkpatch --strict"
		show "$work/cp"
	elif ! grep -q 'ERROR:' "$work/canary"; then
		not_ok "checkpatch --strict: it finds nothing in a file with errors"
		show "$work/canary"
	else
		ok "checkpatch --strict (${#kernel_files[@]} files)"
	fi
	kdoc=$scripts/scripts/kernel-doc
	[[ -e $kdoc ]] || kdoc=$scripts/scripts/kernel-doc.py
	if perl -e1 2>/dev/null && "$kdoc" -none -Wall "${kernel_files[@]}" >"$work/kd" 2>&1 &&
		! grep -q . "$work/kd"; then
		ok "kernel-doc -none -Wall"
	else
		not_ok "kernel-doc -none -Wall"
		show "$work/kd"
	fi
elif [[ ${CI:-} == true ]]; then
	# CI has apt: a missing linux-source is a broken setup, not a skip
	not_ok "checkpatch --strict: cannot fetch a linux-source package"
	not_ok "kernel-doc: cannot fetch a linux-source package"
	show "$work/fetch"
else
	skip "checkpatch --strict" "cannot fetch a linux-source package"
	skip "kernel-doc" "cannot fetch a linux-source package"
fi

# W=1 + sparse against each kernel's headers, in a copy of the sources
mkdir -p "$work/src"
cp -r Kbuild include szip ext4dec "$work/src/"
for s in "${series[@]}"; do
	kdir=$(tests/vm/run-vm.sh -k "$s" --print-kdir 2>"$work/kdir.err")
	if [[ -z $kdir ]]; then
		not_ok "W=1 + sparse build for $s: no headers"
		show "$work/kdir.err"
		continue
	fi
	# kernels of newer suites build in their release's root, which has sparse
	env_root=$(tests/vm/kmake.sh --print-env "$s" 2>/dev/null)
	if [[ -z $env_root ]] && ! command -v sparse >/dev/null; then
		skip "W=1 + sparse build for $s" "sparse not installed"
		continue
	fi
	if tests/vm/kmake.sh "$s" M="$work/src" C=2 W=1 modules >"$work/build" 2>&1 &&
		! grep -E 'warning:|error:' "$work/build" >"$work/warn"; then
		ok "W=1 + sparse build for $(basename "$kdir"): no warnings"
	else
		not_ok "W=1 + sparse build for $(basename "$kdir")"
		if [[ -s $work/warn ]]; then show "$work/warn"; else show "$work/build"; fi
	fi
	tests/vm/kmake.sh "$s" M="$work/src" clean >/dev/null 2>&1
done

tap_plan
tap_summary lint
[[ $tap_fail -eq 0 ]]
