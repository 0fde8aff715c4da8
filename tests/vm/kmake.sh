#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/kmake.sh - run make against a test kernel's headers, with the
# toolchain they need: the host's for the kernels of the host's release,
# the cached build root of their release for kernels of newer suites
# (scripts/lib/buildenv.sh).  The kernel is fetched first if needed.
#
# Usage: tests/vm/kmake.sh SPEC [MAKE-ARGS...]   (make -C <headers> MAKE-ARGS)
#        tests/vm/kmake.sh --print-env SPEC      the build root, or nothing
#                                                for the host
# SPEC as for tests/vm/run-vm.sh -k ("6.12", "newest", an ABI).  Absolute
# directories among MAKE-ARGS (M=DIR...) and the current directory are
# shown in the build root at their own paths.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

print_env=0
if [[ ${1:-} == --print-env ]]; then
	print_env=1
	shift
fi
[[ $# -ge 1 ]] || vm_die "usage: $0 [--print-env] SPEC [MAKE-ARGS...]"
kver=$(vm_kernel_for "$1")
shift
if [[ $print_env -eq 1 ]]; then
	vm_kbuild_env "$kver"
	exit 0
fi
vm_kernel_paths "$kver"
vm_kmake "$kver" -C "$K_KDIR" "$@"
