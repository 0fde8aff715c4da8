#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# tests/vm/payloads/boot/run.sh - one boot of the boot test
# (tests/vm/boot-test.sh, which runs the phases in order on one disk, the
# image of scripts/build-boot-image.sh).  /payload/config sets BOOT_PHASE:
#
#   install   (the harness's initramfs; the disk is the first --image)
#             installs in the disk what make install would: the tools in
#             /usr/local, ext4dec.ko in /lib/modules/<kver>/extra with the
#             kernel modules it needs, depmod, and the modules-load.d file
#   compress  (the disk booted with systemd as init: run-vm.sh --switch-root)
#             ext4dec was loaded at boot by systemd-modules-load; Firefox
#             runs; ext4dec-compress refuses init and the libraries it
#             needs; ext4dec-compress -r converts /usr/lib/firefox-esr;
#             Firefox runs from the compressed libxul.so
#   reboot    (booted again) the system boots, ext4dec is loaded at boot,
#             ext4dec-status says the files are active, and Firefox runs
#             from them
#   nomodule  (booted with module_blacklist=ext4dec) the system still
#             reaches multi-user.target, with systemd-modules-load failed;
#             ext4dec-status warns, Firefox fails; ext4dec-decompress -r
#             recovers the files without the module, and Firefox runs
#
# "Firefox runs": firefox-esr --headless --help, which loads libxul.so
# with its dependencies, runs its initializers and prints the usage from
# libxul's code; its output is compared with the first run's.  TAP on
# stdout.  The phases after install run in the booted system (dash, the
# image's tools); what one phase leaves for the next is in $state on the
# disk.

set -u
BOOT_PHASE=
DEMO_LIBXUL_SHA256=
# shellcheck disable=SC1091
[ -f /payload/config ] && . /payload/config

firefox_dir=/usr/lib/firefox-esr
state=/var/lib/ext4dec-boot-test
ff_timeout=900

echo "TAP version 13"
echo "# phase $BOOT_PHASE, kernel $(uname -r), PID 1: $(cat /proc/1/comm)"

if [ "$BOOT_PHASE" = install ]; then
	# lib.sh: the image mounted with a chroot around it and the tools
	# installed in it (tap.sh comes with it)
	# shellcheck source=tests/vm/payloads/firefox/lib.sh
	. /payload/lib.sh
else
	# shellcheck source=tests/lib/tap.sh
	. /payload/tap.sh
	root=
	lib=$firefox_dir/libxul.so
	diag() { sed 's/^/# /'; }
	now() { cut -d' ' -f1 /proc/uptime; }
	since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
	drop_caches() {
		sync
		echo 3 >/proc/sys/vm/drop_caches
	}
	bail() {
		not_ok "$*"
		finish
	}
fi

finish() {
	if [ "$BOOT_PHASE" = install ]; then
		unmount_all
		if [ -n "${dev:-}" ] && ! grep -q "^$dev " /proc/mounts; then
			check "e2fsck -fn of the disk after the installation" e2fsck -fn "$dev"
		fi
	fi
	tap_plan
	[ "$tap_fail" -eq 0 ]
	exit
}

# in_sys CMD...: run CMD with a clean environment
in_sys() {
	env -i HOME=/root LANG=C.UTF-8 TMPDIR=/tmp MOZ_CRASHREPORTER_DISABLE=1 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

is_c() { lsattr -d "$1" 2>/dev/null | cut -d' ' -f1 | grep -q c; }

# ff_help NAME DESC: cold "firefox-esr --headless --help" into
# /tmp/help-NAME.out, which must be the first run's (saved in $state)
ff_help() {
	drop_caches
	t0=$(now)
	in_sys timeout -k 10 "$ff_timeout" firefox-esr --headless --help \
		>"/tmp/help-$1.out" 2>"/tmp/help-$1.err"
	rc=$?
	help_time=$(since "$t0")
	if [ "$rc" -ne 0 ] || ! grep -q '^Usage: firefox' "/tmp/help-$1.out"; then
		not_ok "firefox-esr --headless --help $2 (exit $rc after $help_time s)"
		tail -n 20 "/tmp/help-$1.out" "/tmp/help-$1.err" | diag
		return 1
	fi
	[ -f "$state/help.out" ] || cp "/tmp/help-$1.out" "$state/help.out"
	if cmp -s "$state/help.out" "/tmp/help-$1.out"; then
		ok "firefox-esr --headless --help $2 ($help_time s): libxul.so loaded, its code ran, the first run's output"
		return 0
	fi
	not_ok "firefox-esr --headless --help $2: output differs from the first run's"
	diff "$state/help.out" "/tmp/help-$1.out" | head -n 20 | diag
	return 1
}

# booted STATE: systemd is PID 1 and the boot finished in STATE (running,
# or degraded); prints systemd's times
booted() {
	if [ "$(cat /proc/1/comm)" = systemd ]; then
		ok "systemd is PID 1 ($(readlink /sbin/init))"
	else
		bail "systemd is not PID 1: $(cat /proc/1/comm)"
	fi
	st=$(timeout 300 systemctl is-system-running --wait)
	systemd-analyze time 2>&1 | head -n 1 | diag
	failed=$(systemctl list-units --state=failed --no-legend --plain | awk '{ print $1 }' | paste -sd ' ')
	if [ "$st" = "$1" ]; then
		ok "the boot finished: system $st${failed:+ (failed: $failed)}"
	else
		not_ok "the boot finished with the system $st, not $1${failed:+ (failed: $failed)}"
		systemctl --failed --no-pager 2>&1 | diag
	fi
	if [ "$(systemctl is-active multi-user.target)" = active ]; then
		ok "multi-user.target reached"
	else
		not_ok "multi-user.target not reached: $(systemctl is-active multi-user.target)"
	fi
}

# modules_load_log: this boot's messages of systemd-modules-load, by
# their identifier: journald may not tell the unit of a process that
# exited before it read its messages, so "-u" can miss them
modules_load_log() {
	journalctl -b -o cat -t systemd-modules-load >/tmp/modules-load.log 2>&1
}

# loaded_at_boot: systemd-modules-load loaded ext4dec (modules-load.d)
loaded_at_boot() {
	modules_load_log
	if grep -q '^ext4dec ' /proc/modules &&
		grep -q "Inserted module 'ext4dec'" /tmp/modules-load.log &&
		[ "$(systemctl show -P Result systemd-modules-load.service)" = success ]; then
		ok "ext4dec loaded at boot by systemd-modules-load ($(grep -l ext4dec /etc/modules-load.d/*.conf /usr/lib/modules-load.d/*.conf 2>/dev/null | paste -sd ' '))"
	else
		not_ok "ext4dec not loaded at boot by systemd-modules-load"
		grep ext4dec /proc/modules | diag
		diag </tmp/modules-load.log
	fi
}

# status_check WANT: ext4dec-status of $firefox_dir: WANT "active" (every
# +c file active, no warning), "raw" (the warning that the module is not
# loaded) or "none" (no +c file, no warning)
status_check() {
	in_sys ext4dec-status "$firefox_dir" >/tmp/status.out 2>/tmp/status.err
	rc=$?
	rows=$(awk 'NR > 1 && NF >= 8 && $NF ~ /^\// { n[$1]++ }
		END { for (s in n) printf "%s%d %s", (d++ ? ", " : ""), n[s], s }' /tmp/status.out)
	case $1 in
	active)
		if grep -q "^active .* $lib\$" /tmp/status.out &&
			! awk 'NR > 1 && NF >= 8 && $NF ~ /^\// && $1 != "active"' /tmp/status.out | grep -q . &&
			! grep -q WARNING /tmp/status.err; then
			ok "ext4dec-status: every compressed file active ($rows), no warning"
			return
		fi
		;;
	raw)
		if grep -q "^raw .* $lib\$" /tmp/status.out &&
			grep -q 'WARNING: the ext4dec module is not loaded' /tmp/status.err; then
			ok "ext4dec-status warns that the module is not loaded ($rows, exit $rc)"
			diag </tmp/status.err
			return
		fi
		;;
	none)
		if [ -z "$rows" ] && ! grep -q WARNING /tmp/status.err; then
			ok "ext4dec-status: no compressed file left, no warning"
			return
		fi
		;;
	esac
	not_ok "ext4dec-status $firefox_dir is not as expected ($1; exit $rc, rows $rows)"
	head -n 20 /tmp/status.out /tmp/status.err | diag
}

# ------------------------------------------------------------- install
phase_install() {
	dev=${EXT4DEC_IMAGES%% *}
	[ -n "$dev" ] || { dev=; bail "no image disk (run-vm.sh --image-rw)"; }
	chroot_setup "$dev" || bail "$setup_error"
	ok "disk $dev mounted on $root, the tools installed in its /usr/local"

	kver=$EXT4DEC_KVER
	md=$root/lib/modules/$kver
	# the kernel's modules the guest needs (virtio, ext4dec's
	# dependencies), as the kernel package would have put them
	if mkdir -p "$md" && cp -a "/lib/modules/$kver/." "$md/" &&
		rm -rf "$md/extra"; then
		ok "the kernel's modules that ext4dec needs in $md"
	else
		bail "copy /lib/modules/$kver to the disk"
	fi
	# what make install-module does
	if mkdir -p "$md/extra" && cp /payload/modules/ext4dec.ko "$md/extra/" &&
		chmod 0644 "$md/extra/ext4dec.ko" && in_root depmod "$kver" &&
		mkdir -p "$root/usr/lib/modules-load.d" &&
		echo ext4dec >"$root/usr/lib/modules-load.d/ext4dec.conf"; then
		ok "ext4dec.ko in /lib/modules/$kver/extra, depmod, /usr/lib/modules-load.d/ext4dec.conf (make install-module)"
	else
		bail "install ext4dec.ko, depmod and the modules-load.d file"
	fi
	check "modprobe finds ext4dec in the disk's modules" in_root modprobe -n -v ext4dec
	mkdir -p "$root$state"
	echo "$DEMO_LIBXUL_SHA256" >"$root$state/libxul.sha256"
	finish
}

# ------------------------------------------------------------ compress
phase_compress() {
	mkdir -p "$state"
	booted running
	loaded_at_boot
	ff_help before "before the conversion (the uncompressed libxul.so)"

	# Refused: init and libraries it needs (systemd's, libc), and the
	# module loader's library: the system would not boot without the
	# module.  Nothing changes on disk.
	init=$(readlink -f /sbin/init)
	for f in "$init" $(ldd "$init" | awk '$3 ~ /^\// && $1 ~ /^(libsystemd-shared|libc\.so|libkmod\.so)/ { print $3 }'); do
		f=$(readlink -f "$f")
		sha=$(sha256sum <"$f")
		in_sys ext4dec-compress -1 "$f" 2>/tmp/refused.err
		rc=$?
		if [ "$rc" -ne 0 ] && grep -q 'needed to boot' /tmp/refused.err &&
			! is_c "$f" && [ "$(sha256sum <"$f")" = "$sha" ]; then
			ok "ext4dec-compress $f: refused (exit $rc), unchanged: $(sed -n 's/.*(\(.*\)); left unchanged.*/\1/p' /tmp/refused.err | head -n 1)"
		else
			not_ok "ext4dec-compress $f: not refused as needed to boot (exit $rc)"
			diag </tmp/refused.err
		fi
	done

	t0=$(now)
	in_sys ext4dec-compress -r -1 "$firefox_dir" >/tmp/compress.out 2>/tmp/compress.err
	rc=$?
	ctime=$(since "$t0")
	ncomp=$(find "$firefox_dir" -type f -exec lsattr {} + 2>/dev/null | awk '$1 ~ /c/' | wc -l)
	nfiles=$(find "$firefox_dir" -type f | wc -l)
	# left as they are: files that do not compress enough, empty ones;
	# anything else is a failure
	nleft=$(grep -c 'left unchanged' /tmp/compress.err)
	other=$(grep -v -e 'above --min-ratio' -e 'empty: nothing to compress' /tmp/compress.err)
	if [ "$rc" -le 1 ] && [ -z "$other" ] && is_c "$lib" && [ "$ncomp" -gt 0 ]; then
		ok "ext4dec-compress -r -1 $firefox_dir ($ctime s): $ncomp of $nfiles files +c, $nleft left as they are (too little gain, or empty)"
	else
		not_ok "ext4dec-compress -r -1 $firefox_dir (exit $rc after $ctime s; $ncomp of $nfiles +c)"
		head -n 30 /tmp/compress.err | diag
	fi
	du -sh --apparent-size "$firefox_dir" | sed 's/^/size: /' | diag
	du -sh "$firefox_dir" | sed 's/^/on disk: /' | diag
	status_check active
	if is_c "$lib"; then
		ff_help after "from the compressed libxul.so"
	else
		not_ok "firefox-esr from the compressed libxul.so: libxul.so is not compressed"
	fi
	finish
}

# -------------------------------------------------------------- reboot
phase_reboot() {
	booted running
	loaded_at_boot
	is_c "$lib" || bail "libxul.so is not +c after the reboot"
	ok "libxul.so is +c after the reboot"
	status_check active
	c0=$(cat /sys/kernel/ext4dec/chunks_inflated 2>/dev/null || echo 0)
	if ff_help reboot "from the compressed libxul.so, first start after the boot"; then
		echo "# it inflated $(($(cat /sys/kernel/ext4dec/chunks_inflated) - c0)) chunks"
	fi
	if [ "$(cat /sys/kernel/ext4dec/read_errors 2>/dev/null)" = 0 ]; then
		ok "no read errors"
	else
		not_ok "read_errors = $(cat /sys/kernel/ext4dec/read_errors 2>/dev/null)"
	fi
	finish
}

# ------------------------------------------------------------ nomodule
phase_nomodule() {
	booted degraded
	failed=$(systemctl list-units --state=failed --no-legend --plain | awk '{ print $1 }' | paste -sd ' ')
	modules_load_log
	if ! grep -q '^ext4dec ' /proc/modules && [ "$failed" = systemd-modules-load.service ] &&
		grep -q "Failed to insert module 'ext4dec'" /tmp/modules-load.log; then
		ok "ext4dec not loaded: systemd-modules-load failed on it, the only failed unit"
		grep ext4dec /tmp/modules-load.log | diag
	else
		not_ok "ext4dec's load at boot did not fail as it should (failed units: $failed)"
		diag </tmp/modules-load.log
	fi
	if is_c "$lib" && [ "$(head -c 4 "$lib" | od -An -c | tr -d ' ')" != '177ELF' ]; then
		ok "libxul.so is +c and reads as its szip bytes"
	else
		not_ok "libxul.so is not a raw +c file"
	fi
	status_check raw

	in_sys timeout -k 10 "$ff_timeout" firefox-esr --headless --help >/tmp/help-raw.out 2>/tmp/help-raw.err
	rc=$?
	if [ "$rc" -ne 0 ]; then
		ok "firefox-esr fails without the module, as documented (exit $rc: $(grep -m 1 . /tmp/help-raw.err))"
	else
		not_ok "firefox-esr ran without the module from a +c libxul.so"
	fi

	t0=$(now)
	in_sys ext4dec-decompress -r "$firefox_dir" >/tmp/decompress.out 2>/tmp/decompress.err
	rc=$?
	dtime=$(since "$t0")
	ncomp=$(find "$firefox_dir" -type f -exec lsattr {} + 2>/dev/null | awk '$1 ~ /c/' | wc -l)
	# the note that the module is not loaded, once: anything else (the
	# ordinary files found are passed over) is a failure
	other=$(grep -v -x 'ext4dec-decompress: the ext4dec module is not loaded (modprobe ext4dec)' \
		/tmp/decompress.err)
	if [ "$rc" -eq 0 ] && [ -z "$other" ] && [ "$ncomp" -eq 0 ]; then
		ok "ext4dec-decompress -r $firefox_dir without the module ($dtime s, exit $rc): no +c file left"
	else
		not_ok "ext4dec-decompress -r $firefox_dir (exit $rc after $dtime s; $ncomp +c files left)"
		head -n 30 /tmp/decompress.err | diag
	fi
	want=$(cat "$state/libxul.sha256" 2>/dev/null)
	sha=$(sha256sum <"$lib" | cut -d' ' -f1)
	if [ -n "$want" ] && [ "$sha" = "$want" ]; then
		ok "libxul.so has the original's sha256 again"
	else
		not_ok "libxul.so's sha256 is $sha, not ${want:-(not recorded)}"
	fi
	status_check none
	ff_help recovered "after the recovery, without the module"
	finish
}

case $BOOT_PHASE in
install | compress | reboot | nomodule) "phase_$BOOT_PHASE" ;;
*) bail "unknown BOOT_PHASE '$BOOT_PHASE'" ;;
esac
