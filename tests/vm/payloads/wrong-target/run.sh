#!/bin/sh
# shellcheck shell=sh
#
# tests/vm/payloads/wrong-target/run.sh - a module built to expect another
# function for one of its hook targets (Kbuild: EXT4DEC_TEST_TARGET=
# ext4_ioctl=ext4_llseek) and to look up a symbol ext4 does not have for
# ext4_journalled_aops (EXT4DEC_TEST_SYMBOL) must refuse to load, say which
# target and symbol and why, and leave ext4 as it was: no ftrace ops, no
# kprobe, no module.  Run by tests/vm/harness.sh with that module in
# /payload/modules.

set -u
mnt=${EXT4DEC_MNT:?}
# shellcheck source=tests/lib/tap.sh
. ./tap.sh

want='ext4dec: hook ext4_llseek: ext4_file_operations.unlocked_ioctl is ext4_ioctl, not ext4_llseek$'
want_sym='ext4dec: ext4_journalled_aops not found: data=journal files cannot be recognised$'
tracing=/sys/kernel/tracing
mount -t tracefs tracefs "$tracing" 2>/dev/null

# modprobe: insmod, after the modules it needs
if modprobe ext4dec 2>/tmp/modprobe.err; then
	not_ok "the module refuses to load"
	rmmod ext4dec
else
	ok "the module refuses to load"
	sed 's/^/# /' /tmp/modprobe.err
fi
dmesg | grep 'ext4dec: ' | sed 's/^/# dmesg: /'
check "the log names the target and the reason" sh -c "dmesg | grep -q '$want'"
check "no other refusal in the log" test "$(dmesg | grep -c 'ext4dec: hook ')" = 1
check "the log names the missing symbol (fail closed: no data=journal check)" \
	sh -c "dmesg | grep -q '$want_sym'"
check "ext4dec is not loaded" sh -c "! grep -q '^ext4dec ' /proc/modules"
check "no ftrace ops on ext4's functions" sh -c "! grep ext4 $tracing/enabled_functions"
check "no kprobe on ext4's symbols" sh -c "! grep ext4 /sys/kernel/debug/kprobes/list"

f=$mnt/file
dd if=/dev/urandom of="$f" bs=64k count=4 2>/dev/null
sum1=$(sha256sum <"$f")
sync
echo 3 >/proc/sys/vm/drop_caches
check "ext4 reads a file back" test "$sum1" = "$(sha256sum <"$f")"
check "ext4 sets and reports +c" sh -c "chattr +c '$f' && lsattr '$f' | grep -q '^[^ ]*c'"
check "ext4 reads a +c file raw" test "$sum1" = "$(sha256sum <"$f")"

tap_plan
[ "$tap_fail" -eq 0 ]
