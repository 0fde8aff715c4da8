# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/lib/buildenv.sh - build environments for kernels whose headers
# the host's toolchain cannot use.  Sourced by tests/vm/lib.sh, whose cache
# helpers (vm_cache_dir, vm_with_lock, vm_kernel_info, vm_apt_use...) it
# uses.
#
# The headers of a kernel from a newer suite (trixie-backports, sid: the
# "newer suites" of tests/vm/lib.sh) ask for that suite's compiler
# (gcc-14) and ship kbuild tools (fixdep, modpost, objtool) linked against
# its glibc (>= 2.38; bookworm has 2.36).  Such a kernel's modules are built
# in a root made from that release's Debian packages by debootstrap
# (minbase, plus the headers' own Depends, make, libc6-dev, sparse, and
# dkms with what it signs and compresses modules with), run with chroot in
# a private mount namespace that shows the kernel's cache directory and
# the build's directories at their own paths, over a private /tmp.
# Nothing is installed into the host.
#
# The root is kept in <cache>/buildenv/<set>-<key>/, keyed by the recipe
# below and the candidate versions of its packages in the set's package
# lists: when one of them changes, the next build makes a new root
# (vm_buildenv_prune removes the others).  Kernels of the host's own
# release build on the host, as before; `make KDIR=...` never uses this.
#
#   vm_kbuild_env KVER     print the root KVER's modules build in ("" for
#                          the host), making it first if needed
#   vm_kbuild_in ROOT KVER CMD...  run CMD with the toolchain of KVER's
#                          modules, ROOT being vm_kbuild_env's answer: on
#                          the host when ROOT is "", else in ROOT (KVER's
#                          cache directory, the current directory and the
#                          absolute directories among CMD's arguments, as
#                          such or as VAR=DIR, are shown in it, except the
#                          root's own: /usr is its /usr)
#   vm_kmake KVER ARGS...  run "make ARGS" for KVER, with vm_kbuild_in
#   vm_buildenv_root REL PKG...  print the root of REL with PKG... (and the
#                          packages of every root), making it first if
#                          needed: the same keyed cache, for other builds
#                          (scripts/build-debug-kernel.sh builds a kernel)
#   vm_buildenv_dir REL PKG...   print the directory of that root (its
#                          name is the key) without making it
#   vm_env_run ROOT BIND... -- CMD...  run CMD in ROOT (see below)
#   vm_buildenv_prune      remove roots of keys no longer current

# Bumped when the way a root is made changes.
_vm_buildenv_recipe=1
# Packages of every root, besides the headers' Depends: the build's, and
# DKMS as a user of the kernel's release has it (tests/packaging), with
# openssl for its signing key and xz-utils for modules compressed as the
# kernel's own.
_vm_buildenv_pkgs=(make libc6-dev sparse dkms openssl xz-utils)

# vm_buildenv_release KVER: the release whose packages build KVER's
# modules ("" for the host's).
vm_buildenv_release() {
	vm_kernel_info "$1" apt_set
}

# _vm_buildenv_pkglist KVER: the packages KVER's root adds to those of
# every root, one per line.
_vm_buildenv_pkglist() {
	vm_kernel_info "$1" tool_deps | tr ' ' '\n' | sed '/^$/d'
}

# _vm_buildenv_key REL PKG...: the key of a root: recipe, release and the
# candidate versions of PKG... (APT_OPTS must point at REL's lists).
_vm_buildenv_key() {
	local rel=$1 versions
	shift
	# one apt-cache call: each one reads the whole lists
	versions=$(apt-cache ${APT_OPTS[@]+"${APT_OPTS[@]}"} policy "$@" 2>/dev/null |
		awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) }
		     $1 == "Candidate:" && $2 != "(none)" { print p "=" $2 }')
	[[ $(wc -l <<<"$versions") -eq $# ]] || return 1
	printf 'recipe=%s release=%s\n%s\n' "$_vm_buildenv_recipe" "$rel" "$versions" |
		sha256sum | cut -c1-16
}

# _vm_debootstrap: print the debootstrap command: the host's, or Debian's
# package unpacked into the cache (it is a shell script).
_vm_debootstrap() {
	local dir
	if command -v debootstrap >/dev/null; then
		echo debootstrap
		return 0
	fi
	dir="$(vm_cache_dir)/tools/debootstrap"
	if [[ ! -x $dir/usr/sbin/debootstrap ]]; then
		rm -rf "$dir.tmp"
		apt_download "$dir.tmp" debootstrap || return 1
		dpkg-deb -x "$dir.tmp"/debootstrap_*.deb "$dir.tmp/x" || return 1
		rm -rf "$dir"
		mv "$dir.tmp/x" "$dir"
		rm -rf "$dir.tmp"
	fi
	echo "env DEBOOTSTRAP_DIR=$dir/usr/share/debootstrap $dir/usr/sbin/debootstrap"
}

# _vm_buildenv_make_locked DIR REL PKG...: debootstrap REL with PKG... into
# DIR/root (an empty status file as the system's: only the keyed versions
# matter), then DIR/info and DIR/.complete.
_vm_buildenv_make_locked() {
	local dir=$1 rel=$2 tmp mirror t0=$SECONDS log
	shift 2
	[[ -f $dir/.complete ]] && return 0
	[[ $EUID -eq 0 ]] || vm_die "making the $rel build environment needs root (debootstrap); run this as root once"
	mirror=$(apt_mirror) || vm_die "cannot tell the host's Debian mirror (set EXT4DEC_DEBIAN_MIRROR)"
	local -a dbs
	read -r -a dbs <<<"$(_vm_debootstrap)" || true
	[[ ${#dbs[@]} -gt 0 ]] || vm_die "no debootstrap: neither installed nor downloadable"
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")"
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	log="$tmp/debootstrap.log"
	vm_log "making the $rel build environment ($*) in $dir"
	# its own mount namespace: the /proc and /sys debootstrap mounts in the
	# root go away with it, whatever happens
	if ! unshare --mount --propagation private -- "${dbs[@]}" --variant=minbase \
		--include="$(printf '%s\n' "$@" | paste -sd,)" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$rel" "$tmp/root" "$mirror" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		mv "$log" "$(dirname "$dir")/debootstrap-$rel-failed.log"
		rm -rf "$tmp"
		vm_die "debootstrap of $rel failed (log: $(dirname "$dir")/debootstrap-$rel-failed.log)"
	fi
	rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*_Packages
	{
		echo "release=$rel"
		echo "recipe=$_vm_buildenv_recipe"
		echo "packages=$*"
		echo "versions=$(dpkg-query --admindir="$tmp/root/var/lib/dpkg" -W -f '${Package}=${Version} ' "$@" 2>/dev/null)"
		echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds=$((SECONDS - t0))"
	} >"$tmp/info"
	mv "$tmp" "$dir"
	touch "$dir/.complete"
	vm_log "made the $rel build environment in $((SECONDS - t0)) s ($(du -sh "$dir/root" | cut -f1))"
}

vm_kbuild_env() {
	local kver=$1 rel
	local -a pkgs
	rel=$(vm_buildenv_release "$kver")
	[[ -n $rel ]] || return 0
	mapfile -t pkgs < <(_vm_buildenv_pkglist "$kver")
	vm_buildenv_root "$rel" "${pkgs[@]}"
}

# _vm_buildenv_all PKG...: every package of a root with PKG..., one per line
_vm_buildenv_all() {
	printf '%s\n' "${_vm_buildenv_pkgs[@]}" "$@" | sed '/^$/d' | sort -u
}

vm_buildenv_dir() {
	local rel=$1 key
	shift
	# APT_OPTS: set by vm_apt_update, for this function only
	# shellcheck disable=SC2034
	local -a pkgs APT_OPTS=()
	mapfile -t pkgs < <(_vm_buildenv_all "$@")
	vm_apt_update "$rel" >&2 || vm_die "cannot read the package lists of $rel"
	key=$(_vm_buildenv_key "$rel" "${pkgs[@]}") ||
		vm_die "cannot resolve the $rel build environment's packages (${pkgs[*]})"
	printf '%s\n' "$(vm_cache_dir)/buildenv/$rel-$key"
}

vm_buildenv_root() {
	local rel=$1 dir
	shift
	local -a pkgs
	mapfile -t pkgs < <(_vm_buildenv_all "$@")
	dir=$(vm_buildenv_dir "$rel" "$@") || return 1
	[[ -f $dir/.complete ]] ||
		vm_with_lock _vm_buildenv_make_locked "$dir" "$rel" "${pkgs[@]}" || return 1
	[[ -f $dir/.complete ]] || vm_die "the $rel build environment was not made"
	printf '%s\n' "$dir/root"
}

# vm_env_run ROOT BIND... -- CMD...: run CMD in ROOT with chroot, in a
# private mount namespace with /dev, /proc, an empty /tmp (the compiler's
# and dkms's temporary files) and each BIND directory (at its own path)
# mounted, in the current directory.  The mount points outside /tmp stay
# in ROOT as empty directories: removing one that another build has
# mounted in its namespace would detach that mount.
vm_env_run() {
	local root=$1
	shift
	local -a ns=(--mount --propagation private --fork)
	[[ $EUID -eq 0 ]] || ns=(--user --map-root-user "${ns[@]}")
	# shellcheck disable=SC2016 # the script runs in the new namespace
	unshare "${ns[@]}" -- bash -c '
		set -e
		root=$1 cwd=$2
		shift 2
		mount --rbind /dev "$root/dev"
		mount -t proc proc "$root/proc" 2>/dev/null || true
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
		while [[ $1 != -- ]]; do
			mkdir -p "$root$1"
			mount --bind "$1" "$root$1"
			shift
		done
		shift
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 \
			sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
	' _ "$root" "$PWD" "$@"
}

vm_kbuild_in() {
	local root=$1 kver=$2 a d cache
	shift 2
	if [[ -z $root ]]; then
		"$@"
		return
	fi
	cache=$(vm_cache_dir)
	local -a binds=("$(vm_kernel_dir "$kver")")
	for a in "$PWD" "$@"; do
		d=${a#*=}
		[[ $d == /* && -d $d ]] || continue
		d=$(readlink -f "$d")
		# never / or a directory above the root, nor one of the root's
		# own system (PREFIX=/usr names a place in it, not one to show)
		[[ $d == / || $cache/ == "$d"/* ]] && continue
		grep -qxF "$d" "$root"/var/lib/dpkg/info/*.list && continue
		binds+=("$d")
	done
	vm_env_run "$root" "${binds[@]}" -- "$@"
}

vm_kmake() {
	local kver=$1 root
	shift
	root=$(vm_kbuild_env "$kver") || return 1
	vm_kbuild_in "$root" "$kver" make "$@"
}

vm_buildenv_prune() {
	local d k cur=()
	for k in "$(vm_cache_dir)"/kernels/*/; do
		k=$(basename "$k")
		[[ -n $(vm_buildenv_release "$k" 2>/dev/null) ]] || continue
		cur+=("$(vm_kbuild_env "$k")")
	done
	for d in "$(vm_cache_dir)"/buildenv/*/; do
		[[ -d $d/root ]] || continue
		printf '%s\n' "${cur[@]}" | grep -qxF "${d%/}/root" && continue
		vm_log "removing the build environment $d"
		rm -rf "$d"
	done
}
