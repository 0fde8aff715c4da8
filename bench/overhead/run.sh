#!/bin/sh
# shellcheck shell=sh
#
# bench/overhead/run.sh - the guest's side of bench/overhead.sh: what the
# module costs files that are not compressed, what activating a file with
# the largest tables costs a stat, and the memory an active inode holds.
# Prints benchio's BENCH lines, and its own for the memory, as TAP
# diagnostics ("# BENCH ...").

set -u
mnt=${EXT4DEC_MNT:?}
# bench/overhead.sh --rounds, in the payload (no environment reaches it)
rounds=$(cat ./rounds 2>/dev/null) || rounds=3
reads=${OVERHEAD_READS:-100000}
direct_reads=$((reads / 5))
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
		bench -t "plain-direct|$m|$r" -D rand "$plain" "$direct_reads"
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

# Memory per active inode, by memory cgroup accounting.  Per set of
# files: the inodes and the head of their raw bytes (where the tables are)
# are cached with the module unloaded, from the root cgroup; then, module
# loaded, a process moved into a fresh cgroup of the set stats every file,
# which activates it: what the cgroup is charged for that, per file.
#   zstd32k  3 MiB of code, szip --format=2 --codec=zstd --chunk-size=32K
#   v1-16k   the same, --format=1 --chunk-size=16K
#   dict     the same as zstd32k, --dict=16384
#   xul      180 MiB of code (60 times the 3 MiB), made here at --level=1
#   tables   /payload/tables.sz, the largest tables
mem=$mnt/mem
mem_sets="zstd32k:64 v1-16k:32 dict:16 xul:1 tables:1"
cg=/sys/fs/cgroup
work=$(mktemp -d)

mem_make() {
	for s in $mem_sets; do
		name=${s%%:*}
		mkdir -p "$mem/$name" || return 1
		case $name in
		xul)
			i=0
			while [ $i -lt 60 ]; do
				cat /payload/code.bin
				i=$((i + 1))
			done | szip -c -q --format=2 --codec=zstd --chunk-size=32K --level=1 \
				>"$mem/xul/1" || return 1
			;;
		tables) cp /payload/tables.sz "$mem/tables/1" || return 1 ;;
		*)
			i=1
			while [ $i -le "${s#*:}" ]; do
				cp "/payload/lib-$name.sz" "$mem/$name/$i" || return 1
				i=$((i + 1))
			done
			;;
		esac
	done
	sync
}

mem_cgroup() {
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none "$cg" || return 1
	grep -qw memory "$cg/cgroup.controllers" || { echo "no memory controller"; return 1; }
	echo +memory >"$cg/cgroup.subtree_control"
}

# in_cgroup CG CMD...: run CMD in a process moved into cgroup CG first
in_cgroup() {
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}

# mem_read NAME...: the usage of each set's cgroup (mem-NAME) into
# $work/NAME.<what>: "current kernel slab_unreclaimable slab_reclaimable
# vmalloc file", in bytes.  A memory.high below the usage makes the kernel
# drain the charges cached per CPU (up to 64 pages a CPU, drain_all_stock()):
# memory.current is then exact; the drains on other CPUs are queued work,
# and memory.stat is brought up to date every 2 s.
mem_read() {
	what=$1
	shift
	for name; do
		c=$(cat "$cg/mem-$name/memory.current")
		h=$((c - 4096))
		[ "$h" -gt 0 ] || h=0
		echo "$h" >"$cg/mem-$name/memory.high"
		echo max >"$cg/mem-$name/memory.high"
	done
	sleep 3
	for name; do
		{
			cat "$cg/mem-$name/memory.current"
			cat "$cg/mem-$name/memory.stat"
		} | awk 'NR == 1 { cur = $1; next } { v[$1] = $2 }
			END { printf "%d %d %d %d %d %d\n", cur, v["kernel"],
				v["slab_unreclaimable"], v["slab_reclaimable"],
				v["vmalloc"], v["file"] }' >"$work/$name.$what"
	done
}

# mem_bench TAG NAME FILES AFTER: a BENCH line of what the cgroup of set
# NAME holds at AFTER (mem_read) beyond what it held before activation,
# divided by FILES; ctl_kernel is what it held before, from a stat of
# every file with the module unloaded (nothing, if all was cached)
mem_bench() {
	echo "# BENCH tag=$1 files=$3 $(cat "$work/$2.before" "$work/$2.$4" | awk -v n="$3" '
		NR == 1 { split($0, b); next }
		{ printf "current=%.0f kernel=%.0f slab=%.0f slab_r=%.0f vmalloc=%.0f file=%.0f ctl_kernel=%d",
			($1 - b[1]) / n, ($2 - b[2]) / n, ($3 - b[3]) / n,
			($4 - b[4]) / n, ($5 - b[5]) / n, ($6 - b[6]) / n, b[2] }')"
}

# mem_back AFTER NAME...: whether the cgroup of each set NAME holds at
# AFTER (mem_read) at most a page more than before activation
mem_back() {
	after=$1
	shift
	for name; do
		cat "$work/$name.before" "$work/$name.$after" | awk -v name="$name" '
			NR == 1 { before = $2; next }
			$2 - before > 4096 { print name ": " $2 - before " bytes of kernel memory left"; exit 1 }' ||
			return 1
	done
}

mem_names=$(for s in $mem_sets; do printf '%s ' "${s%%:*}"; done)
mem_files=0
for s in $mem_sets; do mem_files=$((mem_files + ${s#*:})); done
check "the memory sets' files made" mem_make
# shellcheck disable=SC2016,SC2086 # expanded by the inner shell; words
check "chattr +c on them" sh -c 'for n; do chattr +c "$0/$n"/* || exit 1; done' "$mem" $mem_names
check "the 180 MiB file reads as 180 MiB" test "$(stat -c %s "$mem/xul/1")" -eq $((180 << 20))
check "the module unloads" rmmod ext4dec
check "a cgroup v2 memory controller" mem_cgroup
for r in $(seq "$rounds"); do
	for name in $mem_names; do
		# the header, dictionary and tables: 16 MiB and 64 bytes in
		# tables, under 64 KiB in the others
		len=65536
		[ "$name" = tables ] && len=$((17 << 20))
		for f in "$mem/$name"/*; do
			stat "$f" >/dev/null
			head -c "$len" "$f" >/dev/null
		done
		rmdir "$cg/mem-$name" 2>/dev/null
		mkdir "$cg/mem-$name"
		in_cgroup "$cg/mem-$name" stat -c %s "$mem/$name"/* >/dev/null
	done
	check "the module loads" modprobe ext4dec
	# shellcheck disable=SC2086
	mem_read before $mem_names
	for name in $mem_names; do
		in_cgroup "$cg/mem-$name" stat -c %s "$mem/$name"/* >/dev/null
	done
	check "a stat activated each of the $mem_files files" \
		test "$(cat /sys/kernel/ext4dec/active_inodes)" -eq "$mem_files"
	# shellcheck disable=SC2086
	mem_read active $mem_names
	for s in $mem_sets; do
		mem_bench "inode-mem|${s%%:*}|$r" "${s%%:*}" "${s#*:}" active
	done
	if [ "$r" = "$rounds" ]; then
		# what chattr -c gives back
		chattr -c "$mem/zstd32k"/*
		mem_read chattr zstd32k
		mem_bench "inode-mem-left|zstd32k|chattr" zstd32k 1 chattr
		check "chattr -c gives the memory back" mem_back chattr zstd32k
	fi
	rmmod ext4dec
	# shellcheck disable=SC2086
	mem_read rmmod $mem_names
	for name in $mem_names; do
		mem_bench "inode-mem-left|$name|rmmod" "$name" 1 rmmod
	done
	# shellcheck disable=SC2086
	check "rmmod gives the memory back" mem_back rmmod $mem_names
done
rm -rf "$work"
tap_plan
[ "$tap_fail" -eq 0 ]
