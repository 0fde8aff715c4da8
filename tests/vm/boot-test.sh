#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/boot-test.sh - a converted system boots and runs its init, with
# the module and without it (the "boot" suite of make
# check-full).
#
# Usage: tests/vm/boot-test.sh [-k SERIES] [--keep]
#
#   -k, --kernel SERIES   guest kernel (default 6.12)
#   --keep                keep the disk (build/boot/disk.img) afterwards
#   -h, --help
#
# The disk is a copy of the image of scripts/build-boot-image.sh (the
# Firefox demo's Debian image with systemd as init, udev and kmod; built
# on first use from the cached demo image, then cached), attached with
# run-vm.sh --image-rw, so that each boot finds what the one before left.
# Four boots of tests/vm/payloads/boot/run.sh, one QEMU run each:
#
#   install   the harness's initramfs, the disk mounted: the tools in its
#             /usr/local, ext4dec.ko (built by the harness for the kernel)
#             in /lib/modules/<kver>/extra with the kernel modules it
#             needs, depmod, /usr/lib/modules-load.d/ext4dec.conf: what
#             make install puts in place
#   compress  the disk as the root with systemd as init (run-vm.sh
#             --switch-root): ext4dec loaded at boot by
#             systemd-modules-load; Firefox runs headless; ext4dec-compress
#             refuses init, libsystemd-shared and libc (needed to boot);
#             ext4dec-compress -r -1 /usr/lib/firefox-esr; Firefox runs
#             from the compressed libxul.so
#   reboot    booted again: the module loaded at boot, ext4dec-status
#             says the files are active, Firefox runs from them
#   nomodule  booted with module_blacklist=ext4dec (a kernel the module
#             does not load on): multi-user.target is reached,
#             systemd-modules-load is the only failed unit, ext4dec-status
#             warns, Firefox fails; ext4dec-decompress -r recovers the
#             files without the module (libxul.so's original sha256) and
#             Firefox runs again
#
# "Firefox runs": firefox-esr --headless --help, as the libxul suite
# (Firefox loads libxul.so and its dependencies, runs its initializers
# and prints the usage from libxul's code), the same output every time.
# A boot that fails stops the test: the ones after it are reported not
# run (failures, not skips).  Needs tools/szip/szip,
# tools/ext4dec-query/ext4dec-query,
# tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs and
# build/demo/ext4dec_demo (make builds them).
#
# Output: the boots' TAP joined into one stream, the time of each boot,
# then "# boot: P passed, F failed, S skipped".  Logs in build/boot/
# (<phase>/ is each boot's run-vm.sh output directory).  Exit 1 on any
# failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
# shellcheck source=tests/lib/tap.sh
. tests/lib/tap.sh
# shellcheck source=tests/vm/suite.sh
. tests/vm/suite.sh

usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit "${1:-0}"
}

kernel=6.12 keep=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-k | --kernel) [[ $# -ge 2 ]] || usage 2 >&2; kernel=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "boot-test: unknown argument: $1" >&2; usage 2 >&2 ;;
	esac
done

work=build/boot
fail() {
	echo "# boot-test: $*"
	echo "# boot: 0 passed, 1 failed, 0 skipped"
	exit 1
}

for f in tools/szip/szip tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs \
	tools/ext4dec-query/ext4dec-query build/demo/ext4dec_demo; do
	[[ -x $f ]] || fail "$f is missing (make tool build/demo/ext4dec_demo)"
done

start=$SECONDS
image=$(scripts/build-boot-image.sh) || fail "scripts/build-boot-image.sh failed"
demo=$(sed -n 's/^demo_image=//p' "$(dirname "$image")/info")
image_time=$((SECONDS - start))

rm -rf "$work"
mkdir -p "$work/module-src" "$work/payload/bin"
disk=$work/disk.img
cp --sparse=always "$image" "$disk" || fail "cannot copy $image to $disk"
suite_module_src "$work/module-src"
cp tests/vm/payloads/boot/run.sh tests/vm/payloads/firefox/lib.sh \
	tests/vm/payloads/firefox/page.html "$work/payload/"
cp -L scripts/ext4dec-compress tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs "$work/payload/bin/"

# boot PHASE RUN-VM-ARGS...: one boot, its TAP added to the stream
times=() stopped=
boot() {
	local phase=$1 rc t0
	shift
	if [[ -n $stopped ]]; then
		tap_n=$((tap_n + 1))
		echo "not ok $tap_n - $phase: not run, the $stopped boot failed"
		return
	fi
	{
		printf 'BOOT_PHASE=%q\n' "$phase"
		printf 'DEMO_LIBXUL_SHA256=%q\n' "$(sed -n 's/^libxul_sha256=//p' "$(dirname "$demo")/info")"
	} >"$work/payload/config"
	t0=$SECONDS
	tests/vm/run-vm.sh -k "$kernel" -p "$work/payload" --image-rw "$disk" --mem 3072 \
		-o "$work/$phase" "$@" >"$work/$phase.tap" 2>"$work/$phase.log"
	rc=$?
	times+=("$phase $((SECONDS - t0)) s")
	echo "# ---- $phase: $((SECONDS - t0)) s"
	tap_part "$phase" "$work/$phase.tap" "$rc"
	grep -E '^ext4dec-vm: (boot|  |result|error)' "$work/$phase.log" | sed 's/^/# /'
	[[ $rc -eq 0 ]] || stopped=$phase
}

echo "TAP version 13"
echo "# image $image ($image_time s)"
boot install --module-src "$work/module-src" --bin tools/szip/szip \
	--bin tools/ext4dec-query/ext4dec-query --bin build/demo/ext4dec_demo -t 600
systemd=(--switch-root --no-mkfs)
boot compress "${systemd[@]}" -t 1800
boot reboot "${systemd[@]}" -t 900
boot nomodule "${systemd[@]}" --append module_blacklist=ext4dec -t 1800
tap_plan
[[ $keep -eq 1 ]] || rm -f "$disk"

echo "# times: image $image_time s, ${times[*]/%/,} total $((SECONDS - start)) s"
p=$(cat "$work"/*.tap /dev/null | grep -E '^ok ' | grep -vc '# SKIP')
s=$(cat "$work"/*.tap /dev/null | grep -E '^ok ' | grep -c '# SKIP')
f=$((tap_n - p - s))
echo "# boot: $p passed, $f failed, $s skipped"
[[ $tap_rc -eq 0 && $f -eq 0 ]]
