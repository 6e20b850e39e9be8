#!/usr/bin/env python3
"""bench/lib/manycore_report.py -- results.md and the chart of bench/manycore.

Usage: manycore_report.py OUT_DIR

Reads OUT_DIR/runs.tsv and env.txt; writes OUT_DIR/results.md (medians over
the repeats) and OUT_DIR/tps.png when matplotlib can be imported, else
OUT_DIR/tps.txt (a text chart).
"""

import collections
import os
import statistics
import sys

NAMES = {"none": "no extension", "pgss": "pg_stat_statements",
         "pgsq": "pg_stat_queries", "dropin": "pg_stat_queries drop-in"}
WORKLOAD_TITLES = {
    "5k": "5k: 1,000 hot statements (80%), 4,000 cold (20%), max 5,500",
    "100k": "100k: the same hot set, cold drawn from 100,000 (continuous eviction), max 5,500",
    "spinlock": "spinlock: one statement (SELECT 1, prepared) from every client",
    "select": "select: pgbench -S (Tantor), every client on the same statement",
    "unique": "unique: a new statement almost every execution, max 5,000",
}


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "runs.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(header, l.rstrip("\n").split("\t"))) for l in f if l.strip()]
    env = {}
    if os.path.exists(os.path.join(out, "env.txt")):
        with open(os.path.join(out, "env.txt")) as f:
            env = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    configs = list(dict.fromkeys(r["config"] for r in rows))
    clients = sorted({int(r["clients"]) for r in rows})
    g = collections.defaultdict(list)
    for r in rows:
        g[(r["workload"], int(r["clients"]), r["config"])].append(r)

    def m(w, n, c, col):
        return med([num(r[col]) for r in g.get((w, n, c), [])])

    L = ["# bench/manycore: side by side at 1 to 4N clients", ""]
    L.append(f"{env.get('postgres', '')}; {env.get('cpu', '')}; {env.get('memory', '')}; "
             f"commit {env.get('commit', '')}; {env.get('settings', '')}; {env.get('date', '')}.")
    L.append("")
    L.append("TPS: median over the repeats, (x): against no extension at the same client count. "
             "Latency p50/p99 in ms from pgbench's per-transaction log (sampled). Waits: the most "
             "frequent wait events of the active client backends, sampled once a second, summed "
             "over the run (CPU: active without a wait event). A p50 of 0.000 ms: below what pgbench's "
             "per-transaction log resolves (it reads the clock once per pass over its connections, so "
             "a transaction that completes within the pass that sent it logs 0).")
    L.append("")
    for w in workloads:
        L.append(f"## {WORKLOAD_TITLES.get(w, w)}")
        L.append("")
        L.append("| clients | " + " | ".join(f"{NAMES.get(c, c)} TPS" for c in configs) + " | "
                 + " | ".join(f"{c} p50/p99" for c in configs) + " |")
        L.append("|---:|" + "---:|" * len(configs) + "---:|" * len(configs))
        for n in clients:
            base = m(w, n, "none", "tps")
            cells = []
            for c in configs:
                t = m(w, n, c, "tps")
                if t is None:
                    cells.append("-")
                elif c == "none" or not base:
                    cells.append(f"{t:,.0f}")
                else:
                    cells.append(f"{t:,.0f} ({t / base:.2f})")
            lat = []
            for c in configs:
                p50, p99 = m(w, n, c, "p50_ms"), m(w, n, c, "p99_ms")
                lat.append("-" if p50 is None else f"{p50:.3f}/{p99:.3f}")
            L.append(f"| {n} | " + " | ".join(cells) + " | " + " | ".join(lat) + " |")
        L.append("")
        L.append("Wait events (last repeat): " + "; ".join(
            f"{c}@{n}: {g[(w, n, c)][-1]['waits']}" for n in clients for c in configs
            if g.get((w, n, c)) and g[(w, n, c)][-1]["waits"] not in ("-", "")) or "none sampled")
        L.append("")
        if w in ("5k", "100k"):
            L.append("Evicted: for pg_stat_queries the entries evicted (pg_stat_queries_info.evicted_entries); "
                     "for pg_stat_statements and the drop-in, pg_stat_statements_info.dealloc, the number of "
                     "eviction passes (each evicts about 5% of the entries). Hot executions counted: the hot "
                     "statements' calls in the view against the executions pgbench reports for them.")
            L.append("")
            L.append("| clients | configuration | hot entries kept (of 1,000) | hot executions counted | entries | evicted |")
            L.append("|---:|---|---:|---:|---:|---:|")
            for n in clients:
                for c in configs:
                    if c == "none" or not g.get((w, n, c)):
                        continue
                    hot, calls, ex = m(w, n, c, "hot_entries"), m(w, n, c, "hot_calls"), m(w, n, c, "hot_executed")
                    share = f"{calls / ex:.1%}" if calls is not None and ex else "-"
                    ent, ev = m(w, n, c, "entries"), m(w, n, c, "evicted")
                    L.append(f"| {n} | {NAMES.get(c, c)} | {'-' if hot is None else f'{hot:,.0f}'} | {share} | "
                             f"{'-' if ent is None else f'{ent:,.0f}'} | {'-' if ev is None else f'{ev:,.0f}'} |")
            L.append("")
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        L.append("Runs that did not end cleanly: " + ", ".join(
            f"{r['workload']}/{r['clients']}/{r['config']} ({r['status']})" for r in bad))
        L.append("")

    chart = None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        k = len(workloads)
        fig, axes = plt.subplots(1, k, figsize=(4.2 * k, 3.8), squeeze=False)
        for ax, w in zip(axes[0], workloads):
            for c in configs:
                xs = [n for n in clients if m(w, n, c, "tps") is not None]
                ax.plot(xs, [m(w, n, c, "tps") for n in xs], marker="o", label=NAMES.get(c, c))
            ax.set_xscale("log", base=2)
            ax.set_xticks(clients)
            ax.set_xticklabels([str(n) for n in clients])
            ax.set_title(w)
            ax.set_xlabel("clients")
            ax.set_ylim(bottom=0)
        axes[0][0].set_ylabel("TPS")
        axes[0][-1].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "tps.png"), dpi=110)
        chart = "tps.png"
    except Exception:
        # a text chart: one block per workload, one bar per configuration and client count
        T = []
        marks = {"none": "#", "pgss": "s", "pgsq": "q", "dropin": "d"}
        for w in workloads:
            top = max((m(w, n, c, "tps") or 0) for n in clients for c in configs) or 1
            T.append(f"{w}: TPS against clients (one bar per configuration, full width = {top:,.0f})")
            for n in clients:
                for c in configs:
                    t = m(w, n, c, "tps")
                    if t is None:
                        continue
                    T.append(f"  {n:>4} {c:<7} {marks.get(c, '*') * max(1, round(50 * t / top)):<50} {t:,.0f}")
            T.append("")
        with open(os.path.join(out, "tps.txt"), "w") as f:
            f.write("\n".join(T))
        chart = "tps.txt"
    L.insert(4, f"Chart: [{chart}]({chart}) (TPS against clients, one line per configuration)."
             if chart.endswith("png") else f"Chart: {chart} (text: matplotlib was not importable).")
    L.insert(5, "")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
