#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/fetch-data.sh - fetch the benchmark's data files from Debian packages.
#
# Usage: bench/fetch-data.sh [-h]
#
# Downloads (apt-get download, never installs) the packages below, extracts
# one file from each with dpkg-deb -x, and keeps it in
#   <cache>/bench/data/<package>_<version>/<file>
# (<cache> = $EXT4DEC_CACHE, default ${XDG_CACHE_HOME:-~/.cache}/ext4dec).
# The version is the package's apt candidate at run time; a cached copy of
# that version is reused.  Without package lists the newest cached version
# is used, with a warning.
#
#   libxul.so         firefox-esr    /usr/lib/firefox-esr/libxul.so
#   libcrypto.so.3    libssl3        /usr/lib/x86_64-linux-gnu/libcrypto.so.3
#   libstdc++.so.6    libstdc++6     /usr/lib/x86_64-linux-gnu/libstdc++.so.6
#   UnicodeData.txt   unicode-data   /usr/share/unicode/UnicodeData.txt
#
# Prints one line per file: NAME PATH PACKAGE VERSION SIZE (tab-separated).
# Exit status: 0 success, 1 failure (named on stderr).

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

case ${1:-} in
-h | --help)
	sed -n '4,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit 0
	;;
'') ;;
*)
	bench_log "unknown argument: $1"
	exit 2
	;;
esac

# NAME PACKAGE PATH-IN-PACKAGE
files=(
	"libxul.so firefox-esr /usr/lib/firefox-esr/libxul.so"
	"libcrypto.so.3 libssl3 /usr/lib/x86_64-linux-gnu/libcrypto.so.3"
	"libstdc++.so.6 libstdc++6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	"UnicodeData.txt unicode-data /usr/share/unicode/UnicodeData.txt"
)

for cmd in apt-get apt-cache dpkg-deb; do
	command -v "$cmd" >/dev/null || bench_die "$cmd not found: the benchmark needs a Debian system"
done

data=$(bench_cache_dir)/data
mkdir -p "$data"

# fetch_one PKG PATH: print the cached file of PKG's candidate version,
# downloading it if needed.
fetch_one() {
	local pkg=$1 path=$2 ver dir d name
	name=$(basename "$path")
	ver=$(apt_candidate "$pkg")
	if [[ -z $ver ]]; then
		dir=''
		for d in "$data/${pkg}_"*/; do
			[[ -f $d/.complete ]] && dir=${d%/}
		done
		[[ -n $dir ]] || bench_die "apt knows no version of $pkg and nothing is cached (run apt-get update)"
		bench_log "warning: apt cannot resolve $pkg; using cached ${dir##*/}"
	else
		dir=$data/${pkg}_${ver//:/_}
		if [[ ! -f $dir/.complete ]]; then
			rm -rf "$dir.tmp"
			bench_deb_extract "$pkg" "$ver" "$dir.tmp" "$path"
			printf 'package=%s\nversion=%s\npath=%s\nfetched=%s\n' "$pkg" "$ver" "$path" \
				"$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$dir.tmp/info"
			touch "$dir.tmp/.complete"
			rm -rf "$dir"
			mv "$dir.tmp" "$dir"
		fi
	fi
	[[ -s $dir/$name ]] || bench_die "$dir/$name is missing or empty"
	printf '%s\n' "$dir/$name"
}

fetch_locked() {
	local line name pkg path file ver
	for line in "${files[@]}"; do
		read -r name pkg path <<<"$line"
		file=$(fetch_one "$pkg" "$path")
		ver=$(sed -n 's/^version=//p' "$(dirname "$file")/info")
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$file" "$pkg" "$ver" "$(stat -c %s "$file")"
	done
}

# Concurrent runs must not download into the same directory.
(
	flock -x 9
	fetch_locked
) 9>"$data/.lock"
