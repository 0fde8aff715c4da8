#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/scripts.sh - ext4dec-compress, ext4dec-decompress and
# ext4dec-status in the VM (busybox sh), with ext4dec loaded.  Every
# failure mode must leave the original untouched and exit non-zero.
# Prints TAP; exit 1 if a test failed.

set -u
top=${EXT4DEC_MNT:?}/scripts
PATH=/payload/bin:$PATH
export PATH
# shellcheck source=tests/lib/tap.sh
. ./tap.sh
tap_sep= # "ok N name", as the selftests before these in the stream
sha() { sha256sum <"$1" | cut -d' ' -f1; }
flags() { lsattr -d "$1" | head -n 1 | cut -d' ' -f1; }
# temps_in DIR: is a conversion temporary (.NAME.ext4dec-XXXXXX) in DIR?
temps_in() {
	for t in "$1"/.*.ext4dec-*; do
		[ -e "$t" ] && return 0
	done
	return 1
}

# refused FILE REASON CMD...: CMD exits 1, names REASON, FILE unchanged
refused() {
	file=$1 reason=$2
	shift 2
	before=$(sha "$file") before_flags=$(flags "$file")
	"$@" >/tmp/refused.out 2>&1
	rc=$?
	cat /tmp/refused.out
	[ "$rc" = 1 ] || { echo "exit status $rc, expected 1"; return 1; }
	grep -q "$reason" /tmp/refused.out || { echo "no '$reason' in the message"; return 1; }
	[ "$(sha "$file")" = "$before" ] || { echo "$file changed"; return 1; }
	[ "$(flags "$file")" = "$before_flags" ] || { echo "$file: flags changed"; return 1; }
	! temps_in "$(dirname "$file")" || { echo "temporary left"; return 1; }
}

echo "TAP version 13"
rm -rf "$top"
mkdir -p "$top/lib"
for f in /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libext2fs.so.2 \
	/bin/busybox; do
	[ -f "$f" ] && cp "$f" "$top/lib/"
done
# a file of another user, trusted through its group (the module's policy)
params=/sys/module/ext4dec/parameters
echo 567 >"$params/trusted_gid"
chown 1234:567 "$top/lib/libc.so.6"
chmod 0640 "$top/lib/libc.so.6"
touch -d '2020-01-02 03:04:05' "$top/lib/libc.so.6"
for f in "$top"/lib/*; do
	echo "$(sha "$f") $(stat -c '%s %u:%g %a %Y' "$f") $f"
done >/tmp/before

# verify_lib c|-: every file in lib/ has its original contents, size, owner,
# mode and mtime, and has (c) or has not (-) the +c flag
verify_lib() {
	want=$1
	while read -r s size owner mode mtime f; do
		[ "$(sha "$f")" = "$s" ] || { echo "$f: content"; return 1; }
		# shellcheck disable=SC2046 # four words
		set -- $(stat -c '%s %u:%g %a %Y' "$f")
		[ "$1 $2 $3 $4" = "$size $owner $mode $mtime" ] ||
			{ echo "$f: metadata $* != $size $owner $mode $mtime"; return 1; }
		case $want:$(flags "$f") in
		c:*c*) [ $(($(stat -c %b "$f") * 512)) -lt "$size" ] ||
			{ echo "$f: no space saved"; return 1; } ;;
		-:*c*) echo "$f: still +c"; return 1 ;;
		c:*) echo "$f: not +c"; return 1 ;;
		esac
	done </tmp/before
	! temps_in "$top/lib"
}
compress_lib() { ext4dec-compress -r -v "$top/lib" && verify_lib c; }
check "compress_recursive_keeps_contents_owner_mode_mtime" compress_lib
status_lists() {
	ext4dec-status "$top" >/tmp/status.out
	while read -r s size owner mode mtime f; do
		grep -q "^active .* $f\$" /tmp/status.out ||
			{ cat /tmp/status.out; echo "no active row for $f"; return 1; }
	done </tmp/before
	grep -q '^chunks_inflated' /tmp/status.out
}
check "status_lists_active_files_and_counters" status_lists
check "program_runs_with_converted_libc" sh -c \
	"LD_LIBRARY_PATH='$top/lib' '$top/lib/busybox' true"

check "refuses_already_compressed" refused "$top/lib/busybox" "already compressed" \
	ext4dec-compress "$top/lib/busybox"

cp /bin/busybox "$top/users"
chown 1234:1234 "$top/users"
check "refuses_untrusted_owner" refused "$top/users" "others than root" \
	ext4dec-compress "$top/users"
# made by root, then given away: read raw once evicted
untrusted_status() {
	szip -qc --filter=x86 /bin/busybox >"$top/given" && chattr +c "$top/given" &&
		chown 1234:1234 "$top/given" || return 1
	rmmod ext4dec && modprobe ext4dec && echo 567 >"$params/trusted_gid" || return 1
	ext4dec-status "$top" >/tmp/status.out
	grep -q "^refused/untrusted .* $top/given\$" /tmp/status.out ||
		{ cat /tmp/status.out; return 1; }
	grep -q '^refused/untrusted  *[1-9]' /tmp/status.out ||
		{ cat /tmp/status.out; return 1; }
}
check "status_shows_untrusted" untrusted_status
rm -f "$top/given"

# status_row FILE: FILE's row of ext4dec-status (state disk size ratio
# codec chunk inflated file), its warnings on /tmp/status.err
status_row() {
	ext4dec-status "$1" 2>/tmp/status.err | grep " $1\$"
}
# what the module tells, not guesses: a +c file that is not szip (made in
# a +c directory, which gives its files +c) is refused, and read raw
status_not_szip() {
	mkdir -p "$top/cdir" && chattr +c "$top/cdir" &&
		echo 'not szip' >"$top/cdir/text" || return 1
	row=$(status_row "$top/cdir/text")
	echo "$row"
	cat /tmp/status.err
	case $row in refused/not_szip\ *) ;; *) return 1 ;; esac
	# shellcheck disable=SC2086 # the row's words: no codec, chunk, inflated
	set -- $row
	[ $# = 8 ] && [ "$5 $6 $7" = "- - -" ] || return 1
	grep -q 'refused by the module' /tmp/status.err
}
check "status_shows_refused_not_szip" status_not_szip
# a +c file open for writing is not activated: inactive
status_inactive() {
	(exec 3>>"$top/cdir/written"; sleep 60) &
	writer=$!
	sleep 0.5
	row=$(status_row "$top/cdir/written")
	kill "$writer"
	wait "$writer" 2>/dev/null
	echo "$row"
	case $row in inactive\ *) ;; *) return 1 ;; esac
}
check "status_shows_inactive_while_written" status_inactive
rm -rf "$top/cdir"
# the codec and chunk size shown are the file's (szip -l of its raw bytes),
# and its inflated chunks grow when it is read again from disk
status_facts() {
	f=$top/facts
	cp /bin/busybox "$f" && ext4dec-compress --codec=lz4 --chunk-size=64K "$f" || return 1
	# shellcheck disable=SC2046 # the row's words
	set -- $(status_row "$f")
	echo "before: $*"
	[ $# = 8 ] && [ "$1 $5 $6" = "active lz4 65536" ] || return 1
	[ "$3" = "$(stat -c %s /bin/busybox)" ] || { echo "size $3"; return 1; }
	before=$7
	sync && echo 1 >/proc/sys/vm/drop_caches && cat "$f" >/dev/null || return 1
	# shellcheck disable=SC2046
	set -- $(status_row "$f")
	echo "after a cold read: $*"
	if [ $# != 8 ] || ! [ "$7" -gt "$before" ] 2>/dev/null; then
		echo "chunks inflated: $before before"
		return 1
	fi
	chattr -c "$f" && szip -l "$f" >/tmp/list.out && chattr +c "$f" || return 1
	cat /tmp/list.out
	awk 'NR == 2 { exit !($5 == 65536 && $9 == "lz4") }' /tmp/list.out
}
check "status_codec_chunk_size_and_chunks_inflated_from_the_module" status_facts
cp /bin/busybox "$top/plain"
cp /bin/busybox /tmp/on-tmpfs
check "refuses_not_ext4" refused /tmp/on-tmpfs "not on ext4" ext4dec-compress /tmp/on-tmpfs
ln "$top/plain" "$top/hardlink"
check "refuses_hard_linked" refused "$top/plain" "hard link" ext4dec-compress "$top/plain"
rm "$top/hardlink"
chattr +i "$top/plain"
check "refuses_immutable" refused "$top/plain" "immutable" ext4dec-compress "$top/plain"
chattr -i "$top/plain"
(exec 3>>"$top/plain"; sleep 60) &
writer=$!
sleep 0.5
check "refuses_open_for_writing" refused "$top/plain" "open for writing" \
	ext4dec-compress "$top/plain"
kill "$writer"
wait "$writer" 2>/dev/null
dd if=/dev/urandom of="$top/random" bs=64k count=16 2>/dev/null
check "refuses_not_worth_it" refused "$top/random" "min-ratio" ext4dec-compress "$top/random"
mkdir -p "$top/dir"
check "refuses_directory_without_r" refused "$top/dir" "$top/dir: a directory (use -r)" \
	ext4dec-compress "$top/dir"
mkfifo "$top/fifo"
check "refuses_fifo" sh -c "ext4dec-compress '$top/fifo'; [ \$? = 1 ]"
dry_run() {
	before=$(sha "$top/plain") before_flags=$(flags "$top/plain")
	before_stat=$(stat -c '%i %s %Y' "$top/plain")
	ext4dec-compress -n "$top/plain" >/tmp/dry.out 2>&1 || { cat /tmp/dry.out; return 1; }
	cat /tmp/dry.out
	grep -q 'bytes (' /tmp/dry.out || { echo "no size estimate"; return 1; }
	[ "$(sha "$top/plain")" = "$before" ] || { echo "contents changed"; return 1; }
	[ "$(flags "$top/plain")" = "$before_flags" ] || { echo "flags changed"; return 1; }
	[ "$(stat -c '%i %s %Y' "$top/plain")" = "$before_stat" ] ||
		{ echo "inode, size or mtime changed"; return 1; }
	! temps_in "$top" || { echo "temporary left"; return 1; }
}
check "dry_run_changes_nothing" dry_run

# exits CODE PATTERN CMD...: CMD exits CODE and says PATTERN
exits() {
	code=$1 pattern=$2
	shift 2
	"$@" >/tmp/exits.out 2>&1
	rc=$?
	cat /tmp/exits.out
	[ "$rc" = "$code" ] || { echo "exit status $rc, expected $code"; return 1; }
	grep -q -- "$pattern" /tmp/exits.out || { echo "no '$pattern'"; return 1; }
}
check "dry_run_reports_szip_failure" exits 1 "plain: szip failed" \
	ext4dec-compress -n --chunk-size=12K "$top/plain"
check "dry_run_says_what_would_be_left_unchanged" exits 0 "would be left unchanged" \
	ext4dec-compress -n "$top/random"
check "min_ratio_must_be_a_number" exits 2 "not a number" \
	ext4dec-compress --min-ratio=abc "$top/plain"
check "status_refuses_compress_options" exits 2 "unknown option" \
	ext4dec-status --codec=zstd "$top"
check "decompress_refuses_compress_options" exits 2 "unknown option" \
	ext4dec-decompress --min-ratio=0.5 "$top/plain"
check "status_of_a_missing_path_fails" exits 1 "nope: No such file" \
	ext4dec-status "$top/nope"
check "compress_of_a_missing_file_fails" exits 1 "nope: No such file" \
	ext4dec-compress "$top/nope"
check "each_command_has_version" sh -c \
	'ext4dec-compress --version && ext4dec-decompress --version && ext4dec-status --version'
# ext4dec-query: one key=value line per file, the name last and escaped;
# errors name the file, and tell a file not on ext4 from a missing module
query_line() {
	f=$top/facts
	line=$(ext4dec-query "$f") || return 1
	echo "$line"
	case $line in
	"state=active refusal=- format=2 codec=lz4 chunk_size=65536 nr_chunks="*" size=$(stat -c %s /bin/busybox) raw_size="*" chunks_inflated="*" file=$f") ;;
	*) return 1 ;;
	esac
	cp "$f" "$top/new
line\\" && line=$(ext4dec-query "$top/new
line\\") || return 1
	echo "$line"
	case $line in *" file=$top/new\012line\134") ;; *) return 1 ;; esac
	rm -f "$top/new
line\\"
}
check "query_prints_one_line_per_file" query_line
cp /bin/busybox /tmp/query-tmpfs
check "query_refuses_not_ext4" exits 1 "query-tmpfs: not on ext4" ext4dec-query /tmp/query-tmpfs
check "query_of_a_missing_file_fails" exits 1 "nope: No such file" ext4dec-query "$top/nope"
ln -sf facts "$top/link"
check "query_refuses_symlink" exits 1 "link: a symbolic link" ext4dec-query "$top/link"
check "query_says_module_not_loaded" sh -c "rmmod ext4dec &&
	{ ext4dec-query '$top/facts' >/tmp/q.out 2>&1; rc=\$?; modprobe ext4dec
	  cat /tmp/q.out; [ \$rc = 1 ] && grep -q 'facts: the ext4dec module is not loaded' /tmp/q.out; }"
echo 567 >"$params/trusted_gid"
rm -f "$top/facts" "$top/link" /tmp/query-tmpfs
# -rv as one word; names with blanks at the end and a newline inside
odd_names() {
	d=$top/odd
	mkdir -p "$d" && cp /bin/busybox "$d/trailing  " &&
		cp /bin/busybox "$d/new
line" && s=$(sha /bin/busybox) || return 1
	ext4dec-compress -rv "$d" || return 1
	for f in "$d/trailing  " "$d/new
line"; do
		case $(flags "$f") in *c*) ;; *) echo "$f: not +c"; return 1 ;; esac
		[ "$(sha "$f")" = "$s" ] || { echo "$f: contents"; return 1; }
	done
	ext4dec-status "$d" | grep -c '^active ' | grep -qx 2 ||
		{ ext4dec-status "$d"; return 1; }
	ext4dec-decompress -rv "$d" || return 1
	for f in "$d/trailing  " "$d/new
line"; do
		case $(flags "$f") in *c*) echo "$f: still +c"; return 1 ;; esac
		[ "$(sha "$f")" = "$s" ] || { echo "$f: contents"; return 1; }
	done
	rm -rf "$d"
}
check "recursive_with_odd_names_and_clustered_options" odd_names

# a full file system: the temporary cannot be written
full=/tmp/full
if modprobe loop 2>/dev/null && truncate -s 8M /tmp/full.img &&
	mkfs.ext4 -q -F -b 4096 /tmp/full.img && mkdir -p "$full" &&
	mount -o loop /tmp/full.img "$full"; then
	cp /bin/busybox "$full/victim"
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
	sync
	check "refuses_when_disk_full" refused "$full/victim" "No space left on device" \
		ext4dec-compress "$full/victim"
	umount "$full"
else
	skip refuses_when_disk_full "no loop device"
fi

# killed in the middle: the original stays, no temporary stays
awk 'BEGIN { srand(3); for (i = 0; i < 600000; i++) printf "line %d %d\n", i, int(rand() * 1000) }' >"$top/big"
big_sha=$(sha "$top/big")
killed() {
	ext4dec-compress --level=9 --dict "$top/big" &
	pid=$!
	sleep 1
	kill -"$1" "$pid"
	wait "$pid"
	[ "$(sha "$top/big")" = "$big_sha" ] || { echo "original changed"; return 1; }
	case $(flags "$top/big") in *c*) echo "original became +c"; return 1 ;; esac
	if [ "$1" = TERM ]; then
		! temps_in "$top" || { echo "temporary left"; return 1; }
	fi
	rm -f "$top"/.*.ext4dec-*
}
check "killed_with_term_leaves_original_and_no_temporary" killed TERM
check "killed_with_kill_leaves_original" killed KILL

check "module_not_loaded_refused" sh -c "rmmod ext4dec &&
	{ ext4dec-compress '$top/plain'; rc=\$?; modprobe ext4dec; [ \$rc = 1 ]; }"

decompress_lib() { ext4dec-decompress -r -v "$top/lib" && verify_lib -; }
check "decompress_recursive_restores_files" decompress_lib
# raw_decompress OPTS...: ext4dec-compress OPTS, then ext4dec-status and
# ext4dec-decompress without the module (from the raw szip bytes)
raw_decompress() {
	ext4dec-compress "$@" "$top/plain" && s=$(sha /bin/busybox) &&
	rmmod ext4dec && ext4dec-status "$top" >/tmp/status.out 2>/tmp/status.err &&
	ext4dec-decompress "$top/plain"
	rc=$?
	modprobe ext4dec
	cat /tmp/status.out /tmp/status.err
	[ "$rc" = 0 ] && [ "$(sha "$top/plain")" = "$s" ] &&
		grep -q "^raw .*$top/plain\$" /tmp/status.out &&
		grep -q 'WARNING: the ext4dec module is not loaded: 1 compressed' /tmp/status.err &&
		grep -q 'programs using them fail' /tmp/status.err &&
		grep -q 'ext4dec-decompress -r' /tmp/status.err
}
check "decompress_without_module_uses_raw_szip" raw_decompress
# recovery of a directory without the module: the ordinary files in it
# (one with two links, which could not be converted) are passed over, not
# failures, and the missing module is said once
raw_decompress_dir() {
	d=$top/rawdir
	rm -rf "$d"
	mkdir -p "$d/sub"
	cp /bin/busybox "$d/a" && cp /bin/busybox "$d/sub/b" && echo plain >"$d/plain" &&
	ln "$d/plain" "$d/sub/plain-link" &&
	s=$(sha /bin/busybox) && ext4dec-compress "$d/a" "$d/sub/b" || return 1
	rmmod ext4dec
	ext4dec-decompress -r "$d" 2>/tmp/rawdir.err
	rc=$?
	modprobe ext4dec
	cat /tmp/rawdir.err
	[ "$rc" = 0 ] || { echo "exit status $rc"; return 1; }
	[ "$(grep -c 'module is not loaded' /tmp/rawdir.err)" = 1 ] || { echo "not said once"; return 1; }
	! grep -q plain /tmp/rawdir.err || { echo "the ordinary file reported"; return 1; }
	if [ "$(sha "$d/a")" != "$s" ] || [ "$(sha "$d/sub/b")" != "$s" ] ||
		[ "$(cat "$d/plain")" != plain ]; then
		echo "contents"
		return 1
	fi
	case $(flags "$d/a")$(flags "$d/sub/b") in *c*) echo "+c left"; return 1 ;; esac
}
check "decompress_recursive_without_module_passes_over_plain_files" raw_decompress_dir
check "decompress_without_module_uses_raw_szip_format_1" raw_decompress --format=1

# format 2 through the scripts: codec and checksum passed to szip
v2_convert() {
	cp /bin/busybox "$top/v2" && s=$(sha "$top/v2") &&
	ext4dec-compress --codec=zstd --level=3 --checksum=xxh64 "$top/v2" &&
	case $(flags "$top/v2") in *c*) ;; *) echo "not +c"; return 1 ;; esac &&
	[ "$(sha "$top/v2")" = "$s" ] &&
	chattr -c "$top/v2" && szip -l "$top/v2" >/tmp/v2.list &&
	chattr +c "$top/v2" && grep -q ' zstd  *xxh64 ' /tmp/v2.list &&
	ext4dec-decompress "$top/v2" && [ "$(sha "$top/v2")" = "$s" ]
}
check "format_2_zstd_xxh64_convert_and_back" v2_convert

# packed_as PATTERN OPTS...: ext4dec-compress OPTS of a copy of busybox (an
# x86 ELF file), whose raw szip -l line (compressed uncompressed ratio chunks
# chunk dict filter wbits codec csum name) matches PATTERN; then back
packed_as() {
	pattern=$1
	shift
	f=$top/packed
	cp /bin/busybox "$f" && s=$(sha "$f") &&
	ext4dec-compress "$@" "$f" && [ "$(sha "$f")" = "$s" ] &&
	chattr -c "$f" && szip -l "$f" >/tmp/list.out && chattr +c "$f" &&
	cat /tmp/list.out && ext4dec-decompress "$f" && [ "$(sha "$f")" = "$s" ] &&
	grep -Eq "$pattern" /tmp/list.out && rm "$f"
}
check "default_is_format_2_zstd_32k_x86" \
	packed_as ' 32768 +0 +x86 +- +zstd +- ' -1
check "format_1_on_request" packed_as ' 16384 +0 +x86 +-15 +deflate +- ' --format=1 -1
check "codec_on_request_uses_szip_defaults" \
	packed_as ' 16384 +0 +x86 +- +lz4 +- ' --codec=lz4 -1

# ------------------------------------------------ extended attributes
# A user xattr (also an empty one), a trusted one, the SELinux label (a
# plain security.* attribute while SELinux is not the active LSM) and a
# POSIX ACL (system.posix_acl_access) go with the file both ways; the
# guest's getfattr/setfattr/getfacl/setfacl are the host's (attr, acl).

# xattrs_of FILE: every extended attribute of FILE, values in hex
xattrs_of() { getfattr --absolute-names -h -d -m - -e hex "$1" | grep -v '^# file: '; }
# with_metadata FILE: a copy of busybox with all of them
with_metadata() {
	cp /bin/busybox "$1" &&
		setfattr -n user.ext4dec.test -v kept "$1" &&
		setfattr -n user.ext4dec.empty "$1" &&
		setfattr -n trusted.ext4dec.test -v 0x00ff01 "$1" &&
		setfattr -n security.selinux -v system_u:object_r:bin_t:s0 "$1" &&
		setfacl -m u:1234:r-x,g:567:r "$1"
}
# metadata_kept FILE CMD...: CMD FILE (a conversion) succeeds, keeping
# every attribute and the ACL of FILE, and its contents
metadata_kept() {
	f=$1
	shift
	want=$(xattrs_of "$f") acl=$(getfacl -cp "$f") s=$(sha "$f")
	for n in user.ext4dec.test user.ext4dec.empty trusted.ext4dec.test \
		security.selinux system.posix_acl_access; do
		echo "$want" | grep -q "^$n=" || { echo "setup: no $n on $f"; return 1; }
	done
	"$@" "$f" || { echo "$* failed"; return 1; }
	[ "$(xattrs_of "$f")" = "$want" ] ||
		{ printf 'before %s:\n%s\nafter:\n' "$*" "$want"; xattrs_of "$f"; return 1; }
	[ "$(getfacl -cp "$f")" = "$acl" ] || { echo "ACL changed"; getfacl -cp "$f"; return 1; }
	[ "$(sha "$f")" = "$s" ] || { echo "contents changed"; return 1; }
}
# xattrs_kept CMD...: CMD ext4dec-compress, then CMD ext4dec-decompress
xattrs_kept() {
	f=$top/meta
	rm -f "$f"
	with_metadata "$f" || return 1
	metadata_kept "$f" "$@" ext4dec-compress || return 1
	case $(flags "$f") in *c*) ;; *) echo "not +c"; return 1 ;; esac
	metadata_kept "$f" "$@" ext4dec-decompress || return 1
	case $(flags "$f") in *c*) echo "still +c"; return 1 ;; esac
}
if command -v setfattr >/dev/null && command -v setfacl >/dev/null; then
	check "compress_decompress_keep_xattrs_acl_selinux_label" xattrs_kept
	# the replacement has the file's attributes, not its directory's
	not_inherited() {
		d=$top/dacl
		mkdir -p "$d" && cp /bin/busybox "$d/f" && setfacl -d -m u:4321:rwx "$d" || return 1
		for cmd in ext4dec-compress ext4dec-decompress; do
			"$cmd" "$d/f" || return 1
			! getfattr --absolute-names -h -m - "$d/f" | grep posix_acl ||
				{ echo "$cmd: the directory's default ACL was inherited"; return 1; }
		done
	}
	check "replacement_does_not_inherit_a_default_acl" not_inherited
	# without the helper: getfattr and setfattr
	mkdir -p /tmp/nohelper
	for c in ext4dec-compress ext4dec-decompress; do
		cp /payload/bin/ext4dec-compress "/tmp/nohelper/$c"
	done
	check "keeps_them_with_getfattr_setfattr_when_the_helper_is_missing" \
		xattrs_kept env PATH=/tmp/nohelper:/bin
	# neither: refused, not lost
	mkdir -p /tmp/bare
	for t in /bin/*; do
		case ${t##*/} in
		getfattr | setfattr) ;;
		*) ln -sf "$t" /tmp/bare/ ;;
		esac
	done
	cp /tmp/nohelper/* /tmp/bare/
	rm -f "$top/meta"
	with_metadata "$top/meta"
	check "refused_when_xattrs_cannot_be_copied" refused "$top/meta" "extended attributes" \
		env PATH=/tmp/bare ext4dec-compress "$top/meta"
else
	for t in compress_decompress_keep_xattrs_acl_selinux_label \
		replacement_does_not_inherit_a_default_acl \
		keeps_them_with_getfattr_setfattr_when_the_helper_is_missing \
		refused_when_xattrs_cannot_be_copied; do
		skip "$t" "no setfattr or setfacl in the guest"
	done
fi

# ------------------------------------------------------------ empty files
: >"$top/empty"
check "empty_file_left_unchanged" refused "$top/empty" "empty" ext4dec-compress "$top/empty"
check "empty_file_dry_run_says_so" refused "$top/empty" "empty" ext4dec-compress -n "$top/empty"
# an empty file in format 2 (a header, no chunks), +c: back to an ordinary one
empty_decompress() {
	if ! szip -qc /dev/null >"$top/empty.c" || ! chattr +c "$top/empty.c" ||
		[ "$(stat -c %s "$top/empty.c")" != 0 ]; then
		echo "setup"
		return 1
	fi
	ext4dec-decompress "$top/empty.c" || return 1
	case $(flags "$top/empty.c") in *c*) echo "still +c"; return 1 ;; esac
	[ "$(stat -c %s "$top/empty.c")" = 0 ] && [ ! -s "$top/empty.c" ]
}
check "decompress_empty_compressed_file" empty_decompress

# ---------------------------------------------------- files needed to boot
# A system in $root (EXT4DEC_BOOT_ROOT), merged /usr; its initramfs image
# is a cpio archive, listed by a stand-in for lsinitramfs (the guest has
# none).  Every file is a copy of busybox (kmod: of kmod), so that it
# would compress.
root=$top/root
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib/x86_64-linux-gnu" \
	"$root/usr/lib64" "$root/usr/lib/modules/6.0-test/kernel" "$root/boot" "$root/etc" \
	"$root/opt" \
	/tmp/lsbin /tmp/early/usr/lib/x86_64-linux-gnu
for l in bin sbin lib lib64; do ln -sfn "usr/$l" "$root/$l"; done
cp /bin/busybox "$root/usr/bin/busybox"
ln -sf ../bin/busybox "$root/usr/sbin/init"
cp /bin/kmod "$root/usr/bin/kmod"
ln -sf ../bin/kmod "$root/usr/sbin/modprobe"
for f in ld-linux-x86-64.so.2:usr/lib64 libc.so.6:usr/lib/x86_64-linux-gnu \
	libkmod.so.2:usr/lib/x86_64-linux-gnu liblzma.so.5:usr/lib/x86_64-linux-gnu \
	libearly.so.1:usr/lib/x86_64-linux-gnu libfree.so.1:usr/lib/x86_64-linux-gnu \
	libfree2.so.1:usr/lib/x86_64-linux-gnu x.ko:usr/lib/modules/6.0-test/kernel \
	vmlinuz-6.0-test:boot big.conf:etc libfree3.so.1:opt; do
	cp /bin/busybox "$root/${f#*:}/${f%%:*}"
done
touch /tmp/early/usr/lib/x86_64-linux-gnu/libearly.so.1
# the recovery tool, szip, and one of its libraries (named as the guest's)
cp "$(command -v szip)" "$root/usr/bin/szip"
cp /bin/busybox "$root/usr/lib/x86_64-linux-gnu/libdeflate.so.0"
(cd /tmp/early && find usr | cpio -o -H newc 2>/dev/null) >"$root/boot/initrd.img-6.0-test"
cat >/tmp/lsbin/lsinitramfs <<'LSEOF'
#!/bin/sh
# lsinitramfs IMAGE, for the test: a plain cpio archive's names
exec cpio -t <"$1" 2>/dev/null
LSEOF
chmod +x /tmp/lsbin/lsinitramfs
# boot_refused FILE REASON: ext4dec-compress of $root/FILE exits 1,
# naming FILE and REASON, and changes nothing
boot_refused() {
	before=$(sha "$root/$1")
	env EXT4DEC_BOOT_ROOT="$root" PATH="/tmp/lsbin:$PATH" \
		ext4dec-compress "$root/$1" >/tmp/boot.out 2>&1
	rc=$?
	cat /tmp/boot.out
	[ "$rc" = 1 ] || { echo "exit status $rc"; return 1; }
	grep -qF "$root/$1: needed to boot ($2" /tmp/boot.out || { echo "no 'needed to boot ($2'"; return 1; }
	case $(flags "$root/$1") in *c*) echo "+c"; return 1 ;; esac
	[ "$(sha "$root/$1")" = "$before" ] || { echo "changed"; return 1; }
}
check "boot_refuses_under_boot" boot_refused boot/vmlinuz-6.0-test "under /boot"
check "boot_refuses_modules_through_lib_symlink" boot_refused lib/modules/6.0-test/kernel/x.ko "under /usr/lib/modules"
check "boot_refuses_etc" boot_refused etc/big.conf "under /etc"
check "boot_refuses_dynamic_loader" boot_refused lib64/ld-linux-x86-64.so.2 "the dynamic loader"
check "boot_refuses_init" boot_refused usr/bin/busybox "/sbin/init"
check "boot_refuses_libraries_of_init" boot_refused lib/x86_64-linux-gnu/libc.so.6 \
	"a shared library of /sbin/init"
check "boot_refuses_module_loader" boot_refused usr/bin/kmod "the module loader /sbin/modprobe"
check "boot_refuses_libraries_of_the_module_loader" boot_refused \
	usr/lib/x86_64-linux-gnu/liblzma.so.5 "a shared library of the module loader /sbin/modprobe"
check "boot_refuses_libkmod" boot_refused usr/lib/x86_64-linux-gnu/libkmod.so.2 "libkmod"
check "boot_refuses_initramfs_contents" boot_refused usr/lib/x86_64-linux-gnu/libearly.so.1 \
	"in /boot/initrd.img-6.0-test"
check "boot_refuses_the_recovery_tool" boot_refused usr/bin/szip "the recovery tool /usr/bin/szip"
check "boot_refuses_libraries_of_the_recovery_tool" boot_refused \
	usr/lib/x86_64-linux-gnu/libdeflate.so.0 "a shared library of the recovery tool /usr/bin/szip"
check "boot_compresses_other_files" sh -c "env EXT4DEC_BOOT_ROOT='$root' PATH='/tmp/lsbin:$PATH' \
	ext4dec-compress '$root/usr/lib/x86_64-linux-gnu/libfree.so.1' &&
	lsattr '$root/usr/lib/x86_64-linux-gnu/libfree.so.1' | cut -d' ' -f1 | grep -q c"
check "boot_dry_run_says_would_be_refused" exits 1 \
	"vmlinuz-6.0-test: would be refused: needed to boot (under /boot)" \
	env EXT4DEC_BOOT_ROOT="$root" PATH="/tmp/lsbin:$PATH" ext4dec-compress -n "$root/boot/vmlinuz-6.0-test"
boot_recursive() {
	d=$root/usr/lib/x86_64-linux-gnu
	env EXT4DEC_BOOT_ROOT="$root" PATH="/tmp/lsbin:$PATH" ext4dec-compress -r "$d" \
		>/tmp/boot.out 2>&1
	rc=$?
	cat /tmp/boot.out
	[ "$rc" = 1 ] || { echo "exit status $rc"; return 1; }
	case $(flags "$d/libfree2.so.1") in *c*) ;; *) echo "libfree2.so.1 not +c"; return 1 ;; esac
	for f in libc.so.6 libearly.so.1 libkmod.so.2; do
		case $(flags "$d/$f") in *c*) echo "$f: +c"; return 1 ;; esac
		grep -qF "$d/$f: needed to boot (" /tmp/boot.out || { echo "$f: no reason"; return 1; }
	done
}
check "boot_recursive_compresses_only_the_others" boot_recursive
check "boot_without_lsinitramfs_refuses_everything" refused \
	"$root/opt/libfree3.so.1" "lsinitramfs" \
	env EXT4DEC_BOOT_ROOT="$root" ext4dec-compress "$root/opt/libfree3.so.1"
boot_forced() {
	f=$root/boot/vmlinuz-6.0-test
	env EXT4DEC_BOOT_ROOT="$root" PATH="/tmp/lsbin:$PATH" ext4dec-compress --force-boot "$f" ||
		return 1
	case $(flags "$f") in *c*) ;; *) echo "not +c"; return 1 ;; esac
	[ "$(sha "$f")" = "$(sha /bin/busybox)" ] || return 1
	# the way back is never refused
	env EXT4DEC_BOOT_ROOT="$root" PATH="/tmp/lsbin:$PATH" ext4dec-decompress "$f" || return 1
	case $(flags "$f") in *c*) echo "still +c"; return 1 ;; esac
}
check "boot_force_boot_compresses_and_decompress_is_never_refused" boot_forced
check "boot_force_boot_is_compress_only" exits 2 "unknown option" \
	ext4dec-decompress --force-boot "$root/boot/vmlinuz-6.0-test"

echo -1 >"$params/trusted_gid"
tap_plan
[ "$tap_fail" = 0 ]
