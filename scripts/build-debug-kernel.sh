#!/usr/bin/env bash
#
# scripts/build-debug-kernel.sh - build the "debug" kernel of the QEMU test
# harness (tests/vm/run-vm.sh -k debug): Debian's linux-source-<series> with
# KASAN (generic, inline), lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP,
# KFENCE, UBSAN, DEBUG_LIST, DEBUG_VM, DEBUG_OBJECTS, DEBUG_PAGEALLOC (off
# at boot), kmemleak (off at boot) and fault injection, plus what ext4dec
# needs (ftrace with regs, kprobes, KALLSYMS_ALL, livepatch, ext4, fscrypt,
# fs-verity, loop, memcg).
#
# Usage: scripts/build-debug-kernel.sh [options]
#
#       --series S      linux-source series: "6.1", "7.3", or "newest" (the
#                       series of the newest Debian cloud kernel of the newer
#                       suites, tests/vm/lib.sh, resolved now); default
#                       newest: the debug lane covers the newest line (its
#                       build fits the CI budget; see default_series below)
#       --fragment FILE extra Kconfig fragment applied after the built-in one
#                       (repeatable; part of the cache key)
#   -j, --jobs N        parallel make jobs (default: nproc)
#       --no-build      only look in the cache; exit 3 if the kernel is not
#                       built (same as EXT4DEC_DEBUG_KERNEL_NO_BUILD=1)
#       --print-kver    print only the kernel release on stdout (for scripts;
#                       progress and the summary go to stderr)
#       --print-dir     print only the cache directory on stdout
#       --show-config   print the built-in config fragment and exit
#       --prune         after a successful build or cache hit, delete the
#                       other cached debug kernels (older keys) of the series
#   -h, --help
#
# Configuration: x86_64_defconfig + the fragment in fragment() below
# (+ --fragment files), merged with scripts/kconfig/merge_config.sh, then
# olddefconfig.  Every "CONFIG_X=..." line of the fragments must survive
# olddefconfig or the build stops (a missing dependency would otherwise
# silently drop, say, KASAN).  The trim list ("is not set" lines) removes
# hardware and subsystems the QEMU guest does not have; what Kconfig
# re-selects anyway is only reported.  Symbols later kernels renamed or
# dropped are mapped by compat() below, for the series that need it.
#
# Where it builds: a series of the host's release (6.1 on bookworm) from
# the installed linux-source-<series> with the host's toolchain; a newer
# series (7.3 from trixie-backports) from the linux-source-<series> .deb
# of the newer suites (downloaded with the private apt configuration of
# tests/vm/lib.sh, never installed) in a cached root of that release with
# its gcc and the kernel's build tools (scripts/lib/buildenv.sh); modules
# for it build in that root too (tests/vm/kmake.sh, run-vm.sh).
#
# Cache ($EXT4DEC_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/ext4dec):
#   kernels-debug/<version>-<hash>/      one build; <version> is the
#       linux-source-<series> package version, <hash> covers the series,
#       that version, gcc's major version (a newer series: its build
#       root's key, which covers the versions of gcc and the rest), the
#       fragments, the compat() lines applied and the recipe number below
#       (not the rest of this script: editing it costs no rebuild).  Same
#       key = cache hit, nothing is rebuilt.
#     src/        the unpacked source, built in place: it is also the tree
#                 for out-of-tree modules (make -C src M=<dir> modules)
#     root/boot/vmlinuz-<kver>, config-<kver>, System.map-<kver>
#     root/lib/modules/<kver>/       modules_install + depmod output
#     root/usr/src/linux-headers-<kver> -> ../../../src
#     info        key=value lines (kver, version, build times, ...)
#     build.log   make output;   .complete   written last
#   kernels/<kver> -> ../kernels-debug/<key>   so the harness finds the
#       kernel like a fetched Debian one (tests/vm/lib.sh)
#   kernels-debug/.lock   flock(1): one debug kernel build at a time
# <kver> is <version>-ext4dec-debug-<first 8 of hash>, e.g.
# 6.1.192-ext4dec-debug-0123abcd, so modules built for one configuration
# never load into another.
#
# An interrupted build resumes in the same directory (make is incremental).
# For a series of the host's release, installs missing host packages with
# apt-get (as root or through sudo):
#   linux-source-<series> build-essential bc bison flex libelf-dev
#   libssl-dev dwarves cpio kmod rsync xz-utils
# A newer series installs nothing: its root has gcc and the same tools
# (tool_pkgs below).
#
# Exit status: 0 ok, 1 build failure, 2 usage error, 3 not cached and
# building was not allowed.

set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")
# shellcheck source-path=SCRIPTDIR source=../tests/vm/lib.sh
. "$here/../tests/vm/lib.sh"

# The build's recipe: raise it when a change to the steps below (make
# targets, how the configuration is merged) changes the kernel built; the
# cache key covers it, not the rest of this script.
recipe=1

# The series of "-k debug", the debug lane of make check: the newest line.
# Its build takes 760 s of CPU with -j2 (7.3.4; 6.1: 580 s) and adds about
# three minutes to a fresh CI run of about 25, within the budget of 90;
# --series 6.1 still builds the older one.
default_series=newest

# The packages a kernel build needs in the root of a newer series (besides
# those of every root, scripts/lib/buildenv.sh): the release's gcc (gcc-14
# in trixie, what Debian builds its kernels with) and kbuild's tools.
tool_pkgs=(gcc bc bison flex libelf-dev libssl-dev dwarves cpio kmod)

# compat: the fragment's symbols that later kernels renamed, dropped or
# no longer offer.  "SYMBOL SINCE NEW": from series SINCE on, the
# fragment's lines of CONFIG_SYMBOL are about CONFIG_NEW instead ("-":
# dropped; the comment says why that loses nothing).  The lines that
# apply to a series are part of the cache key; NEW is checked against the
# tree's Kconfig, and the fragment's usual check (every CONFIG_ line
# survives olddefconfig) covers the result.
compat() {
	cat <<'COMPAT'
# UBSAN instruments the whole kernel whenever it is on
UBSAN_SANITIZE_ALL	6.9	-
# crc32c() is part of lib/crc's CRC32, which ext4 selects
LIBCRC32C	6.15	CRC32
# x86 has lazy preemption: VOLUNTARY (and NONE) remain for the
# architectures without it; Debian's 7.x cloud kernels are PREEMPT_LAZY
# (with PREEMPT_DYNAMIC, as before)
PREEMPT_VOLUNTARY	7.0	PREEMPT_LAZY
COMPAT
}

# fragment: the Kconfig fragment of the debug kernel.
fragment() {
	cat <<'FRAGMENT'
# --- guest hardware: QEMU "pc" machine, virtio disk, serial console --------
CONFIG_IKCONFIG=y
CONFIG_IKCONFIG_PROC=y
# CONFIG_LOCALVERSION_AUTO is not set
CONFIG_LOG_BUF_SHIFT=20
CONFIG_HYPERVISOR_GUEST=y
CONFIG_PARAVIRT=y
CONFIG_KVM_GUEST=y
# CONFIG_XEN is not set
# CONFIG_HYPERV is not set
CONFIG_PCI=y
CONFIG_PCI_MSI=y
CONFIG_VIRTIO_MENU=y
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_CONSOLE=y
CONFIG_HW_RANDOM_VIRTIO=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_ACPI=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_TMPFS_POSIX_ACL=y
CONFIG_NR_CPUS=64
# as in Debian's cloud kernel
CONFIG_HZ_250=y
CONFIG_PREEMPT_VOLUNTARY=y
CONFIG_PREEMPT_DYNAMIC=y
# --- trimmed: hardware the guest lacks, subsystems the tests do not use ----
# CONFIG_WERROR is not set
# CONFIG_SOUND is not set
# CONFIG_DRM is not set
# CONFIG_FB is not set
# CONFIG_AGP is not set
# CONFIG_USB_SUPPORT is not set
# CONFIG_HID is not set
# CONFIG_INPUT_KEYBOARD is not set
# CONFIG_INPUT_MOUSE is not set
# CONFIG_INPUT_JOYSTICK is not set
# CONFIG_INPUT_TABLET is not set
# CONFIG_INPUT_TOUCHSCREEN is not set
# CONFIG_INPUT_MISC is not set
# CONFIG_SERIO is not set
# CONFIG_VT is not set
# CONFIG_WIRELESS is not set
# CONFIG_WLAN is not set
# CONFIG_CFG80211 is not set
# CONFIG_MAC80211 is not set
# CONFIG_RFKILL is not set
# CONFIG_NETDEVICES is not set
# CONFIG_ETHERNET is not set
# CONFIG_PHYLIB is not set
# CONFIG_USB_NET_DRIVERS is not set
# no TCP/IP at all (the guest has no network); NET and UNIX sockets stay
# CONFIG_INET is not set
# CONFIG_NETFILTER is not set
# CONFIG_NET_SCHED is not set
# CONFIG_NETLABEL is not set
# CONFIG_XFRM_USER is not set
# CONFIG_NET_9P is not set
# CONFIG_NETWORK_FILESYSTEMS is not set
# CONFIG_PCCARD is not set
# CONFIG_ATA is not set
# CONFIG_SCSI is not set
# CONFIG_MD is not set
# CONFIG_I2C is not set
# CONFIG_HWMON is not set
# CONFIG_THERMAL is not set
# CONFIG_WATCHDOG is not set
# CONFIG_MMC is not set
# CONFIG_PTP_1588_CLOCK is not set
# CONFIG_PPS is not set
# CONFIG_CPU_FREQ is not set
# CONFIG_HIBERNATION is not set
# CONFIG_SUSPEND is not set
# CONFIG_PM_DEBUG is not set
# CONFIG_EFI is not set
# CONFIG_KVM is not set
# CONFIG_KEXEC is not set
# CONFIG_CRASH_DUMP is not set
# CONFIG_MICROCODE is not set
# CONFIG_X86_MCE is not set
# CONFIG_PERF_EVENTS_INTEL_UNCORE is not set
# CONFIG_PERF_EVENTS_INTEL_RAPL is not set
# CONFIG_PERF_EVENTS_INTEL_CSTATE is not set
# CONFIG_PERF_EVENTS_AMD_UNCORE is not set
# CONFIG_ASYMMETRIC_KEY_TYPE is not set
# CONFIG_SYSTEM_TRUSTED_KEYRING is not set
# CONFIG_IOMMU_SUPPORT is not set
# CONFIG_X86_PLATFORM_DEVICES is not set
# CONFIG_DMADEVICES is not set
# CONFIG_HOTPLUG_PCI is not set
# CONFIG_ACPI_VIDEO is not set
# CONFIG_ACPI_BATTERY is not set
# CONFIG_ACPI_AC is not set
# CONFIG_ACPI_FAN is not set
# CONFIG_ACPI_DOCK is not set
# CONFIG_AUDIT is not set
# CONFIG_SECURITY_SELINUX is not set
# CONFIG_BPF_SYSCALL is not set
# CONFIG_CGROUP_DEBUG is not set
# CONFIG_VFAT_FS is not set
# CONFIG_MSDOS_FS is not set
# CONFIG_ISO9660_FS is not set
# CONFIG_AUTOFS_FS is not set
# CONFIG_FUSE_FS is not set
# the benchmark's other file systems: it runs on Debian's kernels
# CONFIG_BTRFS_FS is not set
# CONFIG_SQUASHFS is not set
# CONFIG_EROFS_FS is not set
# CONFIG_ETHTOOL_NETLINK is not set
# CONFIG_PROFILING is not set
# CONFIG_X86_MSR is not set
# CONFIG_X86_CPUID is not set
# CONFIG_DMI_SYSFS is not set
# CONFIG_MACINTOSH_DRIVERS is not set
# CONFIG_LOGO is not set
# CONFIG_EARLY_PRINTK_DBGP is not set
# CONFIG_EARLY_PRINTK_USB is not set
# CONFIG_PROVIDE_OHCI1394_DMA_INIT is not set
# CONFIG_MODVERSIONS is not set
# CONFIG_MODULE_SIG is not set
# --- what ext4dec and its tests use ------------------------------------------
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_KPROBES=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_FUNCTION_GRAPH_TRACER=y
CONFIG_DYNAMIC_FTRACE=y
CONFIG_DYNAMIC_FTRACE_WITH_REGS=y
CONFIG_STACK_TRACER=y
CONFIG_FTRACE_SYSCALLS=y
CONFIG_KPROBE_EVENTS=y
CONFIG_LIVEPATCH=y
CONFIG_ZLIB_INFLATE=y
CONFIG_LIBCRC32C=y
# lib/zstd and lib/lz4's decompressors, which these select
CONFIG_RD_ZSTD=y
CONFIG_RD_LZ4=y
CONFIG_EXT4_FS=y
CONFIG_EXT4_USE_FOR_EXT2=y
CONFIG_EXT4_FS_POSIX_ACL=y
CONFIG_EXT4_FS_SECURITY=y
CONFIG_FS_ENCRYPTION=y
CONFIG_FS_VERITY=y
CONFIG_UNICODE=y
CONFIG_QUOTA=y
CONFIG_BLK_DEV_LOOP=y
CONFIG_CRYPTO_AES=y
CONFIG_CRYPTO_XTS=y
CONFIG_CRYPTO_CTS=y
CONFIG_CRYPTO_SHA256=y
CONFIG_CRYPTO_SHA512=y
CONFIG_CRYPTO_HCTR2=y
CONFIG_CGROUPS=y
CONFIG_MEMCG=y
CONFIG_BLK_CGROUP=y
CONFIG_CGROUP_WRITEBACK=y
CONFIG_TRANSPARENT_HUGEPAGE=y
CONFIG_SWAP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_BINFMT_MISC=y
# --- debugging -------------------------------------------------------------------
CONFIG_DEBUG_KERNEL=y
CONFIG_DEBUG_INFO_NONE=y
CONFIG_DEBUG_FS=y
CONFIG_DEBUG_FS_ALLOW_ALL=y
CONFIG_DEBUG_BUGVERBOSE=y
CONFIG_FRAME_WARN=2048
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_KASAN_VMALLOC=y
CONFIG_KFENCE=y
CONFIG_UBSAN=y
CONFIG_UBSAN_BOUNDS=y
CONFIG_UBSAN_SHIFT=y
CONFIG_UBSAN_BOOL=y
CONFIG_UBSAN_ENUM=y
CONFIG_UBSAN_SANITIZE_ALL=y
# CONFIG_UBSAN_ALIGNMENT is not set
CONFIG_PROVE_LOCKING=y
CONFIG_PROVE_RCU=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_DEBUG_PREEMPT=y
CONFIG_DEBUG_IRQFLAGS=y
CONFIG_LOCKDEP_BITS=16
CONFIG_LOCKDEP_CHAINS_BITS=17
CONFIG_LOCKDEP_STACK_TRACE_BITS=20
CONFIG_DEBUG_LIST=y
CONFIG_DEBUG_PLIST=y
CONFIG_DEBUG_SG=y
CONFIG_DEBUG_VM=y
CONFIG_DEBUG_PAGEALLOC=y
# CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT is not set
CONFIG_DEBUG_OBJECTS=y
CONFIG_DEBUG_OBJECTS_FREE=y
CONFIG_DEBUG_OBJECTS_TIMERS=y
CONFIG_DEBUG_OBJECTS_WORK=y
CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
CONFIG_DEBUG_OBJECTS_PERCPU_COUNTER=y
CONFIG_DEBUG_OBJECTS_ENABLE_DEFAULT=1
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF=y
CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN=y
CONFIG_FAULT_INJECTION=y
CONFIG_FAILSLAB=y
CONFIG_FAIL_PAGE_ALLOC=y
CONFIG_FAIL_MAKE_REQUEST=y
CONFIG_FUNCTION_ERROR_INJECTION=y
CONFIG_FAIL_FUNCTION=y
CONFIG_FAULT_INJECTION_DEBUG_FS=y
CONFIG_SOFTLOCKUP_DETECTOR=y
CONFIG_DETECT_HUNG_TASK=y
CONFIG_WQ_WATCHDOG=y
CONFIG_SCHED_STACK_END_CHECK=y
CONFIG_DEBUG_STACK_USAGE=y
CONFIG_HARDENED_USERCOPY=y
CONFIG_FORTIFY_SOURCE=y
# CONFIG_PANIC_ON_OOPS is not set
# CONFIG_BUG_ON_DATA_CORRUPTION is not set
FRAGMENT
}

# compat_for SERIES: the compat() lines that apply to SERIES (comments out)
compat_for() {
	local sym since new
	while read -r sym since new; do
		[[ -n $sym && $sym != \#* ]] || continue
		dpkg --compare-versions "$1" ge "$since" && printf '%s %s\n' "$sym" "$new"
	done < <(compat | sed 's/[[:space:]]*#.*//')
	return 0
}

# The whole script is one function, so bash parses all of it before running
# anything: editing this file during a (long) build does not break the build.
main() {
	log() { printf 'build-debug-kernel: %s\n' "$*" >&2; }
	# die MESSAGE [STATUS]
	die() {
		printf 'build-debug-kernel: error: %s\n' "$1" >&2
		exit "${2:-1}"
	}
	usage() {
		sed -n '3,/^$/{s/^# \{0,1\}//;p}' "$self"
		exit "${1:-0}"
	}

	local series=$default_series jobs print=summary prune=0 no_build=${EXT4DEC_DEBUG_KERNEL_NO_BUILD:-0}
	local extra_fragments=() f
	jobs=$(nproc)
	while [[ $# -gt 0 ]]; do
		case $1 in
		--series) [[ $# -ge 2 ]] || die "$1 needs an argument" 2; series=$2; shift 2 ;;
		--fragment) [[ $# -ge 2 ]] || die "$1 needs an argument" 2; extra_fragments+=("$(readlink -f "$2")"); shift 2 ;;
		-j | --jobs) [[ $# -ge 2 ]] || die "$1 needs an argument" 2; jobs=$2; shift 2 ;;
		--no-build) no_build=1; shift ;;
		--print-kver) print=kver; shift ;;
		--print-dir) print=dir; shift ;;
		--show-config) fragment; exit 0 ;;
		--prune) prune=1; shift ;;
		-h | --help) usage 0 ;;
		*) log "unknown argument: $1"; usage 2 >&2 ;;
		esac
	done
	[[ $series == newest || $series =~ ^[0-9]+\.[0-9]+$ ]] || die "--series wants a version like 6.1 or \"newest\", not '$series'" 2
	[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number" 2
	for f in ${extra_fragments[@]+"${extra_fragments[@]}"}; do
		[[ -f $f ]] || die "no such fragment: $f" 2
	done

	# --- host packages ---------------------------------------------------------
	# install_missing PKG...: apt_install_missing (scripts/lib/apt.sh) or die
	install_missing() {
		apt_install_missing "$@" || die "cannot install $*"
	}

	# --- the source: the host's release, or the newer suites -----------------
	# rel: the release of the newer suites the source comes from, whose
	# root builds it ("" for the host's); APT_OPTS: apt's configuration
	# for rel's lists (tests/vm/lib.sh), local to this script's functions
	local rel='' set ver
	local -a APT_OPTS=()
	if [[ $series == newest ]]; then
		vm_resolve_kernel newest || die "cannot resolve the newest kernel line (no cloud kernel with headers in: $EXT4DEC_APT_SETS)"
		[[ $R_VERSION =~ ^([0-9]+\.[0-9]+) ]] || die "newest: cannot read a series in version $R_VERSION"
		series=${BASH_REMATCH[1]}
		log "newest -> $series ($R_IMAGE $R_VERSION, $R_HOW)"
	fi
	local src_pkg="linux-source-$series" tarball="/usr/src/linux-source-$series.tar.xz" version
	version=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || true)
	if [[ -z $version ]] && [[ -z $(apt_candidate "$src_pkg") ]] && _vm_newer_than_host "$series"; then
		# the highest version the newer suites have
		for set in $EXT4DEC_APT_SETS; do
			vm_apt_update "$set" || { log "warning: cannot fetch the package lists of $set"; continue; }
			ver=$(apt_candidate "$src_pkg")
			if [[ -n $ver ]] && { [[ -z $version ]] || dpkg --compare-versions "$ver" gt "$version"; }; then
				version=$ver rel=$set
			fi
		done
		[[ -n $rel ]] || die "no $src_pkg in the host's package lists nor in the newer suites ($EXT4DEC_APT_SETS)"
		vm_apt_use "$rel"
		log "$src_pkg $version from $rel ($(vm_apt_suites "$rel")); builds in $rel's root"
	elif [[ -z $version || ! -f $tarball ]]; then
		[[ $no_build == 1 ]] && die "$src_pkg is not installed, so no debug kernel can be identified (unset EXT4DEC_DEBUG_KERNEL_NO_BUILD to install and build it)" 3
		install_missing "$src_pkg"
		version=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || true)
		[[ -n $version && -f $tarball ]] || die "$src_pkg installed no $tarball"
	fi

	# envdir: the build root of rel (scripts/lib/buildenv.sh); its name is
	# its key.  Made when the build starts.
	local envdir='' envroot=''
	if [[ -n $rel ]]; then
		envdir=$(vm_buildenv_dir "$rel" "${tool_pkgs[@]}") || die "cannot key the $rel build root"
	fi
	local compat_lines
	compat_lines=$(compat_for "$series")

	# --- cache key ---------------------------------------------------------------
	local cc_version hash key cache base dir src root localversion kver=''
	# what decides the kernel built: not this script's other lines, so that
	# editing them does not cost a rebuild
	local cc_key
	if [[ -n $rel ]]; then
		cc_key="buildenv $(basename "$envdir")"
	else
		cc_key=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
	fi
	hash=$(
		{
			printf 'series=%s\nsource=%s %s\ngcc=%s\nrecipe=%s\n' "$series" "$src_pkg" \
				"$version" "$cc_key" "$recipe"
			if [[ -n $compat_lines ]]; then printf 'compat %s\n' "$compat_lines"; fi
			fragment
			for f in ${extra_fragments[@]+"${extra_fragments[@]}"}; do
				printf '# --fragment %s\n' "$(basename "$f")"
				cat "$f"
			done
		} | sha256sum | cut -c1-12
	)
	key="${version//[^A-Za-z0-9.+-]/_}-$hash"
	localversion="-ext4dec-debug-${hash:0:8}"
	cache=$(vm_cache_dir)
	base="$cache/kernels-debug"
	dir="$base/$key"
	src="$dir/src"
	root="$dir/root"

	# info KEY: one value of $dir/info.
	info() { sed -n "s/^$1=//p" "$dir/info"; }

	# finish hit|built: print what the caller asked for, and the summary: on
	# stdout by default; with --print-kver/--print-dir on stderr, and only
	# after a build.
	finish() {
		case $print in
		kver) printf '%s\n' "$kver" ;;
		dir) printf '%s\n' "$dir" ;;
		esac
		summary() {
			printf 'debug kernel %s (%s %s, key %s)\n' "$kver" "$src_pkg" "$version" "$key"
			printf '  bzImage:    %s\n' "$root/boot/vmlinuz-$kver"
			printf '  modules:    %s\n' "$root/lib/modules/$kver"
			printf '  build tree: %s  (make -C <that> M=<dir> modules)\n' "$src"
			printf '  config:     %s (%s =y, %s =m)\n' "$root/boot/config-$kver" "$(info config_y)" "$(info config_m)"
			printf '  built:      %s; make -j%s took %s s, %s s of CPU (%s s in all)\n' \
				"$(info built)" "$(info jobs)" "$(info make_seconds)" "$(info make_cpu_seconds)" "$(info total_seconds)"
			printf '  boot it:    tests/vm/run-vm.sh -k debug-%s -p <payload>\n' "$series"
		}
		if [[ $print == summary ]]; then
			summary
		elif [[ $1 == built ]]; then
			summary >&2
		fi
	}

	# link_kernel: kernels/<kver> -> ../kernels-debug/<key>, so tests/vm/lib.sh
	# finds the kernel like a fetched Debian one.
	link_kernel() {
		mkdir -p "$cache/kernels"
		ln -sfn "../kernels-debug/$key" "$cache/kernels/$kver.tmp.$$"
		mv -T "$cache/kernels/$kver.tmp.$$" "$cache/kernels/$kver"
	}

	# prune_others: delete the other debug kernels of this series and their links.
	prune_others() {
		local d k
		for d in "$base"/*/; do
			d=${d%/}
			[[ $d != "$dir" && -f $d/series && $(cat "$d/series") == "$series" ]] || continue
			k=$(sed -n 's/^kver=//p' "$d/info" 2>/dev/null || true)
			log "pruning $d"
			if [[ -n $k && -L $cache/kernels/$k ]]; then rm -f "$cache/kernels/$k"; fi
			rm -rf "$d"
		done
	}

	# cache_hit: finish and exit if $dir holds a complete build.
	cache_hit() {
		[[ -f $dir/.complete ]] || return 0
		kver=$(info kver)
		[[ -L $cache/kernels/$kver ]] || link_kernel
		if [[ $prune == 1 ]]; then prune_others; fi
		finish hit
		exit 0
	}

	mkdir -p "$base"
	if [[ -f $dir/.complete ]]; then
		# Pruning deletes directories: take the lock for it.
		if [[ $prune == 1 ]]; then exec 9>>"$base/.lock" && flock -x 9; fi
		cache_hit
	fi
	[[ $no_build == 1 ]] && die "the debug kernel for $src_pkg $version is not built (no $dir/.complete); build it with scripts/build-debug-kernel.sh --series $series (several minutes: make takes 580 s of CPU for 6.1, 760 s for 7.3), or unset EXT4DEC_DEBUG_KERNEL_NO_BUILD" 3

	exec 9>>"$base/.lock"
	if ! flock -n -x 9; then
		log "waiting for another debug kernel build to finish (lock $base/.lock)"
		flock -x 9
	fi
	cache_hit # someone else may have built it while we waited

	local t_all=$SECONDS resumed=0
	mkdir -p "$dir"
	printf '%s\n' "$series" >"$dir/series"
	# in_env CMD...: run CMD in $dir, on the host or in rel's root (where
	# $dir is seen at its own path)
	in_env() {
		if [[ -n $envroot ]]; then
			(cd "$dir" && vm_env_run "$envroot" "$dir" -- "$@")
		else
			(cd "$dir" && "$@")
		fi
	}
	local depmod
	if [[ -n $rel ]]; then
		envroot=$(vm_buildenv_root "$rel" "${tool_pkgs[@]}") || die "cannot make the $rel build root"
		[[ $envroot == "$envdir/root" ]] || die "the $rel build root changed while starting ($envroot, keyed $envdir)"
		depmod=depmod
	else
		install_missing build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod rsync xz-utils
		depmod=$(command -v depmod)
	fi
	local cc_version
	cc_version=$(in_env gcc --version 2>/dev/null | head -n 1 || true)

	# --- unpack --------------------------------------------------------------------
	if [[ ! -f $dir/.unpacked ]]; then
		rm -rf "$src"
		mkdir -p "$src"
		if [[ -n $rel ]]; then
			# the .deb's tarball, straight out of it
			rm -rf "$dir/deb"
			apt_download "$dir/deb" "$src_pkg=$version" || die "cannot download $src_pkg=$version from $rel"
			log "unpacking $tarball of $(basename "$dir"/deb/*.deb) into $src"
			dpkg-deb --fsys-tarfile "$dir"/deb/*.deb | tar -xOf - ".$tarball" |
				tar -xJf - -C "$src" --strip-components=1 || die "cannot unpack $tarball of $src_pkg"
			rm -rf "$dir/deb"
		else
			log "unpacking $tarball into $src"
			tar -xf "$tarball" -C "$src" --strip-components=1
		fi
		[[ -f $src/Makefile && -d $src/arch/x86 ]] || die "$tarball does not look like a kernel source tree"
		touch "$dir/.unpacked"
	else
		resumed=1
		log "resuming the build in $dir"
	fi

	# --- configure -------------------------------------------------------------------
	local frags=("$dir/fragment.config") line sym new bad=0 edits=()
	if [[ ! -f $dir/.configured ]]; then
		log "configuring: x86_64_defconfig + fragment(s) + olddefconfig"
		# compat: each line checked against the tree's Kconfig symbols
		if [[ -n $compat_lines ]]; then
			grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config[[:space:]]+[A-Za-z0-9_]+' "$src" |
				awk '{ print $2 }' | sort -u >"$dir/kconfig-symbols"
			while read -r sym new; do
				if [[ $new == - ]]; then
					log "config: compat: CONFIG_$sym is gone in $series; its lines dropped"
					edits+=(-e "/^CONFIG_$sym=/d" -e "/^# CONFIG_$sym is not set/d")
				else
					grep -qxF "$new" "$dir/kconfig-symbols" ||
						die "compat: CONFIG_$new, for CONFIG_$sym, does not exist in $src_pkg $version"
					log "config: compat: CONFIG_$sym is CONFIG_$new in $series"
					edits+=(-e "s/^CONFIG_$sym=/CONFIG_$new=/" -e "s/^# CONFIG_$sym is not set/# CONFIG_$new is not set/")
				fi
			done <<<"$compat_lines"
		fi
		{
			if [[ ${#edits[@]} -gt 0 ]]; then fragment | sed "${edits[@]}"; else fragment; fi
			printf 'CONFIG_LOCALVERSION="%s"\n' "$localversion"
		} >"$dir/fragment.config"
		for f in ${extra_fragments[@]+"${extra_fragments[@]}"}; do
			cp "$f" "$dir/extra-$(basename "$f")"
			frags+=("$dir/extra-$(basename "$f")")
		done
		# shellcheck disable=SC2016 # expanded by the inner shell
		if ! {
			in_env make -C "$src" -s x86_64_defconfig &&
				in_env sh -c 'cd "$1" && shift && exec scripts/kconfig/merge_config.sh -m .config "$@"' _ "$src" "${frags[@]}" &&
				in_env make -C "$src" -s olddefconfig
		} >"$dir/config.log" 2>&1; then
			tail -n 20 "$dir/config.log" >&2
			die "configuration failed; see $dir/config.log"
		fi
		# Every value the fragments set must have survived olddefconfig.
		while IFS= read -r line; do
			case $line in
			CONFIG_*=*)
				grep -qxF -- "$line" "$src/.config" && continue
				log "config: wanted $line, got: $(grep -E "^${line%%=*}=|^# ${line%%=*} is not set" "$src/.config" || echo 'nothing (missing dependency?)')"
				bad=1
				;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }
				sym=${sym%% *}
				if grep -q "^$sym=" "$src/.config"; then
					log "config: note: $sym stays enabled (selected or not user-visible)"
				fi
				;;
			esac
		done < <(cat "${frags[@]}")
		[[ $bad -eq 0 ]] || die "the configuration lacks required options (see above)"
		touch "$dir/.configured"
	fi
	# --- build -------------------------------------------------------------------------
	# child_cpu: CPU seconds used so far by the (waited-for) children of this
	# shell, make and the compilers included.  With other load on the machine,
	# make's CPU time / jobs estimates its wall time on an idle one.
	# (Sets $cpu; "times" must run in this shell, not in a subshell.)
	local cpu
	child_cpu() {
		times >"$dir/.times"
		cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t }' "$dir/.times")
	}
	local t_make=$SECONDS cpu0 make_pid make_rc=0 make_s make_cpu n=0
	child_cpu
	cpu0=$cpu
	log "building: make -j$jobs bzImage modules (log: $dir/build.log)"
	# make runs in a process group of its own (set -m), which stop_make
	# ends whole: make is not this shell's child (in_env's subshells, or
	# the build root's unshare and chroot, are in between)
	set -m
	in_env make -C "$src" -j"$jobs" bzImage modules >>"$dir/build.log" 2>&1 &
	make_pid=$!
	set +m
	# shellcheck disable=SC2317 # called through the EXIT trap
	stop_make() { kill -- "-$make_pid" 2>/dev/null || true; }
	trap stop_make EXIT
	while kill -0 "$make_pid" 2>/dev/null; do
		sleep 2
		n=$((n + 2))
		if ((n % 120 == 0)); then
			log "  ... $((SECONDS - t_make)) s: $(tail -n 1 "$dir/build.log" | cut -c1-90)"
		fi
	done
	wait "$make_pid" || make_rc=$?
	trap - EXIT
	make_s=$((SECONDS - t_make))
	child_cpu
	make_cpu=$((cpu - cpu0))
	if [[ $make_rc -ne 0 ]]; then
		grep -E -m 20 ' error|Error [0-9]' "$dir/build.log" >&2 || tail -n 30 "$dir/build.log" >&2
		die "make failed (status $make_rc) after $make_s s; see $dir/build.log (rerunning resumes)"
	fi
	log "make finished in $make_s s ($make_cpu s of CPU)"
	# (setlocalversion reads include/config/auto.conf, which make writes)
	kver=$(in_env make -C "$src" -s kernelrelease)
	[[ $kver == *"$localversion" ]] || die "kernel release '$kver' does not end in $localversion"

	# --- install into the staging root ---------------------------------------------------
	local moddir="$root.tmp/lib/modules/$kver"
	rm -rf "$root.tmp"
	mkdir -p "$root.tmp/boot" "$root.tmp/usr/src"
	in_env make -C "$src" -s INSTALL_MOD_PATH="$root.tmp" DEPMOD="$depmod" modules_install >>"$dir/build.log" 2>&1 ||
		die "modules_install failed; see $dir/build.log"
	[[ -d $moddir ]] || die "modules_install created no $moddir"
	cp "$src/arch/x86/boot/bzImage" "$root.tmp/boot/vmlinuz-$kver"
	cp "$src/System.map" "$root.tmp/boot/System.map-$kver"
	cp "$src/.config" "$root.tmp/boot/config-$kver"
	ln -sfn ../../../src "$root.tmp/usr/src/linux-headers-$kver"
	ln -sfn "../../../usr/src/linux-headers-$kver" "$moddir/build"
	ln -sfn "../../../usr/src/linux-headers-$kver" "$moddir/source"
	depmod -b "$root.tmp" "$kver"
	rm -rf "$root"
	mv "$root.tmp" "$root"

	{
		echo "kver=$kver"
		echo "flavour=debug"
		echo "series=$series"
		echo "image_pkg=$src_pkg"
		echo "version=$version"
		echo "headers_pkg=linux-headers-$kver"
		if [[ -n $rel ]]; then
			# modules for it build in the same root (scripts/lib/buildenv.sh)
			echo "tool_deps=${tool_pkgs[*]}"
			echo "apt_set=$rel"
			echo "buildenv=$(basename "$envdir")"
		else
			echo "tool_deps=gcc make bc bison flex libelf-dev libssl-dev"
		fi
		echo "cc=$cc_version"
		echo "key=$key"
		echo "jobs=$jobs"
		echo "resumed=$resumed"
		echo "make_seconds=$make_s"
		echo "make_cpu_seconds=$make_cpu"
		echo "total_seconds=$((SECONDS - t_all))"
		echo "config_y=$(grep -c '=y$' "$src/.config")"
		echo "config_m=$(grep -c '=m$' "$src/.config")"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$dir/info.tmp"
	mv "$dir/info.tmp" "$dir/info"
	touch "$dir/.complete.tmp"
	mv "$dir/.complete.tmp" "$dir/.complete"
	link_kernel
	log "built $kver in $((SECONDS - t_all)) s (make: $make_s s, -j$jobs$([[ $resumed == 1 ]] && echo ', resumed')); $(du -sh "$dir" | cut -f1) in $dir"
	if [[ $prune == 1 ]]; then prune_others; fi
	finish built
}

main "$@"
