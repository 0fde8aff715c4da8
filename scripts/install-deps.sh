#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/install-deps.sh - install the Debian packages the build and the
# tests need, only those that are missing.
#
# Usage: scripts/install-deps.sh host
#   host: compiler, zlib, libdeflate, libzstd, liblz4, libxxhash, clang + libFuzzer runtime, python3
#         with zstandard and lz4 (the CLI tests' reference reader),
#         sparse (kernel lint), e2fsprogs, dkms and groff (packaging tests),
#         attr and acl (the scripts' tests set extended attributes and ACLs)
#
# Runs apt-get as root directly or through sudo.  Does nothing (and needs
# no privileges) when everything is already installed.

set -euo pipefail

host_pkgs=(make gcc libc6-dev zlib1g-dev libdeflate-dev libzstd-dev liblz4-dev
	   python3-zstandard python3-lz4
	   libxxhash-dev clang libclang-rt-dev python3 coreutils sparse e2fsprogs dkms groff-base
	   kmod attr acl)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/apt.sh
. "$here/lib/apt.sh"

case "${1:-host}" in
host)
	apt_install_missing "${host_pkgs[@]}" ||
		{ echo "install-deps: cannot install the host packages" >&2; exit 1; }
	;;
*)
	echo "usage: $0 host" >&2
	exit 2
	;;
esac
