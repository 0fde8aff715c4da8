#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# bench/guest-init.sh - /init (PID 1) of the benchmark VM (busybox sh).
#
# Copied into the initramfs by bench/run-bench.sh, with /etc/bench.conf:
#   BENCH_MODE       "fill": copy the data from the ext4 disk onto the btrfs
#                    disks (compressed on write), report compsize; "measure":
#                    run the workloads
#   BENCH_BW         label of this boot's disk bandwidth (MB/s, 0 = unlimited)
#   BENCH_DISKS      lines "NAME KIND OPTIONS CHUNK": one per disk, found by
#                    its virtio serial number NAME
#   BENCH_FILES      data file names; BENCH_SIZES their sizes; BENCH_MAIN the
#                    file of the random, mmap and decode workloads;
#                    BENCH_ALL_FILES=1: sequential reads of every file, else
#                    of BENCH_MAIN only
#   BENCH_REPEATS, BENCH_RAND (random reads per run, 0 = none),
#   BENCH_MMAP (1 = mmap workload, and for libxul.so the replay of
#   Firefox's page order, bench/firefox-libxul.trace), BENCH_DECODE (1 = userspace decode of
#   the szip files), BENCH_SUM (1 = checksum every file), BENCH_TRACE
#   (szip configurations whose cold read of BENCH_MAIN is traced once with
#   ftrace's function_graph, after the timed runs), BENCH_MODULES
#
# Results go to ttyS1 (host: results.log): benchio's "BENCH ..." and
# "SUM ..." lines, "COMPSIZE NAME FILE BYTES", "PROGRESS ...",
# "ERROR ..." and a last line "END errors=N".  Kernel messages stay on the
# console (ttyS0).

PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /mnt
mount -t tmpfs tmpfs /tmp

exec 3>/dev/ttyS1 || exec 3>/dev/console
out() { echo "$*" >&3; }
# progress MSG: a PROGRESS line with the guest's uptime
progress() { out "PROGRESS [$(cut -d" " -f1 /proc/uptime)s] $*"; }
log() { echo "bench-guest: $*" >/dev/console; }
errors=0
err() {
	out "ERROR $*"
	log "error: $*"
	errors=$((errors + 1))
}
finish() {
	sync
	out "END errors=$errors"
	exec 3>&-
	poweroff -f
	sleep 100000
}

# shellcheck disable=SC1091
. /etc/bench.conf
out "BEGIN mode=$BENCH_MODE bw=$BENCH_BW kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

for m in $BENCH_MODULES; do
	modprobe "$m" >/dev/console 2>&1 || err "modprobe $m failed"
done

# dev_of NAME: the vdX whose virtio serial number is NAME
dev_of() {
	for d in /sys/block/vd*; do
		[ "$(cat "$d/serial" 2>/dev/null)" = "$1" ] && {
			echo "${d##*/}"
			return 0
		}
	done
	return 1
}

# size_of FILE: expected size of data file FILE (the lists are parallel)
size_of() {
	i=0
	# shellcheck disable=SC2086 # word lists
	for f in $BENCH_FILES; do
		i=$((i + 1))
		[ "$f" = "$1" ] && break
	done
	# shellcheck disable=SC2086
	echo $BENCH_SIZES | cut -d' ' -f"$i"
}

# Mount every disk under /mnt/NAME; activate the szip files.
disks=''
echo "$BENCH_DISKS" >/tmp/disks
while read -r name kind opts chunk; do
	[ -n "$name" ] || continue
	i=0
	while ! dev=$(dev_of "$name"); do
		i=$((i + 1))
		[ $i -gt 100 ] && break
		sleep 0.1
	done
	if [ -z "$dev" ]; then
		err "no disk with serial $name"
		continue
	fi
	mkdir -p "/mnt/$name"
	case $kind in
	ext4) if [ "$BENCH_MODE" = fill ]; then mo=ro; else mo=noatime; fi ;;
	szip) mo=noatime ;;
	squashfs | erofs) mo=ro ;;
	btrfs) if [ "$BENCH_MODE" = fill ]; then mo=$opts; else mo=ro; fi ;;
	*) err "$name: unknown kind $kind"; continue ;;
	esac
	fs=$kind
	[ "$kind" = szip ] && fs=ext4
	if ! mount -t "$fs" -o "$mo" "/dev/$dev" "/mnt/$name" >/dev/console 2>&1; then
		err "mount -t $fs -o $mo /dev/$dev ($name) failed"
		continue
	fi
	if [ "$kind" = szip ]; then
		for f in $BENCH_FILES; do
			chattr +c "/mnt/$name/$f" >/dev/console 2>&1 || err "chattr +c $name/$f failed"
			s=$(stat -c %s "/mnt/$name/$f")
			[ "$s" = "$(size_of "$f")" ] ||
				err "$name/$f: size $s after chattr +c, expected $(size_of "$f") (not active?)"
		done
	fi
	disks="$disks $name:$kind:$dev:$chunk"
done </tmp/disks

if [ "$BENCH_MODE" = fill ]; then
	src=''
	for d in $disks; do
		case $d in *:ext4:*) src=/mnt/${d%%:*} ;; esac
	done
	[ -n "$src" ] || err "fill: no ext4 disk to copy from"
	for d in $disks; do
		name=${d%%:*}
		case $d in *:btrfs:*) ;; *) continue ;; esac
		progress "filling $name"
		for f in $BENCH_FILES; do
			cp "$src/$f" "/mnt/$name/$f" || err "cp $f to $name failed"
		done
		sync
		for f in $BENCH_FILES; do
			benchio -t "$name|$f" sum "/mnt/$name/$f" >&3 || err "sum $name/$f failed"
			b=$(compsize -b "/mnt/$name/$f" 2>/dev/console | awk '$1 == "TOTAL" { print $3 }')
			out "COMPSIZE $name $f ${b:-?}"
		done
		umount "/mnt/$name" || err "umount $name failed"
	done
	finish
fi

# --- measure -------------------------------------------------------------------
# Userspace decode of the same szip files (BENCH_DECODE=1), interleaved
# with the kernel's reads so that both see the same conditions: the raw
# bytes are copied to tmpfs with each file inactive (chattr -c), then it
# is made active again.
if [ "$BENCH_DECODE" = 1 ]; then
	for d in $disks; do
		case $d in *:szip:*) ;; *) continue ;; esac
		name=${d%%:*}
		f=/mnt/$name/$BENCH_MAIN
		if ! { chattr -c "$f" && cp "$f" "/tmp/$name.sz" && chattr +c "$f"; }; then
			err "cannot copy the raw bytes of $name/$BENCH_MAIN"
		fi
	done
fi
benchio drop
rep=1
while [ "$rep" -le "$BENCH_REPEATS" ]; do
	for d in $disks; do
		name=${d%%:*}
		rest=${d#*:}
		dev=${rest#*:}
		chunk=${dev#*:}
		dev=${dev%%:*}
		progress "bw=$BENCH_BW rep=$rep/$BENCH_REPEATS $name"
		seqfiles=$BENCH_MAIN
		[ "$BENCH_ALL_FILES" = 1 ] && seqfiles=$BENCH_FILES
		for f in $seqfiles; do
			t="$BENCH_BW|$name|$f|$rep"
			benchio -c -d "$dev" -t "$t" seq "/mnt/$name/$f" >&3 || err "seq $t"
			benchio -d "$dev" -t "$t" seq "/mnt/$name/$f" >&3 || err "warm seq $t"
		done
		f=$BENCH_MAIN
		t="$BENCH_BW|$name|$f|$rep"
		# the splice path (sendfile, as cat and cp copy), ext4 and ext4dec
		case $rest in ext4:* | szip:*)
			benchio -c -d "$dev" -t "$t" sendfile "/mnt/$name/$f" >&3 || err "sendfile $t" ;;
		esac
		if [ "$BENCH_RAND" -gt 0 ]; then
			benchio -c -d "$dev" -k "$chunk" -t "$t" rand "/mnt/$name/$f" "$BENCH_RAND" >&3 || err "rand $t"
			benchio -d "$dev" -k "$chunk" -t "$t" rand "/mnt/$name/$f" "$BENCH_RAND" >&3 || err "warm rand $t"
		fi
		if [ "$BENCH_MMAP" = 1 ]; then
			benchio -c -d "$dev" -t "$t" mmap "/mnt/$name/$f" >&3 || err "mmap $t"
			benchio -d "$dev" -t "$t" mmap "/mnt/$name/$f" >&3 || err "warm mmap $t"
		fi
		# the page order of Firefox's start (bench/firefox-libxul.trace)
		if [ "$BENCH_MMAP" = 1 ] && [ "$f" = libxul.so ]; then
			benchio -c -d "$dev" -k "$chunk" -t "$t" replay "/mnt/$name/$f" \
				/etc/firefox-libxul.trace >&3 || err "replay $t"
		fi
		if [ -f "/tmp/$name.sz" ]; then
			benchio -t "$t" exec szip -t "/tmp/$name.sz" >&3 || err "szip -t $t"
		fi
	done
	rep=$((rep + 1))
done

# Where ext4dec's readahead spends its time: function_graph durations of
# the direct children of ext4dec_readahead, ext4dec_read_folio and the
# workers' ext4dec_ra_batch_finish during one cold read, summed per function
# ("TRACE NAME FUNCTION CALLS US").
T=/sys/kernel/tracing
if [ -n "$BENCH_TRACE" ]; then
	mount -t tracefs tracefs "$T" 2>/dev/null
	[ -f "$T/set_graph_function" ] || err "no function_graph tracer"
fi
for name in $BENCH_TRACE; do
	[ -f "$T/set_graph_function" ] || break
	d=''
	for x in $disks; do
		case $x in "$name":szip:*) d=$x ;; esac
	done
	[ -n "$d" ] || continue
	dev=${d#*:szip:}
	dev=${dev%%:*}
	f=$BENCH_MAIN
	progress "bw=$BENCH_BW tracing a cold read of $name/$f"
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo 65536 >"$T/buffer_size_kb"
	echo 'ext4dec_readahead ext4dec_read_folio' >"$T/set_graph_function" ||
		err "set_graph_function"
	# the inflate workers' part of readahead (absent if inlined)
	echo ext4dec_ra_batch_finish >>"$T/set_graph_function" 2>/dev/null
	# depth 4: ext4dec_decode_chunk() inside ext4dec_inflate_in_place(),
	# under a batch under readahead
	echo 4 >"$T/max_graph_depth"
	echo 1 >"$T/options/funcgraph-tail"
	echo function_graph >"$T/current_tracer"
	: >"$T/trace"
	benchio drop
	echo 1 >"$T/tracing_on"
	benchio -d "$dev" -t "trace|$name|$f|1" seq "/mnt/$name/$f" >&3 || err "traced read $name"
	echo 0 >"$T/tracing_on"
	awk -v n="$name" -f /etc/graph-sum.awk "$T/trace" >&3
	for c in "$T"/per_cpu/cpu*/stats; do
		o=$(awk '$1 == "overrun:" { print $2 }' "$c")
		[ "${o:-0}" = 0 ] || out "TRACE $name overrun:${c%/stats} 1 $o"
	done
	echo nop >"$T/current_tracer"
	echo 0 >"$T/options/funcgraph-tail"
	: >"$T/set_graph_function"
	echo 1408 >"$T/buffer_size_kb"
done

rm -f /tmp/*.sz

if [ "$BENCH_SUM" = 1 ]; then
	for d in $disks; do
		name=${d%%:*}
		for f in $BENCH_FILES; do
			benchio -t "$name|$f" sum "/mnt/$name/$f" >&3 || err "sum $name/$f failed"
		done
	done
fi

for d in $disks; do
	umount "/mnt/${d%%:*}" >/dev/console 2>&1 || err "umount ${d%%:*} failed"
done
finish
