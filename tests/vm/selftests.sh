#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/selftests.sh - build ext4dec for each kernel and run the
# selftests (tests/selftests) in QEMU on it.
#
# Usage: tests/vm/selftests.sh [--full] [SERIES...]
#        (default: the "check" lines of tests/kernels)
#        EXT4DEC_SELFTESTS="-t NAME ..." runs only those selftests (the
#        kselftest harness's options), then the scripts' tests
#
# The conversion scripts' tests (tests/selftests/scripts.sh) run after the
# selftests on Debian's kernels, and on the debug kernels only with
# --full (make check-full): they test shell scripts, whose calls into the
# module the selftests make too, and under KASAN and lockdep they take
# several times as long as the selftests (in one run beside other VMs:
# the 63 selftests 303 s, the first 57 of the scripts' tests 1,848 s).
#
# Needs tools/szip/szip, tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs,
# tools/ext4dec-query/ext4dec-query (make), build/selftests/ext4dec_test
# and build/selftests/ext4dec_ioctl32 (make check builds them);
# ext4dec.ko is built for each kernel.  Per kernel, a second, short boot
# runs tests/selftests/hookblock.sh (loads of ext4dec that must fail) with
# the test module tests/selftests/hookblock built for it too.  Per boot:
# the TAP, a summary line, and the harness's verdict (a bad dmesg line, a
# crash or a timeout fails the kernel's run even when every test passed).
# Logs stay in build/vm/<series>/ and build/vm/<series>-hookblock/.
# Prints "# vm: P passed, F failed, S skipped" last; exit 1 on any failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
full=0
if [[ ${1:-} == --full ]]; then
	full=1
	shift
fi
series=("$@")
# shellcheck source=tests/lib/kernels.sh
. tests/lib/kernels.sh
[[ ${#series[@]} -gt 0 ]] || mapfile -t series < <(kernels_list)
# shellcheck source=tests/vm/suite.sh
. tests/vm/suite.sh

suite_module_src build/module-src

# the payload: the selftests' scripts and the conversion scripts
payload=build/vm-payload
rm -rf "$payload"
mkdir -p "$payload/bin"
cp tests/selftests/run.sh tests/selftests/scripts.sh "$payload/"
printf '%s\n' "${EXT4DEC_SELFTESTS:-}" >"$payload/selftests.args"
cp -L scripts/ext4dec-compress scripts/ext4dec-decompress \
	scripts/ext4dec-status "$payload/bin/"
# ext4dec-compress's helper, and the host's tools that set and read
# extended attributes and ACLs (busybox has none) for the scripts' tests
cp tools/ext4dec-copy-xattrs/ext4dec-copy-xattrs "$payload/bin/"
xattr_bins=()
for t in getfattr setfattr getfacl setfacl; do
	command -v "$t" >/dev/null && xattr_bins+=(--bin "$t")
done

# hookblock.sh, the payload of a boot of its own: it makes ext4dec's load
# fail on purpose, and its hook errors (it counts them) are no failure of
# that run
hb_payload=build/vm-payload-hookblock
rm -rf "$hb_payload"
mkdir -p "$hb_payload"
cp tests/selftests/hookblock.sh "$hb_payload/run.sh"
hookblock_err='ext4dec: hook ext4_[a-z_]+: redirected already \(a livepatch, another module\) or ftrace off \(register_ftrace_function: -EBUSY\)$'
hb_ignore="${EXT4DEC_VM_DMESG_IGNORE:+$EXT4DEC_VM_DMESG_IGNORE|}$hookblock_err"

for s in "${series[@]}"; do
	# the debug kernel (KASAN, lockdep...) runs about 3x slower under TCG
	limit=1500
	# Debian's kernels: 64 MiB of the guest's RAM as emulated persistent
	# memory (nd_e820, nd_pmem: /dev/pmem0) for the DAX test; the debug
	# kernel's configuration has no NVDIMM support
	pmem=(--modules "loop xts cts sha512 nd_e820 nd_pmem" --append "memmap=64M!768M")
	rm -f "$payload/no-scripts"
	if [[ $s == debug* ]]; then
		limit=3000
		pmem=(--modules "loop xts cts sha512")
		[[ $full -eq 1 ]] ||
			echo "the debug kernel runs the scripts' tests in make check-full (tests/vm/selftests.sh --full)" >"$payload/no-scripts"
	fi
	suite_boot vm "$s" "build/vm/$s" -p "$payload" --module-src build/module-src \
		--bin tools/szip/szip --bin tools/ext4dec-query/ext4dec-query \
		--bin build/selftests/ext4dec_test \
		--bin build/selftests/ext4dec_ioctl32 ${xattr_bins[@]+"${xattr_bins[@]}"} \
		"${pmem[@]}" -t "$limit"
	# The guest's vCPUs on one TCG thread (tests/vm/lib.sh,
	# vm_tcg_thread): each failed load patches ext4's functions in and out
	# while the other vCPU runs them, and QEMU 7.2's multi-threaded TCG
	# can go on running a breakpoint of the patch on that vCPU after it is
	# gone (on 6.1, an endless loop at ext4_file_read_iter+0x0).
	EXT4DEC_VM_TCG_THREAD=${EXT4DEC_VM_TCG_THREAD:-single} \
		EXT4DEC_VM_DMESG_IGNORE=$hb_ignore \
		suite_boot vm-hookblock "$s" "build/vm/$s-hookblock" -p "$hb_payload" \
		--module-src build/module-src --module-src tests/selftests/hookblock \
		--bin tools/szip/szip -t 600
done

suite_end vm
