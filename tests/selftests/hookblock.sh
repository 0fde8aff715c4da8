#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/hookblock.sh - ext4dec's load fails cleanly when one of
# the functions it hooks is already redirected (a livepatch of it, another
# module): hookblock.ko (tests/selftests/hookblock/) claims the function
# with ftrace's IPMODIFY, and then
#   - modprobe ext4dec fails with EBUSY, and the log names that function
#     once, with no other hook error;
#   - nothing is left: no module, no ftrace ops or kprobe on ext4 but
#     hookblock's, and no inode was ever active: a +c szip file stat'ed
#     and opened in a loop by a background process all along the load
#     reads as its szip bytes, during the load and after it;
#   - once hookblock is gone, ext4dec loads and serves the files
#     decompressed.
#
# The functions blocked: ext4_file_open, the last hook installed
# (enum ext4dec_target): every other hook, ext4_file_getattr's included,
# is in when it fails, and the background stat and open would activate the
# file were activations not held until all hooks are in; and
# ext4_evict_inode, the first one installed now, and the last one when the
# hooks went in from open to evict: the open hook had activated the file
# by the time it failed, and the freed module's operations stayed in use.
#
# The payload of a boot of its own (tests/vm/selftests.sh), with
# ext4dec.ko and hookblock.ko built for the kernel, neither loaded; a
# missing hookblock.ko is a failure, not a skip.  Prints TAP; exit 1 if a
# test failed.

set -u
# shellcheck source=tests/lib/tap.sh
. ./tap.sh
tap_sep= # "ok N name", as the selftests before these in the stream
dir=${EXT4DEC_MNT:?}/hookblock
tracing=/sys/kernel/tracing
targets="ext4_file_open ext4_evict_inode"
busy='redirected already (a livepatch, another module) or ftrace off (register_ftrace_function: -EBUSY)'
sha() { sha256sum <"$1" | cut -d' ' -f1; }
loaded() { grep -q "^$1 " /proc/modules; }

echo "TAP version 13"
mount -t tracefs tracefs "$tracing" 2>/dev/null
if loaded ext4dec || ! modinfo hookblock >/dev/null 2>&1; then
	loaded ext4dec && echo "# ext4dec is loaded: the load cannot be tested"
	modinfo hookblock >/dev/null 2>&1 ||
		echo "# no hookblock.ko: tests/vm/selftests.sh builds it (--module-src tests/selftests/hookblock)"
	not_ok "hookblock_setup"
	tap_plan
	exit 1
fi

rm -rf "$dir"
mkdir -p "$dir"
# the original starts with a line the szip file cannot start with
{
	echo "hookblock original"
	seq 1 40000
} >"$dir/orig"
szip -q -o "$dir/orig.sz" "$dir/orig" || echo "# szip failed"
orig_sha=$(sha "$dir/orig") sz_sha=$(sha "$dir/orig.sz")
sz_size=$(stat -c %s "$dir/orig.sz")

# probe FILE STOP: stat and open FILE until STOP exists (builtins only: no
# fork between two tries), then print the tries and the decompressed
# reads; FILE.started once the first try is done
probe() {
	n=0 bad=0
	while [ ! -e "$2" ]; do
		[ -s "$1" ] # stat(): ext4_file_getattr
		IFS= read -r line <"$1" # open() and read(): ext4_file_open
		case $line in
		"hookblock original") bad=$((bad + 1)) ;;
		esac
		n=$((n + 1))
		[ "$n" -eq 1 ] && : >"$1.started"
	done
	echo "$n $bad"
}

# raw FILE: FILE reads as the szip file, size and bytes, also from disk
raw() {
	[ "$(stat -c %s "$1")" = "$sz_size" ] || { echo "size $(stat -c %s "$1")"; return 1; }
	[ "$(sha "$1")" = "$sz_sha" ] || { echo "not the szip bytes"; return 1; }
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(sha "$1")" = "$sz_sha" ] || { echo "not the szip bytes after drop_caches"; return 1; }
}

# only_ops [NAME]: no ftrace ops on ext4's functions but on NAME, no
# kprobe on ext4's symbols
only_ops() {
	grep '^ext4' "$tracing/enabled_functions" >/tmp/hookblock.ops
	if [ -n "${1:-}" ]; then
		grep -q "^$1 " /tmp/hookblock.ops || { echo "no ops on $1"; return 1; }
	fi
	if grep -v "^${1:-}[ (]" /tmp/hookblock.ops; then
		echo "ftrace ops left on ext4's functions"
		return 1
	fi
	if grep ext4 /sys/kernel/debug/kprobes/list 2>/dev/null; then
		echo "kprobes left on ext4's symbols"
		return 1
	fi
}

# load_fails TARGET: modprobe ext4dec fails with EBUSY while a background
# probe stats and opens FILE; the probe never saw it decompressed
load_fails() {
	rm -f "$f.stop" "$f.started"
	probe "$f" "$f.stop" >/tmp/hookblock.probe &
	pid=$!
	i=0
	while [ ! -e "$f.started" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	modprobe ext4dec >/tmp/hookblock.out 2>&1
	rc=$?
	: >"$f.stop"
	wait "$pid"
	cat /tmp/hookblock.out
	# shellcheck disable=SC2046 # two numbers
	set -- $(cat /tmp/hookblock.probe) x x
	echo "probe: $1 stats and opens, $2 of them decompressed"
	[ "$rc" -ne 0 ] || { echo "modprobe ext4dec succeeded"; rmmod ext4dec; return 1; }
	grep -q 'Device or resource busy' /tmp/hookblock.out || { echo "not EBUSY"; return 1; }
	if [ "$1" = x ] || [ "$1" -eq 0 ]; then
		echo "no stat or open by the probe (killed?)"
		return 1
	fi
	[ "$2" -eq 0 ] || { echo "the file was read decompressed"; return 1; }
}

# logged TARGET HOOK-ERRORS-BEFORE: one more hook error, the busy TARGET
logged() {
	dmesg | grep 'ext4dec: hook ' | tail -n +$(($2 + 1)) >/tmp/hookblock.log
	cat /tmp/hookblock.log
	[ "$(wc -l </tmp/hookblock.log)" -eq 1 ] || { echo "not one hook error"; return 1; }
	grep -qF "ext4dec: hook $1: $busy" /tmp/hookblock.log
}

# serves: ext4dec loads and serves the files decompressed, and unloads
serves() {
	modprobe ext4dec || return 1
	for t in $targets; do
		[ "$(sha "$dir/$t")" = "$orig_sha" ] || echo "$t: not decompressed"
	done >/tmp/hookblock.serves
	rmmod ext4dec || return 1
	! grep . /tmp/hookblock.serves || return 1
	for t in $targets; do
		raw "$dir/$t" || return 1
	done
}

for t in $targets; do
	f=$dir/$t
	cp "$dir/orig.sz" "$f"
	chattr +c "$f"
	errors=$(dmesg | grep -c 'ext4dec: hook ')
	check "hookblock_${t}_claimed" sh -c "modprobe hookblock target=$t && grep -q '^$t ' $tracing/enabled_functions"
	loaded hookblock || continue
	check "hookblock_${t}_load_fails_ebusy_nothing_activated" load_fails "$t"
	echo "# $t: the probe's stats and opens, and how many read decompressed: $(cat /tmp/hookblock.probe)"
	check "hookblock_${t}_logged_once" logged "$t" "$errors"
	check "hookblock_${t}_nothing_left" sh -c "! grep -q '^ext4dec ' /proc/modules && [ ! -e /sys/module/ext4dec ]"
	check "hookblock_${t}_no_ops_but_hookblocks" only_ops "$t"
	check "hookblock_${t}_file_reads_raw" raw "$f"
	check "hookblock_${t}_rmmod" rmmod hookblock
	check "hookblock_${t}_no_ops_left" only_ops
done
check "hookblock_then_ext4dec_serves_the_files" serves
# every "redirected already" line in the log is one of these loads
n=$(dmesg | grep -cF "$busy")
check "hookblock_no_other_busy_hook_in_log" test "$n" -eq "$(echo "$targets" | wc -w)"
rm -rf "$dir"
tap_plan
[ "$tap_fail" -eq 0 ]
