#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/kernel-files.sh - the files this project takes from the kernel's
# source at build time and does not carry: checkpatch.pl, its data files
# and kernel-doc (scripts/kernel-lint.sh), and the kselftest harness,
# kselftest_harness.h with the kselftest.h it includes (the selftests,
# tests/selftests/).  All come from one tree: Debian's linux-source package
# of the newest 6.x series (6.12 on bookworm), downloaded with apt-get
# (nothing is installed) and unpacked once into the cache.
#
# Usage: scripts/kernel-files.sh                  fetch if needed, print the
#                                                 cache directory
#        scripts/kernel-files.sh --selftest DIR   also copy the harness's two
#                                                 headers into DIR
#
# The cache directory holds scripts/, tools/testing/selftests/ and
# "source", the package's name and version; a lock file beside it lets one
# fetch run at a time.  Exit 1 when the package cannot be fetched or lacks
# a file.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/apt.sh
. "$top/scripts/lib/apt.sh"
cache=${EXT4DEC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ext4dec}
dir=$cache/tools/linux-files
files=(scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
	'scripts/kernel-doc*'
	tools/testing/selftests/kselftest_harness.h tools/testing/selftests/kselftest.h)

complete() {
	local f

	for f in "${files[@]}"; do
		compgen -G "$dir/$f" >/dev/null || return 1
	done
	[[ -s $dir/source ]]
}

fetch() {
	local pkg ver work src rc=1

	pkg=$(apt-cache pkgnames linux-source-6. 2>/dev/null | sort -V | tail -n 1)
	if [[ -z $pkg ]]; then
		apt_update_once &&
			pkg=$(apt-cache pkgnames linux-source-6. 2>/dev/null | sort -V | tail -n 1)
	fi
	if [[ -z $pkg ]]; then
		echo "kernel-files: no linux-source-6.x package known to apt" >&2
		return 1
	fi
	ver=${pkg#linux-source-}
	work=$(mktemp -d) || return 1
	src=linux-source-$ver
	if apt_download "$work/deb" "$pkg" &&
		dpkg-deb -x "$work/deb"/*.deb "$work/x" &&
		tar -xJf "$work/x/usr/src/$src.tar.xz" -C "$work" --wildcards \
			"${files[@]/#/$src/}"; then
		dpkg-deb -f "$work/deb"/*.deb Package Version |
			sed 's/^[^:]*: //' | paste -sd ' ' >"$work/$src/source"
		rm -rf "$dir"
		mv "$work/$src" "$dir" && rc=0
	else
		echo "kernel-files: cannot unpack ${files[*]} from $pkg" >&2
	fi
	rm -rf "$work"
	return $rc
}

copy_to=
case ${1:-} in
--selftest) copy_to=${2:?usage: $0 [--selftest DIR]} ;;
"") ;;
*) echo "usage: $0 [--selftest DIR]" >&2; exit 2 ;;
esac

# one fetch at a time: other checkouts may share the cache
mkdir -p "$cache/tools" && exec 9>"$cache/tools/.linux-files.lock" && flock -x 9 || exit 1
if ! complete; then
	fetch || exit 1
	complete || { echo "kernel-files: $dir is incomplete" >&2; exit 1; }
fi
if [[ -n $copy_to ]]; then
	mkdir -p "$copy_to" &&
		cp "$dir/tools/testing/selftests/kselftest_harness.h" \
			"$dir/tools/testing/selftests/kselftest.h" "$copy_to/" &&
		cp "$dir/source" "$copy_to/kselftest.source" || exit 1
fi
echo "$dir"
