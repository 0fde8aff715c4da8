#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py - turn a benchmark run into tables and a plot.

Usage: bench/report.py DIR
       bench/report.py --firefox DIR   (the Firefox section alone)

DIR is the results directory of bench/run-bench.sh: manifest.tsv,
images.tsv, meta.txt, host.txt, results-KVER-bwN.log and firefox-KVER.txt
per kernel (results-bwN.log and firefox.txt in a run of one kernel before
they were named by it).  Writes into DIR:
  raw.csv      every measurement (one line per run), the kernel first
  results.csv  per kernel, bandwidth and configuration: medians with min
               and max
  results.md   the libxul.so figures of every kernel side by side; the
               first kernel's tables, the issue-5 targets as measured,
               the setup
  summary.md   one compact table of libxul.so figures (and the kernels'
               side by side)
  bench.png    cold sequential throughput and random-read p50/p99
and prints results.md.  Fails if a file read in the guest does not have
the checksum of the original.
"""
import csv
import math
import os
import statistics
import subprocess
import sys

RAW_FIELDS = ["kernel", "bw", "config", "file", "rep", "mode", "cold", "ns", "bytes",
              "user_ns", "sys_ns", "majflt", "dev_bytes", "dev_ios", "dev_busy_ns", "cached_kb",
              "busy_ns", "chunks", "ubytes", "cbytes", "count", "p50_ns", "p99_ns",
              "max_ns", "touched_chunks"]


def die(msg):
    sys.stderr.write("ext4dec-bench: report: %s\n" % msg)
    sys.exit(1)


def kv(words):
    d = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            d[k] = v
    return d


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    return meta


def bwname(bw):
    """A bandwidth label of the results: MB/s, "0" for unthrottled."""
    return "unthrottled" if bw == "0" else "%s MB/s" % bw


def read_firefox(path):
    """The result lines of bench/firefox.sh in PATH: (starts, traces, boots);
    all empty without the file."""
    runs, traces, boots = [], {}, []
    if not os.path.exists(path):
        return runs, traces, boots
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "FIREFOX":
                runs.append(kv(w[1:]))
            elif w[0] == "FFTRACE" and len(w) == 5:
                traces.setdefault(w[1], {})[w[2]] = (int(w[3]), float(w[4]))
            elif w[0] == "FFBOOT":
                boots.append(kv(w[1:]))
    bad = [d for d in runs if d.get("rc") != "0"]
    if bad:
        die("Firefox failed to start (%s): %s" % (path, ", ".join(
            "%s %s at %s MB/s (exit %s)" % (d["config"], d["workload"], d["bw"], d["rc"]) for d in bad)))
    return runs, traces, boots


def firefox_report(path):
    """The Firefox cold start section from PATH, the firefox.txt of
    bench/firefox.sh.

    Returns (markdown lines, summary lines, targets, plot) where targets
    are (text, measured, met) rows of issue 14 and plot is (configurations,
    [(label, [(median, min, max) per configuration])]); all empty without
    the file.
    """
    runs, traces, boots = read_firefox(path)
    if not runs:
        return [], [], [], None
    order = []
    for d in runs:
        if d["config"] not in order:
            order.append(d["config"])
    bws = []
    for d in runs:
        if d["bw"] not in bws:
            bws.append(d["bw"])
    wls = []
    for d in runs:
        if d["workload"] not in wls:
            wls.append(d["workload"])

    def vals(bw, c, wl, key, scale=1.0):
        return [float(d[key]) * scale for d in runs
                if d["bw"] == bw and d["config"] == c and d["workload"] == wl and key in d]

    def med(v):
        return statistics.median(v) if v else None

    wlname = {"help": "`--help`", "shot": "`--screenshot`"}
    md, sm, targets = [], [], []
    p = md.append
    p("## Firefox: cold start from plain and compressed libxul.so")
    p("")
    p("| start | disk | configuration | s (min–max, spread) | vs ext4 | device MB | "
      "chunks inflated | MB inflated |")
    p("|---|---|---|---:|---:|---:|---:|---:|")
    spread_bad = []
    for wl in wls:
        for bw in bws:
            e = med(vals(bw, "ext4", wl, "s"))
            for c in order:
                t = vals(bw, c, wl, "s")
                if not t:
                    continue
                m = med(t)
                spread = (max(t) - min(t)) / m if m else 0
                if spread > 0.15:
                    spread_bad.append("%s %s %s" % (wl, bwname(bw), c))
                ch = med(vals(bw, c, wl, "chunks"))
                ub = med(vals(bw, c, wl, "ubytes"))
                p("| %s | %s | %s | %.2f (%.2f–%.2f, %d%%%s) | %s | %.1f | %s | %s |" % (
                    wlname.get(wl, wl), bwname(bw), c, m, min(t), max(t), round(100 * spread),
                    ", rerun" if spread > 0.15 else "",
                    ("%.2fx" % (e / m)) if e else "–", med(vals(bw, c, wl, "dev_bytes")) / 1e6,
                    "%d" % ch if c != "ext4" else "–",
                    "%.1f" % (ub / 1e6) if c != "ext4" else "–"))
    p("")
    p("Each start: `firefox-esr --headless --help` (Firefox loads libxul.so with its "
      "dependencies, runs its initializers and prints its usage), or `--screenshot` of a "
      "local page with a fresh profile, in the Firefox demo's Debian image, after dropping "
      "the caches; %s of each, the configurations alternating, after one start that is not "
      "counted.  vs ext4: plain ext4's time over this one's (higher is faster).  device MB: "
      "everything the start read from the image's disk (libraries, fonts, the profile), "
      "not only libxul.so.  A spread (max − min over the median) above 15%% marks a figure "
      "to rerun." % (len(vals(bws[0], order[0], wls[0], "s")) or "?"))
    p("")
    if spread_bad:
        p("Spread above 15%%: %s." % "; ".join(spread_bad))
        p("")
    for b in boots:
        p("Boot at %s: %s s, host load average %s at its end." % (bwname(b.get("bw", "?")),
                                                                 b.get("s", "?"), b.get("load", "?")))
    p("")

    # targets
    slow = [b for b in bws if b != "0"]
    slow = slow[0] if slow else None
    want = {"szip2-zstd-32k-x86": 1.3, "szip-16k": 1.15}
    for wl in wls:
        if slow:
            e = med(vals(slow, "ext4", wl, "s"))
            for c, need in want.items():
                m = med(vals(slow, c, wl, "s"))
                if e and m:
                    targets.append(("Firefox %s at %s: %s ≥ %.2fx plain ext4" % (
                        wlname.get(wl, wl), bwname(slow), c, need),
                        "%.2f s against %.2f s: %.2fx" % (m, e, e / m), e / m >= need))
        if "0" in bws:
            e = med(vals("0", "ext4", wl, "s"))
            for c in order:
                m = med(vals("0", c, wl, "s"))
                if c == "ext4" or not e or not m:
                    continue
                targets.append(("Firefox %s unthrottled: %s ≤ 1.1x plain ext4's time" % (
                    wlname.get(wl, wl), c), "%.2f s against %.2f s: %.2fx the time" % (m, e, m / e),
                    m / e <= 1.1))

    # where the time goes
    if traces:
        p("### Where a compressed start's time goes (ftrace, one traced `--help` at %s)"
          % bwname(bws[0]))
        p("")
        p("| configuration | start s | libxul.so faults that missed (ext4dec_fault) | "
          "I/O waits of single-chunk reads | inflation (decode) | page-cache page allocation | "
          "faults of the other files and cached pages (filemap_fault) | workers' batches |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|")
        for c, t in traces.items():
            def g(*keys):
                return (sum(t.get(k, (0, 0.0))[0] for k in keys),
                        sum(t.get(k, (0, 0.0))[1] for k in keys))

            def cell(x):
                return "%.2f (%d)" % (x[1] / 1e6, x[0])
            p("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c, t.get("total_s", (0, 0))[1], cell(g("total:ext4dec_fault")),
                cell(g("wait_for_completion_io")), cell(g("ext4dec_decode_chunk")),
                cell(g("filemap_alloc_folio", "filemap_alloc_folio_noprof")),
                cell(g("total:filemap_fault")), cell(g("total:ext4dec_ra_batch_finish"))))
        p("")
        p("Seconds summed over calls (calls in parentheses), from function_graph entered at "
          "filemap_fault, ext4dec_fault, ext4dec_readahead, ext4dec_read_folio and "
          "ext4dec_ra_batch_finish, recording only those and the functions named here (so tracing slows "
          "the start only a little).  ext4dec_fault holds the misses on libxul.so: its I/O "
          "waits, inflation and page allocation are inside it, except what workers do; "
          "inflation and page allocation are counted wherever they run (page allocation for "
          "the other files' readahead too).")
        p("")

    q = sm.append
    q("| start | disk | " + " | ".join(order) + " |")
    q("|---|---|" + "---:|" * len(order))
    for wl in wls:
        for bw in bws:
            e = med(vals(bw, "ext4", wl, "s"))
            cells = []
            for c in order:
                m = med(vals(bw, c, wl, "s"))
                cells.append(("%.2f s (%.2fx)" % (m, e / m)) if m and e else "–")
            q("| %s | %s | %s |" % (wlname.get(wl, wl), bwname(bw), " | ".join(cells)))
    plot = []
    for wl in wls:
        for bw in bws:
            cells = []
            for c in order:
                t = vals(bw, c, wl, "s")
                cells.append((med(t), min(t), max(t)) if t else (0, 0, 0))
            plot.append(("%s, %s" % (wl, bwname(bw)), cells))
    return md, sm, targets, (order, plot)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--firefox":
        md, _sm, targets, _plot = firefox_report(os.path.join(sys.argv[2], "firefox.txt"))
        print("\n".join(md))
        for t, m, ok in targets:
            print("| %s | %s | %s |" % (t, m, "yes" if ok else "no"))
        return
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    out = sys.argv[1]
    meta = read_meta(os.path.join(out, "meta.txt"))

    files, sizes, versions = [], {}, {}
    with open(os.path.join(out, "manifest.tsv")) as f:
        for line in f:
            name, _path, pkg, ver, size = line.rstrip("\n").split("\t")
            files.append(name)
            sizes[name] = int(size)
            versions[name] = (pkg, ver)
    main_file = files[0]

    configs, kinds, stored, skipped = [], {}, {}, []
    with open(os.path.join(out, "images.tsv")) as f:
        for line in f:
            w = line.rstrip("\n").split("\t")
            if w[0] == "IMAGE":
                configs.append(w[1])
                kinds[w[1]] = w[2]
            elif w[0] == "SIZE":
                stored[(w[1], w[2])] = int(w[4]) if w[4].isdigit() else None
            elif w[0] == "SKIP":
                skipped.append((w[1], w[2]))

    # --- measurements ---
    # the kernels' releases, the first one's tables in detail; a run of one
    # kernel before the files were named by it: its results-bwN.log
    kernels = meta.get("kernels", "").split()
    named = bool(kernels)
    if not named:
        kernels = [meta.get("kernel", "?").split(" ")[0]]
    k0 = kernels[0]

    def kfile(kn, name):
        """The file NAME ("results-bw20.log", "firefox.txt") of kernel KN."""
        if not named:
            return os.path.join(out, name)
        stem, dash, rest = name.partition("-")
        if not dash:
            stem, rest = name.split(".", 1)
            return os.path.join(out, "%s-%s.%s" % (stem, kn, rest))
        return os.path.join(out, "%s-%s-%s" % (stem, kn, rest))

    allrows, sums, ktraces, ktraced = [], {}, {}, {}
    bws = meta.get("bandwidths", "").split()
    for kn in kernels:
        traces, traced = ktraces.setdefault(kn, {}), ktraced.setdefault(kn, {})
        for bw in bws:
            path = kfile(kn, "results-bw%s.log" % bw)
            if not os.path.exists(path):
                die("%s is missing" % path)
            with open(path) as f:
                for line in f:
                    w = line.split()
                    if not w:
                        continue
                    if w[0] == "BENCH":
                        d = kv(w[1:])
                        b, c, fname, rep = d["tag"].split("|")
                        d.update(kernel=kn, bw=b, config=c, file=fname, rep=rep)
                        if b == "trace":
                            traced[c] = (bw, d)
                        else:
                            allrows.append(d)
                    elif w[0] == "TRACE" and len(w) == 5:
                        traces.setdefault(w[1], {})[w[2]] = (int(w[3]), float(w[4]) * 1e-6)
                    elif w[0] == "SUM":
                        d = kv(w[1:])
                        sums[(kn, d["tag"])] = d["fnv"]
    # the tables below are the first kernel's, but the side by side one
    rows = [d for d in allrows if d["kernel"] == k0]
    traces, traced = ktraces[k0], ktraced[k0]
    host_rows, host_sums = [], {}
    with open(os.path.join(out, "host.txt")) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "BENCH":
                d = kv(w[1:])
                _h, c, fname, rep = d["tag"].split("|")
                d.update(config=c, file=fname, rep=rep)
                host_rows.append(d)
            elif w and w[0] == "SUM":
                d = kv(w[1:])
                host_sums[d["tag"]] = d["fnv"]

    bad = []
    for (kn, tag), fnv in sums.items():
        c, fname = tag.split("|")
        if host_sums.get(fname) != fnv:
            bad.append("%s%s/%s: checksum %s, original %s" % (
                ("%s: " % kn) if len(kernels) > 1 else "", c, fname, fnv, host_sums.get(fname)))
    checked = len(sums)
    if bad:
        die("data read in the guest differs from the original:\n  " + "\n  ".join(bad))

    with open(os.path.join(out, "raw.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(RAW_FIELDS)
        for d in allrows:
            wr.writerow([d.get(k, "") for k in RAW_FIELDS])

    def sel(bw, c, fname, mode, cold, kn=None):
        """The runs of kernel KN (default: the first kernel)."""
        kn = kn or k0
        return [d for d in allrows if d["kernel"] == kn and d["bw"] == bw and d["config"] == c
                and d["file"] == fname and d["mode"] == mode and d["cold"] == str(cold)]

    def stat(values):
        values = [v for v in values if v is not None]
        if not values:
            return None
        return (statistics.median(values), min(values), max(values))

    def fig(bw, c, fname, mode, cold, key, scale=1.0, kn=None):
        return stat([float(d[key]) * scale for d in sel(bw, c, fname, mode, cold, kn) if key in d])

    slow = bws[0]
    last = bws[-1]

    def chunk_of(c):
        for part in c.split("-"):
            if part.endswith("k") and part[:-1].isdigit():
                return int(part[:-1]) * 1024
        return None

    # --- results.csv ---
    csv_fields = ["kernel", "bandwidth_mbs", "config", "file", "file_bytes", "stored_bytes", "ratio",
                  "cold_seq_s", "cold_seq_s_min", "cold_seq_s_max", "cold_seq_mbs",
                  "cold_seq_vs_ext4", "warm_seq_s", "warm_seq_s_min", "warm_seq_s_max",
                  "warm_seq_vs_ext4", "read_amplification", "page_cache_bytes",
                  "page_cache_vs_size", "chunks_inflated", "chunks_in_file",
                  "rand_p50_ms", "rand_p50_ms_min", "rand_p50_ms_max", "rand_p99_ms",
                  "rand_p99_ms_min", "rand_p99_ms_max", "rand_read_amplification",
                  "rand_chunks_inflated", "rand_chunks_touched", "warm_rand_p50_ms",
                  "mmap_cold_s", "mmap_cold_s_min", "mmap_cold_s_max", "mmap_warm_s",
                  "cold_seq_sys_s", "runs"]
    ktable = {}
    for kn in kernels:
        table = ktable.setdefault(kn, {})
        for bw in bws:
            for c in configs:
                for fname in files:
                    r = {"bandwidth_mbs": bw, "config": c, "file": fname, "file_bytes": sizes[fname]}
                    st = stored.get((c, fname))
                    r["stored_bytes"] = st if st is not None else ""
                    r["ratio"] = "%.3f" % (sizes[fname] / st) if st else ""
                    cs = fig(bw, c, fname, "seq", 1, "ns", 1e-9, kn=kn)
                    ce = fig(bw, "ext4", fname, "seq", 1, "ns", 1e-9, kn=kn)
                    if cs:
                        r["cold_seq_s"], r["cold_seq_s_min"], r["cold_seq_s_max"] = ("%.3f" % x for x in cs)
                        r["cold_seq_mbs"] = "%.1f" % (sizes[fname] / cs[0] / 1e6)
                        if ce:
                            r["cold_seq_vs_ext4"] = "%.2f" % (ce[0] / cs[0])
                    ws = fig(bw, c, fname, "seq", 0, "ns", 1e-9, kn=kn)
                    we = fig(bw, "ext4", fname, "seq", 0, "ns", 1e-9, kn=kn)
                    if ws:
                        r["warm_seq_s"], r["warm_seq_s_min"], r["warm_seq_s_max"] = ("%.3f" % x for x in ws)
                        if we:
                            r["warm_seq_vs_ext4"] = "%.2f" % (we[0] / ws[0])
                    db = fig(bw, c, fname, "seq", 1, "dev_bytes", kn=kn)
                    if db:
                        r["read_amplification"] = "%.3f" % (db[0] / sizes[fname])
                    pc = fig(bw, c, fname, "seq", 1, "cached_kb", 1024, kn=kn)
                    if pc:
                        r["page_cache_bytes"] = "%d" % pc[0]
                        r["page_cache_vs_size"] = "%.3f" % (pc[0] / sizes[fname])
                    ch = fig(bw, c, fname, "seq", 1, "chunks", kn=kn)
                    if kinds.get(c) == "szip" and ch:
                        r["chunks_inflated"] = "%d" % ch[0]
                        r["chunks_in_file"] = "%d" % math.ceil(sizes[fname] / chunk_of(c))
                    p50 = fig(bw, c, fname, "rand", 1, "p50_ns", 1e-6, kn=kn)
                    p99 = fig(bw, c, fname, "rand", 1, "p99_ns", 1e-6, kn=kn)
                    if p50:
                        r["rand_p50_ms"], r["rand_p50_ms_min"], r["rand_p50_ms_max"] = ("%.3f" % x for x in p50)
                        r["rand_p99_ms"], r["rand_p99_ms_min"], r["rand_p99_ms_max"] = ("%.3f" % x for x in p99)
                        rd = fig(bw, c, fname, "rand", 1, "dev_bytes", kn=kn)
                        rb = fig(bw, c, fname, "rand", 1, "bytes", kn=kn)
                        r["rand_read_amplification"] = "%.2f" % (rd[0] / rb[0])
                        if kinds.get(c) == "szip":
                            rc = fig(bw, c, fname, "rand", 1, "chunks", kn=kn)
                            rt = fig(bw, c, fname, "rand", 1, "touched_chunks", kn=kn)
                            r["rand_chunks_inflated"] = "%d" % rc[0]
                            r["rand_chunks_touched"] = "%d" % rt[0]
                        wp = fig(bw, c, fname, "rand", 0, "p50_ns", 1e-6, kn=kn)
                        if wp:
                            r["warm_rand_p50_ms"] = "%.4f" % wp[0]
                    mc = fig(bw, c, fname, "mmap", 1, "ns", 1e-9, kn=kn)
                    if mc:
                        r["mmap_cold_s"], r["mmap_cold_s_min"], r["mmap_cold_s_max"] = ("%.3f" % x for x in mc)
                        mw = fig(bw, c, fname, "mmap", 0, "ns", 1e-9, kn=kn)
                        r["mmap_warm_s"] = "%.3f" % mw[0]
                    sy = fig(bw, c, fname, "seq", 1, "sys_ns", 1e-9, kn=kn)
                    if sy:
                        r["cold_seq_sys_s"] = "%.3f" % sy[0]
                    r["runs"] = len(sel(bw, c, fname, "seq", 1, kn))
                    table[(bw, c, fname)] = r
    table = ktable[k0]
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=csv_fields)
        wr.writeheader()
        for kn in kernels:
            for bw in bws:
                for c in configs:
                    for fname in files:
                        wr.writerow(dict(ktable[kn][(bw, c, fname)], kernel=kn))

    # --- markdown ---
    def mmm(t, fmt="%.2f"):
        if not t:
            return "–"
        if t[1] == t[2]:
            return fmt % t[0]
        return (fmt + " (" + fmt + "–" + fmt + ")") % t

    def mb(n):
        return "%.1f" % (n / 1e6)

    def kname(kn):
        """A kernel's upstream version, and the name it was asked by: 7.3.4 (newest)."""
        w = meta.get("kernel_" + kn, "").split()
        if len(w) != 2:
            return kn
        ver = w[1].split("-")[0]
        return ver if w[0] in (kn, ver) else "%s (%s)" % (ver, w[0])

    # --- libxul.so by kernel ---
    def by_kernel():
        """The main file's figures of every kernel side by side, with each
        kernel's medians over the first's: markdown lines."""
        ff = {kn: read_firefox(kfile(kn, "firefox.txt"))[0] for kn in kernels}
        ffbws, ffwls, ffconf = [], [], []
        for kn in kernels:
            for d in ff[kn]:
                for v, lst in ((d["bw"], ffbws), (d["workload"], ffwls), (d["config"], ffconf)):
                    if v not in lst:
                        lst.append(v)

        def ffstat(kn, bw, c, wl, key, scale=1.0):
            return stat([float(d[key]) * scale for d in ff[kn]
                         if d["bw"] == bw and d["config"] == c and d["workload"] == wl and key in d])
        # (workload, unit, format, [(configuration, [(figure, device bytes) per kernel])])
        groups = []

        def add(what, unit, fmt, cs, get, key, scale):
            """GET(kernel, configuration, key, scale): a stat of KEY in its runs."""
            lines = []
            for c in cs:
                st = [(get(kn, c, key, scale), get(kn, c, "dev_bytes", 1e-6)) for kn in kernels]
                if any(t for t, _d in st):
                    lines.append((c, st))
            if lines:
                groups.append((what, unit, fmt, lines))

        def run(bw, mode):
            return lambda kn, c, key, scale: fig(bw, c, main_file, mode, 1, key, scale, kn=kn)
        for bw in bws:
            add("cold sequential read, %s" % bwname(bw), "s", "%.3f", configs, run(bw, "seq"),
                "ns", 1e-9)
        add("random 4 KiB preads p50, %s" % bwname(slow), "ms", "%.3f", configs,
            run(slow, "rand"), "p50_ns", 1e-6)
        add("random 4 KiB preads p99, %s" % bwname(slow), "ms", "%.2f", configs,
            run(slow, "rand"), "p99_ns", 1e-6)
        add("mmap, scattered, cold, %s" % bwname(slow), "s", "%.3f", configs, run(slow, "mmap"),
            "ns", 1e-9)
        add("Firefox's page order replayed, cold, %s" % bwname(slow), "s", "%.3f", configs,
            run(slow, "replay"), "ns", 1e-9)
        for bw in bws:
            add("sendfile(), cold, %s" % bwname(bw), "s", "%.3f", configs, run(bw, "sendfile"),
                "ns", 1e-9)
        for wl in ffwls:
            for bw in ffbws:
                add("Firefox `%s` start, %s" % ("--help" if wl == "help" else "--screenshot"
                                                if wl == "shot" else wl, bwname(bw)),
                    "s", "%.2f", ffconf,
                    lambda kn, c, key, scale, bw=bw, wl=wl: ffstat(kn, bw, c, wl, key, scale),
                    "s", 1.0)
        if not groups:
            return []
        x = []
        q = x.append
        short = [kname(kn).split(" ")[0] for kn in kernels]
        q("## %s by kernel" % main_file)
        q("")
        q("| workload | configuration | " + " | ".join(kname(kn) for kn in kernels) + " | " +
          " | ".join("%s / %s" % (v, short[0]) for v in short[1:]) +
          " | device MB, %s |" % " / ".join(short))
        q("|---|---|" + "---:|" * (2 * len(kernels)))
        for what, unit, fmt, lines in groups:
            for c, st in lines:
                t0 = st[0][0]
                q("| %s, %s | %s | %s | %s | %s |" % (
                    what, unit, c, " | ".join(mmm(t, fmt) for t, _d in st),
                    " | ".join(("%.2f" % (t[0] / t0[0])) if t and t0 and t0[0] else "–"
                               for t, _d in st[1:]),
                    " / ".join(("%.1f" % d[0]) if d else "–" for _t, d in st)))
        q("")
        q("%s; the ratio%s: the median on a kernel over the median on %s, for times and "
          "latencies alike (above 1: slower on it).  device MB: what the workload read from "
          "the disk, median, on each kernel (Firefox: everything the start read, not only "
          "%s).  Each kernel's figures come from its own boots (a boot per bandwidth, and "
          "Firefox's), so a ratio across kernels carries the noise between boots that ratios "
          "within a boot do not: compare it with ext4's ratio in the same group, and with "
          "the spread."
          % ("One run each" if meta.get("repeats") == "1" else
             "Medians of %s runs, (min–max) when they differ" % meta.get("repeats", "?"),
             "s" if len(kernels) > 2 else "", kname(k0), main_file))
        q("")
        return x

    md = []
    p = md.append
    p("# ext4dec benchmark")
    p("")
    p("Measured %s with `%s`." % (meta.get("date", "?"), meta.get("command", "?")))
    p("")
    if len(kernels) > 1:
        p("Kernels: %s, each in boots of its own, the kernels' boots of a bandwidth one after "
          "the other.  The tables are those of %s, except the last one, \"%s by kernel\", "
          "which sets the kernels' figures side by side; every kernel's medians are in "
          "results.csv, every run in raw.csv."
          % (", ".join("%s: %s" % (kname(kn), kn) for kn in kernels), kname(k0), main_file))
        p("")
    p("Setup: guest kernel %s under QEMU %s (%s), %s; host %s.  Every image is "
      "its own virtio disk opened with cache=none (no host page cache) and a "
      "read throttle (QEMU throttling.bps-read; MB = 10^6 bytes).  File: %s "
      "(%s %s), %s MB.  Each figure is the median of %s runs, (min–max) when "
      "they differ.  Cold = after `echo 3 > drop_caches`.  Sources: %s."
      % (meta.get("kernel", "?"), meta.get("qemu", "?").replace("QEMU emulator version ", ""),
         meta.get("accel", "?"), meta.get("guest", "?"), meta.get("host_cpu", "?"),
         main_file, versions[main_file][0], versions[main_file][1], mb(sizes[main_file]),
         meta.get("repeats", "?"), meta.get("src", "?")))
    p("")

    boots = [k for k in meta if k.startswith("boot_")]
    if boots:
        p("Boots: " + "; ".join("%s %s" % (k[5:], meta[k]) for k in boots) + ".  Other "
          "work on the host slows CPU-bound figures; within a boot the configurations "
          "alternate run by run, so ratios within a boot are fairer than across boots.")
        p("")

    # TCG caveat with the measured factor
    gdec = [d for d in rows if d["mode"] == "exec"]
    factor = None
    if gdec and host_rows:
        c0 = gdec[0]["config"]
        g = statistics.median([int(d["user_ns"]) for d in gdec if d["config"] == c0])
        h = [int(d["user_ns"]) for d in host_rows if d["config"] == c0]
        if h and statistics.median(h) > 0:
            factor = g / statistics.median(h)
    accel = meta.get("accel", "TCG")
    if accel == "TCG":
        p("**Caveat: the guest CPU is emulated (QEMU TCG, no KVM).**  The same "
          "userspace decode (`szip -t` on %s) takes %s the CPU time it takes on "
          "this host, so every CPU-bound figure (inflation, page-cache copies) "
          "is that much slower than on real hardware, while the throttled disk "
          "is not: on real hardware a decompressing file system looks better "
          "relative to plain ext4 at the same disk bandwidth than it does here.  "
          "Ratios between compressed configurations are meaningful; absolute "
          "times are not." % (main_file, ("%.1fx" % factor) if factor else "several times"))
    else:
        p("The guest ran under %s (hardware virtualization): CPU costs are close "
          "to the host's (userspace decode: %s the host's CPU time)."
          % (accel, ("%.2fx" % factor) if factor else "?"))
    p("")
    p("**Caveat: QEMU's throttle limits the average rate.**  It is a leaky bucket "
      "that lets a request through at once while less than a tenth of a second of "
      "bandwidth is queued, so a reader that leaves the disk idle while it computes "
      "(less than the throttled rate on average) is never slowed down; a real device "
      "of that bandwidth would add each request's transfer time to such a reader's "
      "serial path.  Compare \"disk time\" and \"device busy\" below.")
    p("")

    p("## %s at %s" % (main_file, bwname(slow)))
    p("")
    p("| configuration | on disk MB | ratio | cold seq s | MB/s | vs ext4 | read amp. | "
      "page cache | warm seq s | warm vs ext4 | rand p50 ms | rand p99 ms | rand dev/req | "
      "mmap cold s | mmap warm s |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in configs:
        r = table[(slow, c, main_file)]
        st = stored.get((c, main_file))
        p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c, mb(st) if st else "?", r.get("ratio") or "?",
            mmm(fig(slow, c, main_file, "seq", 1, "ns", 1e-9)),
            r.get("cold_seq_mbs", "–"), r.get("cold_seq_vs_ext4", "–") + "x",
            r.get("read_amplification", "–"),
            ("%s MB (%sx)" % (mb(int(r["page_cache_bytes"])), r["page_cache_vs_size"]))
            if r.get("page_cache_bytes") else "–",
            mmm(fig(slow, c, main_file, "seq", 0, "ns", 1e-9), "%.3f"),
            r.get("warm_seq_vs_ext4", "–") + "x",
            mmm(fig(slow, c, main_file, "rand", 1, "p50_ns", 1e-6), "%.3f"),
            mmm(fig(slow, c, main_file, "rand", 1, "p99_ns", 1e-6), "%.2f"),
            r.get("rand_read_amplification", "–"),
            mmm(fig(slow, c, main_file, "mmap", 1, "ns", 1e-9)),
            mmm(fig(slow, c, main_file, "mmap", 0, "ns", 1e-9), "%.3f")))
    p("")
    p("on disk: bytes stored for the file (szip: the .sz file; squashfs, erofs: an "
      "image of the file alone; btrfs: compsize's disk usage).  read amp.: device "
      "bytes read (/sys/block/*/stat) per file byte in the cold sequential read.  "
      "page cache: growth of Cached in /proc/meminfo after it.  rand: %s preads of "
      "4 KiB at random offsets (fixed seed), cold; dev/req: device bytes per byte "
      "requested.  mmap: every page touched once in a scattered order (runs of 1–16 "
      "pages, shuffled)." % meta.get("rand", "?"))
    p("")

    if len(bws) > 1:
        p("## %s, cold sequential read per disk bandwidth" % main_file)
        p("")
        p("| configuration | " + " | ".join(bwname(b) for b in bws) + " |")
        p("|---|" + "---:|" * len(bws))
        for c in configs:
            cells = []
            for bw in bws:
                r = table[(bw, c, main_file)]
                cells.append("%s s, %s MB/s, %sx" % (mmm(fig(bw, c, main_file, "seq", 1, "ns", 1e-9)),
                                                     r.get("cold_seq_mbs", "–"),
                                                     r.get("cold_seq_vs_ext4", "–")))
            p("| %s | %s |" % (c, " | ".join(cells)))
        p("")
        p("Each cell: time, throughput, speed relative to plain ext4 at the same bandwidth.")
        p("")

    sf = [c for c in configs if fig(slow, c, main_file, "sendfile", 1, "ns")]
    if sf:
        p("## %s: cold sendfile() against cold read()" % main_file)
        p("")
        p("| configuration | " + " | ".join("read, sendfile at %s" % bwname(b) for b in bws) + " |")
        p("|---|" + "---:|" * len(bws))
        for c in sf:
            cells = []
            for bw in bws:
                r = fig(bw, c, main_file, "seq", 1, "ns", 1e-9)
                s_ = fig(bw, c, main_file, "sendfile", 1, "ns", 1e-9)
                cells.append("%s s, %s s (%s)" % (mmm(r), mmm(s_), ("%.2fx" % (s_[0] / r[0])) if r and s_ else "–"))
            p("| %s | %s |" % (c, " | ".join(cells)))
        p("")
        p("sendfile: the whole file sent to /dev/null, 1 MiB a call: the splice path, "
          "the way cat, cp and servers read files.  In parentheses: its time over read()'s.")
        p("")

    p("## Where the time goes: cold sequential read of %s" % main_file)
    p("")
    p("| configuration | bandwidth | wall s | device MB | disk time s | device busy | "
      "requests, mean KiB | reader CPU s | all vCPUs busy s | vCPUs busy on average |")
    p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for bw in bws:
        for c in configs:
            w = fig(bw, c, main_file, "seq", 1, "ns", 1e-9)
            if not w:
                continue
            db = fig(bw, c, main_file, "seq", 1, "dev_bytes")
            u = fig(bw, c, main_file, "seq", 1, "user_ns", 1e-9)
            sy = fig(bw, c, main_file, "seq", 1, "sys_ns", 1e-9)
            bz = fig(bw, c, main_file, "seq", 1, "busy_ns", 1e-9)
            dbz = fig(bw, c, main_file, "seq", 1, "dev_busy_ns", 1e-9)
            dio = fig(bw, c, main_file, "seq", 1, "dev_ios")
            p("| %s | %s | %.2f | %s | %s | %s | %s | %.2f | %s | %s |" % (
                c, bwname(bw), w[0], mb(db[0]) if db else "–",
                ("%.2f" % (db[0] / (int(bw) * 1e6))) if db and bw != "0" else "–",
                ("%.0f%%" % (100 * dbz[0] / w[0])) if dbz else "–",
                ("%d, %.0f" % (dio[0], db[0] / dio[0] / 1024)) if dio and db and dio[0] else "–",
                (u[0] if u else 0) + (sy[0] if sy else 0),
                ("%.2f" % bz[0]) if bz else "–",
                ("%.2f" % (bz[0] / w[0])) if bz else "–"))
    p("")
    p("disk time: device bytes at the throttled bandwidth, the least the read can take.  "
      "device busy: share of the wall time the disk had a request in flight "
      "(io_ticks in /sys/block/*/stat).  "
      "reader CPU: user + system time of the reading process (ext4dec and SquashFS "
      "inflate in it; EROFS and btrfs mostly in kernel threads).  all vCPUs busy: "
      "non-idle time of both guest CPUs during the read (/proc/stat, sampled at each tick: "
      "coarse for short bursts), whoever did the work; above the reader's CPU when "
      "kernel threads inflate.")
    p("")

    p("## All files: size and cold sequential read at %s" % bwname(slow))
    p("")
    p("| configuration | " + " | ".join("%s (%s MB)" % (f, mb(sizes[f])) for f in files) + " |")
    p("|---|" + "---:|" * len(files))
    for c in configs:
        cells = []
        for fname in files:
            st = stored.get((c, fname))
            r = table[(slow, c, fname)]
            cells.append("%s MB (%s), %s s" % (mb(st) if st else "?",
                                              ("%.2fx" % (sizes[fname] / st)) if st else "?",
                                              r.get("cold_seq_s", "–")))
        p("| %s | %s |" % (c, " | ".join(cells)))
    p("")
    p("Data: " + "; ".join("%s from %s %s" % (f, versions[f][0], versions[f][1]) for f in files) + ".")
    for c, why in skipped:
        p("Not measured: %s (%s)." % (c, why))
    p("")

    def kdecode(c):
        """Mean in-kernel decode() time per chunk in µs from the traced read."""
        t = traces.get(c, {})
        if "ext4dec_decode_chunk" in t and t["ext4dec_decode_chunk"][0]:
            return t["ext4dec_decode_chunk"][1] / t["ext4dec_decode_chunk"][0] * 1e6
        return None

    # --- ext4dec details and targets ---
    szc = [c for c in configs if kinds.get(c) == "szip"]
    if szc:
        p("## ext4dec: inflation")
        p("")
        p("| configuration | chunks in file | inflated, cold seq | inflated, mmap | rand: touched / inflated | "
          "kernel CPU per chunk µs | kernel decode per chunk µs (ftrace) | userspace decode per chunk µs | "
          "kernel / user |")
        p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in szc:
            n = math.ceil(sizes[main_file] / chunk_of(c))
            chs = fig(last, c, main_file, "seq", 1, "chunks")
            chm = fig(slow, c, main_file, "mmap", 1, "chunks")
            rt = fig(slow, c, main_file, "rand", 1, "touched_chunks")
            rc = fig(slow, c, main_file, "rand", 1, "chunks")
            # CPU of the cold read (both vCPUs: the workers inflate) beyond
            # plain ext4's, per chunk
            bz_c = fig(last, c, main_file, "seq", 1, "busy_ns")
            bz_e = fig(last, "ext4", main_file, "seq", 1, "busy_ns")
            kern = (bz_c[0] - (bz_e[0] if bz_e else 0)) / chs[0] / 1e3 if bz_c and chs and chs[0] else None
            ud = [int(d["user_ns"]) for d in rows if d["mode"] == "exec" and d["config"] == c]
            user = statistics.median(ud) / n / 1e3 if ud else None
            ft = kdecode(c)
            k = ft if ft is not None else kern
            p("| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                c, n, "%d" % chs[0] if chs else "–", "%d" % chm[0] if chm else "–",
                ("%d / %d" % (rt[0], rc[0])) if rt and rc else "–",
                "%.1f" % kern if kern is not None else "–",
                "%.1f" % ft if ft is not None else "–",
                "%.1f" % user if user is not None else "–",
                "%.2f" % (k / user) if k is not None and user else "–"))
        p("")
        p("kernel CPU per chunk: busy time of both vCPUs during the cold sequential "
          "read at %s (the reading task and the inflate workers) minus plain ext4's, "
          "divided by the chunks inflated: inflation, copies and page-cache work.  "
          "kernel decode (ftrace): mean duration of the module's ext4dec_decode_chunk() (inflate and "
          "filter of one chunk) in the traced read.  userspace: user CPU time of "
          "`szip -t` on the same file (from tmpfs, in the guest, same decoder sources, "
          "the system zlib instead of the kernel's) divided by the chunks, measured in "
          "the same boot as the kernel's figure, run by run after it.  kernel / user: "
          "the ftrace figure (else the CPU one) over the userspace one." % bwname(last))
        p("")

        rp = [c for c in configs if fig(slow, c, main_file, "replay", 1, "ns")]
        if rp:
            p("## %s: Firefox's page order, replayed (benchio replay, cold, %s)" % (main_file, bwname(slow)))
            p("")
            p("| configuration | s | vs ext4 | device MB | reads | chunks touched | chunks inflated | from kept bytes | MB inflated |")
            p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            te = fig(slow, "ext4", main_file, "replay", 1, "ns", 1e-9)
            for c in rp:
                t = fig(slow, c, main_file, "replay", 1, "ns", 1e-9)
                db = fig(slow, c, main_file, "replay", 1, "dev_bytes")
                tc = fig(slow, c, main_file, "replay", 1, "touched_chunks")
                ch = fig(slow, c, main_file, "replay", 1, "chunks")
                ub = fig(slow, c, main_file, "replay", 1, "ubytes")
                ios = fig(slow, c, main_file, "replay", 1, "dev_ios")
                hi = fig(slow, c, main_file, "replay", 1, "hits")
                p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    c, mmm(t), ("%.2fx" % (te[0] / t[0])) if te else "–",
                    mb(db[0]) if db else "–",
                    "%d" % ios[0] if ios else "–",
                    "%d" % tc[0] if tc and kinds.get(c) == "szip" else "–",
                    "%d" % ch[0] if ch and kinds.get(c) == "szip" else "–",
                    "%d" % hi[0] if hi and kinds.get(c) == "szip" else "–",
                    mb(ub[0]) if ub and kinds.get(c) == "szip" else "–"))
            p("")
            p("The pages of %s a cold `firefox-esr --headless --help` touches, in the order it "
              "first touches them (bench/firefox-libxul.trace: 5,300 pages), touched in a "
              "private mapping.  reads: the device's read requests.  chunks touched: the "
              "distinct chunks those pages lie in; a fault inflates the chunk it misses and "
              "no other.  from kept bytes: chunks inflated from compressed bytes an earlier "
              "miss read and kept (no I/O)." % main_file)
            p("")

        if traced:
            p("## ext4dec: where a cold read's time goes (ftrace)")
            p("")
            p("One cold sequential read of %s per configuration, traced with function_graph "
              "(set_graph_function ext4dec_readahead ext4dec_read_folio ext4dec_ra_batch_finish, depth "
              "3) after the timed runs; tracing adds some overhead.  Seconds, summed over "
              "calls (calls in parentheses); the workers' time overlaps the reader's." % main_file)
            p("")
            p("| configuration | bandwidth | read wall s | readahead (reader) | ext4dec_ra_req_start: "
              "allocate, submit | batches in workers | decode: inflate | ext4dec_fill_folio: copy "
              "to folios | rest of the batches |")
            p("|---|---|---:|---:|---:|---:|---:|---:|---:|")
            for c in szc:
                if c not in traced or c not in traces:
                    continue
                bw, d = traced[c]
                t = traces[c]
                wall = int(d["ns"]) * 1e-9

                def cell(x):
                    return "%.2f (%d)" % (x[1], x[0])
                ra = [t[k] for k in ("total:ext4dec_readahead", "total:ext4dec_read_folio") if k in t]
                ra = (sum(x[0] for x in ra), sum(x[1] for x in ra))
                wk = t.get("total:ext4dec_ra_batch_finish", (0, 0.0))
                parts = [t.get(k, (0, 0.0)) for k in ("ext4dec_ra_req_start", "ext4dec_decode_chunk", "ext4dec_fill_folio")]
                p("| %s | %s | %.2f | %s | %s | %s | %s | %s | %.2f |" % (
                    c, bwname(bw), wall, cell(ra), cell(parts[0]), cell(wk), cell(parts[1]),
                    cell(parts[2]), wk[1] - parts[1][1] - parts[2][1]))
                if any(k.startswith("overrun:") for k in t):
                    p("")
                    p("(trace buffer overrun for %s: figures are incomplete)" % c)
            p("")
            p("ext4dec_ra_req_start: buffer allocation and bio submission (the reader does not wait "
              "for the bytes: workers inflate when they are in).  decode and ext4dec_fill_folio "
              "are counted wherever they run (workers, or the reader for a single chunk "
              "and read_folio); a chunk whose pages are all in its batch is inflated "
              "straight into them, with no copy.  The reader's own time outside readahead (copy_to_user, "
              "page-cache lookups in filemap_read) is the read's wall time minus its "
              "waits.")
            p("")

        p("## Issue 5 targets (%s, configurations at 16 KiB chunks unless stated)" % main_file)
        p("")

        def best(cands, key):
            vals = [(key(c), c) for c in cands]
            vals = [v for v in vals if v[0] is not None]
            return max(vals) if vals else (None, None)

        def speed(bw, c):
            r = table[(bw, c, main_file)].get("cold_seq_vs_ext4")
            return float(r) if r else None

        sp, bc = best(szc, lambda c: speed(slow, c))
        peers = [c for c in configs if kinds.get(c) in ("squashfs", "erofs", "btrfs")]
        p("| target | measured | met |")
        p("|---|---|---|")
        if sp is not None:
            p("| cold sequential read at %s ≥ 1.5x plain ext4 | best %s: %.2fx | %s |"
              % (bwname(slow), bc, sp, "yes" if sp >= 1.5 else "no"))
            ts = fig(slow, bc, main_file, "seq", 1, "ns", 1e-9)
            faster = [q for q in peers if fig(slow, q, main_file, "seq", 1, "ns", 1e-9)
                      and fig(slow, q, main_file, "seq", 1, "ns", 1e-9)[0] < ts[0]]
            p("| faster than every SquashFS, EROFS and btrfs configuration | %s | %s |"
              % (("slower than " + ", ".join(faster)) if faster else "faster than all peers",
                 "no" if faster else "yes"))
        wv = [(float(table[(slow, c, main_file)]["warm_seq_vs_ext4"]), c) for c in szc
              if table[(slow, c, main_file)].get("warm_seq_vs_ext4")]
        if wv:
            worst = min(wv)
            p("| warm read ≥ 0.95x plain ext4 | %s | %s |"
              % (", ".join("%s %.2fx" % (c, v) for v, c in wv), "yes" if worst[0] >= 0.95 else "no"))
        once = []
        for c in szc:
            n = math.ceil(sizes[main_file] / chunk_of(c))
            ch = [int(d["chunks"]) for d in sel(slow, c, main_file, "seq", 1)]
            if ch:
                once.append((c, n, max(ch)))
        if once:
            ok = all(m == n for _c, n, m in once)
            p("| each chunk inflated once per cold sequential pass | %s | %s |"
              % (", ".join("%s %d/%d" % (c, m, n) for c, n, m in once), "yes" if ok else "no"))
        rr = []
        for c in szc:
            rt = fig(slow, c, main_file, "rand", 1, "touched_chunks")
            rc = fig(slow, c, main_file, "rand", 1, "chunks")
            if rt and rc:
                rr.append((c, rt[0], rc[0]))
        if rr:
            p("| random reads inflate only the touched chunks | %s | %s |"
              % (", ".join("%s %d inflated/%d touched" % (c, i, t) for c, t, i in rr),
                 "yes" if all(i <= t for _c, t, i in rr) else "no"))
        pcs = [(float(table[(slow, c, main_file)]["page_cache_vs_size"]), c) for c in szc
               if table[(slow, c, main_file)].get("page_cache_vs_size")]
        if pcs:
            p("| page cache after a cold read ≤ 1.02x the size | worst %s %.3fx | %s |"
              % (max(pcs)[1], max(pcs)[0], "yes" if max(pcs)[0] <= 1.02 else "no"))
        kr = []
        for c in szc:
            n = math.ceil(sizes[main_file] / chunk_of(c))
            chs = fig(last, c, main_file, "seq", 1, "chunks")
            bz_c = fig(last, c, main_file, "seq", 1, "busy_ns")
            bz_e = fig(last, "ext4", main_file, "seq", 1, "busy_ns")
            ud = [int(d["user_ns"]) for d in rows if d["mode"] == "exec" and d["config"] == c]
            if chs and bz_c and ud and chs[0]:
                kern = (bz_c[0] - (bz_e[0] if bz_e else 0)) / chs[0]
                kr.append((c, kern / (statistics.median(ud) / n)))
        fr = []
        for c in szc:
            n = math.ceil(sizes[main_file] / chunk_of(c))
            ud = [int(d["user_ns"]) for d in rows if d["mode"] == "exec" and d["config"] == c]
            if ud and kdecode(c) is not None:
                fr.append((c, kdecode(c) * 1e3 / (statistics.median(ud) / n)))
        if kr or fr:
            cells = []
            if fr:
                cells.append("inflate alone, decode() traced: " +
                             ", ".join("%s %.2fx" % (c, v) for c, v in fr))
            if kr:
                cells.append("all CPU per chunk beyond plain ext4's (both vCPUs): " +
                             ", ".join("%s %.2fx" % (c, v) for c, v in kr))
            met = []
            if fr:
                met.append("inflate: %s" % ("yes" if all(v <= 1.10 for _c, v in fr) else "no"))
            if kr:
                met.append("whole path: %s" % ("yes" if all(v <= 1.10 for _c, v in kr) else "no"))
            p("| in-kernel inflate cost per chunk within 10%% of userspace | %s | %s |"
              % ("; ".join(cells), ", ".join(met)))
        p("")

        # format 2 ("szip2-" configurations) against format 1 and the peers
        v2 = [c for c in szc if c.startswith("szip2-")]
        v1 = [c for c in szc if not c.startswith("szip2-")]
        sp2, bc2 = best(v2, lambda c: speed(slow, c))
        sp1, bc1 = best(v1, lambda c: speed(slow, c))
        r16 = [(c, table[(slow, c, main_file)]) for c in v1 if chunk_of(c) == 16384]
        r16 = [(c, float(r["rand_p50_ms"]), float(r["rand_read_amplification"]))
               for c, r in r16 if r.get("rand_p50_ms")]
        have7 = sp2 is not None or sp1 is not None or bool(r16)
        if have7:
            p("## Issue 7 targets (%s at %s)" % (main_file, bwname(slow)))
            p("")
            p("| target | measured | met |")
            p("|---|---|---|")
        if sp2 is not None:
            t2 = fig(slow, bc2, main_file, "seq", 1, "ns", 1e-9)[0]
            pt = [(fig(slow, q, main_file, "seq", 1, "ns", 1e-9), q) for q in peers]
            pt = sorted((x[0], q) for x, q in pt if x)
            p("| best format 2 cold sequential read ≥ 2.5x plain ext4 | %s: %.2fx | %s |"
              % (bc2, sp2, "yes" if sp2 >= 2.5 else "no"))
            if pt:
                p("| ... and faster than every SquashFS, EROFS and btrfs configuration "
                  "| %s %.3f s; fastest peer %s %.3f s | %s |"
                  % (bc2, t2, pt[0][1], pt[0][0], "yes" if t2 < pt[0][0] else "no"))
        if sp1 is not None:
            p("| format 1 (zlib) cold sequential read ≥ 1.65x plain ext4 | %s: %.2fx | %s |"
              % (bc1, sp1, "yes" if sp1 >= 1.65 else "no"))
        if r16:
            p("| random 4 KiB reads at 16 KiB chunks: p50 ≤ 1.0 ms | %s; plain ext4 %s ms | %s |"
              % (", ".join("%s %.2f ms" % (c, v) for c, v, _a in r16),
                 table[(slow, "ext4", main_file)].get("rand_p50_ms", "–")
                 if (slow, "ext4", main_file) in table else "–",
                 "yes" if all(v <= 1.0 for _c, v, _a in r16) else "no"))
            p("| ... device bytes ≤ 2.2x the bytes requested | %s | %s |"
              % (", ".join("%s %.2fx" % (c, a) for c, _v, a in r16),
                 "yes" if all(a <= 2.2 for _c, _v, a in r16) else "no"))
        if have7:
            p("")

    # --- Firefox, and issue 14's targets ---
    ff_md, ff_sm, ff_targets, ff_plot = firefox_report(kfile(k0, "firefox.txt"))
    md.extend(ff_md)
    t14 = list(ff_targets)
    if szc:
        def cold(bw, c):
            v = fig(bw, c, main_file, "seq", 1, "ns", 1e-9)
            return v[0] if v else None
        sp_all, bc_all = None, None
        for c in szc:
            e, t = cold(slow, "ext4"), cold(slow, c)
            if e and t and (sp_all is None or e / t > sp_all):
                sp_all, bc_all = e / t, c
        if sp_all is not None:
            t14.append(("best cold sequential read at %s ≥ 2.5x plain ext4" % bwname(slow),
                        "%s %.2fx" % (bc_all, sp_all), sp_all >= 2.5))
        e16 = fig(slow, "ext4", main_file, "rand", 1, "p50_ns", 1e-6)
        er16 = fig(slow, "erofs-lz4hc-16k", main_file, "rand", 1, "p50_ns", 1e-6)
        for c in szc:
            if chunk_of(c) != 16384:
                continue
            v = fig(slow, c, main_file, "rand", 1, "p50_ns", 1e-6)
            if v and e16:
                t14.append(("random 4 KiB p50 at 16K chunks ≤ 1.3x plain ext4's%s" %
                            (" and below EROFS 16K's" if er16 else ""),
                            "%s %.3f ms; ext4 %.3f ms (%.2fx)%s" % (
                                c, v[0], e16[0], v[0] / e16[0],
                                ("; erofs-lz4hc-16k %.3f ms" % er16[0]) if er16 else ""),
                            v[0] <= 1.3 * e16[0] and (not er16 or v[0] < er16[0])))
        rp = []
        for c in szc:
            tc = fig(slow, c, main_file, "replay", 1, "touched_chunks")
            ch = fig(slow, c, main_file, "replay", 1, "chunks")
            if tc and ch:
                rp.append((c, int(tc[0]), int(ch[0])))
        if rp:
            t14.append(("Firefox's page order replayed: chunks inflated = chunks touched",
                        ", ".join("%s %d/%d" % x for x in rp), all(i == t for _c, t, i in rp)))
        wv = [(float(table[(slow, c, main_file)]["warm_seq_vs_ext4"]), c) for c in szc
              if table[(slow, c, main_file)].get("warm_seq_vs_ext4")]
        if wv:
            t14.append(("warm reads ≥ 1.0x plain ext4, every configuration",
                        ", ".join("%s %.2fx" % (c, v) for v, c in wv), min(wv)[0] >= 1.0))
        if "0" in bws:
            for c, need in (("szip2-lz4-64k-x86", 1.5), ("szip2-zstd-32k-x86", 1.0)):
                e, t = cold("0", "ext4"), cold("0", c)
                if e and t:
                    t14.append(("unthrottled cold sequential read: %s ≥ %.1fx plain ext4" % (c, need),
                                "%.3f s against %.3f s: %.2fx" % (t, e, e / t), e / t >= need))
    if t14:
        p("## Issue 14 targets")
        p("")
        p("| target | measured | met |")
        p("|---|---|---|")
        for t, m, ok in t14:
            p("| %s | %s | %s |" % (t, m, "yes" if ok else "no"))
        p("")

    # --- summary.md: the compact table (README snapshot) ---
    sm = []
    q = sm.append
    q("| configuration | %s on disk | cold read, %s | %s | warm read | random 4 KiB p50 / p99 | "
      "mmap, cold | page cache |" % (main_file, bwname(slow),
                                     ("cold read, " + bwname(last)) if last != slow else "–"))
    q("|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in configs:
        r = table[(slow, c, main_file)]
        r2 = table[(last, c, main_file)]
        st = stored.get((c, main_file))
        p50 = fig(slow, c, main_file, "rand", 1, "p50_ns", 1e-6)
        p99 = fig(slow, c, main_file, "rand", 1, "p99_ns", 1e-6)
        q("| %s | %s MB (%sx) | %s s (%sx) | %s | %s s (%sx) | %s | %s | %s |" % (
            c, mb(st) if st else "?", ("%.2f" % (sizes[main_file] / st)) if st else "?",
            r.get("cold_seq_s", "–"), r.get("cold_seq_vs_ext4", "–"),
            ("%s s (%sx)" % (r2.get("cold_seq_s", "–"), r2.get("cold_seq_vs_ext4", "–")))
            if last != slow else "–",
            r.get("warm_seq_s", "–"), r.get("warm_seq_vs_ext4", "–"),
            ("%.2f / %.1f ms" % (p50[0], p99[0])) if p50 else "–",
            ("%s s" % r["mmap_cold_s"]) if r.get("mmap_cold_s") else "–",
            ("%sx" % r["page_cache_vs_size"]) if r.get("page_cache_vs_size") else "–"))
    if ff_sm:
        sm += [""] + ff_sm
    bk = by_kernel() if len(kernels) > 1 else []
    if bk:
        sm += [""] + bk[2:-2]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(sm) + "\n")

    md.extend(bk)
    p("Checksums: %d file reads in the guest matched the originals." % checked)
    p("")
    p("![cold sequential throughput and random-read latency](bench.png)")
    p("")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))

    # --- plot ---
    with open(os.path.join(out, "plot-seq.dat"), "w") as f:
        for c in configs:
            cells = []
            for bw in bws:
                t = fig(bw, c, main_file, "seq", 1, "ns", 1e-9)
                if t:
                    mbs = sizes[main_file] / 1e6
                    cells += ["%.2f" % (mbs / t[0]), "%.2f" % (mbs / t[2]), "%.2f" % (mbs / t[1])]
                else:
                    cells += ["0", "0", "0"]
            f.write("%s %s\n" % (c, " ".join(cells)))
    have_rand = any(fig(slow, c, main_file, "rand", 1, "p50_ns") for c in configs)
    with open(os.path.join(out, "plot-rand.dat"), "w") as f:
        for c in configs:
            p50 = fig(slow, c, main_file, "rand", 1, "p50_ns", 1e-6) or (0, 0, 0)
            p99 = fig(slow, c, main_file, "rand", 1, "p99_ns", 1e-6) or (0, 0, 0)
            f.write("%s %.4f %.4f %.4f %.4f %.4f %.4f\n" % ((c,) + p50 + p99))
    if ff_plot:
        with open(os.path.join(out, "plot-firefox.dat"), "w") as f:
            for label, cells in ff_plot[1]:
                f.write("\"%s\" %s\n" % (label, " ".join("%.3f %.3f %.3f" % c for c in cells)))
    panels = 1 + (1 if have_rand else 0) + (1 if ff_plot else 0)
    gp = []
    g = gp.append
    g("set terminal pngcairo size 1200,%d font 'sans,10'" % (480 + 420 * (panels - 1)))
    g("set output '%s'" % os.path.join(out, "bench.png"))
    g("set style data histogram")
    g("set style histogram errorbars gap 2 lw 1")
    g("set style fill solid 0.8 border -1")
    g("set xtics rotate by -35 left noenhanced")
    g("set grid ytics")
    g("set key top right noenhanced")
    g("set bmargin 6")
    if panels > 1:
        g("set multiplot layout %d,1" % panels)
    runs = meta.get("repeats", "?")
    g("set title '%s: cold sequential read (median, min-max of %s run%s; QEMU %s, 2 vCPUs)' noenhanced"
      % (main_file, runs, "" if runs == "1" else "s", meta.get("accel", "?")))
    g("set ylabel 'MB/s'")
    g("set yrange [0:*]")
    plots = []
    for i, bw in enumerate(bws):
        col = 2 + 3 * i
        plots.append("'%s' using %d:%d:%d:xtic(1) title '%s'"
                     % (os.path.join(out, "plot-seq.dat"), col, col + 1, col + 2, bwname(bw)))
    g("plot " + ", ".join(plots))
    if have_rand:
        g("set title '%s: random 4 KiB reads, cold, at %s (median, min-max)' noenhanced"
          % (main_file, bwname(slow)))
        g("set ylabel 'latency, ms'")
        g("set yrange [*:*]")
        g("set logscale y")
        rd = os.path.join(out, "plot-rand.dat")
        g("plot '%s' using 2:3:4:xtic(1) title 'p50', '' using 5:6:7 title 'p99'" % rd)
        g("unset logscale y")
    if ff_plot:
        g("set key top left noenhanced")
        g("set title 'Firefox cold start (median, min-max): --help and --screenshot, per disk bandwidth' noenhanced")
        g("set ylabel 'seconds'")
        g("set yrange [0:*]")
        fd = os.path.join(out, "plot-firefox.dat")
        g("plot " + ", ".join("'%s' using %d:%d:%d%s title '%s'" % (
            fd, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i, ":xtic(1)" if i == 0 else "", c)
            for i, c in enumerate(ff_plot[0])))
    if panels > 1:
        g("unset multiplot")
    with open(os.path.join(out, "plot.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run(["gnuplot", os.path.join(out, "plot.gp")], capture_output=True, text=True)
    if r.returncode != 0:
        die("gnuplot failed: %s" % r.stderr.strip())

    print("\n".join(md))


if __name__ == "__main__":
    main()
