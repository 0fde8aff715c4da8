#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/cli/test_query.sh - the command line of ext4dec-query (the helper
# of ext4dec-status) on the host, where the module is not loaded: usage,
# exit codes, and errors that name the file and tell a file not on ext4
# from a missing module.  What it prints for files the module answers for
# is tested in the VM (tests/selftests/scripts.sh).  TAP 13.
#
#   tests/cli/test_query.sh [--query=PATH]
#
#   --query=PATH    program under test (default build/san/ext4dec-query,
#                   ASan/UBSan)
#
# Ends with "# query: P passed, F failed, S skipped"; exit status 1 if any
# test failed.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
query=$top/build/san/ext4dec-query
for arg in "$@"; do
	case $arg in
	--query=*) query=$(realpath "${arg#*=}") ;;
	*)
		echo "usage: $0 [--query=PATH]" >&2
		exit 2
		;;
	esac
done

# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if [[ ! -x $query ]]; then
	not_ok "ext4dec-query built"
	echo "# no $query (make build/san/ext4dec-query)"
	tap_plan
	tap_summary query
	exit 1
fi

# exits CODE PATTERN ARGS...: ext4dec-query ARGS exits CODE within 10 s,
# prints nothing on stdout unless CODE is 0, and says PATTERN
exits() {
	local code=$1 pattern=$2 rc
	shift 2
	timeout 10 "$query" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/out" "$tmp/err"
	[[ $rc == "$code" ]] || { echo "exit status $rc, expected $code"; return 1; }
	[[ $code == 0 || ! -s $tmp/out ]] || { echo "output on stdout"; return 1; }
	grep -q -- "$pattern" "$tmp/out" "$tmp/err" || { echo "no '$pattern'"; return 1; }
}

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
check "no operand is a usage error" exits 2 "no FILE"
check "an unknown option is a usage error" exits 2 "ext4dec-query: -x: unknown option" -x /etc/passwd
check "--help: the keys printed, status 0" exits 0 "chunks_inflated=N file=NAME" --help
check "--version: the project's version" exits 0 "^ext4dec-query $version\$" --version
check "a missing file is named" exits 1 "ext4dec-query: $tmp/nope: No such file or directory" "$tmp/nope"
check "-- ends the options" exits 1 "ext4dec-query: -x: No such file or directory" -- -x
ln -s /etc/passwd "$tmp/link"
check "a symbolic link is not followed" exits 1 "$tmp/link: a symbolic link" "$tmp/link"
check "a directory is refused" exits 1 "$tmp: not a regular file" "$tmp"
mkfifo "$tmp/fifo"
check "a FIFO is refused, not opened (no wait for a writer)" \
	exits 1 "$tmp/fifo: not a regular file" "$tmp/fifo"
check "a file not on ext4 is not asked" exits 1 "/proc/version: not on ext4" /proc/version
check "an error does not stop the other files" \
	exits 1 "$tmp/nope2: No such file" "$tmp/nope1" "$tmp/nope2"

# a file on ext4 here, without the module: ENOTTY, said to be that
ext4=$(mkdir -p "$top/build" && mktemp -p "$top/build" query.XXXXXX 2>/dev/null)
if [[ -z $ext4 ]]; then
	skip "on ext4 without the module: not loaded" "cannot create a file in $top/build"
elif [[ $(stat -f -c %t "$ext4") != ef53 ]]; then
	skip "on ext4 without the module: not loaded" "$top/build is not on ext4"
elif [[ -e /sys/kernel/ext4dec ]]; then
	skip "on ext4 without the module: not loaded" "ext4dec is loaded on this host"
else
	check "on ext4 without the module: not loaded" \
		exits 1 "$ext4: the ext4dec module is not loaded (ENOTTY)" "$ext4"
fi
[[ -z $ext4 ]] || rm -f "$ext4"

tap_plan
tap_summary query
[[ $tap_fail -eq 0 ]]
