#!/usr/bin/env bash
#
# scripts/install-vm-deps.sh - install what the QEMU test harness
# (tests/vm/run-vm.sh) needs, and pre-fetch the Debian cloud kernels.
#
# Usage: scripts/install-vm-deps.sh [SERIES|ABI ...]
#        (default: the "check" lines of tests/kernels)
#
# 1. Host tools, installed with apt-get only when missing:
#      qemu-system-x86 e2fsprogs kmod cpio make
#    plus a busybox for the guest: Debian's "busybox" package is unpacked into
#    the cache (not installed: it conflicts with busybox-static, whose
#    standalone shell is unsuitable, see vm_guest_busybox in tests/vm/lib.sh).
# 2. For every kernel series: resolve the newest packaged ABI with apt-cache
#    (see vm_resolve_kernel in tests/vm/lib.sh; no patch version is pinned
#    here), download image + headers + headers-common + kbuild with
#    `apt-get download` and unpack them into the cache
#    ($EXT4DEC_CACHE, default ~/.cache/ext4dec) - nothing is installed into
#    the host's /boot or /lib/modules.
# 3. The host packages those headers need to build out-of-tree modules
#    (gcc-12, pahole, ...), read from the packages' Depends; installed only
#    when missing.  Kernels of newer suites (trixie-backports, sid) build
#    in a cached root of their release instead (scripts/lib/buildenv.sh).
#
# Prints what it resolved and how long each step took.
# Environment: EXT4DEC_CACHE, EXT4DEC_KFLAVOUR (default cloud-amd64).

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../tests/vm/lib.sh
. "$here/../tests/vm/lib.sh"

series=("$@")
# shellcheck source=tests/lib/kernels.sh
. "$here/../tests/lib/kernels.sh"
[[ ${#series[@]} -gt 0 ]] || mapfile -t series < <(kernels_list)

t_start=$SECONDS

# --- 1. host tools ---------------------------------------------------------
apt_install_missing qemu-system-x86 e2fsprogs kmod cpio make ||
	vm_die "cannot install qemu-system-x86 e2fsprogs kmod cpio make"
printf 'guest busybox: %s\n' "$(vm_guest_busybox)"

# --- 2. kernels ------------------------------------------------------------
# Package lists are needed to resolve anything; fetch them if apt knows no
# cloud kernel at all (fresh container).
if [[ -z $(apt_candidate "linux-image-$EXT4DEC_KFLAVOUR") ]]; then
	apt_update_once || vm_die "apt-get update failed"
fi

kvers=()
for s in "${series[@]}"; do
	t0=$SECONDS
	if ! vm_resolve_kernel "$s"; then
		apt_update_once || vm_die "apt-get update failed"
		vm_resolve_kernel "$s" || vm_die "no Debian $EXT4DEC_KFLAVOUR kernel found for '$s'"
	fi
	printf 'resolved %-5s -> %s %s (ABI %s; via %s)\n' "$s" "$R_IMAGE" "$R_VERSION" "$R_KVER" "$R_HOW"
	vm_fetch_kernel "$R_KVER" "$R_IMAGE" "$R_VERSION" "$R_APT"
	vm_log "kernel $R_KVER ready in $((SECONDS - t0))s"
	kvers+=("$R_KVER")
done

# --- 3. build dependencies of the headers ----------------------------------
# (kernels of newer suites: their release's build root, not the host)
tooldeps=()
for k in "${kvers[@]}"; do
	if [[ -n $(vm_buildenv_release "$k") ]]; then
		t0=$SECONDS
		printf '%s: builds in %s\n' "$k" "$(vm_kbuild_env "$k")"
		vm_log "build root of $k ready in $((SECONDS - t0))s"
		continue
	fi
	for d in $(vm_kernel_info "$k" tool_deps); do
		tooldeps+=("$d")
	done
done
if [[ ${#tooldeps[@]} -gt 0 ]]; then
	mapfile -t tooldeps < <(printf '%s\n' "${tooldeps[@]}" | sort -u)
	apt_install_missing "${tooldeps[@]}" || vm_die "cannot install ${tooldeps[*]}"
fi

# --- summary ---------------------------------------------------------------
for k in "${kvers[@]}"; do
	vm_kernel_paths "$k"
	printf '%s: %s=%s, %s, %s, %s\n' "$k" \
		"$(vm_kernel_info "$k" image_pkg)" "$(vm_kernel_info "$k" version)" \
		"$(vm_kernel_info "$k" headers_pkg)" "$(vm_kernel_info "$k" common_pkg)" \
		"$(vm_kernel_info "$k" kbuild_pkg)"
	printf '    vmlinuz: %s\n    headers: %s  (make -C <that> M=<dir> modules)\n' "$K_VMLINUZ" "$K_KDIR"
done
vm_log "done in $((SECONDS - t_start))s"
