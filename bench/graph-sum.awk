# SPDX-License-Identifier: GPL-2.0
#
# bench/graph-sum.awk - sum an ftrace function_graph trace (default
# columns, funcgraph-tail on) per function: one line
# "TRACE NAME FUNCTION CALLS US" each, NAME from -v n=NAME.  A function
# at the outermost depth (a graph function entered from elsewhere) is
# counted as "total:FUNCTION".  Used in the guest by bench/guest-init.sh
# and bench/firefox-guest.sh.
#
# A line looks like "  1) + 12.345 us   |    decode [ext4dec]();": the
# depth is the indent after "|"; every closing brace is "} /* NAME */".

BEGIN { FS = "|" }
NF >= 2 {
	if (!match($1, /[0-9]+\.[0-9]+/)) next
	us = substr($1, RSTART, RLENGTH) + 0
	r = $2; sub(/^ /, "", r)
	ind = match(r, /[^ ]/) - 1
	t = substr(r, ind + 1)
	if (t ~ /^} \/\* /) { split(t, a, " "); fn = a[3] }
	else if (t ~ /\(\);/) { fn = t; sub(/[ (].*/, "", fn) }
	else next
	if (ind <= 1) fn = "total:" fn
	calls[fn]++; sum[fn] += us
}
END { for (fn in sum) printf "TRACE %s %s %d %.0f\n", n, fn, calls[fn], sum[fn] }
