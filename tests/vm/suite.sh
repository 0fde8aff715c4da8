# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/suite.sh - shared by the VM suites (selftests.sh, stress.sh),
# sourced from the top of the tree: the module's sources for the harness,
# and one boot per kernel whose TAP is tallied.

suite_pass=0 suite_fail=0 suite_skip=0

# suite_module_src DIR: the module's sources only, so the harness copies
# little; without what a build in the tree left there (make module, make
# install): copied, those objects are newer than the sources, and Kbuild
# would link them, stale, into the module tested
suite_module_src() {
	rm -rf "$1"
	mkdir -p "$1"
	cp -r Kbuild dkms.conf include szip ext4dec "$1/" &&
		find "$1" -type f \( -name '*.o' -o -name '.*.cmd' -o -name '.*.d' -o -name '*.ko' \
			-o -name '*.mod' -o -name '*.mod.c' -o -name '*.a' -o -name modules.order \) -delete
}

# suite_boot SUITE SERIES OUT RUN-VM-ARGS...: boot SERIES with
# tests/vm/run-vm.sh RUN-VM-ARGS (TAP in OUT/tap, log in OUT/log, the run in
# OUT/run); print its summary line and failures and add to the totals.  The
# harness's verdict counts too: a bad dmesg line, a crash or a timeout fails
# the run even when every test passed.
suite_boot() {
	local name=$1 s=$2 out=$3 start=$SECONDS rc p f k kver
	shift 3
	rm -rf "$out"
	mkdir -p "$out"
	tests/vm/run-vm.sh -k "$s" "$@" -o "$out/run" >"$out/tap" 2>"$out/log"
	rc=$?
	p=$(grep -E '^ok ' "$out/tap" | grep -vc '# SKIP')
	f=$(grep -c '^not ok' "$out/tap")
	k=$(grep -E '^ok ' "$out/tap" | grep -c '# SKIP')
	kver=$(sed -n 's/^ext4dec-vm: kernel: //p' "$out/log" | head -n 1)
	echo "# $name $s (${kver:-kernel unknown}): $p passed, $f failed, $k skipped in $((SECONDS - start)) s"
	sed 's/^/# /' "$out/tap" | grep -vE '^# (ok|TAP|1\.\.)' | sed "s/^# not ok/not ok [$s]/"
	if [[ $rc -ne 0 ]]; then
		grep -E '^ext4dec-vm: (  |result|error)' "$out/log" | sed 's/^/# /'
		[[ $f -gt 0 ]] || f=1
	fi
	suite_pass=$((suite_pass + p)) suite_fail=$((suite_fail + f))
	suite_skip=$((suite_skip + k))
}

# suite_end SUITE: the totals line, last; status 1 if anything failed
suite_end() {
	echo "# $1: $suite_pass passed, $suite_fail failed, $suite_skip skipped"
	[[ $suite_fail -eq 0 ]]
}
