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
#   apt_private DIR SUITE...  point APT_OPTS at a private configuration in
#                             DIR: the host's Debian mirror with SUITE...
#                             (main), its own package lists, package cache
#                             and an empty dpkg status; the host's sources,
#                             lists and cache are never read or changed
#   apt_private_update MINUTES  fetch the private lists if they are older
#                             than MINUTES (0: always)
#
# APT_OPTS: options given to every apt-get and apt-cache call here and in
# tests/vm/lib.sh; empty (the default) means the host's configuration.
#
# apt-get download drops privileges to the _apt user when run as root: the
# download goes to a temporary directory _apt can write to, then the .debs
# move to DIR (which may be under /root).

APT_OPTS=()

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
	if ! (cd "$dl" && apt-get ${APT_OPTS[@]+"${APT_OPTS[@]}"} download -q "$@" >&2); then
		# a private configuration's lists are refreshed by their owner
		if [[ ${#APT_OPTS[@]} -eq 0 && $_apt_updated -eq 0 ]] && _apt_may_update &&
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

# apt_mirror: the URI of the host's Debian archive: EXT4DEC_DEBIAN_MIRROR,
# or the source apt uses for the host's own release (so a private
# configuration goes where the host's already goes).
apt_mirror() {
	local codename
	if [[ -n ${EXT4DEC_DEBIAN_MIRROR:-} ]]; then
		printf '%s\n' "$EXT4DEC_DEBIAN_MIRROR"
		return 0
	fi
	codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null)
	apt-cache policy 2>/dev/null |
		awk -v c="$codename/main" '$3 == c && $2 ~ /^https?:/ { print $2; found = 1; exit }
			END { exit !found }'
}

apt_private() {
	local dir=$1 mirror s new
	shift
	mirror=$(apt_mirror) || {
		echo "apt: cannot tell the host's Debian mirror (set EXT4DEC_DEBIAN_MIRROR)" >&2
		return 1
	}
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 1
	[[ -f $dir/status ]] || : >"$dir/status"
	# Runs side by side (tests/run-tests.sh) set up the same directory:
	# each writes its own temporary file and renames it into place, and
	# only a new list of suites drops the package lists.
	new=$(mktemp "$dir/sources.list.XXXXXX") || return 1
	for s in "$@"; do
		printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
			"$mirror" "$s"
	done >"$new" || { rm -f "$new"; return 1; }
	if cmp -s "$new" "$dir/sources.list"; then
		rm -f "$new"
	else
		mv "$new" "$dir/sources.list" || { rm -f "$new"; return 1; }
		rm -f "$dir/lists/"*_Packages* "$dir/lists/"*Release*
	fi
	# none of the host's hooks (PackageKit, appstream, docker-clean's
	# cache cleaning) may run for a private update: -o cannot empty a
	# list, a configuration file can
	new=$(mktemp "$dir/apt.conf.XXXXXX") || return 1
	printf '#clear %s;\n' APT::Update::Pre-Invoke APT::Update::Post-Invoke \
		APT::Update::Post-Invoke-Success DPkg::Pre-Invoke DPkg::Post-Invoke \
		>"$new" || { rm -f "$new"; return 1; }
	mv "$new" "$dir/apt.conf" || { rm -f "$new"; return 1; }
	APT_OPTS=(
		-c "$dir/apt.conf"
		-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::State::status=$dir/status"
		-o "Dir::Cache=$dir/cache" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
		-o Debug::NoLocking=1
	)
	# the private directories may sit where _apt cannot go (under /root)
	[[ $EUID -ne 0 ]] || APT_OPTS+=(-o APT::Sandbox::User=root)
}

apt_private_update() {
	local lists
	lists=$(apt-config ${APT_OPTS[@]+"${APT_OPTS[@]}"} shell d Dir::State::Lists/d | sed "s/^d='\(.*\)'$/\1/")
	if [[ $1 -gt 0 && -n $lists ]] &&
		[[ -n $(find "$lists" -maxdepth 1 -name '*_InRelease' -mmin "-$1" 2>/dev/null) ]]; then
		return 0
	fi
	echo "apt: apt-get update ($(sed -n 's/^deb \[[^]]*\] [^ ]* \([^ ]*\) .*/\1/p' "$lists/../sources.list" | paste -sd ' '))" >&2
	apt-get "${APT_OPTS[@]}" update -q >&2
}
