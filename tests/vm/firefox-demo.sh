#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/firefox-demo.sh - Firefox from a compressed libxul.so, in QEMU
# (make demo), or the lighter check of make check (--quick).
#
# Usage: tests/vm/firefox-demo.sh [--quick] [-k SERIES] [--compress-opts OPTS]
#
#   --quick               instead of screenshots, run "firefox-esr
#                         --headless --help" before and after converting
#                         libxul.so (Firefox loads it with its dependencies
#                         and runs its code) and compare the output; check
#                         a whole-file mmap (the check make check runs)
#   -k, --kernel SERIES   guest kernel (default 6.12)
#   --compress-opts OPTS  ext4dec-compress options for libxul.so
#                         (default "-6", with --quick "-1"; see README)
#   -h, --help
#
# Builds (or finds in the cache) the Debian image with
# scripts/build-demo-image.sh, builds ext4dec for the kernel, and runs
# tests/vm/payloads/firefox in the guest with the image as /dev/vdb (a
# throwaway overlay: the cached image is never modified).  Needs
# tools/szip/szip, tools/ext4dec-query/ext4dec-query and
# build/demo/ext4dec_demo (make builds them).
#
# Output: the payload's TAP, the harness's verdict, then one line
# "# NAME: P passed, F failed, S skipped" (NAME: firefox, or libxul with
# --quick).  Logs in build/demo/<NAME>/; the screenshots, when taken, are
# copied to build/demo/firefox/{before,after}.png.  Exit 1 on any failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
# shellcheck source=tests/vm/suite.sh
. tests/vm/suite.sh

usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit "${1:-0}"
}

mode=full kernel=6.12 compress_opts=
while [[ $# -gt 0 ]]; do
	case $1 in
	--quick) mode=quick; shift ;;
	-k | --kernel) [[ $# -ge 2 ]] || usage 2 >&2; kernel=$2; shift 2 ;;
	--compress-opts) [[ $# -ge 2 ]] || usage 2 >&2; compress_opts=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "firefox-demo: unknown argument: $1" >&2; usage 2 >&2 ;;
	esac
done
# szip level 6: 7 times faster than the default 9 on libxul.so, 2% larger
# (README); the quick check only needs a valid file: level 1.
if [[ $mode == full ]]; then
	name=firefox timeout=2400 compress_opts=${compress_opts:--6}
else
	name=libxul timeout=1200 compress_opts=${compress_opts:--1}
fi

fail() {
	echo "# firefox-demo: $*"
	echo "# $name: 0 passed, 1 failed, 0 skipped"
	exit 1
}

for f in tools/szip/szip tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs \
	tools/ext4dec-query/ext4dec-query build/demo/ext4dec_demo; do
	[[ -x $f ]] || fail "$f is missing (make tool build/demo/ext4dec_demo)"
done

start=$SECONDS
image=$(scripts/build-demo-image.sh) || fail "scripts/build-demo-image.sh failed"
image_time=$((SECONDS - start))

work=build/demo/$name
rm -rf "$work"
mkdir -p "$work/payload/bin"
suite_module_src "$work/module-src"
cp tests/vm/payloads/firefox/run.sh tests/vm/payloads/firefox/lib.sh \
	tests/vm/payloads/firefox/page.html \
	tests/vm/payloads/firefox/user.js "$work/payload/"
cp -L scripts/ext4dec-compress tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs "$work/payload/bin/"
{
	printf 'DEMO_MODE=%q\n' "$mode"
	printf 'DEMO_COMPRESS_OPTS=%q\n' "$compress_opts"
	printf 'DEMO_LIBXUL_SHA256=%q\n' "$(sed -n 's/^libxul_sha256=//p' "$(dirname "$image")/info")"
} >"$work/payload/config"

vm_start=$SECONDS
tests/vm/run-vm.sh -k "$kernel" -p "$work/payload" --module-src "$work/module-src" \
	--bin tools/szip/szip --bin tools/ext4dec-query/ext4dec-query \
	--bin build/demo/ext4dec_demo --image "$image" \
	--mem 3072 -t "$timeout" --keep -o "$work/run" >"$work/tap" 2>"$work/log"
rc=$?
vm_time=$((SECONDS - vm_start))
cat "$work/tap"
grep -E '^ext4dec-vm: (kernel:|boot|  |result|error)' "$work/log"

# The screenshots, from the scratch disk the payload copied them to.
if [[ $mode == full && -f $work/run/scratch.img ]]; then
	for f in before.png after.png; do
		debugfs -R "dump /firefox/$f $work/$f" "$work/run/scratch.img" >/dev/null 2>&1 &&
			[[ -s $work/$f ]] && echo "# screenshot: $work/$f"
	done
fi
rm -f "$work/run/scratch.img" "$work/run/initrd.cpio"

p=$(grep -E '^ok ' "$work/tap" | grep -vc '# SKIP')
f=$(grep -c '^not ok' "$work/tap")
s=$(grep -E '^ok ' "$work/tap" | grep -c '# SKIP')
[[ $rc -eq 0 || $f -gt 0 ]] || f=1
echo "# image $image_time s, VM $vm_time s, total $((SECONDS - start)) s"
echo "# $name: $p passed, $f failed, $s skipped"
[[ $f -eq 0 ]]
