#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/selftests.sh - build ext4dec for each kernel and run the
# selftests (tests/selftests) in QEMU on it.
#
# Usage: tests/vm/selftests.sh [SERIES...]   (default: 6.1 6.12)
#
# Needs tools/szip/szip and build/selftests/ext4dec_test (make check builds
# them).  Per kernel: the TAP, a summary line, and the harness's verdict
# (a bad dmesg line, a crash or a timeout fails the kernel's run even when
# every test passed).  Logs stay in build/vm/<series>/.  Prints
# "# vm: P passed, F failed, S skipped" last; exit 1 on any failure.

set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 2
series=("$@")
[[ ${#series[@]} -gt 0 ]] || series=(6.1 6.12)
pass=0 fail=0 skip=0

# the module's sources only, so the harness copies little
src=build/module-src
rm -rf "$src"
mkdir -p "$src"
cp -r Kbuild dkms.conf include szip ext4dec "$src/"

# the payload: the selftests' scripts and the conversion scripts
payload=build/vm-payload
rm -rf "$payload"
mkdir -p "$payload/bin"
cp tests/selftests/run.sh tests/selftests/scripts.sh "$payload/"
cp -L scripts/ext4dec-compress scripts/ext4dec-decompress \
	scripts/ext4dec-status "$payload/bin/"

for s in "${series[@]}"; do
	out=build/vm/$s
	rm -rf "$out"
	mkdir -p "$out"
	start=$SECONDS
	# the debug kernel (KASAN, lockdep...) runs about 3x slower under TCG
	limit=1500
	[[ $s != debug* ]] || limit=3000
	tests/vm/run-vm.sh -k "$s" -p "$payload" --module-src "$src" \
		--bin tools/szip/szip --bin build/selftests/ext4dec_test \
		--modules "loop xts cts sha512" \
		-t "$limit" -o "$out/run" >"$out/tap" 2>"$out/log"
	rc=$?
	p=$(grep -E '^ok ' "$out/tap" | grep -vc '# SKIP')
	f=$(grep -c '^not ok' "$out/tap")
	k=$(grep -E '^ok ' "$out/tap" | grep -c '# SKIP')
	kver=$(sed -n 's/^ext4dec-vm: kernel: //p' "$out/log" | head -n 1)
	echo "# vm $s (${kver:-kernel unknown}): $p passed, $f failed, $k skipped in $((SECONDS - start)) s"
	sed 's/^/# /' "$out/tap" | grep -vE '^# (ok|TAP|1\.\.)' | sed "s/^# not ok/not ok [$s]/"
	if [[ $rc -ne 0 ]]; then
		grep -E '^ext4dec-vm: (  |result|error)' "$out/log" | sed 's/^/# /'
		[[ $f -gt 0 ]] || f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
done

echo "# vm: $pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
