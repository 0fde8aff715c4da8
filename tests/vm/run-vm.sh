#!/usr/bin/env bash
#
# tests/vm/run-vm.sh - boot a Debian cloud kernel under QEMU and run a test
# payload inside it.
#
# Usage:
#   tests/vm/run-vm.sh -k SERIES -p PAYLOAD_DIR [options]
#   tests/vm/run-vm.sh -k SERIES --print-kdir
#
#   -k, --kernel SPEC     kernel series ("6.1", "6.12") or exact ABI name
#                         ("6.12.117+deb12-cloud-amd64"); the newest packaged
#                         ABI of a series is resolved with apt-cache at run
#                         time and fetched into the cache if needed.
#                         "debug", "debug-6.1", "debug-7.3", "debug-newest":
#                         the KASAN/lockdep/UBSAN/KFENCE kernel built from
#                         Debian's linux-source-<series> by
#                         scripts/build-debug-kernel.sh ("debug": its
#                         default series; built on first use, several
#                         minutes; then cached)
#   -p, --payload DIR     directory copied to /payload in the guest; its
#                         run.sh is run with sh, its stdout is the TAP output
#                         (/payload/tap.sh: tests/lib/tap.sh, to write it)
#   -m, --module-src DIR  build the out-of-tree module in DIR (a copy of it)
#                         against the kernel's headers; the resulting *.ko go
#                         to /payload/modules/ and lib/modules/<kver>/extra/
#                         (so "modprobe NAME" works).  Repeatable.  make gets
#                         EXT4DEC_SRCDIR=<absolute DIR> for includes relative
#                         to the original source.  A build is kept in
#                         $EXT4DEC_CACHE/modules/ and used again for the
#                         same kernel, make arguments and files (a day
#                         after its last use).
#       --make-arg ARG    add ARG (VAR=VALUE) to make's command line for the
#                         --module-src builds.  Repeatable.
#       --ko FILE         add a prebuilt module the same way.  Repeatable.
#       --bin PATH        add a host binary (and its shared libraries) to
#                         /bin in the guest.  Repeatable.
#       --modules "A B"   extra kernel modules to modprobe at boot
#   -o, --out DIR         output directory (default: <cache>/runs/<kver>-<time>)
#   -t, --timeout SECS    payload time limit inside the guest (default 300);
#                         the whole QEMU run is limited to this plus
#                         EXT4DEC_VM_BOOT_TIMEOUT (default 180 seconds; 600
#                         for a debug kernel)
#       --mem MB          guest memory (default 1024)
#       --smp N           guest CPUs (default 2)
#       --disk-size SIZE  scratch disk size for truncate(1) (default 256M)
#       --mkfs-opts OPTS  extra mkfs.ext4 options
#       --mount-opts OPTS ext4 mount options
#       --no-mkfs         leave the scratch disk (/dev/vda) raw and unmounted
#       --no-fsck         skip "e2fsck -fn" of the scratch disk after the payload
#       --image FILE      attach the raw disk image FILE as the next virtio
#                         disk (/dev/vdb, then /dev/vdc, ...; the payload
#                         gets them in EXT4DEC_IMAGES).  The guest writes to
#                         a throwaway overlay (QEMU snapshot=on): FILE itself
#                         is never modified.  Repeatable.
#       --image-rw FILE   like --image, but the guest writes to FILE itself
#                         (raw): for runs that boot the same disk one after
#                         the other.  Repeatable, in one list with --image.
#       --switch-root     boot the first --image disk as the root file
#                         system: /init loads the boot modules, mounts it,
#                         copies the payload to its /payload and hands over
#                         to its /sbin/init (systemd), whose unit
#                         ext4dec-vm-payload.service (put in place by
#                         /init) runs the payload and powers off (tests/vm/init)
#       --image-bw MBPS   open the --image disks with cache=none (O_DIRECT:
#                         the host's page cache does not serve them) and,
#                         if MBPS is not 0, throttle their reads to MBPS
#                         MB/s (10^6 bytes; QEMU's throttling.bps-read),
#                         as a slow disk would be
#       --append ARGS     extra kernel command line arguments
#       --keep            keep the scratch disk image and initramfs in the output dir
#   -v, --verbose         also stream the guest console to stderr
#       --print-kdir      fetch the kernel if needed, print its headers
#                         directory (for make -C ... M=...) and exit
#   -h, --help
#
# Environment:
#   EXT4DEC_KVM=1             use KVM (-accel kvm -cpu host); default is TCG
#   EXT4DEC_VM_CPU            QEMU -cpu model (default: max for TCG, host for KVM)
#   EXT4DEC_VM_TB_SIZE        TCG translation cache in MiB (default 128, 0 for QEMU's; lib.sh)
#   EXT4DEC_CACHE             cache directory (default ${XDG_CACHE_HOME:-~/.cache}/ext4dec)
#   EXT4DEC_VM_BOOT_TIMEOUT   seconds allowed on top of the payload timeout
#   EXT4DEC_VM_DEBUG_APPEND   kernel arguments added for a debug kernel
#                             (default "kasan_multi_shot pci=noacpi"; e.g. add
#                             "debug_pagealloc=on kmemleak=on kmemleak.verbose=1")
#   EXT4DEC_DEBUG_KERNEL_NO_BUILD=1  fail instead of building a missing debug kernel
#   EXT4DEC_VM_DMESG_IGNORE   extended regex of dmesg lines not to count as failures
#   EXT4DEC_VM_MODULES        like --modules
#   EXT4DEC_QEMU              QEMU binary (default qemu-system-x86_64)
#
# Output: the payload's TAP on stdout, diagnostics on stderr, and in the
# output directory: console.log (serial console: boot log, init messages,
# payload stderr), results.log (raw result channel), tap.txt, dmesg.txt,
# summary.txt.
#
# Exit status: 0 pass; 1 test failure (payload exit status != 0, "not ok"
# in the TAP, a TAP plan missing or not matching the results
# (tests/lib/tap.sh), bad dmesg line, fsck error, guest setup error, crash,
# timeout);
# 2 harness or usage error.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source=tests/lib/tap.sh
. "$here/../lib/tap.sh"

# The whole script is one function, so bash parses all of it before running
# anything: editing this file while a (long) run is going does not break it.
main() {
	usage() {
		sed -n '3,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
		exit "${1:-0}"
	}

	# --- arguments ---------------------------------------------------------------
	kspec='' payload='' out='' timeout_s=300 mem=1024 smp=2 disk_size=256M
	mkfs=1 fsck=1 mkfs_opts='' mount_opts='' append='' keep=0 verbose=0 print_kdir=0
	extra_modules=${EXT4DEC_VM_MODULES:-}
	module_srcs=() make_args=() kos=() bins=() images=() image_rw=() image_bw='' switch_root=0

	need_arg() { [[ $# -ge 2 ]] || vm_die "$1 needs an argument"; }
	while [[ $# -gt 0 ]]; do
		case $1 in
		-k | --kernel) need_arg "$@"; kspec=$2; shift 2 ;;
		-p | --payload) need_arg "$@"; payload=$2; shift 2 ;;
		-m | --module-src) need_arg "$@"; module_srcs+=("$2"); shift 2 ;;
		--make-arg) need_arg "$@"; make_args+=("$2"); shift 2 ;;
		--ko) need_arg "$@"; kos+=("$2"); shift 2 ;;
		--bin) need_arg "$@"; bins+=("$2"); shift 2 ;;
		--modules) need_arg "$@"; extra_modules+=" $2"; shift 2 ;;
		-o | --out) need_arg "$@"; out=$2; shift 2 ;;
		-t | --timeout) need_arg "$@"; timeout_s=$2; shift 2 ;;
		--mem) need_arg "$@"; mem=$2; shift 2 ;;
		--smp) need_arg "$@"; smp=$2; shift 2 ;;
		--disk-size) need_arg "$@"; disk_size=$2; shift 2 ;;
		--mkfs-opts) need_arg "$@"; mkfs_opts=$2; shift 2 ;;
		--mount-opts) need_arg "$@"; mount_opts=$2; shift 2 ;;
		--no-mkfs) mkfs=0; shift ;;
		--no-fsck) fsck=0; shift ;;
		--image) need_arg "$@"; images+=("$2"); image_rw+=(0); shift 2 ;;
		--image-rw) need_arg "$@"; images+=("$2"); image_rw+=(1); shift 2 ;;
		--switch-root) switch_root=1; shift ;;
		--image-bw) need_arg "$@"; image_bw=$2; shift 2 ;;
		--append) need_arg "$@"; append=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		-v | --verbose) verbose=1; shift ;;
		--print-kdir) print_kdir=1; shift ;;
		-h | --help) usage 0 ;;
		*) vm_log "unknown argument: $1"; usage 2 >&2 ;;
		esac
	done
	[[ -n $kspec ]] || vm_die "--kernel is required (e.g. -k 6.1)"
	[[ $timeout_s =~ ^[0-9]+$ ]] || vm_die "--timeout must be a number of seconds"
	[[ -z $image_bw || $image_bw =~ ^[0-9]+$ ]] || vm_die "--image-bw must be a number of MB/s"

	# --- kernel ------------------------------------------------------------------
	kver=$(vm_kernel_for "$kspec")
	vm_kernel_paths "$kver"
	debug_kernel=0
	if vm_kernel_is_debug "$kver"; then debug_kernel=1; fi
	if [[ $print_kdir -eq 1 ]]; then
		printf '%s\n' "$K_KDIR"
		exit 0
	fi
	# the root its modules build in, if not the host (made now, not in
	# the middle of the build's log)
	K_ENV=$(vm_kbuild_env "$kver")

	[[ -n $payload ]] || vm_die "--payload is required"
	[[ -f $payload/run.sh ]] || vm_die "$payload/run.sh does not exist"
	for i in "${!images[@]}"; do
		f=${images[i]}
		[[ -f $f && -r $f ]] || vm_die "--image $f: no such readable file"
		[[ ${image_rw[i]} -eq 0 || -w $f ]] || vm_die "--image-rw $f: not writable"
	done
	[[ $switch_root -eq 0 || ${#images[@]} -gt 0 ]] || vm_die "--switch-root needs an --image or --image-rw disk"
	[[ ${#images[@]} -le 24 ]] || vm_die "at most 24 --image disks"
	qemu=${EXT4DEC_QEMU:-qemu-system-x86_64}
	command -v "$qemu" >/dev/null || vm_die "$qemu not found (run scripts/install-vm-deps.sh)"
	for t in cpio depmod modprobe modinfo ldd; do
		command -v "$t" >/dev/null || vm_die "$t not found (run scripts/install-vm-deps.sh)"
	done

	cache=$(vm_cache_dir)
	if [[ -z $out ]]; then
		out="$cache/runs/$kver-$(date +%Y%m%d-%H%M%S)-$$"
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	work=$(mktemp -d "$out/.work.XXXXXX")
	# shellcheck disable=SC2317 # called through the EXIT trap
	cleanup() { rm -rf "$work"; }
	trap cleanup EXIT

	# --- initramfs (assembled with lib.sh's vm_* helpers) -------------------------

	# Host binaries of the guest userland.  busybox provides the shell and the
	# basic tools (as symlinks); the real e2fsprogs and kmod tools override the
	# busybox applets of the same name.  (Not busybox-static: its standalone
	# shell would run the busybox applets anyway; see vm_guest_busybox.)
	busybox_bin=$(vm_guest_busybox)
	e2fs_required=(mke2fs e2fsck chattr lsattr)
	e2fs_optional=(tune2fs dumpe2fs debugfs filefrag resize2fs e4defrag)
	kmod_bin=$(vm_find_tool kmod) || vm_die "kmod not found"

	# build_base ROOT: populate the kernel-independent part of the guest root.
	build_base() {
		local root=$1 t p
		vm_guest_root "$root" "$busybox_bin" "$kmod_bin"

		for t in "${e2fs_required[@]}"; do
			p=$(vm_find_tool "$t") || vm_die "$t not found (apt-get install e2fsprogs)"
			vm_add_bin "$root" "$p"
		done
		for t in "${e2fs_optional[@]}"; do
			if p=$(vm_find_tool "$t"); then vm_add_bin "$root" "$p"; fi
		done
		for t in mkfs.ext2 mkfs.ext3 mkfs.ext4; do ln -sf mke2fs "$root/bin/$t"; done
		for t in fsck.ext2 fsck.ext3 fsck.ext4; do ln -sf e2fsck "$root/bin/$t"; done
		if [[ -f /etc/mke2fs.conf ]]; then cp /etc/mke2fs.conf "$root/etc/"; fi

		printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
		printf 'root:x:0:\n' >"$root/etc/group"
		cp "$here/init" "$root/init"
		chmod 0755 "$root/init"
	}

	# base_initramfs: print the path of the cached base archive, building it if
	# the inputs (init, the scripts, host binaries) changed.
	base_initramfs() {
		local key f t
		key=$(
			{
				sha256sum "$here/init" "${BASH_SOURCE[0]}" "$here/lib.sh" "$busybox_bin" "$kmod_bin"
				for t in "${e2fs_required[@]}" "${e2fs_optional[@]}"; do
					if f=$(vm_find_tool "$t"); then sha256sum "$f"; fi
				done
				if [[ -f /etc/mke2fs.conf ]]; then sha256sum /etc/mke2fs.conf; fi
			} 2>/dev/null | sha256sum | cut -c1-16
		)
		f="$cache/initramfs/base-$key.cpio"
		if [[ ! -f $f ]]; then
			vm_log "building base initramfs $f"
			mkdir -p "$cache/initramfs"
			local root="$work/base-root"
			build_base "$root"
			{
				vm_cpio_dev_console
				vm_pack_cpio "$root"
			} >"$f.tmp.$$"
			mv "$f.tmp.$$" "$f"
			rm -rf "$root"
			# Drop archives of older inputs (not ones a parallel run may be using).
			find "$cache/initramfs" -name 'base-*.cpio' ! -name "base-$key.cpio" -mmin +60 -delete 2>/dev/null || true
		fi
		printf '%s\n' "$f"
	}

	# module_key SRC: what a build of SRC depends on: the kernel (its
	# release, .config and Module.symvers), the build root, the host's
	# compiler and pahole (for builds outside a root), the make arguments
	# and the variables make takes from the environment, and the names
	# and contents of SRC's files
	module_key() {
		{
			printf '%s\n' "$kver" "$K_KDIR" "$K_ENV" ${make_args[@]+"${make_args[@]}"}
			"${CC:-gcc}" --version 2>/dev/null | head -n 1
			pahole --version 2>/dev/null
			env | grep -E '^(KCFLAGS|KCPPFLAGS|KAFLAGS|CC|LD|LLVM|W|C|V|KBUILD_[A-Z_]+)=' | LC_ALL=C sort
			cat "$K_KDIR/.config" "$K_KDIR/Module.symvers" 2>/dev/null
			(cd "$1" && find . \( -type f -o -type l \) -print0 | LC_ALL=C sort -z |
				xargs -0 sha256sum)
		} | sha256sum | cut -c1-16
	}

	# prune_modules: drop the builds not used for a day, each renamed away
	# first, so that a run never finds one half deleted
	prune_modules() {
		local d
		find "$cache/modules" -mindepth 2 -maxdepth 2 -name .complete -mmin +1440 \
			-printf '%h\n' 2>/dev/null | while IFS= read -r d; do
			mv -T "$d" "$d.old.$$" 2>/dev/null && rm -rf "$d.old.$$"
		done
		# what interrupted builds and prunes left
		find "$cache/modules" -mindepth 1 -maxdepth 1 -type d \
			\( -name '*.tmp.*' -o -name '*.old.*' \) -mmin +1440 -exec rm -rf {} + 2>/dev/null
		return 0
	}

	# build_module SRC: build the out-of-tree module in SRC against the kernel's
	# headers (in a copy, so SRC stays clean) and print the *.ko it produced.
	# The *.ko are kept in $cache/modules/<name>-<module_key> (a day after
	# their last use): the suites of a run build the same module for the
	# same kernel again and again.  A build found there is copied to the
	# run's directory before it is used.
	build_module() {
		local src name bdir log missing kdir tmp
		src=$(cd "$1" && pwd)
		name=$(basename "$src")
		log="$out/build-$name.log"
		kdir="$cache/modules/$name-$(module_key "$src")"
		bdir="$work/build/$name"
		mkdir -p "$bdir"
		if [[ -f $kdir/.complete ]] && cp "$kdir"/*.ko "$bdir/" 2>/dev/null; then
			touch -c "$kdir/.complete"
			echo "built before: $kdir" >"$log"
			vm_log "module $src: built before ($kdir)"
			find "$bdir" -name '*.ko' -type f
			return
		fi
		cp -a "$src/." "$bdir/"
		vm_log "building module $src against $K_KDIR${K_ENV:+ in $K_ENV}"
		# in the root found above (vm_kmake would look it up again)
		if ! vm_kbuild_in "$K_ENV" "$kver" make -C "$K_KDIR" M="$bdir" EXT4DEC_SRCDIR="$src" \
			${make_args[@]+"${make_args[@]}"} -j"$(nproc)" modules >"$log" 2>&1; then
			tail -n 30 "$log" >&2
			missing=$(vm_missing_tool_deps "$kver" | tr '\n' ' ')
			[[ -z $missing ]] || vm_log "missing host packages for building: $missing(run scripts/install-vm-deps.sh)"
			vm_die "module build failed; see $log"
		fi
		mkdir -p "$cache/modules"
		prune_modules
		tmp=$(mktemp -d "$kdir.tmp.XXXXXX")
		find "$bdir" -name '*.ko' -type f -exec cp {} "$tmp/" \;
		touch "$tmp/.complete"
		# another run may have put the same build there meanwhile, or an
		# entry without .complete may be in the way: replace that one
		if ! mv -T "$tmp" "$kdir" 2>/dev/null; then
			if [[ ! -f $kdir/.complete ]] && mv -T "$kdir" "$kdir.old.$$" 2>/dev/null; then
				rm -rf "$kdir.old.$$"
				mv -T "$tmp" "$kdir" 2>/dev/null
			fi
			rm -rf "$tmp"
		fi
		find "$bdir" -name '*.ko' -type f
	}

	# --- per-run archive: payload, modules, config ------------------------------
	t_prep=$SECONDS
	base=$(base_initramfs)

	run_root="$work/run-root"
	mkdir -p "$run_root/payload/modules" "$run_root/etc" "$run_root/bin"
	cp -a "$payload/." "$run_root/payload/"
	cp "$here/../lib/tap.sh" "$run_root/payload/"

	for s in ${module_srcs[@]+"${module_srcs[@]}"}; do
		# Not in a process substitution: a build failure must end the script.
		build_module "$s" >"$work/built.txt"
		[[ -s $work/built.txt ]] || vm_die "building $s produced no .ko"
		mapfile -t -O "${#kos[@]}" kos <"$work/built.txt"
	done

	boot_modules="virtio_pci virtio_blk $extra_modules"
	for m in $boot_modules; do
		vm_add_module_closure "$run_root" "$kver" "$m"
	done
	for ko in ${kos[@]+"${kos[@]}"}; do
		vm_add_ko "$run_root" "$kver" "$ko"
		cp "$ko" "$run_root/payload/modules/"
	done
	vm_depmod "$run_root" "$kver"

	for b in ${bins[@]+"${bins[@]}"}; do
		p=$(vm_find_tool "$b") || p=$b
		[[ -f $p ]] || vm_die "no such binary: $b"
		vm_add_bin "$run_root" "$p"
	done

	# --image disks follow the scratch disk (vda): vdb, vdc, ...
	# (QEMU's -drive wants commas in the file name doubled.)
	image_devs='' image_drives=() letters=bcdefghijklmnopqrstuvwxy
	image_opts=cache=unsafe
	if [[ -n $image_bw ]]; then
		image_opts=cache=none
		[[ $image_bw -eq 0 ]] || image_opts+=",throttling.bps-read=$((image_bw * 1000000))"
	fi
	for i in "${!images[@]}"; do
		f=$(readlink -f "${images[i]}")
		image_devs+="${image_devs:+ }/dev/vd${letters:i:1}"
		snap=snapshot=on,
		[[ ${image_rw[i]} -eq 0 ]] || snap=
		image_drives+=(-drive "file=${f//,/,,},format=raw,if=none,id=image$i,$snap$image_opts"
			-device "virtio-blk-pci,drive=image$i")
	done

	# Configuration read by /init (shell syntax; values quoted with %q).
	{
		printf 'VM_MODULES=%q\n' "$boot_modules"
		printf 'VM_MKFS=%q\nVM_FSCK=%q\n' "$mkfs" "$fsck"
		printf 'VM_MKFS_OPTS=%q\nVM_MOUNT_OPTS=%q\n' "$mkfs_opts" "$mount_opts"
		printf 'VM_PAYLOAD_TIMEOUT=%q\n' "$timeout_s"
		printf 'VM_IMAGES=%q\n' "$image_devs"
		printf 'VM_SWITCH_ROOT=%q\n' "$switch_root"
	} >"$run_root/etc/ext4dec-vm.conf"

	# The base archive, then the run's (later files override earlier ones):
	# QEMU takes a single -initrd file.
	initrd="$work/initrd.cpio"
	vm_pack_cpio "$run_root" >"$work/run.cpio"
	cat "$base" "$work/run.cpio" >"$initrd"

	disk="$work/scratch.img"
	truncate -s "$disk_size" "$disk"
	vm_log "prepared initramfs ($(du -h "$initrd" | cut -f1)) and ${disk_size} disk in $((SECONDS - t_prep))s"
	for i in "${!images[@]}"; do
		if [[ ${image_rw[i]} -eq 0 ]]; then
			vm_log "image ${images[i]} attached ($image_opts); guest writes go to a throwaway overlay"
		else
			vm_log "image ${images[i]} attached ($image_opts); guest writes go to it"
		fi
	done
	[[ $switch_root -eq 0 ]] || vm_log "the guest switches to ${image_devs%% *} as its root, with its own init"

	# --- QEMU ----------------------------------------------------------------------
	cmdline="console=ttyS0,115200 panic=-1 loglevel=7 printk.time=1 random.trust_cpu=on"
	# Debug kernel: report every KASAN bug, not only the first one; route PCI
	# interrupts with the BIOS table instead of ACPI: evaluating QEMU's _PRT
	# method (a 128-iteration AML loop) takes 25 s under KASAN + lockdep + TCG.
	if [[ $debug_kernel -eq 1 ]]; then
		cmdline+=" ${EXT4DEC_VM_DEBUG_APPEND-kasan_multi_shot pci=noacpi}"
	fi
	[[ -z $append ]] || cmdline+=" $append"

	console_log="$out/console.log" results_log="$out/results.log"
	rm -f "$console_log" "$results_log"
	if [[ $verbose -eq 1 ]]; then
		console_dev=(-chardev "stdio,id=con,signal=off,logfile=$console_log")
	else
		console_dev=(-chardev "file,id=con,path=$console_log")
	fi

	vm_qemu_cmd "$qemu" "$smp" "$mem" "$initrd" "$cmdline"
	qemu_cmd=(
		"${VM_QEMU_CMD[@]}"
		"${console_dev[@]}" -serial chardev:con
		-chardev "file,id=res,path=$results_log" -serial chardev:res
		-drive "file=$disk,format=raw,if=none,id=scratch,cache=unsafe"
		-device "virtio-blk-pci,drive=scratch"
		${image_drives[@]+"${image_drives[@]}"}
	)
	# KASAN + lockdep under TCG boot several times slower.
	boot_budget=${EXT4DEC_VM_BOOT_TIMEOUT:-$([[ $debug_kernel -eq 1 ]] && echo 600 || echo 180)}
	host_timeout=$((timeout_s + boot_budget))
	printf '%q ' "${qemu_cmd[@]}" >"$out/qemu-cmd.txt"
	vm_log "booting $kver$([[ $debug_kernel -eq 1 ]] && echo ' (debug)') ($VM_ACCEL_NAME, smp=$smp, mem=${mem}M, limit ${host_timeout}s); output in $out"

	t_boot=$(date +%s.%N)
	qemu_rc=0
	if [[ $verbose -eq 1 ]]; then
		timeout -k 10 "$host_timeout" "${qemu_cmd[@]}" </dev/null >&2 || qemu_rc=$?
	else
		timeout -k 10 "$host_timeout" "${qemu_cmd[@]}" </dev/null >"$out/qemu.log" 2>&1 || qemu_rc=$?
	fi
	t_end=$(date +%s.%N)
	wall=$(awk -v a="$t_boot" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')

	if [[ $keep -eq 1 ]]; then
		mv "$disk" "$initrd" "$out/"
	fi

	# --- results ---------------------------------------------------------------------
	touch "$results_log" "$console_log"
	tr -d '\r' <"$results_log" >"$work/results"

	# section BEGIN END: lines strictly between two marker lines.
	section() {
		awk -v b="$1" -v e="$2" '$0 == e { exit } on { print } $0 == b { on = 1 }' "$work/results"
	}
	marker() { sed -n "s/^$1 //p" "$work/results" | tail -n 1; }

	section EXT4DEC-VM-PAYLOAD-BEGIN EXT4DEC-VM-PAYLOAD-END >"$out/tap.txt"
	section EXT4DEC-VM-DMESG-BEGIN EXT4DEC-VM-DMESG-END >"$out/dmesg.txt"
	cat "$out/tap.txt"

	failures=()
	[[ $qemu_rc -eq 124 || $qemu_rc -eq 137 ]] && failures+=("QEMU killed after ${host_timeout}s (host timeout)")
	[[ $qemu_rc -ne 0 && $qemu_rc -ne 124 && $qemu_rc -ne 137 ]] && failures+=("QEMU exited with status $qemu_rc (see $out/qemu.log)")
	grep -qx 'EXT4DEC-VM-END' "$work/results" || failures+=("guest did not finish (no EXT4DEC-VM-END marker): crash, panic or hang; see console.log")

	boot_uptime=$(marker EXT4DEC-VM-BEGIN | sed -n 's/^uptime=//p')
	err=$(marker EXT4DEC-VM-ERROR)
	[[ -z $err ]] || failures+=("guest setup error: $err")
	rc=$(marker EXT4DEC-VM-EXIT)
	if [[ -z $rc ]]; then
		failures+=("no payload exit status")
	elif [[ $rc == 124 ]]; then
		failures+=("payload timed out (guest limit ${timeout_s}s; blocked tasks and CPU backtraces are in dmesg.txt)")
	elif [[ $rc == 125 ]]; then
		: # setup error, reported above
	elif [[ $rc != 0 ]]; then
		failures+=("payload exited with status $rc")
	fi
	fsck_rc=$(marker EXT4DEC-VM-FSCK)
	case ${fsck_rc:--1} in
	-1 | 0) ;;
	-2) failures+=("scratch file system could not be unmounted for fsck") ;;
	*) failures+=("e2fsck -fn reported errors (status $fsck_rc); see console.log") ;;
	esac
	if grep -Eq '^not ok' "$out/tap.txt" && grep -E '^not ok' "$out/tap.txt" | grep -Eqvi '#[[:space:]]*todo'; then
		failures+=("TAP output contains 'not ok'")
	fi
	tap_why=$(tap_plan_problem "$out/tap.txt") || failures+=("$tap_why")

	# Kernel problems.  Scan the guest dmesg and the kernel's lines on the
	# serial console: the ring buffer dumped at the end may have lost an
	# early report to a noisy run, and a crash leaves no dump at all.
	# Most sanitizer and lockdep reports start with "BUG:" or "WARNING:"
	# (e.g. "BUG: KASAN: ...", "BUG: KFENCE: ...", "WARNING: suspicious RCU
	# usage"); the rest are listed for the debug kernel: UBSAN, lockdep's
	# non-static key and DEBUG_LOCKS_WARN_ON, debugobjects (ODEBUG), SLUB
	# debug ("BUG kmalloc-64 (Not tainted): ..."), kmemleak (its summary; the
	# objects are printed with kmemleak.verbose=1).  Then ext4's own error
	# reports, the scheduler throttling a real-time task (the inflate
	# workers), and ext4dec's hook errors.
	bad_re='Oops|BUG:|kernel BUG at|WARNING:|Kernel panic|general protection fault|KASAN|UBSAN|KFENCE|sleeping function called from invalid context|soft lockup|hard LOCKUP|blocked for more than|rcu: INFO|detected stalls? on CPUs|Call Trace:|list_(add|del) corruption|refcount_t:|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|possible irq lock inversion|bad unlock balance|held lock freed|trying to register non-static key|DEBUG_LOCKS_WARN_ON|ODEBUG:|BUG [^ ]+ \((Not tainted|Tainted: [^)]*)\): |suspected memory leak|unreferenced object 0x|EXT4-fs error|RT throttling activated|ext4dec: (hook [^ ]+: |unhooking|[^ ]+ not found|ext4 is not available)'
	{
		tr -d '\r' <"$out/dmesg.txt"
		tr -d '\r' <"$console_log" | grep -E '^<?[0-9]*>?\[ *[0-9]+\.[0-9]+\] '
	} | grep -E "$bad_re" | awk '!seen[$0]++' >"$work/bad" || true
	if [[ -n ${EXT4DEC_VM_DMESG_IGNORE:-} && -s $work/bad ]]; then
		grep -Ev "$EXT4DEC_VM_DMESG_IGNORE" "$work/bad" >"$work/bad2" || true
		mv "$work/bad2" "$work/bad"
	fi
	if [[ -s $work/bad ]]; then
		failures+=("kernel log has $(wc -l <"$work/bad") suspicious line(s):")
		while IFS= read -r l; do failures+=("    $l"); done < <(head -n 20 "$work/bad")
	fi

	{
		echo "kernel: $kver ($(vm_kernel_info "$kver" image_pkg) $(vm_kernel_info "$kver" version)$([[ $debug_kernel -eq 1 ]] && echo ', debug build'))"
		echo "accel: ${VM_ACCEL[*]}"
		echo "boot to /init: ${boot_uptime:-?}s guest uptime; QEMU wall time: ${wall}s"
		echo "payload exit: ${rc:-none}; fsck: ${fsck_rc:-none}; qemu exit: $qemu_rc"
		if [[ ${#failures[@]} -eq 0 ]]; then
			echo "result: PASS"
		else
			echo "result: FAIL"
			printf '  %s\n' "${failures[@]}"
		fi
		echo "output: $out"
	} >"$out/summary.txt"
	sed 's/^/ext4dec-vm: /' "$out/summary.txt" >&2

	if [[ ${#failures[@]} -gt 0 ]]; then
		if ! grep -qx 'EXT4DEC-VM-END' "$work/results"; then
			vm_log "last console lines:"
			tr -d '\r' <"$console_log" | tail -n 40 | sed 's/^/    /' >&2
		fi
		exit 1
	fi
	exit 0
}

main "$@"
