# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/lib/apt.sh - the one place for root and apt plumbing, sourced by
# the scripts that install or download Debian packages (through
# tests/vm/lib.sh, or directly).  Messages go to stderr as "apt: ...";
# failures are the caller's to report (every function returns non-zero).
#
#   as_root CMD...            run CMD as root: directly, or through sudo
#   pkg_installed PKG         dpkg considers PKG (or a provider of it) installed
#   apt_update_once           apt-get update, once per process
#   apt_install_missing PKG...  install those of PKG... not installed; if
#                             the install fails (package lists gone stale:
#                             a 404), update the lists and try once more
#   apt_download DIR PKG[=VER]...  download the packages' .debs into DIR
#                             (nothing is installed), the same way when
#                             root or sudo without a password can update
#
# apt-get download drops privileges to the _apt user when run as root: the
# download goes to a temporary directory _apt can write to, then the .debs
# move to DIR (which may be under /root).

as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "apt: need root to run: $*" >&2
		return 1
	fi
}

pkg_installed() {
	local status
	status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)
	[[ $status == *" installed" ]] && return 0
	# Virtual package: any installed package that Provides it?
	dpkg-query -W -f='${Status}|${Provides}\n' 2>/dev/null |
		awk -F'|' -v p="$1" '$1 ~ / installed$/ { n = split($2, a, /, */); for (i = 1; i <= n; i++) { sub(/ .*/, "", a[i]); if (a[i] == p) found = 1 } } END { exit !found }'
}

_apt_updated=0
apt_update_once() {
	[[ $_apt_updated -eq 1 ]] && return 0
	echo "apt: apt-get update" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || return 1
	_apt_updated=1
}

apt_install_missing() {
	local missing=() p t0=$SECONDS
	for p in "$@"; do
		pkg_installed "$p" || missing+=("$p")
	done
	[[ ${#missing[@]} -gt 0 ]] || return 0
	echo "apt: installing ${missing[*]}" >&2
	if ! as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
		[[ $_apt_updated -eq 0 ]] || return 1
		echo "apt: install failed; retrying after apt-get update" >&2
		apt_update_once || return 1
		as_root env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 || return 1
	fi
	echo "apt: installed ${missing[*]} in $((SECONDS - t0)) s" >&2
}

# _apt_may_update: root, or sudo without a password: a download (which
# needs no root) never stops at a password prompt
_apt_may_update() {
	[[ $EUID -eq 0 ]] || sudo -n true 2>/dev/null
}

apt_download() {
	local dir=$1 dl rc=0
	shift
	dl=$(mktemp -d "${TMPDIR:-/tmp}/ext4dec-dl.XXXXXX") || return 1
	if [[ $EUID -eq 0 ]] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
	echo "apt: downloading $*" >&2
	if ! (cd "$dl" && apt-get download -q "$@" >&2); then
		if [[ $_apt_updated -eq 0 ]] && _apt_may_update &&
			echo "apt: download failed; retrying after apt-get update" >&2 &&
			apt_update_once; then
			(cd "$dl" && apt-get download -q "$@" >&2) || rc=1
		else
			rc=1
		fi
	fi
	if [[ $rc -eq 0 ]]; then
		mkdir -p "$dir" && mv "$dl"/*.deb "$dir/" || rc=1
	fi
	rm -rf "$dl"
	return $rc
}
