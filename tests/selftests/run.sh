#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/run.sh - entry point of the VM payload (busybox sh in the
# guest; see tests/vm/run-vm.sh).  Loads ext4dec, runs the selftests in a
# fresh directory of the ext4 scratch file system, then the conversion
# scripts' tests (unless the payload has a file no-scripts, which says
# why), and unloads the module.  Prints one TAP stream on stdout
# (tests/lib/tap.sh): the selftests' results as they come, then the
# scripts' renumbered after them, then the plan; each program's own plan
# must match its results.  (hookblock.sh runs in a boot of its own:
# tests/vm/selftests.sh.)

set -u
# shellcheck source=tests/lib/tap.sh
. ./tap.sh
dir=${EXT4DEC_MNT:?}/selftests
mkdir -p "$dir"
echo "TAP version 13"
echo "# kernel $(uname -r), scratch file system $EXT4DEC_DEV on $EXT4DEC_MNT"
if ! modprobe ext4dec; then
	echo "not ok 1 modprobe_ext4dec"
	echo "1..1"
	exit 1
fi
dmesg | grep 'ext4dec: version' | sed 's/^/# /'

# the selftests first, streamed: a hang still leaves the results so far
# shellcheck disable=SC2046 # the harness's options, split as words
{
	ext4dec_test "$dir" $(cat selftests.args 2>/dev/null)
	echo $? >/tmp/selftests.rc
} | tee /tmp/selftests.tap | grep -Ev '^(TAP version|1\.\.)'
tap_n=$(grep -Ec '^(not )?ok([[:space:]]|$)' /tmp/selftests.tap)
rc=$(cat /tmp/selftests.rc 2>/dev/null)
tap_verdict selftests /tmp/selftests.tap "${rc:-1}"

# the conversion scripts, with the module loaded again if a test unloaded it
# (unless the boot leaves them out: tests/vm/selftests.sh)
if [ -f no-scripts ]; then
	echo "# scripts: not run in this boot: $(cat no-scripts)"
else
	grep -q '^ext4dec ' /proc/modules || modprobe ext4dec
	sh ./scripts.sh >/tmp/scripts.tap 2>&1
	tap_part scripts /tmp/scripts.tap $?
fi

tap_result rmmod_at_the_end sh -c "! grep -q '^ext4dec ' /proc/modules || rmmod ext4dec"
tap_plan
exit $tap_rc
