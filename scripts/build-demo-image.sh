#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/build-demo-image.sh - build the ext4 disk image of the Firefox
# demo (make demo, tests/vm/payloads/firefox): a minimal Debian bookworm
# root file system (debootstrap --variant=minbase) with firefox-esr and what
# `firefox-esr --headless --screenshot` needs, plus e2fsprogs (chattr,
# lsattr) and libdeflate0 (szip) for converting files inside it.
#
# Usage: scripts/build-demo-image.sh [options]
#
#       --no-build      only look in the cache: print the image if it is
#                       built, else exit 3
#       --force         rebuild even if the image of the current key exists
#       --prune         after a build or cache hit, delete the images of
#                       other keys
#       --print-key     print the cache key and exit
#   -h, --help
#
# Prints the path of the image on stdout; progress, the build time and the
# sizes go to stderr.
#
# The image is an ext4 file system made with "mkfs.ext4 -d" from the
# directory tree (no loop mount), sized to the tree plus room for a
# compressed copy of libxul.so and Firefox profiles.  The guest uses it
# through a throwaway overlay (tests/vm/run-vm.sh --image), so it is never
# modified after it is built.
#
# Cache ($EXT4DEC_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/ext4dec):
#   demo-images/<key>/root.img     the image (sparse)
#   demo-images/<key>/manifest.txt "package version" of every package in it
#   demo-images/<key>/info         key=value: build times, sizes, versions,
#                                  libxul.so's size and sha256
#   demo-images/<key>/.complete    written last
#   demo-images/.lock              flock(1): one build at a time
# <key> covers the suite, the mirrors, the package list, this script's
# content and the candidate versions (apt-cache policy, from the host's
# package lists of the same mirrors) of every package in the dependency
# closure of the package list.  A new firefox-esr or library version in the
# package lists (after apt-get update) gives a new key, so a new build.
# A build happens in demo-images/.build-XXXXXX/ and is renamed to <key>
# only when complete; an interrupted build leaves nothing under a key.
#
# Needs root (debootstrap, chroot; through sudo when not root) and the
# network access to the Debian mirror.  Installs missing host packages
# with apt-get: debootstrap e2fsprogs util-linux.
#
# Environment:
#   EXT4DEC_CACHE                cache directory
#   EXT4DEC_DEMO_MIRROR          default http://deb.debian.org/debian
#   EXT4DEC_DEMO_SECURITY_MIRROR default http://deb.debian.org/debian-security
#
# Exit status: 0 ok, 1 build failure, 2 usage error, 3 not built and
# --no-build given.

set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
here=$(dirname "$self")
# shellcheck source-path=SCRIPTDIR source=../tests/vm/lib.sh
. "$here/../tests/vm/lib.sh"

# The whole script is one function, so bash parses all of it before running
# anything: editing this file during a build does not break the build.
main() {
log() { printf 'build-demo-image: %s\n' "$*" >&2; }
die() { printf 'build-demo-image: error: %s\n' "$*" >&2; exit 1; }
usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "$self"
	exit "${1:-0}"
}

suite=bookworm
mirror=${EXT4DEC_DEMO_MIRROR:-http://deb.debian.org/debian}
security=${EXT4DEC_DEMO_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# What the image gets on top of minbase.  fontconfig (a dependency of
# firefox-esr) needs one font; GTK is linked but no X server is used by
# --headless.
packages=(firefox-esr fonts-dejavu-core e2fsprogs libdeflate0)
host_packages=(debootstrap e2fsprogs util-linux)

no_build=0 force=0 prune=0 print_key=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--no-build) no_build=1 ;;
	--force) force=1 ;;
	--prune) prune=1 ;;
	--print-key) print_key=1 ;;
	-h | --help) usage 0 ;;
	*) log "unknown argument: $1"; usage 2 >&2 ;;
	esac
	shift
done

install_host_tools() {
	apt_install_missing "${host_packages[@]}" ||
		die "apt-get install ${host_packages[*]} failed"
}

# compute_key: set key and versions_file (candidate versions of the closure).
compute_key() {
	local closure
	[[ -n $(apt_candidate firefox-esr) ]] || apt_update_once || die "apt-get update failed"
	[[ -n $(apt_candidate firefox-esr) ]] ||
		die "apt knows no firefox-esr package (are $suite and $suite-security in the host's sources?)"
	closure=$(apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "${packages[@]}" |
		grep -v '^[ <]' | LC_ALL=C sort -u)
	# shellcheck disable=SC2086 # a list of package names
	apt-cache policy $closure |
		awk '/^[^ ].*:$/ { p = substr($1, 1, length($1) - 1) }
		     $1 == "Candidate:" { print p, $2 }' >"$versions_file"
	[[ -s $versions_file ]] || die "apt-cache policy printed no candidates"
	key=$(
		{
			echo "suite=$suite mirror=$mirror security=$security"
			echo "packages=${packages[*]}"
			sha256sum <"$self"
			cat "$versions_file"
		} | sha256sum | cut -c1-16
	)
	key="firefox-esr_$(apt_candidate firefox-esr | tr ':~+' '___')-$key"
}

images="$(vm_cache_dir)/demo-images"
mkdir -p "$images"
versions_file=$(mktemp "${TMPDIR:-/tmp}/ext4dec-demo-versions.XXXXXX")
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

compute_key
if [[ $print_key -eq 1 ]]; then
	printf '%s\n' "$key"
	exit 0
fi
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

report() {
	log "image $dir/root.img: $(du -h --apparent-size "$dir/root.img" | cut -f1) ($(du -h "$dir/root.img" | cut -f1) allocated), firefox-esr $(sed -n 's/^firefox_version=//p' "$dir/info"), built in $(sed -n 's/^build_seconds=//p' "$dir/info") s"
}

if [[ $force -eq 0 && -f $dir/.complete ]]; then
	log "cached: $dir"
	report
	prune_others
	printf '%s\n' "$dir/root.img"
	exit 0
fi
if [[ $no_build -eq 1 ]]; then
	log "not built: $dir (run scripts/build-demo-image.sh)"
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

install_host_tools
t_start=$SECONDS
build=$(mktemp -d "$images/.build-XXXXXX")
root=$build/root
log "building $key in $build"

# chroot_run CMD...: run CMD in the root with proc, sys, dev mounted, in a
# private mount namespace (the mounts go away with it, even on failure).
chroot_run() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	as_root unshare --mount --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount -t sysfs sys "$r/sys" &&
			mount --rbind /dev "$r/dev" || exit 1
		exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' chroot_run "$root" "$@"
}

# 1. minbase from the mirror.  debootstrap mounts proc and sys itself; in a
#    private mount namespace those mounts cannot outlive it.
t0=$SECONDS
if ! as_root unshare --mount --propagation private \
	debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$build/debootstrap.log" 2>&1; then
	tail -n 20 "$build/debootstrap.log" >&2
	[[ -f $root/debootstrap/debootstrap.log ]] && tail -n 20 "$root/debootstrap/debootstrap.log" >&2
	die "debootstrap --variant=minbase $suite $root $mirror failed"
fi
t_debootstrap=$((SECONDS - t0))
log "debootstrap: $t_debootstrap s"

# 2. firefox-esr and the rest, from the suite, its updates and security
#    (firefox-esr is updated there), without documentation, manual pages
#    and translations, and without starting services.
t0=$SECONDS
# shellcheck disable=SC2016 # expanded by the inner shell
as_root sh -c '
	r=$1 suite=$2 mirror=$3 security=$4
	cat >"$r/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF
	printf "#!/bin/sh\nexit 101\n" >"$r/usr/sbin/policy-rc.d"
	chmod 0755 "$r/usr/sbin/policy-rc.d"
	cat >"$r/etc/dpkg/dpkg.cfg.d/ext4dec-demo" <<EOF
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
EOF
	printf "APT::Install-Recommends \"false\";\n" >"$r/etc/apt/apt.conf.d/90ext4dec-demo"
	echo ext4dec-demo >"$r/etc/hostname"
' sh "$root" "$suite" "$mirror" "$security" || die "cannot configure $root"
if ! chroot_run apt-get update -q >"$build/apt.log" 2>&1 ||
	! chroot_run apt-get install -y -q "${packages[@]}" >>"$build/apt.log" 2>&1; then
	tail -n 30 "$build/apt.log" >&2
	die "apt-get install ${packages[*]} in $root failed (log above)"
fi
chroot_run apt-get clean >/dev/null 2>&1 || true
# shellcheck disable=SC2016 # expanded by the inner shell
as_root sh -c 'rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/sbin/policy-rc.d "$1"/var/log/* \
	"$1"/var/cache/debconf/*-old "$1"/usr/share/man/* "$1"/usr/share/info/*' sh "$root"
# shellcheck disable=SC2016 # a dpkg-query format
chroot_run dpkg-query -W -f '${Package} ${Version}\n' >"$build/manifest.txt" ||
	die "dpkg-query in $root failed"
firefox_version=$(awk '$1 == "firefox-esr" { print $2 }' "$build/manifest.txt")
[[ -n $firefox_version ]] || die "firefox-esr is not installed in $root"
libxul=$root/usr/lib/firefox-esr/libxul.so
[[ -f $libxul ]] || die "$libxul does not exist"
t_packages=$((SECONDS - t0))
log "packages: $t_packages s ($(wc -l <"$build/manifest.txt") packages, firefox-esr $firefox_version)"

# 3. The ext4 image, from the tree.  Room on top of the tree: a compressed
#    copy of libxul.so (written next to it before the rename) and the
#    profiles and screenshots of the demo.
t0=$SECONDS
used_mb=$(as_root du -sm --apparent-size "$root" | cut -f1)
size_mb=$((used_mb * 5 / 4 + 768))
truncate -s "${size_mb}M" "$build/root.img.partial"
if ! as_root mkfs.ext4 -q -F -L ext4dec-demo -m 0 -E root_owner=0:0 \
	-d "$root" "$build/root.img.partial" >"$build/mkfs.log" 2>&1; then
	cat "$build/mkfs.log" >&2
	die "mkfs.ext4 -d $root $build/root.img.partial failed"
fi
as_root e2fsck -fn "$build/root.img.partial" >"$build/fsck.log" 2>&1 ||
	{ cat "$build/fsck.log" >&2; die "e2fsck -fn of the new image failed"; }
t_mkfs=$((SECONDS - t0))
log "mkfs.ext4 -d: $t_mkfs s (${used_mb} MB of files, ${size_mb} MB image)"

libxul_size=$(stat -c %s "$libxul")
libxul_sha256=$(sha256sum <"$libxul" | cut -d' ' -f1)
as_root rm -rf --one-file-system "$root"
mv "$build/root.img.partial" "$build/root.img"
[[ $EUID -eq 0 ]] || as_root chown -R "$(id -u):$(id -g)" "$build"
{
	echo "key=$key"
	echo "suite=$suite"
	echo "mirror=$mirror"
	echo "security_mirror=$security"
	echo "packages=${packages[*]}"
	echo "firefox_version=$firefox_version"
	echo "libxul_size=$libxul_size"
	echo "libxul_sha256=$libxul_sha256"
	echo "tree_mb=$used_mb"
	echo "image_mb=$size_mb"
	echo "debootstrap_seconds=$t_debootstrap"
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
log "built in $((SECONDS - t_start)) s (debootstrap $t_debootstrap s, packages $t_packages s, mkfs $t_mkfs s)"
report
prune_others
printf '%s\n' "$dir/root.img"
}

main "$@"
