#!/bin/sh
# shellcheck shell=sh
#
# tests/vm/payloads/smoke/run.sh - smoke test of the VM harness itself.
#
# Runs inside the guest (busybox sh) with the scratch ext4 file system
# mounted at $EXT4DEC_MNT; prints TAP on stdout.  Checks that ext4, the real
# e2fsprogs tools and kmod work, and loads/unloads every module the harness
# put in /payload/modules (run-vm.sh --module-src/--ko).
#
#   tests/vm/run-vm.sh -k 6.1 -p tests/vm/payloads/smoke [--module-src DIR]

set -u
mnt=${EXT4DEC_MNT:?}
# shellcheck source=tests/lib/tap.sh
. ./tap.sh

echo "# kernel $(uname -r) ($EXT4DEC_KVER), scratch $EXT4DEC_DEV on $mnt"

check "running the expected kernel" test "$(uname -r)" = "$EXT4DEC_KVER"
check "scratch disk is mounted as ext4" grep -q " $mnt ext4 " /proc/mounts

f=$mnt/file
check "write 1 MiB of random data" dd if=/dev/urandom of="$f" bs=64k count=16
sum1=$(sha256sum <"$f" | cut -d' ' -f1)
sync
echo 3 >/proc/sys/vm/drop_caches
sum2=$(sha256sum <"$f" | cut -d' ' -f1)
check "sha256 is stable across drop_caches" test "$sum1" = "$sum2"
echo "# sha256 $sum1"

check "chattr +c (e2fsprogs chattr)" chattr +c "$f"
attrs=$(lsattr "$f" | cut -d' ' -f1)
echo "# lsattr: $attrs"
check "lsattr shows the c flag" sh -c "echo '$attrs' | grep -q c"
check "mke2fs is the real one" sh -c "mke2fs -V 2>&1 | grep -q 'EXT2FS Library'"
check "modprobe is kmod" sh -c "modprobe --version | grep -q kmod"
check "busybox env/timeout run kmod too" sh -c "timeout 10 env modprobe --version | grep -q kmod"

for ko in /payload/modules/*.ko /payload/modules/*.ko.xz; do
	[ -f "$ko" ] || continue
	name=$(basename "$ko")
	name=${name%%.ko*}
	check "modprobe $name" modprobe "$name"
	check "$name is listed by lsmod" sh -c "lsmod | grep -q '^$(echo "$name" | tr - _) '"
	check "rmmod $name" rmmod "$name"
done

tap_plan
[ "$tap_fail" -eq 0 ]
