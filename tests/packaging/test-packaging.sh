#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging/test-packaging.sh - make install/uninstall, DKMS and the
# man pages, for each test kernel's headers (nothing is loaded here: that
# happens in the VM).  Everything goes to temporary trees: DESTDIR for make
# install, private --sourcetree/--dkmstree for dkms.
#
# A second DKMS check sees the system as a DKMS user's is, with the
# kernel's image and headers installed by apt: in a private mount namespace
# (root; unshare and overlayfs), /usr shows the kernel's packages as
# unpacked in the harness's cache over the system's own /usr, with a
# writable layer on top.  There dkms builds against
# /lib/modules/<version>/build, names the module as the kernel's own
# modules are (ext4dec.ko.xz on 6.12), signs and installs it, and depmod
# finds it; nothing outside the namespace changes (dkms's signing key goes
# to a private /var/lib/dkms).
#
# Everything that builds the module runs where the harness builds a
# kernel's modules (scripts/lib/buildenv.sh): on the host for the kernels
# of its release, and for those of newer suites in the cached root of
# their release, a system that matches the kernel, with that release's
# make, compiler, kmod and dkms.  There "the system" of the check above is
# the root.  The tool is the host's build (the root has the kernel's
# toolchain, not the tool's libraries); make install finds it built.
#
# Usage: tests/packaging/test-packaging.sh [SERIES...]
#        (default: the "check" lines of tests/kernels)
# Prints TAP and "# packaging: P passed, F failed, S skipped".

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
series=("$@")
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
[[ ${#series[@]} -gt 0 ]] || mapfile -t series < <(kernels_list)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# vm_kernel_for, vm_kernel_paths, vm_kbuild_env, vm_kbuild_in
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# kb CMD...: CMD where the module of the kernel being tested builds (the
# host, or $env_root)
kb() { vm_kbuild_in "$env_root" "$kver" "$@"; }

# installed_kernel_possible ROOT KVER SYS: can the system SYS ("" for
# this host, or a build root) show ROOT's kernel as installed?  Prints why
# not.
installed_kernel_possible() {
	local t sys=${3:-} on=${3:-this host}
	[[ $(id -u) -eq 0 ]] || { echo "needs root (a mount namespace)"; return 1; }
	command -v unshare >/dev/null || { echo "no unshare (util-linux)"; return 1; }
	[[ $(readlink "$sys/lib") == usr/lib ]] || { echo "/lib is not /usr/lib (merged /usr) on $on"; return 1; }
	[[ -d $sys/var/lib/dkms ]] || { echo "no /var/lib/dkms on $on"; return 1; }
	[[ -s $1/lib/modules/$2/modules.dep ]] || { echo "no modules.dep in $1"; return 1; }
	[[ ! -e $sys/lib/modules/$2 ]] || { echo "/lib/modules/$2 exists on $on"; return 1; }
	# the mounts with_installed_kernel makes, tried on scratch directories
	t=$tmp/trial
	mkdir -p "$t/lower" "$t/upper" "$t/work" "$t/merged" "$t/bind"
	unshare -m sh -c "mount --make-rprivate / &&
		mount -t overlay overlay -o lowerdir='$t/lower',upperdir='$t/upper',workdir='$t/work' '$t/merged' &&
		mount --bind '$t/bind' /var/lib/dkms" >"$t/log" 2>&1 ||
		{ echo "no private overlay mount here: $(tail -n 1 "$t/log")"; return 1; }
}

# installed_suffix ROOT KVER: the module's name DKMS must give, from the
# compression of the kernel's own modules in modules.dep
installed_suffix() {
	case $(head -n 1 "$1/lib/modules/$2/modules.dep") in
	*.ko.xz:*) echo ext4dec.ko.xz ;;
	*.ko.zst:*) echo ext4dec.ko.zst ;;
	*.ko.gz:*) echo ext4dec.ko.gz ;;
	*) echo ext4dec.ko ;;
	esac
}

# with_installed_kernel ROOT KVER WORK SRC VERSION NAME, in a private mount
# namespace, on the host or in a build root: /usr becomes the system's
# /usr under ROOT/usr (the headers and kbuild) under a writable WORK/upper
# holding a copy of ROOT/lib/modules; then dkms add, build, install; the
# module must be where depmod finds it, named NAME, and go away with dkms
# remove.
with_installed_kernel() {
	local root=$1 kver=$2 work=$3 src=$4 version=$5 name=$6 found
	set -e
	mkdir -p "$work/upper/lib/modules" "$work/ovl" "$work/tree"
	cp -a "$root/lib/modules/$kver" "$work/upper/lib/modules/"
	ln -sfn "/usr/src/linux-headers-$kver" "$work/upper/lib/modules/$kver/build"
	mount -t overlay overlay -o "lowerdir=$root/usr:/usr,upperdir=$work/upper,workdir=$work/ovl" /usr
	# dkms keeps its signing key (made on first use) in /var/lib/dkms
	mkdir -p "$work/var-dkms"
	mount --bind "$work/var-dkms" /var/lib/dkms
	[[ -f /lib/modules/$kver/build/Makefile ]]
	dkms add -m ext4dec -v "$version" --sourcetree "$src/usr/src" --dkmstree "$work/tree" >/dev/null
	dkms install -m ext4dec -v "$version" -k "$kver" --sourcetree "$src/usr/src" \
		--dkmstree "$work/tree" >"$work/install.log" 2>&1 ||
		{ tail -n 20 "$work/install.log"; return 1; }
	found=$(modinfo -k "$kver" -n ext4dec)
	[[ $(basename "$found") == "$name" ]] ||
		{ echo "depmod finds $found, not $name"; return 1; }
	[[ $(modinfo -k "$kver" -F version ext4dec) == "$version" ]]
	[[ -n $(modinfo -k "$kver" -F signer ext4dec) ]] ||
		{ echo "$found is not signed"; return 1; }
	dkms remove -m ext4dec -v "$version" -k "$kver" --dkmstree "$work/tree" >/dev/null
	if found=$(modinfo -k "$kver" -n ext4dec 2>/dev/null); then
		echo "after dkms remove, depmod still finds $found"
		return 1
	fi
}

echo "TAP version 13"
# shellcheck disable=SC2016 # expanded by the inner bash
check "man pages format cleanly" \
	bash -c 'for f in man/szip.1 man/ext4dec.8 man/ext4dec-compress.8; do
		out=$(groff -man -Tutf8 -ww -z "$f" 2>&1); [[ -z $out ]] || { echo "$f: $out"; exit 1; }
	done'
check "dkms.conf names the version the module reports" \
	grep -q "EXT4DEC_VERSION	\"$version\"" ext4dec/ext4dec.h

# The symbols a kernel's .config must have for dkms to build the module
exclusive_config() { sed -n 's/^BUILD_EXCLUSIVE_CONFIG="\(.*\)"/\1/p' dkms.conf; }

# ftrace_config_named: dkms.conf asks for the ftrace support that
# ext4dec/ftrace.c's #error requires (CONFIG_HAVE_X, or CONFIG_X, which
# selects it), so that dkms skips a kernel without it instead of failing
ftrace_config_named() {
	local c need want
	want=" $(exclusive_config) "
	need=$(grep -B1 '^#error' ext4dec/ftrace.c | sed -n 's/^#ifndef \(CONFIG_[A-Z0-9_]*\)/\1/p')
	[[ -n $need ]] || { echo "no #ifndef CONFIG_... #error in ext4dec/ftrace.c"; return 1; }
	for c in $need; do
		[[ $want == *" $c "* || $want == *" ${c/HAVE_/} "* ]] ||
			{ echo "ftrace.c requires $c; BUILD_EXCLUSIVE_CONFIG:$want"; return 1; }
	done
}

# install_without_kdir DEST: make install for a kernel with no build tree
# installs the tools, scripts, ext4dec-status's helper and man pages, says
# that the module was skipped and how to build it, and succeeds; no module,
# and no modules-load.d file that would fail at boot
install_without_kdir() {
	local d=$1 out
	out=$(make install DESTDIR="$d" PREFIX=/usr KDIR="$tmp/no-such-kdir" KVER=0.0-none 2>&1) ||
		{ echo "$out"; echo "make install failed"; return 1; }
	test -x "$d/usr/bin/szip" -a -x "$d/usr/sbin/ext4dec-compress" \
		-a -x "$d/usr/sbin/ext4dec-status" -a -x "$d/usr/sbin/ext4dec-decompress" \
		-a -f "$d/usr/share/man/man1/szip.1" -a -f "$d/usr/share/man/man8/ext4dec.8" \
		-a -f "$d/usr/share/man/man8/ext4dec-compress.8" \
		-a -f "$d/usr/share/man/man8/ext4dec-decompress.8" \
		-a -f "$d/usr/share/man/man8/ext4dec-status.8" \
		-a -x "$d/usr/libexec/ext4dec/ext4dec-query" ||
		{ echo "$out"; find "$d"; echo "tools, scripts or man pages missing"; return 1; }
	if ! grep -q "ext4dec.ko skipped: no kernel build tree at $tmp/no-such-kdir" <<<"$out" ||
		! grep -q "install-module KDIR=" <<<"$out" || ! grep -q "install-dkms" <<<"$out"; then
		echo "$out"
		echo "no warning that the module was skipped, and how to build it"
		return 1
	fi
	! find "$d" -name 'ext4dec.ko*' -o -name ext4dec.conf | grep . || return 1
	make uninstall DESTDIR="$d" PREFIX=/usr KDIR="$tmp/no-such-kdir" KVER=0.0-none >/dev/null ||
		{ echo "make uninstall failed"; return 1; }
	! find "$d" \( -type f -o -type l \) | grep .
}

# dkms_staging DEST: make install-dkms puts the sources dkms builds and the
# modules-load.d file in DEST; make uninstall-dkms takes them away
dkms_staging() {
	local d=$1 f
	make install-dkms DESTDIR="$d" >/dev/null || return 1
	for f in dkms.conf Kbuild ext4dec/ftrace.c ext4dec/main.c szip/decode.c \
		szip/szip_env_kernel.c include/ext4dec_ioctl.h; do
		[[ -f $d/usr/src/ext4dec-$version/$f ]] || { echo "no $f in $d/usr/src/ext4dec-$version"; return 1; }
	done
	[[ $(cat "$d/usr/lib/modules-load.d/ext4dec.conf" 2>&1) == ext4dec ]] ||
		{ find "$d" -path '*modules-load*'; echo "no modules-load.d/ext4dec.conf naming ext4dec"; return 1; }
	make uninstall-dkms DESTDIR="$d" >/dev/null || return 1
	! find "$d" \( -type f -o -type l \) | grep .
}

check "dkms.conf requires the ftrace support ext4dec/ftrace.c requires" ftrace_config_named
check "make install without kernel headers: tools, scripts, man pages, a warning, status 0" \
	install_without_kdir "$tmp/no-kdir"
check "make install-dkms: sources and modules-load.d/ext4dec.conf; uninstall-dkms removes them" \
	dkms_staging "$tmp/dkms-staging"

# make_install DEST: the tool (built here), then make install into DEST
make_install() {
	[[ -z $env_root ]] || make tool >/dev/null || return 1
	mkdir -p "$1"
	kb make install DESTDIR="$1" PREFIX=/usr KDIR="$kdir" KVER="$kver"
}

# make_uninstall DEST: make uninstall leaves nothing of ours in DEST
make_uninstall() {
	kb make uninstall DESTDIR="$1" PREFIX=/usr KDIR="$kdir" KVER="$kver" >/dev/null || return 1
	! find "$1" \( -type f -o -type l \) \( -name szip -o -name 'ext4dec*' -o -name szip.1 \) | grep . &&
		[[ ! -e $1/usr/libexec/ext4dec ]]
}

# dkms_build SRC TREE: dkms add and build into private trees, for the
# kernel's headers; a module for the kernel comes out
dkms_build() {
	local src=$1 tree=$2 ko
	make install-dkms DESTDIR="$src" >/dev/null || return 1
	mkdir -p "$tree"
	kb dkms add -m ext4dec -v "$version" --sourcetree "$src/usr/src" --dkmstree "$tree" || return 1
	kb dkms build -m ext4dec -v "$version" -k "$kver" --kernelsourcedir "$kdir" \
		--sourcetree "$src/usr/src" --dkmstree "$tree" || return 1
	ko=$(find "$tree/ext4dec/$version/$kver" -path '*/module/ext4dec.ko*' | head -n 1)
	[[ -n $ko ]] || { echo "no ext4dec.ko* in $tree"; return 1; }
	[[ $(modinfo -F vermagic "$ko") == "$kver "* ]]
}

for s in "${series[@]}"; do
	if ! kver=$(vm_kernel_for "$s" 2>"$tmp/kdir.err"); then
		not_ok "$s: headers"
		sed 's/^/# /' "$tmp/kdir.err"
		continue
	fi
	vm_kernel_paths "$kver"
	kdir=$K_KDIR
	# the kernel's packages, unpacked: <kroot>/usr and <kroot>/lib/modules
	kroot=$K_ROOT
	if ! env_root=$(vm_kbuild_env "$kver" 2>"$tmp/env.err"); then
		not_ok "$s: the root $kver's modules build in"
		sed 's/^/# /' "$tmp/env.err" | tail -n 20
		continue
	fi
	[[ -z $env_root ]] || echo "# $s: $kver builds in $env_root"
	dest=$tmp/dest-$kver

	check "$s: make install (DESTDIR, PREFIX=/usr)" make_install "$dest"
	check "$s: installed tool, scripts, helper, man pages, module and modules.dep" \
		test -x "$dest/usr/bin/szip" -a -f "$dest/usr/share/man/man1/szip.1" \
		-a -x "$dest/usr/sbin/ext4dec-compress" -a -x "$dest/usr/sbin/ext4dec-status" \
		-a -x "$dest/usr/sbin/ext4dec-decompress" \
		-a -x "$dest/usr/libexec/ext4dec/ext4dec-query" \
		-a -f "$dest/usr/share/man/man8/ext4dec.8" \
		-a -f "$dest/lib/modules/$kver/extra/ext4dec.ko" \
		-a -s "$dest/lib/modules/$kver/modules.dep"
	check "$s: /usr/lib/modules-load.d/ext4dec.conf loads ext4dec at boot" \
		grep -qx ext4dec "$dest/usr/lib/modules-load.d/ext4dec.conf"
	ko=$dest/lib/modules/$kver/extra/ext4dec.ko
	check "$s: modinfo: version, license, vermagic, described parameter" \
		bash -c "[[ \$(modinfo -F version '$ko') == '$version' ]] &&
			 [[ \$(modinfo -F license '$ko') == GPL ]] &&
			 [[ \$(modinfo -F vermagic '$ko') == '$kver '* ]] &&
			 modinfo -F parm '$ko' | grep -q '^workspaces:.*per possible CPU'"
	check "$s: make uninstall removes what install put there" make_uninstall "$dest"
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "$s: the kernel's .config has all BUILD_EXCLUSIVE_CONFIG asks for" \
		bash -c 'for c in $1; do grep -qE "^$c=[ym]" "$2/.config" || { echo "$2/.config: no $c"; exit 1; }; done' \
		_ "$(exclusive_config)" "$kdir"

	if ! kb sh -c 'command -v dkms' >/dev/null 2>&1; then
		skip "$s: dkms add + build" "dkms not installed${env_root:+ in $env_root}"
		continue
	fi
	# DKMS compresses the module (ext4dec.ko.xz, .zst, .gz) when the
	# kernel's own modules are, which it learns from modules.dep in
	# /lib/modules/<version>: on a host with the kernel installed
	src=$tmp/dkms-src-$kver
	check "$s: dkms add + build" dkms_build "$src" "$tmp/dkms-tree-$kver"

	if ! why=$(installed_kernel_possible "$kroot" "$kver" "$env_root"); then
		if [[ ${CI:-} == true ]]; then
			# CI runs as root on a host that can: not being able is a failure
			not_ok "$s: dkms install with the kernel installed"
			echo "# $why (CI=true)"
		else
			skip "$s: dkms install with the kernel installed" "$why"
		fi
		continue
	fi
	name=$(installed_suffix "$kroot" "$kver")
	work=$tmp/installed-$kver
	mkdir -p "$work"
	# a private mount namespace: its own, or the build root's
	ns=(unshare -m --propagation private)
	[[ -z $env_root ]] || ns=(kb)
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "$s: dkms install with the kernel installed: $name, found by depmod" \
		"${ns[@]}" bash -c "$(declare -f with_installed_kernel)"'
			with_installed_kernel "$@"' _ "$kroot" "$kver" "$work" "$src" "$version" "$name"
done

tap_plan
tap_summary packaging
[[ $tap_fail -eq 0 ]]
