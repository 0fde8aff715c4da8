#!/bin/sh
# shellcheck shell=sh
#
# bench/overhead/run.sh - the guest's side of bench/overhead.sh: what the
# module costs files that are not compressed, and what activating a file
# with the largest tables costs a stat.  Prints benchio's BENCH lines as
# TAP diagnostics ("# BENCH ...").

set -u
mnt=${EXT4DEC_MNT:?}
rounds=${OVERHEAD_ROUNDS:-3}
reads=${OVERHEAD_READS:-100000}
# shellcheck source=tests/lib/tap.sh
. ./tap.sh

bench() { benchio "$@" | sed 's/^/# /'; }

plain=$mnt/plain
dd if=/dev/urandom of="$plain" bs=1M count=64 2>/dev/null
sync
check "plain file written" test -s "$plain"

# cached reads of a plain file, without and with the module, alternately
for r in $(seq "$rounds"); do
	for m in without with; do
		[ "$m" = with ] && modprobe ext4dec
		bench -t "plain-seq|$m|$r" seq "$plain" >/dev/null
		bench -t "plain-seq|$m|$r" seq "$plain"
		bench -t "plain-rand|$m|$r" rand "$plain" "$reads"
		bench -t "plain-stat|$m|$r" -c exec stat "$plain" >/dev/null
		bench -t "plain-stat|$m|$r" -c exec stat "$plain"
		[ "$m" = with ] && rmmod ext4dec
	done
done
check "the module loads and unloads" sh -c '! grep -q "^ext4dec " /proc/modules'

# the largest tables: an inode activated by a stat after drop_caches
modprobe ext4dec
cp /payload/tables.sz "$mnt/tables"
sync
check "chattr +c on the file with the largest tables" chattr +c "$mnt/tables"
for r in $(seq "$rounds"); do
	bench -t "tables-stat|cold|$r" -c exec stat "$mnt/tables"
done
check "stat shows the uncompressed size" \
	test "$(stat -c %s "$mnt/tables")" = "$(cat /payload/tables.size)"
tap_plan
[ "$tap_fail" -eq 0 ]
