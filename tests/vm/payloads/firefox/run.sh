#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# tests/vm/payloads/firefox/run.sh - Firefox from a compressed libxul.so,
# inside the VM (busybox sh).  Assembled and started by
# tests/vm/firefox-demo.sh, which attaches the Debian image of
# scripts/build-demo-image.sh as the first --image disk and puts szip and
# ext4dec_demo in /bin and the conversion scripts in /payload/bin.
#
# Mounts the image, sets up a chroot in it, loads ext4dec, then
#   full mode:  screenshots a local page with firefox-esr --headless
#               --screenshot (cold, fresh profile), converts libxul.so in
#               place with ext4dec-compress, screenshots again (cold) and
#               compares the pictures;
#   quick mode: runs "firefox-esr --headless --help" (Firefox loads libxul.so
#               with its dependencies, runs its initializers and prints
#               the usage from libxul's code), converts libxul.so, runs it
#               again and compares the output;
# then (full mode) checks the sha256 of read() and of a whole-file mmap
# against the original's (in quick mode ext4dec-compress has checked
# read()), prints sizes, times and the module's counters, and checks the
# image with e2fsck.  TAP on stdout.
#
# /payload/config (written by firefox-demo.sh) sets DEMO_MODE (full or
# quick), DEMO_COMPRESS_OPTS (ext4dec-compress options),
# DEMO_LIBXUL_SHA256 (libxul.so's sha256 when the image was built;
# computed here if empty) and DEMO_SHOT_TIMEOUT (seconds for one Firefox
# run).

set -u
DEMO_MODE=full
DEMO_COMPRESS_OPTS=
DEMO_SHOT_TIMEOUT=900
DEMO_LIBXUL_SHA256=
# shellcheck disable=SC1091
[ -f /payload/config ] && . /payload/config

# shellcheck source=tests/vm/payloads/firefox/lib.sh
. /payload/lib.sh
out=${EXT4DEC_MNT:?}/firefox

finish() {
	unmount_all
	if [ -n "${dev:-}" ] && ! grep -q "^$dev " /proc/mounts; then
		if e2fsck -fn "$dev" >/tmp/fsck.out 2>&1; then
			ok "e2fsck -fn of the image after the conversion"
		else
			not_ok "e2fsck -fn of the image after the conversion"
			diag </tmp/fsck.out
		fi
	fi
	if grep -q '^ext4dec ' /proc/modules; then
		if rmmod ext4dec; then ok "rmmod ext4dec"; else not_ok "rmmod ext4dec"; fi
	fi
	tap_plan
	[ "$tap_fail" -eq 0 ]
	exit
}

# shot NAME: cold screenshot of the page with a fresh profile into
# $root/tmp/NAME.png; sets shot_time.
shot() {
	rm -rf "$root/tmp/profile-$1" "$root/tmp/$1.png"
	mkdir -p "$root/tmp/profile-$1"
	cp /payload/user.js "$root/tmp/profile-$1/"
	drop_caches
	t0=$(now)
	in_root MOZ_CRASHREPORTER_DISABLE=1 timeout -k 10 "$DEMO_SHOT_TIMEOUT" \
		firefox-esr --headless --no-remote --profile "/tmp/profile-$1" \
		--window-size 800,600 --screenshot "/tmp/$1.png" file:///tmp/page.html \
		>"/tmp/firefox-$1.log" 2>&1
	rc=$?
	shot_time=$(since "$t0")
	mkdir -p "$out"
	cp "/tmp/firefox-$1.log" "$out/"
	if [ "$rc" -eq 0 ] && [ -s "$root/tmp/$1.png" ]; then
		cp "$root/tmp/$1.png" "$out/"
		ok "firefox-esr --headless --screenshot $2 ($shot_time s, $(wc -c <"$root/tmp/$1.png") bytes of PNG)"
		return 0
	fi
	not_ok "firefox-esr --headless --screenshot $2 (exit $rc after $shot_time s)"
	tail -n 30 "/tmp/firefox-$1.log" | diag
	return 1
}

# ff_help NAME: cold "firefox-esr --headless --help" into /tmp/help-NAME.out;
# sets help_time.  Firefox dlopen()s libxul.so with its dependencies, runs
# its initializers, and XRE_main prints the usage: the code is libxul's.
ff_help() {
	drop_caches
	t0=$(now)
	in_root MOZ_CRASHREPORTER_DISABLE=1 timeout -k 10 "$DEMO_SHOT_TIMEOUT" \
		firefox-esr --headless --help >"/tmp/help-$1.out" 2>"/tmp/help-$1.err"
	rc=$?
	help_time=$(since "$t0")
	if [ "$rc" -eq 0 ] && grep -q '^Usage: firefox' "/tmp/help-$1.out"; then
		ok "firefox-esr --headless --help $2 ($help_time s): libxul.so loaded, its code ran"
		return 0
	fi
	not_ok "firefox-esr --headless --help $2 (exit $rc after $help_time s)"
	tail -n 20 "/tmp/help-$1.out" "/tmp/help-$1.err" | diag
	return 1
}

echo "TAP version 13"
echo "# kernel $(uname -r), mode $DEMO_MODE, ext4dec-compress $DEMO_COMPRESS_OPTS"
dev=${EXT4DEC_IMAGES%% *}
[ -n "$dev" ] || { dev=; bail "no image disk (run-vm.sh --image)"; }

# --- the image and its chroot ------------------------------------------
chroot_setup "$dev" || bail "$setup_error"
ok "image $dev mounted on $root, chroot ready"

if ! modprobe ext4dec; then
	bail "modprobe ext4dec"
fi
dmesg | grep 'ext4dec: version' | diag
ok "ext4dec loaded"

size=$(stat -c %s "$root$lib")
if [ -n "$DEMO_LIBXUL_SHA256" ]; then
	orig_sha=$DEMO_LIBXUL_SHA256
	echo "# $lib: $size bytes ($(mb "$size")), sha256 $orig_sha (when the image was built)"
else
	t0=$(now)
	orig_sha=$(sha256sum <"$root$lib" | cut -d' ' -f1)
	echo "# $lib: $size bytes ($(mb "$size")), sha256 $orig_sha ($(since "$t0") s)"
fi
case $(lsattr "$root$lib" | cut -d' ' -f1) in
*c*) bail "$lib in the image is compressed already" ;;
esac

# --- before ---------------------------------------------------------------
before_time=
if [ "$DEMO_MODE" = full ]; then
	shot before "before the conversion" && before_time=$shot_time
else
	ff_help before "before the conversion" && before_time=$help_time
fi

# --- convert ------------------------------------------------------------
t0=$(now)
# shellcheck disable=SC2086 # options, one word each
if in_root ext4dec-compress -v $DEMO_COMPRESS_OPTS "$lib" 2>/tmp/compress.err; then
	ctime=$(since "$t0")
	diag </tmp/compress.err
	ok "ext4dec-compress $DEMO_COMPRESS_OPTS $lib ($ctime s)"
else
	diag </tmp/compress.err
	bail "ext4dec-compress $DEMO_COMPRESS_OPTS $lib"
fi
disk=$(($(stat -c %b "$root$lib") * $(stat -c %B "$root$lib")))
attrs=$(lsattr "$root$lib" | cut -d' ' -f1)
echo "# $lib: $size bytes, $disk bytes on disk ($(awk -v d="$disk" -v s="$size" 'BEGIN { printf "%.1f%%", 100 * d / s }')), attributes $attrs"
if [ "$(stat -c %s "$root$lib")" = "$size" ] && [ "$disk" -lt "$size" ] &&
	case $attrs in *c*) true ;; *) false ;; esac; then
	ok "libxul.so is +c, shows its original size and takes $(mb "$disk") of $(mb "$size") on disk"
else
	not_ok "libxul.so after the conversion: size $(stat -c %s "$root$lib"), $disk on disk, attributes $attrs"
fi

# --- after --------------------------------------------------------------
if [ "$DEMO_MODE" = full ]; then
	c0=$(counters)
	if shot after "from the compressed libxul.so"; then
		echo "# Firefox's start inflated $(delta "$c0" chunks_inflated) chunks: $(mb "$(delta "$c0" uncompressed_bytes)") from $(mb "$(delta "$c0" compressed_bytes)") read from disk"
		echo "# time to screenshot (cold caches, fresh profile): ${before_time:-?} s before, $shot_time s after"
		if [ -s "$root/tmp/before.png" ]; then
			if cmp -s "$root/tmp/before.png" "$root/tmp/after.png"; then
				ok "the screenshots are byte-identical"
			elif in_root ext4dec_demo pngcmp /tmp/before.png /tmp/after.png >/tmp/pngcmp.out 2>&1; then
				ok "the screenshots have identical pixels ($(cat /tmp/pngcmp.out); the PNG bytes differ)"
			else
				not_ok "the screenshots differ: $(cat /tmp/pngcmp.out)"
			fi
		else
			not_ok "no screenshot from before the conversion to compare with"
		fi
	fi
else
	c0=$(counters)
	if ff_help after "from the compressed libxul.so"; then
		echo "# it inflated $(delta "$c0" chunks_inflated) chunks: $(mb "$(delta "$c0" uncompressed_bytes)") from $(mb "$(delta "$c0" compressed_bytes)") read from disk"
		echo "# time to the usage text (cold caches): ${before_time:-?} s before, $help_time s after"
		if cmp -s /tmp/help-before.out /tmp/help-after.out; then
			ok "the same output as before the conversion"
		else
			not_ok "the output differs from before the conversion"
			diff /tmp/help-before.out /tmp/help-after.out | head -n 20 | diag
		fi
	fi
fi

# Quick mode: ext4dec-compress has checked the sha256 of read() already,
# and Firefox's loader has mapped libxul.so; the whole-file checks take
# minutes under TCG.
if [ "$DEMO_MODE" = full ]; then
	drop_caches
	t0=$(now)
	sha=$(sha256sum <"$root$lib" | cut -d' ' -f1)
	if [ "$sha" = "$orig_sha" ]; then
		ok "sha256 of read() is the original's ($(since "$t0") s, cold)"
	else
		not_ok "sha256 of read() is $sha, not $orig_sha"
	fi
	drop_caches
	t0=$(now)
	sha=$(ext4dec_demo mmapcat "$root$lib" | sha256sum | cut -d' ' -f1)
	if [ "$sha" = "$orig_sha" ]; then
		ok "sha256 of a whole-file mmap is the original's ($(since "$t0") s, cold)"
	else
		not_ok "sha256 of a whole-file mmap is $sha, not $orig_sha"
	fi
fi

echo "# ext4dec-status /usr/lib/firefox-esr:"
in_root ext4dec-status /usr/lib/firefox-esr 2>&1 | diag
if [ "$(cat /sys/kernel/ext4dec/read_errors)" = 0 ]; then
	ok "no read errors"
else
	not_ok "read_errors = $(cat /sys/kernel/ext4dec/read_errors)"
fi
finish
