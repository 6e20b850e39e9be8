#!/usr/bin/env python3
"""bench/lib/footprint_report.py -- the table of bench/footprint.

Usage: footprint_report.py OUT_DIR LO HI [LABEL LO_COUNTS HI_COUNTS MAPS]...

Reads OUT_DIR/footprint.tsv (one line per run), writes OUT_DIR/footprint.md:
per kind and configuration, per execution (slope between LO and HI
executions): instructions, LWLock acquisitions, stores and read-modify-writes
into shared memory, and each against no extension.  For every LABEL
(kind/config) the per-instruction counts of the lackey filter are
symbolized with addr2line through the process's maps and summed per function
(per execution, HI minus LO): OUT_DIR/footprint_writers.txt.
"""

import collections
import os
import subprocess
import sys


def slope(rows, kind, config, col, lo=None, hi=None):
    """Per execution: between the shortest and the longest run measuring col"""
    vals = {}
    for r in rows:
        if r["kind"] == kind and r["config"] == config and r[col] not in ("-", ""):
            vals[int(r["n"])] = float(r[col])
    if len(vals) < 2:
        return None
    lo, hi = min(vals), max(vals)
    return (vals[hi] - vals[lo]) / (hi - lo)


def lengths(rows, tool):
    ns = sorted({int(r["n"]) for r in rows if r["tool"] == tool})
    return f"{ns[0]:,} and {ns[-1]:,}" if len(ns) >= 2 else "-"


def fmt(v, digits=1, sign=False):
    if v is None:
        return "-"
    s = f"{v:+,.{digits}f}" if sign else f"{v:,.{digits}f}"
    return s


def read_counts(path):
    per_pc = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] in ("total_S", "total_M", "lines"):
                continue
            per_pc[int(p[0], 16)] = (int(p[1]), int(p[2]))
    return per_pc


def read_maps(path):
    maps = []
    with open(path) as f:
        for line in f:
            p = line.split(None, 5)
            if len(p) < 6 or "x" not in p[1]:
                continue
            a, b = (int(x, 16) for x in p[0].split("-"))
            maps.append((a, b, int(p[2], 16), p[5].strip()))
    return maps


def symbolize(pcs, maps):
    """pc -> (innermost function, containing function, object)"""
    by_file = collections.defaultdict(list)
    out = {}
    for pc in pcs:
        for a, b, off, path in maps:
            if a <= pc < b:
                by_file[path].append((pc, pc - a + off))
                break
        else:
            out[pc] = ("?", "?", "?")
    for path, lst in by_file.items():
        obj = os.path.basename(path)
        try:
            res = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", path],
                                 input="".join(f"{o:x}\n" for _, o in lst),
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        except (OSError, subprocess.CalledProcessError):
            for pc, _ in lst:
                out[pc] = ("?", "?", obj)
            continue
        chains, cur = [], None
        for i, line in enumerate(res):
            if line.startswith("0x") and (cur is None or len(cur) % 2 == 0):
                cur = []
                chains.append(cur)
            else:
                cur.append(line)
        for (pc, _), ch in zip(lst, chains):
            funcs = ch[0::2] or ["?"]
            out[pc] = (funcs[0], funcs[-1], obj)
    return out


CLASSES = ("partition", "dsa", "entry", "pgss", "pgstat", "other")


def lock_table(out_dir, kinds, configs, names):
    """LWLock acquisitions per execution by who took them, against no extension"""
    try:
        with open(os.path.join(out_dir, "footprint_locks.tsv")) as f:
            header = f.readline().rstrip("\n").split("\t")
            rows = [dict(zip(header, l.rstrip("\n").split("\t"))) for l in f if l.strip()]
    except OSError:
        return []
    counts = collections.defaultdict(dict)     # (kind, config, class) -> {n: calls}
    lengths_seen = collections.defaultdict(set)
    for r in rows:
        counts[(r["kind"], r["config"], r["class"])][int(r["n"])] = int(r["calls"])
        lengths_seen[(r["kind"], r["config"])].add(int(r["n"]))

    def per_exec(kind, config, cls):
        ns = sorted(lengths_seen.get((kind, config), ()))
        if len(ns) < 2:
            return None
        v = counts.get((kind, config, cls), {})
        return (v.get(ns[-1], 0) - v.get(ns[0], 0)) / (ns[-1] - ns[0])

    out = ["LWLock acquisitions per execution by who took them (callgrind's callers), added to no "
           "extension's: partition = a partition lock of the statistics system's hash (dshash) or "
           "of our table (pgsq_table_*), dsa = "
           "dynamic shared memory allocation (a lock per size class and per area, shared by every "
           "backend allocating that size), entry = an entry's lock taken by our code, pgss = "
           "pg_stat_statements' global lock, pgstat = the statistics system's own, other = the "
           "rest of PostgreSQL.", "",
           "| statement | configuration | " + " | ".join(CLASSES) + " | total |",
           "|---|---|" + "---:|" * (len(CLASSES) + 1)]
    for kind in kinds:
        for c in configs:
            if c == "none":
                continue
            cells, total = [], 0.0
            for cls in CLASSES:
                v, b = per_exec(kind, c, cls), per_exec(kind, "none", cls)
                if v is None or b is None:
                    cells.append("-")
                    continue
                total += v - b
                cells.append(fmt(v - b, 2, True))
            out.append(f"| {kind} | {names.get(c, c)} | " + " | ".join(cells) + f" | {fmt(total, 2, True)} |")
    out.append("")
    return out


def main():
    out_dir, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    groups = sys.argv[4:]
    with open(os.path.join(out_dir, "footprint.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, l.rstrip("\n").split("\t"))) for l in f if l.strip()]
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    configs = list(dict.fromkeys(r["config"] for r in rows))
    names = {"none": "no extension", "pgss": "pg_stat_statements", "pgsq": "pg_stat_queries",
             "pgsqnp": "pg_stat_queries, plans off"}
    env = {}
    try:
        with open(os.path.join(out_dir, "footprint_env.txt")) as f:
            env = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
    except OSError:
        pass

    lines = ["# Contention footprint per execution (bench/footprint)", ""]
    lines.append(f"One backend in single-user mode, slope between two run lengths after a warm-up "
                 f"(start-up and shutdown cancel): {lengths(rows, 'callgrind')} executions under callgrind, "
                 f"{lengths(rows, 'lackey')} under lackey. Clocks slowed (FP_DILATE), so that no "
                 "once-a-second flush falls within the measured executions: figures between merges. LWLock: calls of LWLockAcquire, "
                 "LWLockConditionalAcquire and LWLockAcquireOrWait (callgrind). S: stores into the "
                 "backend's shared mappings, M: read-modify-writes of them (every atomic, and plain "
                 "add/or to memory), lackey. S+M: writes of shared cache lines, what many cores "
                 "contend on. (+x): against no extension.")
    lines.append("")
    if env:
        lines.append(f"{env.get('postgres', '')}; commit {env.get('commit', '')}; {env.get('cpu', '')}; "
                     f"{env.get('settings', '')}; {env.get('date', '')}.")
        lines.append("")
    lines.append("| statement | configuration | instructions | LWLock acquisitions | shared stores S | shared RMW M | S+M |")
    lines.append("|---|---|---:|---:|---:|---:|---:|")
    tsv = ["kind\tconfig\tir\tlwlock\tstores\tmodifies\twrites\tir_added\tlwlock_added\twrites_added"]
    for kind in kinds:
        base = {}
        for c in configs:
            ir = slope(rows, kind, c, "ir", lo, hi)
            lw = slope(rows, kind, c, "lwlock", lo, hi)
            st = slope(rows, kind, c, "stores", lo, hi)
            md = slope(rows, kind, c, "modifies", lo, hi)
            wr = st + md if st is not None and md is not None else None
            vals = (ir, lw, st, md, wr)
            if c == "none":
                base = dict(zip(("ir", "lw", "st", "md", "wr"), vals))

            def cell(v, key, digits):
                b = base.get(key)
                if v is None:
                    return "-"
                if c == "none" or b is None:
                    return fmt(v, digits)
                return f"{fmt(v, digits)} ({fmt(v - b, digits, True)})"

            lines.append(f"| {kind} | {names.get(c, c)} | {cell(ir, 'ir', 0)} | {cell(lw, 'lw', 2)} | "
                         f"{cell(st, 'st', 1)} | {cell(md, 'md', 1)} | {cell(wr, 'wr', 1)} |")
            add = lambda v, k: "-" if v is None or base.get(k) is None else f"{v - base[k]:.2f}"
            tsv.append("\t".join([kind, c] + ["-" if v is None else f"{v:.2f}" for v in vals]
                                 + [add(ir, "ir"), add(lw, "lw"), add(wr, "wr")]))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        lines.append("")
        lines.append("Runs that did not end cleanly: " + ", ".join(
            f"{r['kind']}/{r['config']}/{r['tool']}/{r['n']} ({r['status']})" for r in bad))
    lines.append("")
    lines.extend(lock_table(out_dir, kinds, configs, names))
    with open(os.path.join(out_dir, "footprint.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(out_dir, "footprint_slopes.tsv"), "w") as f:
        f.write("\n".join(tsv) + "\n")

    # Attribution
    if not groups:
        return
    wl = ["# Writes into shared memory per execution, by function (bench/footprint)", "",
          f"Lackey, per instruction address, (count at {hi:,} - count at {lo:,}) / {hi - lo:,}, "
          "summed per function containing the instruction (its inlined function in brackets "
          "when another). S: stores, M: read-modify-writes. Negative values and those below "
          "0.05 are noise or start-up differences, left out.", ""]
    for i in range(0, len(groups), 4):
        label, lo_path, hi_path, maps_path = groups[i:i + 4]
        c_lo, c_hi = read_counts(lo_path), read_counts(hi_path)
        maps = read_maps(maps_path)
        pcs = set(c_lo) | set(c_hi)
        sym = symbolize(pcs, maps)
        agg = collections.defaultdict(lambda: [0.0, 0.0])
        for pc in pcs:
            s_lo, m_lo = c_lo.get(pc, (0, 0))
            s_hi, m_hi = c_hi.get(pc, (0, 0))
            inner, outer, obj = sym[pc]
            key = f"{outer} [{inner}]" if inner != outer else outer
            key = f"{key}  ({obj})"
            agg[key][0] += (s_hi - s_lo) / (hi - lo)
            agg[key][1] += (m_hi - m_lo) / (hi - lo)
        tot_s = sum(v[0] for v in agg.values())
        tot_m = sum(v[1] for v in agg.values())
        wl.append(f"## {label}: S {tot_s:.1f}, M {tot_m:.1f} per execution")
        wl.append("")
        wl.append("|      S |      M | function [inlined]  (object)")
        for key, (s, m) in sorted(agg.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
            if s + m < 0.05:
                continue
            wl.append(f"| {s:6.2f} | {m:6.2f} | {key}")
        wl.append("")
    with open(os.path.join(out_dir, "footprint_writers.txt"), "w") as f:
        f.write("\n".join(wl) + "\n")


if __name__ == "__main__":
    main()
