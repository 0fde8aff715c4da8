#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/run-bench.sh - measure ext4dec against plain ext4, SquashFS, EROFS
# and btrfs in QEMU, on the same data and the same throttled virtual disks.
#
# Usage: bench/run-bench.sh [options]
#
#   -o, --out DIR        results directory (default: build/bench)
#       --src DIR        build szip and the module from DIR instead of this
#                        checkout (e.g. a git worktree of another commit,
#                        for before/after figures)
#   -k, --kernel SPEC    one guest kernel (see tests/vm/run-vm.sh)
#       --kernels "A B"  guest kernels, each measured in boots of its own
#                        (default "6.12 newest": the newest Debian line);
#                        the report's tables are the first one's, and its
#                        table "libxul.so by kernel" sets them side by side
#   -n, --repeats N      runs of every workload; figures are medians (3)
#       --bw "A B ..."   disk read bandwidths in MB/s, one boot each; 0 is
#                        unthrottled (default "20 0").  The small files,
#                        random reads and mmap run at the first one only,
#                        the userspace decode at the last one (interleaved
#                        with the kernel's reads)
#       --configs "A B"  configurations (default: bench_default_configs in
#                        bench/lib.sh; "all": every one defined there)
#       --rand N         random 4 KiB reads per run (default 500)
#       --trace "A B"    szip configurations whose cold read of libxul.so is
#                        traced once (ftrace function_graph) at the first
#                        bandwidth, after the timed runs (default
#                        "szip-16k-x86 szip2-zstd-32k-x86"; "" for none)
#       --quick          1 run, 20 MB/s only, 5 configurations, 200 reads:
#                        a check of the pipeline, not a measurement
#       --modparams "P=V ..."  ext4dec module parameters in the guest
#                        (e.g. "workers=0 readahead_kb=0": inflate inline
#                        with the device's readahead window)
#       --mem MB         guest memory (default 2048)
#       --firefox "A B"  after the boots above, Firefox's cold start with
#                        libxul.so plain and packed as configurations A, B
#                        (bench/firefox.sh; default "szip-16k
#                        szip2-zstd-32k-x86"; "" for none), at the same
#                        bandwidths, with --repeats starts of each, on
#                        each kernel
#       --no-deps        do not apt-get install missing host packages
#   -v, --verbose        stream the guest console to stderr
#   -h, --help
#
# Environment: BENCH_KERNELS, BENCH_QUICK=1, BENCH_REPEATS, BENCH_BANDWIDTHS,
# BENCH_CONFIGS, BENCH_RAND_COUNT, BENCH_TRACE, BENCH_MODPARAMS, BENCH_FIREFOX,
# BENCH_JOBS (parallel packing), BENCH_BOOT_TIMEOUT (seconds per boot, default 3600),
# EXT4DEC_KVM=1 (KVM instead of TCG),
# EXT4DEC_CACHE (data, kernels and images; default ~/.cache/ext4dec).
#
# Every disk image is its own virtio disk, opened by QEMU with cache=none
# (O_DIRECT: the host page cache holds none of it) and throttled with
# throttling.bps-read; the guest has 2 vCPUs.  Steps: fetch the data
# (bench/fetch-data.sh), build the images (bench/make-images.sh) and the
# module for each kernel, fill the btrfs images in a first boot (once;
# cached), then one boot per bandwidth and kernel running the workloads
# (bench/guest-init.sh, bench/benchio.c), the kernels' boots of a bandwidth
# one after the other, then bench/report.py writes results.md, results.csv,
# raw.csv and bench.png in the results directory and prints the tables.
# Each kernel's files are named by its release: results-KVER-bwN.log,
# firefox-KVER.txt.
#
# Exit status: 0 success, 1 failure (named on stderr), 2 usage error.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

# The whole script is one function: bash parses it all before running, so
# editing the file during a run does not break the run.
main() {
	out=$top/build/bench src=$top mem=2048 deps=1 verbose=0
	kernels=${BENCH_KERNELS:-${BENCH_KERNEL:-6.12 newest}}
	modparams=${BENCH_MODPARAMS:-}
	quick=${BENCH_QUICK:-0}
	repeats=${BENCH_REPEATS:-} bws=${BENCH_BANDWIDTHS:-} configs=${BENCH_CONFIGS:-}
	rand=${BENCH_RAND_COUNT:-}
	trace=${BENCH_TRACE-szip-16k-x86 szip2-zstd-32k-x86}
	firefox=${BENCH_FIREFOX-szip-16k szip2-zstd-32k-x86}
	while [[ $# -gt 0 ]]; do
		case $1 in
		--rand) bench_need_arg "$@"; rand=$2; shift 2 ;;
		-k | --kernel | --kernels) bench_need_arg "$@"; kernels=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--mem) bench_need_arg "$@"; mem=$2; shift 2 ;;
		--firefox) bench_need_arg "$@"; firefox=$2; shift 2 ;;
		--no-deps) deps=0; shift ;;
		-v | --verbose) verbose=1; shift ;;
		-h | --help) bench_usage "${BASH_SOURCE[0]}" ;;
		*)
			bench_option "$@" || { bench_log "unknown argument: $1"; bench_usage "${BASH_SOURCE[0]}" 2 >&2; }
			shift 2
			;;
		esac
	done
	if [[ $quick == 1 ]]; then
		: "${repeats:=1}" "${bws:=20}" "${configs:=$bench_quick_configs}" "${rand:=200}"
	fi
	: "${repeats:=3}" "${bws:=20 0}" "${rand:=500}"
	case $configs in
	'') configs=$bench_default_configs ;;
	all) configs=$(for c in "${bench_all_configs[@]}"; do echo "${c%% *}"; done) ;;
	esac
	bench_check_runs "$repeats" "$bws"
	read -r -a kspecs <<<"$kernels"
	[[ ${#kspecs[@]} -gt 0 ]] || { bench_log "--kernels: no kernel"; exit 2; }
	[[ $rand =~ ^[0-9]+$ ]] || { bench_log "--rand: not a number: $rand"; exit 2; }
	for c in $configs; do
		bench_config "$c" || { bench_log "unknown configuration '$c' (see bench/lib.sh)"; exit 2; }
	done
	[[ -f $src/Kbuild && -d $src/ext4dec ]] || { bench_log "--src $src: not an ext4dec source tree"; exit 2; }
	src=$(cd "$src" && pwd)
	# ext4 is the reference of every ratio, and the source of the btrfs fill
	# shellcheck disable=SC2086 # a word list
	configs=$(printf '%s\n' $configs | awk '!seen[$0]++' | tr '\n' ' ')
	[[ " $configs" == *" ext4 "* ]] || configs="ext4 $configs"

	t_start=$SECONDS
	export PATH="$PATH:/usr/sbin:/sbin"

	# --- host packages ------------------------------------------------------------
	host_pkgs=(qemu-system-x86 cpio kmod e2fsprogs make gcc libc6-dev python3
		squashfs-tools erofs-utils btrfs-progs btrfs-compsize gnuplot-nox)
	if [[ $deps == 1 ]]; then
		bench_install_missing "${host_pkgs[@]}"
	fi
	qemu=${EXT4DEC_QEMU:-qemu-system-x86_64}
	for t in "$qemu" cpio depmod modprobe ldd mkfs.ext4 mksquashfs mkfs.erofs mkfs.btrfs \
		compsize gnuplot python3 gcc make; do
		command -v "$t" >/dev/null || bench_die "$t not found (install: ${host_pkgs[*]})"
	done

	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	work=$(mktemp -d "$out/.work.XXXXXX")
	tailpid=''
	# shellcheck disable=SC2317 # called through the trap
	cleanup() {
		[[ -z $tailpid ]] || kill "$tailpid" 2>/dev/null || true
		rm -rf "$work"
	}
	trap cleanup EXIT
	rm -f "$out"/results-*.log "$out"/console-*.log "$out"/qemu-*.log "$out"/qemu-cmd-*.txt \
		"$out"/build-module*.log "$out"/firefox*.txt "$out"/firefox-*.log \
		"$out"/results.* "$out"/raw.csv "$out"/bench.png

	# --- kernels and their modules, tools ---------------------------------------------
	# Every kernel first: one that cannot be fetched or built for stops the
	# run before the boots.  A kernel named twice (6.12 and its ABI) runs once.
	kvers=()
	declare -A kspec_of=()
	for s in "${kspecs[@]}"; do
		kver=$(vm_kernel_for "$s") || bench_die "cannot fetch kernel $s"
		[[ -z ${kspec_of[$kver]+x} ]] || continue
		kspec_of[$kver]=$s
		kvers+=("$kver")
	done
	bench_log "kernels ${kvers[*]}; building szip, and ext4dec.ko for each, from $src"
	make -s -C "$src" tool >&2 || bench_die "building szip in $src failed"
	szip=$src/tools/szip/szip
	for kver in "${kvers[@]}"; do
		vm_kernel_paths "$kver"
		mkdir -p "$work/mod-$kver"
		cp -r "$src/Kbuild" "$src/include" "$src/szip" "$src/ext4dec" "$work/mod-$kver/"
		# in the build root of the kernel's release for a newer suite's kernel
		if ! vm_kmake "$kver" -C "$K_KDIR" M="$work/mod-$kver" EXT4DEC_SRCDIR="$src" -j"$(nproc)" \
			modules >"$out/build-module-$kver.log" 2>&1; then
			tail -n 20 "$out/build-module-$kver.log" >&2
			bench_die "building ext4dec.ko against $K_KDIR failed; see $out/build-module-$kver.log"
		fi
	done
	benchio=$out/benchio
	gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -o "$benchio" "$here/benchio.c" ||
		bench_die "building $here/benchio.c failed"

	# --- data and images --------------------------------------------------------------
	"$here/fetch-data.sh" >"$out/manifest.tsv" || bench_die "fetching the data failed"
	# shellcheck disable=SC2086 # configuration names are words
	"$here/make-images.sh" --manifest "$out/manifest.tsv" --szip "$szip" --szip-src "$src" $configs \
		>"$out/images.tsv" || bench_die "building the images failed"
	files=$(cut -f1 "$out/manifest.tsv" | tr '\n' ' ')
	sizes=$(cut -f5 "$out/manifest.tsv" | tr '\n' ' ')
	main_file=$(head -n1 "$out/manifest.tsv" | cut -f1)
	sed -n 's/^SKIP\t\([^\t]*\)\t/\1: /p' "$out/images.tsv" | while read -r l; do bench_log "skipped $l"; done

	# --- initramfs, one per kernel (tests/vm/lib.sh's vm_* helpers) ----------------------
	busybox=$(vm_guest_busybox)
	kmod=$(vm_find_tool kmod) || bench_die "kmod not found"
	modules="virtio_pci virtio_blk"
	for c in $configs; do
		bench_config "$c"
		case $C_KIND in
		squashfs | erofs | btrfs) [[ " $modules " == *" $C_KIND "* ]] || modules+=" $C_KIND" ;;
		esac
	done
	for kver in "${kvers[@]}"; do
		vm_kernel_paths "$kver"
		root=$work/root-$kver
		vm_guest_root "$root" "$busybox" "$kmod"
		for t in chattr lsattr compsize; do
			p=$(vm_find_tool "$t") || bench_die "$t not found"
			vm_add_bin "$root" "$p"
		done
		vm_add_bin "$root" "$benchio"
		vm_add_bin "$root" "$szip"
		for m in $modules; do vm_add_module_closure "$root" "$kver" "$m"; done
		vm_add_ko "$root" "$kver" "$work/mod-$kver/ext4dec.ko"
		vm_depmod "$root" "$kver"
		if [[ -n $modparams ]]; then
			mkdir -p "$root/etc/modprobe.d"
			echo "options ext4dec $modparams" >"$root/etc/modprobe.d/ext4dec.conf"
		fi
		cp "$here/guest-init.sh" "$root/init"
		cp "$here/graph-sum.awk" "$here/firefox-libxul.trace" "$root/etc/"
		chmod 0755 "$root/init"
		{
			vm_cpio_dev_console
			vm_pack_cpio "$root"
		} >"$work/base-$kver.cpio"
		rm -rf "$root"
	done

	# --- boots ----------------------------------------------------------------------------
	image_of() { awk -F'\t' -v c="$1" '$1 == "IMAGE" && $2 == c { print $4 }' "$out/images.tsv"; }

	# boot KVER LABEL MODE BW CONFIG...: one VM run of kernel KVER; results in
	# $out/results-LABEL.log
	boot() {
		local kver=$1 label=$2 mode=$3 bw=$4 c img n=0 drives=() disks='' conf res con rc=0 ro chunk thr opts
		local limit=${BENCH_BOOT_TIMEOUT:-3600}
		shift 4
		vm_kernel_paths "$kver"
		for c in "$@"; do
			img=$(image_of "$c")
			[[ -n $img ]] || continue
			bench_config "$c"
			ro=''
			case $C_KIND in
			squashfs | erofs) ro=,readonly=on ;;
			btrfs) [[ $mode == fill ]] || ro=,readonly=on ;;
			ext4) [[ $mode != fill ]] || ro=,readonly=on ;;
			esac
			chunk=0
			if [[ $C_KIND == szip ]]; then
				chunk=$(printf '%s\n' "${C_OPTS[@]}" | sed -n 's/^--chunk-size=\([0-9]*\)K$/\1/p')
				chunk=$((${chunk:-16} * 1024))
			elif [[ $C_KIND == erofs ]]; then
				chunk=$(printf '%s\n' "${C_OPTS[@]}" | sed -n 's/^-C//p')
			elif [[ $C_KIND == squashfs ]]; then
				chunk=$(printf '%s\n' "${C_OPTS[@]}" | sed -n '/^-b$/{n;s/K$//p}')
				chunk=$((chunk * 1024))
			elif [[ $C_KIND == btrfs ]]; then
				chunk=131072
			fi
			thr=''
			[[ $bw -eq 0 ]] || thr=,throttling.bps-read=$((bw * 1000000))
			drives+=(-drive "file=${img//,/,,},format=raw,if=none,id=d$n,cache=none,aio=threads$ro$thr"
				-device "virtio-blk-pci,drive=d$n,serial=$c")
			opts=$(IFS=,; echo "${C_OPTS[*]}")
			disks+="$c $C_KIND ${opts:--} $chunk"$'\n'
			n=$((n + 1))
		done
		conf=$work/conf-$label
		rm -rf "$conf"
		mkdir -p "$conf/etc"
		{
			printf 'BENCH_MODE=%q\nBENCH_BW=%q\n' "$mode" "$bw"
			printf 'BENCH_DISKS=%q\n' "$disks"
			printf 'BENCH_FILES=%q\nBENCH_SIZES=%q\nBENCH_MAIN=%q\n' "$files" "$sizes" "$main_file"
			printf 'BENCH_REPEATS=%q\nBENCH_RAND=%q\nBENCH_MMAP=%q\n' "$repeats" "$B_RAND" "$B_MMAP"
			printf 'BENCH_DECODE=%q\nBENCH_SUM=%q\nBENCH_TRACE=%q\n' "$B_DECODE" "$B_SUM" "$B_TRACE"
			printf 'BENCH_ALL_FILES=%q\n' "$B_SUM"
			printf 'BENCH_MODULES=%q\n' "$modules ext4dec"
		} >"$conf/etc/bench.conf"
		cat "$work/base-$kver.cpio" >"$work/initrd"
		vm_pack_cpio "$conf" >>"$work/initrd"

		res=$out/results-$label.log con=$out/console-$label.log
		rm -f "$res" "$con"
		vm_qemu_cmd "$qemu" 2 "$mem" "$work/initrd" "console=ttyS0,115200 panic=-1 loglevel=4 random.trust_cpu=on"
		local qemu_cmd=(
			"${VM_QEMU_CMD[@]}"
			-chardev "file,id=con,path=$con" -serial chardev:con
			-chardev "file,id=res,path=$res" -serial chardev:res
			"${drives[@]}"
		)
		printf '%q ' "${qemu_cmd[@]}" >"$out/qemu-cmd-$label.txt"
		bench_log "boot $label: $mode, kernel $kver, ${n} disks, bandwidth $([[ $bw -gt 0 ]] && echo "$bw MB/s" || echo unthrottled), $VM_ACCEL_NAME"
		touch "$res"
		# progress lines; tail ends with this script at the latest
		# (the process substitution first: it inherits stderr before 2>/dev/null)
		tail -n +1 -F --pid=$$ "$res" > >(sed -u -n 's/\r$//; s/^PROGRESS /ext4dec-bench:   /p' >&2) 2>/dev/null &
		tailpid=$!
		local t0=$SECONDS load0
		load0=$(cut -d' ' -f1 /proc/loadavg)
		if [[ $verbose == 1 ]]; then
			tail -n +1 -F --pid=$$ "$con" >&2 2>/dev/null &
			local conpid=$!
		fi
		timeout -k 10 "$limit" "${qemu_cmd[@]}" </dev/null >"$out/qemu-$label.log" 2>&1 || rc=$?
		sleep 0.5
		kill "$tailpid" 2>/dev/null || true
		wait "$tailpid" 2>/dev/null || true
		tailpid=''
		if [[ $verbose == 1 ]]; then kill "$conpid" 2>/dev/null || true; fi
		tr -d '\r' <"$res" >"$res.tmp" && mv "$res.tmp" "$res"
		bench_log "boot $label took $((SECONDS - t0))s"
		echo "boot_$label=$((SECONDS - t0)) s, host load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end" >>"$work/boots"
		if [[ $rc -ne 0 ]] || ! grep -q '^END errors=0$' "$res"; then
			grep '^ERROR' "$res" | head -n 20 >&2 || true
			tr -d '\r' <"$con" | tail -n 30 | sed 's/^/    /' >&2
			if [[ $rc -eq 124 || $rc -eq 137 ]]; then
				bench_die "boot $label: QEMU killed after ${limit}s (BENCH_BOOT_TIMEOUT); see $con"
			fi
			bench_die "boot $label failed (QEMU status $rc); see $res and $con"
		fi
	}

	# Fill the btrfs images (once: a stamp next to each image).
	fill=()
	for c in $configs; do
		bench_config "$c"
		[[ $C_KIND == btrfs ]] || continue
		img=$(image_of "$c")
		[[ -f $img.filled ]] || fill+=("$c")
	done
	if [[ ${#fill[@]} -gt 0 ]]; then
		B_RAND=0 B_MMAP=0 B_DECODE=0 B_SUM=0 B_TRACE=''
		boot "${kvers[0]}" fill fill 0 ext4 "${fill[@]}"
		for c in "${fill[@]}"; do
			img=$(image_of "$c")
			grep "^COMPSIZE $c " "$out/results-fill.log" >"$img.filled"
		done
	fi
	for c in $configs; do
		bench_config "$c"
		[[ $C_KIND == btrfs ]] || continue
		img=$(image_of "$c")
		[[ -f $img.filled ]] || continue
		while read -r _ _ f b; do
			printf 'SIZE\t%s\t%s\t%s\t%s\n' "$c" "$f" \
				"$(awk -F'\t' -v f="$f" '$1 == f { print $5 }' "$out/manifest.tsv")" "$b"
		done <"$img.filled" >>"$out/images.tsv"
	done

	# Userspace decode on the host: relates the guest's CPU speed to this machine's.
	: >"$out/host.txt"
	for c in $configs; do
		bench_config "$c"
		[[ $C_KIND == szip ]] || continue
		sz=$(awk -F'\t' -v c="$c" -v f="$main_file" '$1 == "SZFILE" && $2 == c && $3 == f { print $4 }' "$out/images.tsv")
		[[ -n $sz ]] || continue
		cp "$sz" "$work/decode.sz"
		for ((r = 1; r <= repeats; r++)); do
			"$benchio" -t "host|$c|$main_file|$r" exec "$szip" -t "$work/decode.sz" >>"$out/host.txt" ||
				bench_die "szip -t $sz failed on the host"
		done
		rm -f "$work/decode.sz"
	done
	for i in $(seq "$(wc -l <"$out/manifest.tsv")"); do
		IFS=$'\t' read -r f p _ _ _ < <(sed -n "${i}p" "$out/manifest.tsv")
		"$benchio" -t "$f" sum "$p" >>"$out/host.txt"
	done

	first=1
	read -r -a bwlist <<<"$bws"
	for bw in "${bwlist[@]}"; do
		if [[ $first == 1 ]]; then
			B_RAND=$rand B_MMAP=1 B_SUM=1 B_TRACE=$trace
		else
			B_RAND=0 B_MMAP=0 B_SUM=0 B_TRACE=''
		fi
		# the userspace decode in the last boot (fastest disk: least waiting)
		if [[ $bw == "${bwlist[-1]}" ]]; then B_DECODE=1; else B_DECODE=0; fi
		# the kernels one after the other at each bandwidth: their figures
		# come from neighbouring boots
		for kver in "${kvers[@]}"; do
			# shellcheck disable=SC2086
			boot "$kver" "$kver-bw$bw" measure "$bw" $configs
		done
		first=0
	done

	# --- Firefox's cold start, per kernel -----------------------------------------------------
	if [[ -n $firefox ]]; then
		ffw="help shot"
		[[ $quick != 1 ]] || ffw=help
		for kver in "${kvers[@]}"; do
			bench_log "firefox: kernel $kver"
			rm -rf "$work/firefox"
			rc=0
			# shellcheck disable=SC2086 # word lists
			"$here/firefox.sh" -o "$work/firefox" --src "$src" -k "$kver" -n "$repeats" --bw "$bws" \
				--configs "ext4 $firefox" --workloads "$ffw" ${modparams:+--modparams "$modparams"} || rc=$?
			# firefox.txt and firefox-bwN.log, named by the kernel
			for f in "$work/firefox"/firefox*; do
				[[ ! -f $f ]] || mv "$f" "$out/firefox-$kver${f##*/firefox}"
			done
			[[ $rc -eq 0 ]] || bench_die "the Firefox start (bench/firefox.sh) failed on $kver; see $out/firefox-$kver-bw*.log"
		done
	fi

	# --- report ------------------------------------------------------------------------------
	vm_accel
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "command=${BENCH_COMMAND:-bench/run-bench.sh}"
		echo "kernel=${kvers[0]} ($(vm_kernel_info "${kvers[0]}" image_pkg) $(vm_kernel_info "${kvers[0]}" version))"
		echo "kernels=${kvers[*]}"
		for kver in "${kvers[@]}"; do
			echo "kernel_$kver=${kspec_of[$kver]} $(vm_kernel_info "$kver" version)"
		done
		echo "accel=$VM_ACCEL_NAME"
		echo "qemu=$("$qemu" --version | head -n1)"
		echo "host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1) x $(nproc)"
		echo "guest=2 vCPUs, ${mem} MiB"
		echo "repeats=$repeats"
		echo "bandwidths=$bws"
		echo "firefox=$firefox"
		echo "rand=$rand"
		echo "src=$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
		echo "duration=$((SECONDS - t_start))"
		cat "$work/boots"
	} >"$out/meta.txt"
	python3 "$here/report.py" "$out" || bench_die "bench/report.py failed"
	bench_log "done in $((SECONDS - t_start))s; results in $out"
}

main "$@"
