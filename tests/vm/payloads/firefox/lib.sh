# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# shellcheck disable=SC2034 # root, lib, setup_error: for the sourcing script
#
# tests/vm/payloads/firefox/lib.sh - what the Firefox payloads share
# (sourced by this directory's run.sh and by bench/firefox-guest.sh, in
# the guest's busybox sh): the Debian image of scripts/build-demo-image.sh
# mounted with a chroot around it, and small helpers; the TAP helpers
# (ok, not_ok, tap_plan...) of /payload/tap.sh, which run-vm.sh adds.
#
# Needs /bin/szip and /bin/ext4dec_demo in the guest (run-vm.sh --bin),
# and /payload/bin/ext4dec-compress (with its helper ext4dec-copy-xattrs,
# which the chroot gets where make install-tools puts it, when there) and
# /payload/page.html.

# shellcheck source=tests/lib/tap.sh
. /payload/tap.sh
root=/mnt/demo
lib=/usr/lib/firefox-esr/libxul.so
mounts=
setup_error=

# bail DESCRIPTION: a failed test point, then the sourcing script's finish.
bail() {
	not_ok "$*"
	finish
}

diag() { sed 's/^/# /'; }
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1000000 }'; }
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# counters: the module's counters as "name=value" words.
counters() {
	for c in chunks_inflated compressed_bytes uncompressed_bytes read_errors; do
		printf '%s=%s ' "$c" "$(cat /sys/kernel/ext4dec/$c)"
	done
}
# delta BEFORE NAME: increase of counter NAME since the counters() BEFORE.
delta() {
	b=$(echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p")
	echo $(($(cat "/sys/kernel/ext4dec/$2") - b))
}

# in_root CMD...: run CMD in the chroot with a clean environment.
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TMPDIR=/tmp \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# mount_at WHAT DIR ARGS...: mount and remember it for unmount_all.
mount_at() {
	what=$1 dir=$2
	shift 2
	mount "$@" "$what" "$dir" || return 1
	mounts="$dir $mounts"
}

# unmount_all: undo every mount_at, latest first.  Firefox must be gone
# (timeout kills it): anything left would keep the image busy.
unmount_all() {
	for d in $mounts; do
		umount "$d" 2>/dev/null || umount -l "$d" 2>/dev/null || echo "# cannot unmount $d"
	done
	mounts=
}

# chroot_setup DEV: mount the image DEV on $root, set up the chroot's
# file systems and install szip, ext4dec_demo and the conversion scripts
# in its /usr/local.  On failure: return 1 with the reason in setup_error.
chroot_setup() {
	mkdir -p "$root"
	mount_at "$1" "$root" -t ext4 || { setup_error="mount $1"; return 1; }
	[ -f "$root$lib" ] || { setup_error="$lib is not in the image"; return 1; }
	if ! { mount_at proc "$root/proc" -t proc &&
		mount_at sysfs "$root/sys" -t sysfs &&
		mount_at /dev "$root/dev" -o bind &&
		mount_at tmpfs "$root/dev/shm" -t tmpfs &&
		mount_at tmpfs "$root/tmp" -t tmpfs -o mode=1777 &&
		mount_at tmpfs "$root/run" -t tmpfs; }; then
		setup_error="chroot mounts"
		return 1
	fi
	# the tools, as an administrator would install them
	if ! { mkdir -p "$root/usr/local/bin" "$root/usr/local/sbin" "$root/usr/local/lib" \
		"$root/usr/local/libexec/ext4dec" &&
		cp /bin/szip /bin/ext4dec_demo "$root/usr/local/bin/" &&
		cp /payload/bin/ext4dec-compress "$root/usr/local/sbin/" &&
		{ [ ! -f /payload/bin/ext4dec-copy-xattrs ] ||
			cp /payload/bin/ext4dec-copy-xattrs "$root/usr/local/libexec/ext4dec/"; } &&
		cp /bin/ext4dec-query "$root/usr/local/libexec/ext4dec/" &&
		ln -sf ext4dec-compress "$root/usr/local/sbin/ext4dec-decompress" &&
		ln -sf ext4dec-compress "$root/usr/local/sbin/ext4dec-status" &&
		cp /payload/page.html "$root/tmp/"; }; then
		setup_error="copy the tools into the chroot"
		return 1
	fi
	# libraries szip needs that the image lacks: from the guest's /lib
	copied=
	for l in $(in_root ldd /usr/local/bin/szip 2>/dev/null | awk '$3 == "not" { print $1 }'); do
		for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib /lib64; do
			[ -f "$d/$l" ] && cp "$d/$l" "$root/usr/local/lib/" && break
		done
		echo "# $l copied into the chroot for szip"
		copied=1
	done
	[ -z "$copied" ] || in_root ldconfig
	in_root szip --version >/dev/null 2>&1 || { setup_error="szip does not run in the chroot"; return 1; }
	echo "# $(in_root firefox-esr --version 2>/dev/null), $(in_root dpkg-query -W -f '.\n' | wc -l) packages in the image"
}
