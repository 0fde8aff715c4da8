#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/install-deps.sh - install the Debian packages the build and the
# tests need, only those that are missing.
#
# Usage: scripts/install-deps.sh host
#   host: compiler, zlib, libdeflate, libzstd, liblz4, libxxhash, clang + libFuzzer runtime, python3
#         with zstandard and lz4 (the CLI tests' reference reader),
#         sparse (kernel lint), e2fsprogs, dkms and groff (packaging tests)
#
# Runs apt-get as root directly or through sudo.  Does nothing (and needs
# no privileges) when everything is already installed.

set -euo pipefail

host_pkgs=(make gcc libc6-dev zlib1g-dev libdeflate-dev libzstd-dev liblz4-dev
	   python3-zstandard python3-lz4
	   libxxhash-dev clang libclang-rt-dev python3 coreutils sparse e2fsprogs dkms groff-base
	   kmod)

as_root() {
	if [[ $EUID -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "install-deps: need root to run: $*" >&2
		return 1
	fi
}

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

install_missing() {
	local todo
	mapfile -t todo < <(missing "$@")
	[[ ${#todo[@]} -gt 0 ]] || return 0
	echo "install-deps: installing ${todo[*]}" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${todo[@]}" >&2
}

case "${1:-host}" in
host)
	install_missing "${host_pkgs[@]}"
	;;
*)
	echo "usage: $0 host" >&2
	exit 2
	;;
esac
