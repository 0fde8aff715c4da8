#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/stress/run.sh - entry point of the stress payload (busybox sh in the
# guest; built and run by tests/vm/stress.sh).  Loads ext4dec and runs, on
# the ext4 scratch file system, the parts listed in ./stress.conf:
#   hostile  ext4dec_hostile on the generated files in ./hostile
#   stress   ext4dec_stress: concurrent readers, mappers, executors,
#            chattr, unlink, drop_caches, memory cgroup reclaim, rmmod
#            (its szip files from ./packed when present)
#   faults   ext4dec_faults: failslab, fail_page_alloc, fail_make_request
#            (kernels with fault injection in debugfs; skipped elsewhere)
# then unloads the module.  Prints one TAP stream on stdout, numbered
# across the parts, each part's plan checked (tests/lib/tap.sh).
# stress.conf may also set STRESS_SECONDS (the stress part's duration),
# STRESS_HOSTILE_OPTS / STRESS_FAULT_OPTS (options of those programs) and
# STRESS_FAULTS_STRICT=1 (a kernel built for fault injection: its absence
# fails instead of skipping).

set -u
STRESS_PARTS="hostile stress faults"
STRESS_SECONDS=120
STRESS_HOSTILE_OPTS=""
STRESS_FAULT_OPTS=""
STRESS_FAULTS_STRICT=0
# shellcheck disable=SC1091
[ -f ./stress.conf ] && . ./stress.conf
mnt=${EXT4DEC_MNT:?}
out=/tmp/stress-tap
# shellcheck source=tests/lib/tap.sh
. ./tap.sh

echo "TAP version 13"
echo "# kernel $(uname -r), parts: $STRESS_PARTS"

# part NAME CMD...: run one part; its TAP joins the stream (tap_part)
part() {
	name=$1
	shift
	start=$(cut -d. -f1 /proc/uptime)
	"$@" >"$out" 2>&1
	tap_part "$name" "$out" $?
	echo "# $name took $(($(cut -d. -f1 /proc/uptime) - start)) s"
}

if ! modprobe ext4dec; then
	echo "not ok 1 modprobe_ext4dec"
	echo "1..1"
	exit 1
fi

for p in $STRESS_PARTS; do
	case $p in
	hostile)
		# shellcheck disable=SC2086 # option lists
		part hostile ext4dec_hostile $STRESS_HOSTILE_OPTS ./hostile "$mnt/hostile"
		;;
	stress)
		packed=
		[ -d ./packed ] && packed="-P $PWD/packed"
		# shellcheck disable=SC2086
		part stress ext4dec_stress -t "$STRESS_SECONDS" $packed "$mnt/stress"
		;;
	faults)
		if [ -d /sys/kernel/debug/failslab ] && [ -d /sys/kernel/debug/fail_page_alloc ]; then
			# shellcheck disable=SC2086
			part faults ext4dec_faults $STRESS_FAULT_OPTS "$mnt/faults"
		elif [ "$STRESS_FAULTS_STRICT" = 1 ]; then
			tap_n=$((tap_n + 1))
			tap_rc=1
			echo "not ok $tap_n faults # no failslab/fail_page_alloc in debugfs on a fault-injection kernel"
		else
			tap_n=$((tap_n + 1))
			echo "ok $tap_n faults # SKIP no failslab/fail_page_alloc in debugfs (not a fault-injection kernel)"
		fi
		;;
	*)
		tap_n=$((tap_n + 1))
		echo "not ok $tap_n unknown_part_$p"
		tap_rc=1
		;;
	esac
done

tap_result rmmod_at_the_end sh -c "! grep -q '^ext4dec ' /proc/modules || rmmod ext4dec"
tap_plan
exit $tap_rc
