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
# the conversion scripts, with the module loaded again if a test unloaded it
grep -q '^ext4dec ' /proc/modules || modprobe ext4dec
sh ./scripts.sh | sed -e 's/^TAP version 13$//' -e '/^$/d' -e 's/^1\.\./# scripts: 1../' \
	-e 's/^\(not \)*ok \([0-9]*\) /\1ok S\2 /' || rc=1
grep -q '^ext4dec ' /proc/modules && { rmmod ext4dec || rc=1; }
exit $rc
