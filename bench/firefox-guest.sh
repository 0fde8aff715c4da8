#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# bench/firefox-guest.sh - Firefox's cold start, in the guest (busybox sh):
# the payload's run.sh, assembled and started by bench/firefox.sh with the
# benchmark's copy of the demo image as the first --image disk.  That
# image holds /usr/lib/firefox-esr/libxul.so and, next to it, one packed
# copy per compressed configuration (libxul.so.CONFIG).
#
# /payload/config sets:
#   FF_BW         this boot's disk bandwidth label (MB/s, 0 = unthrottled)
#   FF_CONFIGS    configurations: "ext4" (the plain file) and the packed ones
#   FF_WORKLOADS  "help": firefox-esr --headless --help; "shot":
#                 firefox-esr --headless --screenshot of a local page
#   FF_REPEATS    timed runs of each workload and configuration
#   FF_TRACE      configurations whose "help" start is traced once with
#                 ftrace's function_graph after the timed runs
#   FF_RECORD     1: instead, record the order in which a plain start
#                 touches libxul.so's pages (bench/firefox-libxul.trace)
#   FF_TIMEOUT    seconds for one Firefox run
#   FF_MODPARAMS  ext4dec module parameters
#
# Each configuration is made active once (chattr +c), then put in place
# by renaming it to libxul.so, so that every run starts the same Firefox
# from the same path.  Per workload, the runs alternate between the
# configurations, in rounds, after one start that is not counted (the
# first start after boot runs on fresh memory and is faster than any
# later one).  Every run drops
# the caches first.  Result lines, as TAP diagnostics:
#   "# FIREFOX bw=B config=C workload=W rep=R rc=N s=SECONDS dev_bytes=N
#    chunks=N ubytes=N cbytes=N"
#   "# FFTRACE C FUNCTION CALLS US" (time per function, bench/graph-sum.awk)
#   "# FFRECORD FIRST COUNT" (runs of pages, with FF_RECORD=1)

set -u
FF_BW=0 FF_CONFIGS=ext4 FF_WORKLOADS=help FF_REPEATS=3 FF_TRACE='' FF_RECORD=0 FF_TIMEOUT=900 FF_MODPARAMS=''
# shellcheck disable=SC1091
[ -f /payload/config ] && . /payload/config
# shellcheck source=tests/vm/payloads/firefox/lib.sh
. /payload/lib.sh

finish() {
	unmount_all
	grep -q '^ext4dec ' /proc/modules && { rmmod ext4dec || not_ok "rmmod ext4dec"; }
	tap_plan
	[ "$tap_fail" -eq 0 ]
	exit
}

echo "TAP version 13"
echo "# kernel $(uname -r), disk $FF_BW MB/s, configurations: $FF_CONFIGS"
dev=${EXT4DEC_IMAGES%% *}
[ -n "$dev" ] || bail "no image disk (run-vm.sh --image)"
chroot_setup "$dev" || bail "$setup_error"
# shellcheck disable=SC2086 # parameters, one word each
modprobe ext4dec $FF_MODPARAMS || bail "modprobe ext4dec $FF_MODPARAMS"
cp /payload/user.js "$root/tmp/"
size=$(stat -c %s "$root$lib")
for c in $FF_CONFIGS; do
	[ "$c" = ext4 ] && continue
	f=$root$lib.$c
	chattr +c "$f" || bail "chattr +c $f"
	[ "$(stat -c %s "$f")" = "$size" ] || bail "$f is not active after chattr +c"
done
ok "image mounted, ext4dec loaded, $FF_CONFIGS ready"

# use CONFIG: put libxul.so of CONFIG in place
cur=ext4
use() {
	[ "$1" = "$cur" ] && return 0
	mv "$root$lib" "$root$lib.$cur" && mv "$root$lib.$1" "$root$lib" && cur=$1
}
dev_sectors() { awk '{ print $3 }' "/sys/block/${dev#/dev/}/stat"; }

# start WORKLOAD: one cold start of Firefox; sets rc, secs
start() {
	rm -rf "$root/tmp/profile" "$root/tmp/shot.png"
	mkdir -p "$root/tmp/profile"
	cp "$root/tmp/user.js" "$root/tmp/profile/"
	drop_caches
	t0=$(now)
	case $1 in
	help)
		in_root MOZ_CRASHREPORTER_DISABLE=1 timeout -k 10 "$FF_TIMEOUT" \
			firefox-esr --headless --help >/tmp/ff.out 2>&1
		rc=$?
		[ "$rc" -ne 0 ] || grep -q '^Usage: firefox' /tmp/ff.out || rc=99
		;;
	shot)
		in_root MOZ_CRASHREPORTER_DISABLE=1 timeout -k 10 "$FF_TIMEOUT" \
			firefox-esr --headless --no-remote --profile /tmp/profile \
			--window-size 800,600 --screenshot /tmp/shot.png file:///tmp/page.html \
			>/tmp/ff.out 2>&1
		rc=$?
		[ "$rc" -ne 0 ] || [ -s "$root/tmp/shot.png" ] || rc=99
		;;
	esac
	secs=$(since "$t0")
}

# measure WORKLOAD CONFIG REP: a start with its figures
measure() {
	s0=$(dev_sectors)
	c0=$(counters)
	start "$1"
	echo "# FIREFOX bw=$FF_BW config=$2 workload=$1 rep=$3 rc=$rc s=$secs" \
		"dev_bytes=$((($(dev_sectors) - s0) * 512)) chunks=$(delta "$c0" chunks_inflated)" \
		"ubytes=$(delta "$c0" uncompressed_bytes) cbytes=$(delta "$c0" compressed_bytes)"
	if [ "$rc" -ne 0 ]; then
		not_ok "$2: firefox-esr $1 (exit $rc after $secs s)"
		tail -n 20 /tmp/ff.out | diag
		return 1
	fi
	# the screenshot must not depend on the configuration
	if [ "$1" = shot ]; then
		if [ ! -f /tmp/shot-ref.png ]; then
			cp "$root/tmp/shot.png" /tmp/shot-ref.png
		elif ! cmp -s "$root/tmp/shot.png" /tmp/shot-ref.png &&
			! ext4dec_demo pngcmp "$root/tmp/shot.png" /tmp/shot-ref.png >/tmp/pngcmp.out 2>&1; then
			not_ok "$2: the screenshot differs from the first one: $(cat /tmp/pngcmp.out)"
			return 1
		fi
	fi
}

if [ "$FF_RECORD" = 1 ]; then
	# Readahead off: each page is added to the page cache when it is
	# first touched, in that order.
	T=/sys/kernel/tracing
	mount -t tracefs tracefs "$T" 2>/dev/null
	ev=$T/events/filemap/mm_filemap_add_to_page_cache
	[ -d "$ev" ] || bail "no mm_filemap_add_to_page_cache tracepoint"
	ra=/sys/block/${dev#/dev/}/queue/read_ahead_kb
	old=$(cat "$ra")
	echo 0 >"$ra"
	echo 65536 >"$T/buffer_size_kb"
	echo "i_ino == $(stat -c %i "$root$lib")" >"$ev/filter"
	echo 1 >"$ev/enable"
	: >"$T/trace"
	start help
	echo 0 >"$ev/enable"
	echo "$old" >"$ra"
	[ "$rc" -eq 0 ] || bail "firefox-esr --help while recording (exit $rc)"
	# "ofs=BYTES" of each page, in order, as runs of consecutive pages
	sed -n 's/.* ofs=\([0-9]*\).*/\1/p' "$T/trace" | awk '
		{ p = $1 / 4096 }
		n && p == first + n { n++; next }
		n { print "# FFRECORD " first " " n }
		{ first = p; n = 1 }
		END { if (n) print "# FFRECORD " first " " n }'
	ok "recorded libxul.so's page order ($(grep -c ofs= "$T/trace") pages, $secs s)"
	finish
fi

for w in $FF_WORKLOADS; do
	# one start that is not counted, then rounds of every configuration
	use ext4 || bail "cannot put ext4 in place"
	start "$w"
	[ "$rc" -eq 0 ] || bail "the first firefox-esr $w failed (exit $rc)"
	rep=1
	while [ "$rep" -le "$FF_REPEATS" ]; do
		for c in $FF_CONFIGS; do
			use "$c" || bail "cannot put $c in place"
			measure "$w" "$c" "$rep"
		done
		rep=$((rep + 1))
	done
done
ok "timed starts: $FF_REPEATS of each of $FF_WORKLOADS, configurations $FF_CONFIGS"

# Where a start's time goes: function_graph durations of the fault and
# read paths, summed per function (bench/graph-sum.awk).
T=/sys/kernel/tracing
for c in $FF_TRACE; do
	mount -t tracefs tracefs "$T" 2>/dev/null
	[ -f "$T/set_graph_function" ] || bail "no function_graph tracer"
	use "$c" || bail "cannot put $c in place"
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo 131072 >"$T/buffer_size_kb"
	# what a fault on libxul.so, or the workers, spend their time in:
	# only these functions are recorded, at any depth
	graph='filemap_fault ext4dec_fault ext4dec_readahead ext4dec_read_folio ext4dec_ra_batch_finish'
	echo "$graph" >"$T/set_graph_function"
	for f in $graph ext4dec_read_chunk page_cache_ra_unbounded page_cache_ra_order \
		page_cache_async_ra ext4dec_decode_chunk wait_for_completion_io io_schedule \
		filemap_alloc_folio filemap_alloc_folio_noprof filemap_add_folio; do
		echo "$f" >>"$T/set_ftrace_filter" 2>/dev/null
	done
	echo 1 >"$T/options/funcgraph-tail"
	echo function_graph >"$T/current_tracer"
	: >"$T/trace"
	echo 1 >"$T/tracing_on"
	start help
	echo 0 >"$T/tracing_on"
	awk -v n="$c" -f /payload/graph-sum.awk "$T/trace" | sed 's/^TRACE /# FFTRACE /'
	echo "# FFTRACE $c total_s 1 $secs"
	for s in "$T"/per_cpu/cpu*/stats; do
		o=$(awk '$1 == "overrun:" { print $2 }' "$s")
		[ "${o:-0}" = 0 ] || echo "# FFTRACE $c overrun 1 $o"
	done
	echo nop >"$T/current_tracer"
	: >"$T/set_graph_function"
	: >"$T/set_ftrace_filter"
	echo 1408 >"$T/buffer_size_kb"
	[ "$rc" -eq 0 ] || not_ok "$c: traced firefox-esr --help (exit $rc)"
done
[ -z "$FF_TRACE" ] || ok "traced starts: $FF_TRACE"
use ext4 || bail "cannot put the plain libxul.so back"
if [ "$(cat /sys/kernel/ext4dec/read_errors)" = 0 ]; then
	ok "no read errors"
else
	not_ok "read_errors = $(cat /sys/kernel/ext4dec/read_errors)"
fi
finish
