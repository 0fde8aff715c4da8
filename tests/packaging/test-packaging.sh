#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging/test-packaging.sh - make install/uninstall, DKMS and the
# man pages, for each test kernel's headers (nothing is loaded here: that
# happens in the VM).  Everything goes to temporary trees: DESTDIR for make
# install, private --sourcetree/--dkmstree for dkms.
#
# Usage: tests/packaging/test-packaging.sh [SERIES...]   (default: 6.1 6.12)
# Prints TAP and "# packaging: P passed, F failed, S skipped".

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
series=("$@")
[[ ${#series[@]} -gt 0 ]] || series=(6.1 6.12)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh

echo "TAP version 13"
# shellcheck disable=SC2016 # expanded by the inner bash
check "man pages format cleanly" \
	bash -c 'for f in man/szip.1 man/ext4dec.8; do
		out=$(groff -man -Tutf8 -ww -z "$f" 2>&1); [[ -z $out ]] || { echo "$f: $out"; exit 1; }
	done'
check "dkms.conf names the version the module reports" \
	grep -q "EXT4DEC_VERSION	\"$version\"" ext4dec/ext4dec.h

for s in "${series[@]}"; do
	kdir=$(tests/vm/run-vm.sh -k "$s" --print-kdir 2>"$tmp/kdir.err")
	if [[ -z $kdir ]]; then
		not_ok "$s: headers"
		sed 's/^/# /' "$tmp/kdir.err"
		continue
	fi
	kver=$(basename "$kdir")
	kver=${kver#linux-headers-}
	dest=$tmp/dest-$kver

	check "$s: make install (DESTDIR, PREFIX=/usr)" \
		make install DESTDIR="$dest" PREFIX=/usr KDIR="$kdir" KVER="$kver"
	check "$s: installed tool, scripts, man pages, module and modules.dep" \
		test -x "$dest/usr/bin/szip" -a -f "$dest/usr/share/man/man1/szip.1" \
		-a -x "$dest/usr/sbin/ext4dec-compress" -a -x "$dest/usr/sbin/ext4dec-status" \
		-a -x "$dest/usr/sbin/ext4dec-decompress" \
		-a -f "$dest/usr/share/man/man8/ext4dec.8" \
		-a -f "$dest/lib/modules/$kver/extra/ext4dec.ko" \
		-a -s "$dest/lib/modules/$kver/modules.dep"
	ko=$dest/lib/modules/$kver/extra/ext4dec.ko
	check "$s: modinfo: version, license, vermagic, described parameter" \
		bash -c "[[ \$(modinfo -F version '$ko') == '$version' ]] &&
			 [[ \$(modinfo -F license '$ko') == GPL ]] &&
			 [[ \$(modinfo -F vermagic '$ko') == '$kver '* ]] &&
			 modinfo -F parm '$ko' | grep -q '^workspaces:.*per possible CPU'"
	check "$s: make uninstall removes what install put there" \
		bash -c "make uninstall DESTDIR='$dest' PREFIX=/usr KDIR='$kdir' KVER='$kver' >/dev/null &&
			 ! find '$dest' \\( -type f -o -type l \\) \\( -name szip -o -name 'ext4dec*' -o -name szip.1 \\) | grep -q ."

	if ! command -v dkms >/dev/null; then
		skip "$s: dkms add + build" "dkms not installed"
		continue
	fi
	# DKMS compresses the module (ext4dec.ko.xz, .zst, .gz) when the
	# kernel's own modules are, which it learns from modules.dep in
	# /lib/modules/<version>: on a host with the kernel installed
	src=$tmp/dkms-src-$kver tree=$tmp/dkms-tree-$kver
	mkdir -p "$tree"
	check "$s: dkms add + build" bash -c "
		make install-dkms DESTDIR='$src' >/dev/null &&
		dkms add -m ext4dec -v '$version' --sourcetree '$src/usr/src' --dkmstree '$tree' &&
		dkms build -m ext4dec -v '$version' -k '$kver' --kernelsourcedir '$kdir' \
			--sourcetree '$src/usr/src' --dkmstree '$tree' &&
		ko=\$(ls '$tree/ext4dec/$version/$kver/x86_64/module/'ext4dec.ko* | head -n 1) &&
		[[ \$(modinfo -F vermagic \"\$ko\") == '$kver '* ]]"
done

tap_plan
tap_summary packaging
[[ $tap_fail -eq 0 ]]
