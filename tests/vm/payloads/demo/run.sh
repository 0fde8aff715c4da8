#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/payloads/demo/run.sh - the demo (make demo), inside the VM:
# compress a real shared library (the guest's libc.so.6) with szip,
# activate it with chattr +c, run a program against it, and show sizes,
# a checksum comparison and the module's counters.

set -u
mnt=${EXT4DEC_MNT:?}
lib=/lib/x86_64-linux-gnu/libc.so.6
[ -r "$lib" ] || lib=/usr/lib/x86_64-linux-gnu/libc.so.6
# shellcheck source=tests/lib/tap.sh
. ./tap.sh
fail() {
	not_ok "$*"
	tap_plan
	exit 1
}

echo "TAP version 13"
echo "# kernel $(uname -r)"
modprobe ext4dec || fail "modprobe ext4dec"
dmesg | grep 'ext4dec: version' | sed 's/^/# /'
ok "module loaded"

mkdir -p "$mnt/demo"
cp "$lib" "$mnt/demo/libc.so.6.orig"
szip -v --filter=x86 -o "$mnt/demo/libc.so.6" "$mnt/demo/libc.so.6.orig" 2>&1 |
	sed 's/^/# /'
echo "# on disk before chattr +c:"
ls -ls "$mnt/demo" | sed 's/^/#   /'
chattr +c "$mnt/demo/libc.so.6" || fail "chattr +c"
lsattr "$mnt/demo/libc.so.6" | sed 's/^/# /'
echo "# after chattr +c (ls -ls: blocks on disk, then the size programs see):"
ls -ls "$mnt/demo" | sed 's/^/#   /'
ok "activated with chattr +c"

echo 3 >/proc/sys/vm/drop_caches
a=$(sha256sum <"$mnt/demo/libc.so.6.orig" | cut -d' ' -f1)
b=$(sha256sum <"$mnt/demo/libc.so.6" | cut -d' ' -f1)
echo "# sha256 original   $a"
echo "# sha256 compressed $b (read through ext4dec)"
[ "$a" = "$b" ] || fail "checksums differ"
ok "read() returns the original bytes"

echo 3 >/proc/sys/vm/drop_caches
LD_LIBRARY_PATH="$mnt/demo" busybox sh -c "grep -q '$mnt/demo/libc.so.6' /proc/\$\$/maps && echo '# ld.so mapped the compressed libc.so.6: '\$(grep -c libc.so.6 /proc/\$\$/maps)' mappings'" ||
	fail "program did not load the compressed library"
LD_LIBRARY_PATH="$mnt/demo" busybox uname -a | sed 's/^/# program output: /'
ok "a program runs against the compressed library"

echo "# /sys/kernel/ext4dec:"
for f in /sys/kernel/ext4dec/*; do
	[ -f "$f" ] && echo "#   $(basename "$f") = $(cat "$f")"
done
for f in /sys/kernel/ext4dec/refusals/*; do
	v=$(cat "$f")
	[ "$v" = 0 ] || echo "#   refusals/$(basename "$f") = $v"
done
rmmod ext4dec || fail "rmmod"
echo "# after rmmod the file is its raw szip bytes again:"
ls -ls "$mnt/demo/libc.so.6" | sed 's/^/#   /'
ok "module unloaded"
tap_plan
