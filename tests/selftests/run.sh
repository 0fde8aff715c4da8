#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/run.sh - entry point of the VM payload (busybox sh in the
# guest; see tests/vm/run-vm.sh).  Loads ext4dec, runs the selftests in a
# fresh directory of the ext4 scratch file system, unloads the module.
# Prints TAP on stdout.

set -u
dir=${EXT4DEC_MNT:?}/selftests
mkdir -p "$dir"
echo "# kernel $(uname -r), scratch file system $EXT4DEC_DEV on $EXT4DEC_MNT"
if ! modprobe ext4dec; then
	echo "TAP version 13"
	echo "not ok 1 modprobe_ext4dec"
	echo "1..1"
	exit 1
fi
dmesg | grep 'ext4dec: version' | sed 's/^/# /'
ext4dec_test "$dir"
rc=$?
grep -q '^ext4dec ' /proc/modules && { rmmod ext4dec || rc=1; }
exit $rc
