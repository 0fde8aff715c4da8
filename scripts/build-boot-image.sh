#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/build-boot-image.sh - build the disk image of the boot test
# (tests/vm/boot-test.sh): the Firefox demo's Debian image
# (scripts/build-demo-image.sh) made bootable as a root file system with
# systemd as init: systemd-sysv (in the demo image already, through
# firefox-esr's dependencies), and udev and kmod added.
#
# Usage: scripts/build-boot-image.sh [options]
#
#       --no-build      only look in the cache: print the image if it is
#                       built, else exit 3
#       --force         rebuild even if the image of the current key exists
#       --prune         after a build or cache hit, delete the boot images
#                       of other keys
#       --print-key     print the cache key and exit
#   -h, --help
#
# Prints the path of the image on stdout; progress and times go to stderr.
#
# Derived from the demo image, which it builds first if it is not cached,
# and never modified: its tree is copied out with debugfs rdump (no loop
# mount; the set-user-ID, set-group-ID and sticky bits, which rdump drops,
# are put back from debugfs's listing), the packages are installed in a
# chroot of that tree from the demo image's suite and mirrors, and the
# tree is made into a new image with "mkfs.ext4 -d".  The demo image's
# own package list and key stay as they are, so make check, which uses
# that image only, never builds this one.
#
# Cache ($EXT4DEC_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/ext4dec):
#   boot-images/<key>/root.img     the image (sparse)
#   boot-images/<key>/manifest.txt "package version" of every package in it
#   boot-images/<key>/info         key=value: the demo image, times, sizes
#   boot-images/<key>/.complete    written last
# <key> covers the demo image's key, this script's content and the
# candidate versions of the dependency closure of the added packages.
#
# Needs root (chroot; through sudo when not root) and the network access
# to the Debian mirror, as scripts/build-demo-image.sh does.
#
# Exit status: 0 ok, 1 build failure, 2 usage error, 3 not built and
# --no-build given.

set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")
# shellcheck source-path=SCRIPTDIR source=../tests/vm/lib.sh
. "$here/../tests/vm/lib.sh"

main() {
log() { printf 'build-boot-image: %s\n' "$*" >&2; }
die() { printf 'build-boot-image: error: %s\n' "$*" >&2; exit 1; }
usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "$self"
	exit "${1:-0}"
}

# systemd as PID 1 (/sbin/init), udev for the devices systemd waits for
# (the serial console's getty), kmod for modprobe and depmod; what the
# demo image has already is kept as it is
packages=(systemd-sysv udev kmod)

no_build=0 force=0 prune=0 print_key=0 demo_args=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--no-build) no_build=1; demo_args+=(--no-build) ;;
	--force) force=1 ;;
	--prune) prune=1 ;;
	--print-key) print_key=1 ;;
	-h | --help) usage 0 ;;
	*) log "unknown argument: $1"; usage 2 >&2 ;;
	esac
	shift
done

if [[ $print_key -eq 1 ]]; then
	demo_key=$("$here/build-demo-image.sh" --print-key) || die "scripts/build-demo-image.sh --print-key failed"
else
	demo=$("$here/build-demo-image.sh" ${demo_args[@]+"${demo_args[@]}"}) || {
		rc=$?
		[[ $rc -eq 3 ]] && { log "the demo image is not built"; exit 3; }
		die "scripts/build-demo-image.sh failed"
	}
	demo_key=$(basename "$(dirname "$demo")")
fi

versions_file=$(mktemp "${TMPDIR:-/tmp}/ext4dec-boot-versions.XXXXXX")
build=''
# shellcheck disable=SC2317 # called through the EXIT trap
cleanup() {
	rm -f "$versions_file"
	if [[ -n $build && -d $build ]]; then
		as_root rm -rf --one-file-system "$build"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the candidate versions of the added packages' closure (the host's lists
# are those of the demo image's suite: build-demo-image.sh checked that)
closure=$(apt-cache depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances "${packages[@]}" |
	grep -v '^[ <]' | LC_ALL=C sort -u)
# shellcheck disable=SC2086 # a list of package names
apt-cache policy $closure |
	awk '/^[^ ].*:$/ { p = substr($1, 1, length($1) - 1) }
	     $1 == "Candidate:" { print p, $2 }' >"$versions_file"
[[ -s $versions_file ]] || die "apt-cache policy printed no candidates for ${packages[*]}"
key=$(
	{
		echo "demo=$demo_key"
		echo "packages=${packages[*]}"
		sha256sum <"$self"
		cat "$versions_file"
	} | sha256sum | cut -c1-16
)
key="systemd_$(apt_candidate systemd | tr ':~+' '___')-$key"
if [[ $print_key -eq 1 ]]; then
	printf '%s\n' "$key"
	exit 0
fi

images="$(vm_cache_dir)/boot-images"
mkdir -p "$images"
dir="$images/$key"

prune_others() {
	local d
	[[ $prune -eq 1 ]] || return 0
	for d in "$images"/*/; do
		d=${d%/}
		[[ $d == "$dir" ]] && continue
		log "pruning $d"
		as_root rm -rf --one-file-system "$d"
	done
}

if [[ $force -eq 0 && -f $dir/.complete ]]; then
	log "cached: $dir"
	prune_others
	printf '%s\n' "$dir/root.img"
	exit 0
fi
if [[ $no_build -eq 1 ]]; then
	log "not built: $dir (run scripts/build-boot-image.sh)"
	exit 3
fi

# One build at a time; a parallel caller waits and then finds it built.
exec 9>"$images/.lock"
flock -x 9
if [[ $force -eq 0 && -f $dir/.complete ]]; then
	log "built meanwhile: $dir"
	printf '%s\n' "$dir/root.img"
	exit 0
fi

t_start=$SECONDS
build=$(mktemp -d "$images/.build-XXXXXX")
root=$build/root
log "building $key from $demo in $build"

# 1. The demo image's tree.  rdump keeps owners, modes' permission bits
#    and times; the set-user-ID, set-group-ID and sticky bits come from
#    "ls -l" of every directory (octal modes).
t0=$SECONDS
as_root mkdir "$root"
as_root debugfs -R "rdump / $root" "$demo" >"$build/rdump.log" 2>&1 ||
	{ cat "$build/rdump.log" >&2; die "debugfs rdump of $demo failed"; }
as_root find "$root" -xdev -type d -printf '%P\n' |
	awk '{ gsub(/"/, "\\\""); print "ls -l \"/" $0 "\"" }' >"$build/ls.cmds"
as_root debugfs -f "$build/ls.cmds" "$demo" 2>/dev/null |
	awk '/^debugfs: ls -l "/ { d = substr($0, 17, length($0) - 17); sub(/\/$/, "", d); next }
	     $2 ~ /^[0-7]+$/ && length($2) >= 4 && substr($2, length($2) - 3, 1) != "0" {
		n = $0; sub(/^ *[0-9]+ +[0-7]+ +\([0-9]+\) +[0-9]+ +[0-9]+ +[0-9]+ +[^ ]+ +[^ ]+ /, "", n)
		if (n == "..") next
		printf "%s\t%s\n", substr($2, length($2) - 3), (n == "." ? d : d "/" n)
	     }' >"$build/special-modes"
while IFS=$'\t' read -r mode name; do
	as_root chmod "$mode" "$root$name" || die "chmod $mode $root$name"
done <"$build/special-modes"
t_copy=$((SECONDS - t0))
log "tree copied from the demo image: $t_copy s ($(wc -l <"$build/special-modes") special modes)"

# 2. The packages, as build-demo-image.sh installs its own (its sources
#    list, no recommends, no documentation, no services started).
t0=$SECONDS
# shellcheck disable=SC2016 # expanded by the inner shell
as_root sh -c 'printf "#!/bin/sh\nexit 101\n" >"$1/usr/sbin/policy-rc.d" &&
	chmod 0755 "$1/usr/sbin/policy-rc.d"' sh "$root" || die "cannot configure $root"
# shellcheck disable=SC2016 # expanded by the inner shell
if ! as_root unshare --mount --propagation private sh -c '
	r=$1; shift
	mount -t proc proc "$r/proc" && mount -t sysfs sys "$r/sys" &&
		mount --rbind /dev "$r/dev" || exit 1
	run() {
		chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
			LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	}
	run apt-get update -q && run apt-get install -y -q "$@" && run apt-get clean
' sh "$root" "${packages[@]}" >"$build/apt.log" 2>&1; then
	tail -n 30 "$build/apt.log" >&2
	die "apt-get install ${packages[*]} in $root failed (log above)"
fi
# shellcheck disable=SC2016 # expanded by the inner shell
as_root sh -c 'rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/sbin/policy-rc.d "$1"/var/log/* \
	"$1"/var/cache/debconf/*-old' sh "$root"
# shellcheck disable=SC2016 # a dpkg-query format
as_root chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$build/manifest.txt" ||
	die "dpkg-query in $root failed"
[[ -x $root/sbin/init ]] || die "no /sbin/init in $root after installing ${packages[*]}"
t_packages=$((SECONDS - t0))
log "packages: $t_packages s (${packages[*]}: $(wc -l <"$build/manifest.txt") packages in all)"

# 3. The image: the demo image's room for conversions and profiles.
t0=$SECONDS
used_mb=$(as_root du -sm --apparent-size "$root" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 768))
truncate -s "${size_mb}M" "$build/root.img.partial"
if ! as_root mkfs.ext4 -q -F -L ext4dec-boot -m 0 -E root_owner=0:0 \
	-d "$root" "$build/root.img.partial" >"$build/mkfs.log" 2>&1; then
	cat "$build/mkfs.log" >&2
	die "mkfs.ext4 -d $root $build/root.img.partial failed"
fi
as_root e2fsck -fn "$build/root.img.partial" >"$build/fsck.log" 2>&1 ||
	{ cat "$build/fsck.log" >&2; die "e2fsck -fn of the new image failed"; }
t_mkfs=$((SECONDS - t0))
log "mkfs.ext4 -d: $t_mkfs s (${used_mb} MB of files, ${size_mb} MB image)"

as_root rm -rf --one-file-system "$root"
mv "$build/root.img.partial" "$build/root.img"
[[ $EUID -eq 0 ]] || as_root chown -R "$(id -u):$(id -g)" "$build"
{
	echo "key=$key"
	echo "demo_image=$demo"
	echo "packages=${packages[*]}"
	echo "systemd_version=$(awk '$1 == "systemd" { print $2 }' "$build/manifest.txt")"
	echo "tree_mb=$used_mb"
	echo "image_mb=$size_mb"
	echo "copy_seconds=$t_copy"
	echo "packages_seconds=$t_packages"
	echo "mkfs_seconds=$t_mkfs"
	echo "build_seconds=$((SECONDS - t_start))"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$build/info"
cp "$versions_file" "$build/candidates.txt"
touch "$build/.complete"
rm -rf --one-file-system "$dir"
mv "$build" "$dir"
build=''
log "built in $((SECONDS - t_start)) s (copy $t_copy s, packages $t_packages s, mkfs $t_mkfs s): $dir/root.img"
prune_others
printf '%s\n' "$dir/root.img"
}

main "$@"
