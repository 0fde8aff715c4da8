# shellcheck shell=bash
#
# tests/vm/lib.sh - shared helpers for the ext4dec QEMU test harness.
#
# Sourced by tests/vm/run-vm.sh, bench/lib.sh and scripts/ (install-vm-deps.sh,
# build-demo-image.sh, build-debug-kernel.sh); not meant to be executed.
# Most of it is about *Debian cloud kernels*:
#
#   * resolving a kernel series ("6.1", "6.12") to the newest packaged ABI
#     (e.g. "6.1.0-57-cloud-amd64") using apt-cache at run time; series the
#     host's release lacks ("7.3", or "newest") from newer suites
#     (trixie-backports, sid) with a private apt configuration,
#   * fetching the image + headers (+ the -common headers and the kbuild tools
#     they need) with `apt-get download` and unpacking them with `dpkg -x` into
#     a per-kernel cache directory, so nothing is installed into the host's
#     /boot or /lib/modules,
#   * fixing up the unpacked headers tree so that
#       make -C <cache>/kernels/<kver>/root/usr/src/linux-headers-<kver> M=<dir> modules
#     works for out-of-tree modules.
#
# The rest assembles a guest's initramfs (busybox, host binaries with their
# shared libraries, kernel modules with a modprobe tree, newc archives) and
# the start of its QEMU command line.
#
# Cache layout ($EXT4DEC_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/ext4dec):
#   kernels/<kver>/root/       unpacked packages (boot/, lib/modules/, usr/src/, usr/lib/)
#   kernels/<kver>/info        "key=value" lines describing what was fetched
#   kernels/<kver>/.complete   stamp, written last
#   apt/<set>/                 private apt configurations of newer suites
#                              (sources.list, lists/, status; see "newer suites")
#   buildenv/<set>-<key>/      build environments of those kernels
#                              (scripts/lib/buildenv.sh)
#   kernels-debug/<key>/       debug kernels built by scripts/build-debug-kernel.sh;
#                              kernels/<kver> links to them (see "debug kernel")
#   initramfs/                 cached base initramfs archives (see run-vm.sh)
#   runs/                      default output directories of run-vm.sh
#   lock                       flock(1) file serialising cache updates

# Kernel flavour we test against.  Only cloud-amd64 is exercised, but keep it
# overridable (e.g. "amd64") for experiments.
: "${EXT4DEC_KFLAVOUR:=cloud-amd64}"

# depmod, modprobe, mke2fs... live in sbin directories, which a non-root
# user's PATH may lack.
PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

vm_log()  { printf 'ext4dec-vm: %s\n' "$*" >&2; }
vm_die()  { printf 'ext4dec-vm: error: %s\n' "$*" >&2; exit 2; }

# vm_tcg_opts: options for QEMU's -accel tcg, after a comma: the
# translation cache in MiB.  QEMU's default (1 GiB)
# made guest code several times slower than a small one: a cold
# "firefox-esr --headless --help" in the demo image took 3.7-6.5 s with
# the default, 3.3-5.0 s with 256 MiB, 1.8-2.0 s with 128 MiB, 2.0-2.3 s
# with 64 MiB (flushes begin) and 2.8-3.0 s with 32 MiB (QEMU 7.2, two
# cores).  EXT4DEC_VM_TB_SIZE overrides it (0: QEMU's default).
vm_tcg_opts() {
	local tb=${EXT4DEC_VM_TB_SIZE:-128}
	[[ $tb == 0 ]] || printf ',tb-size=%s' "$tb"
}

# vm_cache_dir: print (and create) the cache root.
vm_cache_dir() {
	local dir=${EXT4DEC_CACHE:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/ext4dec}
	mkdir -p "$dir"
	printf '%s\n' "$dir"
}

# vm_with_lock CMD...: run CMD with the cache lock held (exclusive), so that
# concurrent harness runs do not fetch/unpack the same kernel twice.
vm_with_lock() {
	local lock
	lock="$(vm_cache_dir)/lock"
	(
		flock -x 9
		"$@"
	) 9>"$lock"
}

# --- apt helpers -----------------------------------------------------------
# as_root, pkg_installed, apt_update_once, apt_install_missing, apt_download
# shellcheck source=scripts/lib/apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/apt.sh"

# apt_candidate PKG: print the candidate version of PKG, or nothing.
apt_candidate() {
	apt-cache ${APT_OPTS[@]+"${APT_OPTS[@]}"} policy "$1" 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" { print $2; exit }'
}

# apt_depends PKG[=VER]: print the Depends of the candidate (or given version),
# one dependency per line, first alternative only, version constraint dropped.
apt_depends() {
	apt-cache ${APT_OPTS[@]+"${APT_OPTS[@]}"} show --no-all-versions "$1" 2>/dev/null |
		awk -F': ' '$1 == "Depends" { print $2; exit }' |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' -e '/^$/d'
}

# deb_depends FILE.deb: same as apt_depends but for a downloaded .deb.
deb_depends() {
	dpkg-deb -f "$1" Depends 2>/dev/null |
		tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' -e '/^$/d'
}


# --- newer suites ------------------------------------------------------------
#
# Kernel lines newer than the host's release come from newer suites, read
# with a private apt configuration (apt_private in scripts/lib/apt.sh) in
# <cache>/apt/<set>/; the host's sources, lists and cache stay as they are.
# A set is a release with the suites it is used with:
#   trixie   trixie trixie-backports   (trixie-backports' kernels; their
#                                       build environment is trixie's)
#   sid      sid
# EXT4DEC_APT_SETS lists the sets searched (default "trixie sid");
# EXT4DEC_APT_MAX_AGE the minutes before their lists are fetched again
# (default 720; EXT4DEC_REFRESH=1 fetches them now).
: "${EXT4DEC_APT_SETS:=trixie sid}"

# vm_apt_suites SET: the suites of a set
vm_apt_suites() {
	case $1 in
	sid | unstable) echo "$1" ;;
	*) echo "$1 $1-backports" ;;
	esac
}

# vm_apt_use SET: point APT_OPTS at SET's private configuration (without
# fetching its lists).
vm_apt_use() {
	# shellcheck disable=SC2046 # a list of suites
	apt_private "$(vm_cache_dir)/apt/$1" $(vm_apt_suites "$1") ||
		vm_die "cannot set up the private apt configuration for $1"
}

# _vm_apt_update_locked SET: fetch SET's lists unless they are fresh.
_vm_apt_update_locked() {
	local age=${EXT4DEC_APT_MAX_AGE:-720}
	[[ ${EXT4DEC_REFRESH:-0} != 1 ]] || age=0
	vm_apt_use "$1"
	apt_private_update "$age"
}

# vm_apt_update SET: vm_apt_use, with SET's lists fetched if they are stale.
vm_apt_update() {
	vm_with_lock _vm_apt_update_locked "$1" || return 1
	vm_apt_use "$1"
}

# _vm_resolve_newer SPEC: vm_resolve_kernel for the newer suites: the
# highest version among the flavour metas (linux-image-<flavour> and
# linux-image-<series>-<flavour>, every version the sets know) whose exact
# dependency is in the series (any, for "newest") and whose headers of
# that very version exist.  Sets R_APT to the set it came from.
# _vm_meta_deps: read "apt-cache show" of kernel meta packages, print
# "META IMAGE-PKG VERSION" for each, IMAGE-PKG (= VERSION) being the
# meta's exact dependency.
_vm_meta_deps() {
	awk '/^Package: / { pkg = $2 }
	     /^Depends: / && match($0, /linux-image-[^ ,]+ \(= [^)]+\)/) {
		split(substr($0, RSTART, RLENGTH), a, /[ ()=]+/); print pkg, a[1], a[2] }'
}

# _vm_newer_than_host SERIES: whether SERIES ("7.3") is newer than every
# kernel series the host's package lists know; false when they know none
# (no lists: nothing to compare, and no reason to reach further).
_vm_newer_than_host() {
	local host
	host=$(apt-cache pkgnames linux-image- 2>/dev/null |
		sed -n 's/^linux-image-\([0-9]\+\.[0-9]\+\)[.-].*/\1/p' | sort -V | tail -n 1)
	[[ -n $host ]] && dpkg --compare-versions "$1" gt "$host"
}

_vm_resolve_newer() {
	local spec=$1 fl=$EXT4DEC_KFLAVOUR set meta dep ver kver metas
	local best_ver='' best_set='' best_dep='' best_meta=''
	metas=("linux-image-$fl")
	[[ $spec == newest ]] || metas+=("linux-image-$spec-$fl")
	for set in $EXT4DEC_APT_SETS; do
		if ! vm_apt_update "$set"; then
			vm_log "warning: cannot fetch the package lists of $set"
			continue
		fi
		while read -r meta dep ver; do
			[[ $spec == newest || $ver == "$spec".* ]] || continue
			[[ -z $best_ver ]] || dpkg --compare-versions "$ver" gt "$best_ver" || continue
			kver=${dep#linux-image-}
			kver=${kver%-unsigned}
			[[ -n $(apt-cache "${APT_OPTS[@]}" show "linux-headers-$kver=$ver" 2>/dev/null) ]] || continue
			best_ver=$ver best_set=$set best_dep=$dep best_meta=$meta
		done < <(apt-cache "${APT_OPTS[@]}" show "${metas[@]}" 2>/dev/null |
			_vm_meta_deps)
	done
	APT_OPTS=()
	[[ -n $best_ver ]] || return 1
	R_IMAGE=$best_dep R_VERSION=$best_ver R_APT=$best_set
	R_HOW="meta package $best_meta of $best_set ($(vm_apt_suites "$best_set"))"
	R_KVER=${best_dep#linux-image-}
	R_KVER=${R_KVER%-unsigned}
}

# --- build environments --------------------------------------------------------
# vm_kbuild_env, vm_kmake: the modules of a kernel from a newer suite build
# in a root of that release's packages.
# shellcheck source=scripts/lib/buildenv.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/buildenv.sh"

# --- kernel resolution -----------------------------------------------------

# vm_resolve_kernel SPEC
#   SPEC is either a series ("6.1", "6.12", "7.3"), "newest" (the newest
#   cloud kernel of the newer suites) or an exact ABI name
#   ("6.12.117+deb12-cloud-amd64").  Sets the globals
#     R_KVER     kernel release / ABI name, e.g. 6.1.0-57-cloud-amd64
#     R_IMAGE    image package name (signed, or -unsigned if only that exists)
#     R_VERSION  Debian package version, e.g. 6.1.192-3
#     R_HOW      how it was resolved (for the log)
#     R_APT      the set of newer suites it came from ("newer suites"
#                above), or empty: the host's apt configuration
#   Returns non-zero if nothing matches.
#
# Resolution order for a series:
#   1. the flavour meta packages "linux-image-<series>-<flavour>" (bookworm
#      ships linux-image-6.12-cloud-amd64 from the linux-6.12 LTS package)
#      and "linux-image-<flavour>" (the distribution default, 6.1 on
#      bookworm); the first whose exact dependency "linux-image-<abi> (= V)"
#      has an upstream version V in the series wins.  This is what
#      `apt-get install <meta>` gives a Debian user.
#   2. otherwise the highest candidate among all linux-image-<series>*-<flavour>
#      (and -unsigned) packages apt knows about.
#   3. otherwise (and always for "newest") the newer suites: _vm_resolve_newer.
vm_resolve_kernel() {
	local spec=$1 fl=$EXT4DEC_KFLAVOUR meta dep ver pkg set sets best_pkg='' best_ver=''
	R_KVER='' R_IMAGE='' R_VERSION='' R_HOW='' R_APT=''

	if [[ $spec == newest ]]; then
		_vm_resolve_newer "$spec"
		return
	fi
	if [[ $spec == *-"$fl" ]]; then
		# Exact ABI name: the host's lists, then the newer suites' for
		# a series newer than the host's.
		sets=''
		if [[ $spec =~ ^([0-9]+\.[0-9]+) ]] && _vm_newer_than_host "${BASH_REMATCH[1]}"; then
			sets=$EXT4DEC_APT_SETS
		fi
		for set in '' $sets; do
			if [[ -n $set ]]; then vm_apt_update "$set" || continue; fi
			for pkg in "linux-image-$spec" "linux-image-$spec-unsigned"; do
				ver=$(apt_candidate "$pkg")
				if [[ -n $ver ]]; then
					R_KVER=$spec R_IMAGE=$pkg R_VERSION=$ver R_APT=$set
					R_HOW="exact ABI${set:+ in $set}"
					APT_OPTS=()
					return 0
				fi
			done
		done
		APT_OPTS=()
		return 1
	fi

	# One apt-cache call for both metas (every call re-reads the package
	# lists when apt's binary cache is disabled, as in Debian's docker
	# images: ~1 s each).  Output: "META IMAGE-PKG VERSION" per meta, where
	# IMAGE-PKG (= VERSION) is the meta's exact dependency.
	while read -r meta dep ver; do
		if [[ $ver == "$spec".* ]]; then
			R_IMAGE=$dep R_VERSION=$ver R_HOW="meta package $meta"
			R_KVER=${dep#linux-image-}
			R_KVER=${R_KVER%-unsigned}
			return 0
		fi
	done < <(apt-cache show --no-all-versions "linux-image-$spec-$fl" "linux-image-$fl" 2>/dev/null |
		_vm_meta_deps)

	# Fallback: scan the package names apt knows for this series.
	while read -r pkg; do
		[[ $pkg =~ ^linux-image-${spec//./\\.}[.-][0-9][^[:space:]]*-${fl}(-unsigned)?$ ]] || continue
		ver=$(apt_candidate "$pkg")
		[[ -n $ver && $ver == "$spec".* ]] || continue
		if [[ -z $best_ver ]] || dpkg --compare-versions "$ver" gt "$best_ver"; then
			best_ver=$ver best_pkg=$pkg
		fi
	done < <(apt-cache pkgnames "linux-image-$spec" 2>/dev/null | sort)
	if [[ -z $best_pkg ]]; then
		# a series the host's suite does not ship: the newer suites'
		_vm_newer_than_host "$spec" || return 1
		_vm_resolve_newer "$spec"
		return
	fi
	R_IMAGE=$best_pkg R_VERSION=$best_ver R_HOW="newest linux-image-$spec* package"
	R_KVER=${best_pkg#linux-image-}
	R_KVER=${R_KVER%-unsigned}
}

# --- kernel cache ----------------------------------------------------------

# vm_kernel_dir KVER: cache directory of one kernel ABI.
vm_kernel_dir() { printf '%s/kernels/%s\n' "$(vm_cache_dir)" "$1"; }

# vm_kernel_cached KVER: true if KVER has been fetched completely.
vm_kernel_cached() { [[ -f "$(vm_kernel_dir "$1")/.complete" ]]; }

# vm_newest_cached SPEC: newest cached ABI for a series (used when apt can not
# resolve anything, e.g. on a machine without package lists).
vm_newest_cached() {
	local spec=$1 d k best=''
	for d in "$(vm_cache_dir)"/kernels/*/; do
		k=$(basename "$d")
		[[ -f $d/.complete ]] || continue
		if [[ $spec == newest ]]; then
			# a kernel of the newer suites; the newest one last
			grep -q '^apt_set=.' "$d/info" 2>/dev/null || continue
			best=$(printf '%s\n' "$best" "$k" | sed '/^$/d' | sort -V | tail -n 1)
			continue
		fi
		[[ $k == "$spec".* || $k == "$spec"-* || $k == "$spec" ]] || continue
		[[ $k == *-"$EXT4DEC_KFLAVOUR" ]] || continue
		best=$k # glob order is lexical; good enough for a fallback
	done
	[[ -n $best ]] && printf '%s\n' "$best"
}

# _vm_fetch_kernel_locked KVER IMAGE_PKG VERSION [SET]: body of vm_fetch_kernel.
_vm_fetch_kernel_locked() {
	local kver=$1 image=$2 version=$3 set=${4:-}
	local kdir tmp root hdr common kbuild deb deps dep
	local -a APT_OPTS=()
	kdir=$(vm_kernel_dir "$kver")
	vm_kernel_cached "$kver" && return 0
	[[ -z $set ]] || vm_apt_use "$set"

	hdr="linux-headers-$kver"
	[[ "$(apt_candidate "$hdr")" == "$version" ]] ||
		vm_die "headers package $hdr=$version is not available (candidate: $(apt_candidate "$hdr"))"
	# The flavour headers need the shared -common headers and the kbuild
	# tools (fixdep, modpost, ...); take their names from the Depends.
	deps=$(apt_depends "$hdr=$version")
	common=$(grep -m1 '^linux-headers-.*-common$' <<<"$deps" || true)
	kbuild=$(grep -m1 '^linux-kbuild-' <<<"$deps" || true)
	[[ -n $common && -n $kbuild ]] || vm_die "cannot find -common/kbuild dependencies of $hdr"
	# Since 7.0 the image package is a meta package of its ABI's parts:
	# linux-binary-<abi> (vmlinuz), linux-modules-<abi>, linux-base-<abi>
	# (config, System.map), which the headers want too.
	local -a parts=()
	mapfile -t parts < <({ apt_depends "$image=$version"; echo "$deps"; } |
		grep -Fx -e "linux-binary-$kver" -e "linux-modules-$kver" -e "linux-base-$kver" | sort -u)

	tmp=$(mktemp -d "$(vm_cache_dir)/fetch.XXXXXX")
	if ! apt_download "$tmp" "$image=$version" "$hdr=$version" "$common" "$kbuild" \
		${parts[@]+"${parts[@]/%/=$version}"}; then
		rm -rf "$tmp"
		vm_die "apt-get download of $image=$version and its headers failed"
	fi

	root="$tmp/root"
	mkdir -p "$root"
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done

	# 0. Since 7.0 the packages are merged-/usr only: the modules tree is
	#    usr/lib/modules/<kver>/, vmlinuz in it, no /boot.  Give the tree
	#    the layout of the older ones (lib -> usr/lib, boot/vmlinuz-<kver>).
	if [[ ! -e $root/lib && -d $root/usr/lib/modules/$kver ]]; then
		ln -s usr/lib "$root/lib"
	fi
	if [[ ! -e $root/boot/vmlinuz-$kver && -f $root/usr/lib/modules/$kver/vmlinuz ]]; then
		mkdir -p "$root/boot"
		ln -s "../usr/lib/modules/$kver/vmlinuz" "$root/boot/vmlinuz-$kver"
	fi

	local hdir="$root/usr/src/$hdr" mdir="$root/lib/modules/$kver" mreal
	[[ -f $root/boot/vmlinuz-$kver ]] || vm_die "no boot/vmlinuz-$kver in $image"
	[[ -f $hdir/Makefile ]] || vm_die "no usr/src/$hdr/Makefile in $hdr"
	[[ -d $mdir ]] || vm_die "no lib/modules/$kver in $image"

	# 1. The flavour Makefile includes /usr/src/<common>/Makefile (and
	#    since 7.0 sets KBUILD_OUTPUT=/usr/src/<flavour>), absolute paths:
	#    make them relative to the Makefile itself so the unpacked tree
	#    works wherever the cache lives.
	# shellcheck disable=SC2016 # $(...) below are make functions, not shell.
	{
		printf '# rewritten by ext4dec tests/vm/lib.sh (was: %s)\n' "$(paste -sd ';' "$hdir/Makefile")"
		printf 'ext4dec_hdir := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))\n'
		sed 's|/usr/src/|$(ext4dec_hdir)/../|g' "$hdir/Makefile"
	} >"$hdir/Makefile.new"
	mv "$hdir/Makefile.new" "$hdir/Makefile"
	# 2. lib/modules/<kver>/{build,source} may be absolute symlinks; relink.
	mreal=$(readlink -f "$mdir")
	ln -sfn "$(realpath -m --relative-to="$mreal" "$root/usr/src/$hdr")" "$mdir/build"
	ln -sfn "$(realpath -m --relative-to="$mreal" "$root/usr/src/$common")" "$mdir/source"
	# 3. The packages ship no modules.dep (postinst runs depmod); generate it
	#    so `modprobe -d <root> --show-depends` can compute closures.
	depmod -b "$root" "$kver"

	# Tools the headers need on the host (compiler, pahole, libs): the
	# non-kernel Depends of the headers and kbuild packages.
	local tooldeps=()
	for dep in $deps $(deb_depends "$tmp"/linux-kbuild-*.deb); do
		case $dep in
		linux-headers-* | linux-image-* | linux-kbuild-* | linux-base | linux-base-*) ;;
		*) tooldeps+=("$dep") ;;
		esac
	done

	rm -f "$tmp"/*.deb
	{
		echo "kver=$kver"
		echo "image_pkg=$image"
		echo "version=$version"
		echo "headers_pkg=$hdr"
		echo "common_pkg=$common"
		echo "kbuild_pkg=$kbuild"
		echo "tool_deps=${tooldeps[*]}"
		echo "apt_set=$set"
		echo "fetched=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$tmp/info"
	rm -rf "$kdir"
	mkdir -p "$(dirname "$kdir")"
	mv "$tmp" "$kdir"
	touch "$kdir/.complete"
	vm_log "cached $kver in $kdir"
}

# vm_fetch_kernel KVER IMAGE_PKG VERSION: make sure KVER is in the cache.
# SET: the set of newer suites it comes from (R_APT), if any.
vm_fetch_kernel() {
	vm_kernel_cached "$1" && return 0
	vm_with_lock _vm_fetch_kernel_locked "$@"
}

# vm_kernel_info KVER KEY: print one value from kernels/<kver>/info.
vm_kernel_info() {
	sed -n "s/^$2=//p" "$(vm_kernel_dir "$1")/info"
}

# vm_kernel_paths KVER: set K_ROOT, K_VMLINUZ, K_MODDIR, K_KDIR for KVER.
# shellcheck disable=SC2034 # the K_* globals are used by the callers
vm_kernel_paths() {
	local kver=$1
	K_ROOT="$(vm_kernel_dir "$kver")/root"
	K_VMLINUZ="$K_ROOT/boot/vmlinuz-$kver"
	K_MODDIR="$K_ROOT/lib/modules/$kver"
	K_KDIR="$K_ROOT/usr/src/$(vm_kernel_info "$kver" headers_pkg)"
}

# vm_missing_tool_deps KVER: print host packages the headers of KVER need
# (compiler, pahole, ...) that are not installed.
vm_missing_tool_deps() {
	local dep
	for dep in $(vm_kernel_info "$1" tool_deps); do
		pkg_installed "$dep" || printf '%s\n' "$dep"
	done
}

# --- debug kernel ----------------------------------------------------------
#
# "-k debug" / "-k debug-<series>" / "-k debug-newest" name the kernel
# scripts/build-debug-kernel.sh builds from Debian's linux-source-<series>
# (plain "debug": that script's default series) with KASAN,
# lockdep, UBSAN, KFENCE...  That script keeps it in
# <cache>/kernels-debug/<key>/ and links <cache>/kernels/<kver> to it, with
# the same layout as a fetched kernel (root/boot/vmlinuz-<kver>,
# root/lib/modules/<kver>, root/usr/src/<headers_pkg> = the build tree, info),
# so everything below treats it like a Debian kernel.  Its release is
# <upstream version>-ext4dec-debug-<hash>, e.g. 6.1.192-ext4dec-debug-0123abcd.

_vm_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# vm_is_debug_spec SPEC: true for "debug", "debug-<series>" and the release
# name of a debug kernel.
vm_is_debug_spec() { [[ $1 == debug || $1 == debug-[0-9]* || $1 == debug-newest || $1 == *-ext4dec-debug* ]]; }

# vm_kernel_is_debug KVER: true if the cached kernel KVER is a debug build.
vm_kernel_is_debug() {
	[[ -f "$(vm_kernel_dir "$1")/info" && "$(vm_kernel_info "$1" flavour)" == debug ]]
}

# vm_debug_kernel_for SPEC: print the release of the debug kernel SPEC names,
# building it first (several minutes; scripts/build-debug-kernel.sh) unless
# EXT4DEC_DEBUG_KERNEL_NO_BUILD=1, in which case a missing kernel is an error.
vm_debug_kernel_for() {
	local spec=$1 series kver rc=0
	if [[ $spec == *-ext4dec-debug* ]]; then
		vm_kernel_cached "$spec" || vm_die "debug kernel $spec is not in the cache; use -k debug[-<series>] to build the current one"
		printf '%s\n' "$spec"
		return 0
	fi
	# "debug": the script's default series
	series=${spec#debug}
	series=${series#-}
	local args=(${series:+--series "$series"} --print-kver)
	if [[ ${EXT4DEC_DEBUG_KERNEL_NO_BUILD:-0} == 1 ]]; then args+=(--no-build); fi
	kver=$("$_vm_top/scripts/build-debug-kernel.sh" "${args[@]}") || rc=$?
	case $rc in
	0) ;;
	3) vm_die "the debug kernel ($spec) is not built and EXT4DEC_DEBUG_KERNEL_NO_BUILD=1 forbids building it; run scripts/build-debug-kernel.sh${series:+ --series $series}" ;;
	*) vm_die "scripts/build-debug-kernel.sh ${args[*]} failed (status $rc)" ;;
	esac
	if [[ -z $kver ]] || ! vm_kernel_cached "$kver"; then
		vm_die "scripts/build-debug-kernel.sh printed no usable kernel release ('$kver')"
	fi
	vm_log "kernel $spec -> $kver (debug build of $(vm_kernel_info "$kver" image_pkg) $(vm_kernel_info "$kver" version))"
	printf '%s\n' "$kver"
}

# vm_kernel_for SPEC: resolve SPEC and make sure it is cached; print the ABI.
# Falls back to the newest cached kernel of the series if apt cannot resolve.
# Debug kernels (see above) are built instead of fetched.
vm_kernel_for() {
	local spec=$1 cached
	if vm_is_debug_spec "$spec"; then
		vm_debug_kernel_for "$spec"
		return 0
	fi
	if vm_resolve_kernel "$spec"; then
		vm_log "kernel $spec -> $R_IMAGE $R_VERSION (ABI $R_KVER, via $R_HOW)"
		vm_fetch_kernel "$R_KVER" "$R_IMAGE" "$R_VERSION" "$R_APT"
		printf '%s\n' "$R_KVER"
		return 0
	fi
	if cached=$(vm_newest_cached "$spec"); then
		vm_log "warning: apt cannot resolve '$spec' (no package lists? run apt-get update); using cached $cached"
		printf '%s\n' "$cached"
		return 0
	fi
	vm_die "cannot resolve kernel '$spec' with apt-cache (try: apt-get update)"
}

# --- guest busybox ------------------------------------------------------------

# busybox_standalone BUSYBOX: true if BUSYBOX runs its own applets in
# preference to the programs in PATH ("standalone shell", FEATURE_PREFER_APPLETS).
# Debian's busybox-static is built that way: its sh, env, timeout, xargs,
# find -exec... would run busybox's modprobe/insmod/mke2fs applets instead of
# the real kmod and e2fsprogs tools we put into the guest.  Detected by
# running "ls" with a PATH in which it cannot be found.
busybox_standalone() {
	env -i PATH=/nonexistent "$1" sh -c 'ls / >/dev/null' 2>/dev/null
}

# _vm_fetch_busybox_locked VERSION DIR: unpack Debian's (dynamically linked,
# non-standalone) busybox package into DIR without installing it (it
# conflicts with busybox-static).
_vm_fetch_busybox_locked() {
	local ver=$1 dir=$2 dl
	[[ -x $dir/bin/busybox ]] && return 0
	dl=$(mktemp -d "${TMPDIR:-/tmp}/ext4dec-bb.XXXXXX")
	if ! apt_download "$dl" "busybox=$ver"; then
		rm -rf "$dl"
		vm_die "apt-get download busybox=$ver failed"
	fi
	rm -rf "$dir.tmp"
	dpkg-deb -x "$dl"/busybox_*.deb "$dir.tmp"
	rm -rf "$dl"
	[[ -x $dir.tmp/bin/busybox ]] || vm_die "busybox package has no bin/busybox"
	mv "$dir.tmp" "$dir"
}

# vm_guest_busybox: print the path of a busybox binary suitable for the guest:
# the host's if it is not a standalone-shell build, else Debian's "busybox"
# package unpacked into <cache>/tools/busybox-<version>/.
vm_guest_busybox() {
	local bb ver dir
	if bb=$(PATH="$PATH:/usr/sbin:/sbin" command -v busybox) && ! busybox_standalone "$bb"; then
		printf '%s\n' "$bb"
		return 0
	fi
	# Reuse a fetched copy (the busybox version hardly matters, and every
	# apt-cache call costs about a second); EXT4DEC_REFRESH=1 re-resolves.
	bb=''
	for dir in "$(vm_cache_dir)"/tools/busybox-*/; do
		[[ -x ${dir}bin/busybox ]] && bb=${dir}bin/busybox
	done
	if [[ -n $bb && ${EXT4DEC_REFRESH:-0} != 1 ]]; then
		printf '%s\n' "$bb"
		return 0
	fi
	ver=$(apt_candidate busybox)
	[[ -n $ver ]] || vm_die "cannot resolve the busybox package (run apt-get update)"
	dir="$(vm_cache_dir)/tools/busybox-${ver//:/_}"
	mkdir -p "$(dirname "$dir")"
	[[ -x $dir/bin/busybox ]] || vm_with_lock _vm_fetch_busybox_locked "$ver" "$dir"
	printf '%s\n' "$dir/bin/busybox"
}

# --- guest initramfs -----------------------------------------------------------
#
# The guests boot from an initramfs assembled in a directory ROOT on the host
# and packed with vm_pack_cpio after vm_cpio_dev_console; nothing needs root.

# vm_find_tool NAME: path of a host tool, also looking in sbin directories.
vm_find_tool() {
	PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" command -v "$1" 2>/dev/null
}

# vm_add_libs ROOT FILE: copy the shared libraries FILE needs (as listed by
# ldd, including the dynamic loader) to the same absolute paths under ROOT.
vm_add_libs() {
	local root=$1 file=$2 lib
	# ldd fails for static binaries; that just means "no libraries".
	for lib in $(ldd "$file" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		[[ -e $root$lib ]] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# vm_add_bin ROOT PATH [NAME]: copy a host binary to ROOT/bin/NAME plus libs
# (replacing a busybox applet link of that name).
vm_add_bin() {
	local root=$1 src=$2 name=${3:-$(basename "$2")}
	rm -f "$root/bin/$name"
	cp -L "$src" "$root/bin/$name"
	vm_add_libs "$root" "$src"
}

# vm_guest_root ROOT BUSYBOX KMOD: the skeleton of a guest root: the usual
# directories (sbin, usr/bin, usr/sbin and usr/lib are links), BUSYBOX with
# a link for each of its applets, and KMOD with its insmod, modprobe...
# links.  vm_guest_busybox and vm_find_tool kmod give the binaries.
vm_guest_root() {
	local root=$1 busybox=$2 kmod=$3 t
	mkdir -p "$root"/{bin,dev,etc,lib,lib64,mnt,proc,root,run,sys,tmp,usr}
	ln -s bin "$root/sbin"
	ln -s ../bin "$root/usr/bin"
	ln -s ../bin "$root/usr/sbin"
	ln -s ../lib "$root/usr/lib"

	vm_add_bin "$root" "$busybox" busybox
	for t in $("$busybox" --list); do
		[[ $t == busybox ]] || ln -sf busybox "$root/bin/$t"
	done
	vm_add_bin "$root" "$kmod" kmod
	for t in insmod rmmod modprobe lsmod modinfo depmod; do ln -sf kmod "$root/bin/$t"; done
}

# vm_add_module_closure ROOT KVER NAME: copy module NAME and everything it
# depends on from the kernel's module tree (vm_kernel_paths) into
# ROOT/lib/modules/KVER/.  Built-in modules need nothing.
vm_add_module_closure() {
	local root=$1 kver=$2 name=$3 line path deps
	deps=$(modprobe -d "$K_ROOT" -S "$kver" --show-depends "$name" 2>&1) ||
		vm_die "kernel $kver has no module '$name': $deps"
	while read -r line; do
		case $line in
		insmod\ *)
			path=${line#insmod }
			path=${path%% *}
			[[ $path == "$K_MODDIR"/* ]] || vm_die "unexpected module path $path"
			mkdir -p "$root/lib/modules/$kver/$(dirname "${path#"$K_MODDIR"/}")"
			cp "$path" "$root/lib/modules/$kver/${path#"$K_MODDIR"/}"
			;;
		esac
	done <<<"$deps"
}

# vm_add_ko ROOT KVER KO: add the out-of-tree module KO (built for KVER) to
# ROOT/lib/modules/KVER/extra/, with the closures of the modules it needs.
vm_add_ko() {
	local root=$1 kver=$2 ko=$3 vermagic m
	[[ -f $ko ]] || vm_die "no such module file: $ko"
	vermagic=$(modinfo -F vermagic "$ko")
	[[ $vermagic == "$kver "* ]] || vm_die "$ko was built for '${vermagic%% *}', not $kver"
	mkdir -p "$root/lib/modules/$kver/extra"
	cp "$ko" "$root/lib/modules/$kver/extra/"
	for m in $(modinfo -F depends "$ko" | tr ',' ' '); do
		vm_add_module_closure "$root" "$kver" "$m"
	done
}

# vm_depmod ROOT KVER: finish ROOT/lib/modules/KVER after the modules went
# in: the kernel's lists of modules, then modules.dep and the rest (so
# "modprobe NAME" works in the guest).
vm_depmod() {
	local root=$1 kver=$2 f
	mkdir -p "$root/lib/modules/$kver"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[[ -f $K_MODDIR/$f ]] && cp "$K_MODDIR/$f" "$root/lib/modules/$kver/"
	done
	depmod -b "$root" "$kver"
}

# _vm_cpio_entry INO NAME MODE(octal) RDEVMAJOR RDEVMINOR: print one empty
# newc archive member (header, NUL-terminated name, padding to 4 bytes) and
# add its size to _vm_cpio_bytes.
_vm_cpio_entry() {
	local namesize=$((${#2} + 1)) pad
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s\0' \
		"$1" "$((8#$3))" 0 0 1 0 0 0 0 "$4" "$5" "$namesize" 0 "$2"
	pad=$(((4 - (110 + namesize) % 4) % 4))
	head -c "$pad" /dev/zero
	_vm_cpio_bytes=$((_vm_cpio_bytes + 110 + namesize + pad))
}

# vm_cpio_dev_console: print a tiny newc archive holding dev/ and dev/console
# (c 5:1), written by hand so that building the initramfs needs no root
# (mknod).  The kernel opens /dev/console for init before init can mount
# devtmpfs.  The archives of vm_pack_cpio follow it.
vm_cpio_dev_console() {
	_vm_cpio_bytes=0
	_vm_cpio_entry 1 dev 40755 0 0
	_vm_cpio_entry 2 dev/console 20600 5 1
	_vm_cpio_entry 3 'TRAILER!!!' 0 0 0
	# pad to 512 bytes so the next archive starts aligned
	head -c $(((512 - _vm_cpio_bytes % 512) % 512)) /dev/zero
}

# vm_pack_cpio ROOT: print a newc archive of ROOT, owned by root:root.  The
# kernel unpacks concatenated archives in order, later files overriding
# earlier ones; QEMU takes a single -initrd file.
vm_pack_cpio() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet)
}

# --- QEMU ------------------------------------------------------------------------

# vm_tcg_thread: QEMU's TCG threads for the kernel $K_VMLINUZ, "multi" (a
# host thread per vCPU) or "single" (the vCPUs take turns on one).  7.x
# kernels run on one: under multi-threaded TCG (QEMU 7.2) one boot in
# about twelve of 7.3.4 died of an "Oops: int3" where a static key had
# just been patched (sched_clock_cpu+0x9, right after "sched_clock:
# Marking stable"): a vCPU ran the breakpoint of a text patch after the
# patching CPU had finished it, which a real CPU does not.  On 6.1 the
# same stale breakpoint is an endless loop instead: the kprobes int3
# handler finds no breakpoint in memory and restarts the instruction,
# which runs the stale one again (seen at ext4_file_read_iter+0x0 while a
# failed load of ext4dec took its hooks out: tests/vm/selftests.sh runs
# that test on one thread for every kernel).  EXT4DEC_VM_TCG_THREAD
# overrides it.
vm_tcg_thread() {
	local v=${K_VMLINUZ##*/vmlinuz-}
	if [[ -n ${EXT4DEC_VM_TCG_THREAD:-} ]]; then
		echo "$EXT4DEC_VM_TCG_THREAD"
	elif [[ ${v%%.*} =~ ^[0-9]+$ && ${v%%.*} -ge 7 ]]; then
		echo single
	else
		echo multi
	fi
}

# vm_accel: set VM_ACCEL (QEMU options: TCG, or KVM if EXT4DEC_KVM=1; the
# CPU model EXT4DEC_VM_CPU, default max or host) and VM_ACCEL_NAME (TCG or KVM).
# shellcheck disable=SC2034 # the VM_* globals are used by the callers
vm_accel() {
	if [[ ${EXT4DEC_KVM:-0} == 1 ]]; then
		VM_ACCEL=(-accel kvm -cpu "${EXT4DEC_VM_CPU:-host}") VM_ACCEL_NAME=KVM
	else
		VM_ACCEL=(-accel "tcg,thread=$(vm_tcg_thread)$(vm_tcg_opts)"
			-cpu "${EXT4DEC_VM_CPU:-max}") VM_ACCEL_NAME=TCG
	fi
}

# vm_qemu_cmd QEMU SMP MEM INITRD CMDLINE: set the array VM_QEMU_CMD to the
# start of a command line that boots $K_VMLINUZ (vm_kernel_paths) with
# INITRD and the kernel arguments CMDLINE on a pc machine with SMP CPUs and
# MEM MiB, no default devices and no display, and exits instead of
# rebooting; accelerated as vm_accel says (which it runs: VM_ACCEL and
# VM_ACCEL_NAME are set too).  The caller adds the serial ports and disks.
# shellcheck disable=SC2034 # VM_QEMU_CMD is used by the callers
vm_qemu_cmd() {
	vm_accel
	VM_QEMU_CMD=(
		"$1" -nodefaults -no-user-config -display none -no-reboot
		"${VM_ACCEL[@]}" -machine pc -smp "$2" -m "$3"
		-kernel "$K_VMLINUZ" -initrd "$4" -append "$5"
	)
}
