#!/usr/bin/env python3
"""bench/report.py OUT_DIR -- turn the raw files bench/run (and
bench/callgrind.sh, bench/scaling.sh) left in OUT_DIR into results.md,
README-snippet.md and tps_ratio.png (the chart only when matplotlib can be
imported).

bench/report.py --scaling OUT_DIR -- only scaling.md and scaling.png, from
scaling.tsv and scaling_env.txt (bench/scaling.sh calls this).

bench/report.py --scaling-table RAW_DIR OUT_DIR -- scaling.tsv and
scaling_merges.tsv in OUT_DIR from the phase totals bench/scaling.sh keeps
in RAW_DIR (scaling_raw.tsv, scaling_batches.tsv, scaling_native.tsv).

Inputs in OUT_DIR: runs.tsv, mixed.tsv, env.txt, and optionally
callgrind.tsv, scaling.tsv (with scaling_env.txt), server_errors.log and
discussion.md.

discussion.md is written by hand and never by a script: the reading of the
figures lives there, so that rewriting results.md loses nothing.  When it
exists, results.md links to it, and says so when its "<!-- run: COMMIT -->"
line names another commit than this run's.
"""

import csv
import os
import re
import statistics
import sys

CONFIG_ORDER = ["none", "pgss", "pgsq"]
CONFIG_NAMES = {
    "none": "none (no extension)",
    "pgss": "pgss (pg_stat_statements)",
    "pgsq": "pgsq (pg_stat_queries)",
}
WORKLOAD_ORDER = ["hot", "churn128", "unique", "mixed", "many", "reset", "monitor"]
# minimum TPS ratio pgsq/none asked for each workload
TARGETS = {"hot": 0.99, "churn128": 0.98, "unique": 0.95, "mixed": 0.98,
           "reset": 0.97, "monitor": 0.97}
# an extension cannot make the server faster: a ratio above 1 is drift
NOISE_NOTE = " (ratio above 1: noise, not conclusive)"
WORKLOAD_TEXT = {
    "hot": "pgbench -S -M prepared (select-only)",
    "churn128": "128 distinct `SELECT 1 FROM tN` in 16 scripts, -M prepared, max=100",
    "unique": "random 3-way joins over 1000 tables (nearly every statement new), -M simple, max=5000",
    "mixed": "1000 hot statements at 80% + 100,000 cold ones at 20%, -M simple, max=5000",
    "many": "the 1000 hot statements of mixed alone (no new statements, no eviction), -M simple, max=5000",
    "reset": "hot + one client calling the reset function 10 times a second",
    "monitor": "hot + one client reading the whole view (with texts) once a second",
}


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def read_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return env


def parse_waits(s):
    out = {"pgss": 0, "lwother": 0, "spin": 0, "other": 0, "cpu": 0, "top": []}
    for part in s.split():
        if "=" not in part:
            continue
        k, v = part.split("=", 1)
        if k == "top":
            if v != "-":
                out["top"] = v.split(",")
        elif k in out:
            out[k] = int(v)
    return out


def fmt_tps(x):
    return f"{x:,.0f}"


DISCUSSION = "discussion.md"


def discussion_line(out_dir, commit):
    """The line of results.md that points to the hand-written discussion, or None"""
    path = os.path.join(out_dir, DISCUSSION)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        m = re.search(r"<!--\s*run:\s*(\S+)\s*-->", f.read())
    line = (f"- Discussion of the figures, written by hand and kept apart from this generated file: "
            f"[{DISCUSSION}]({DISCUSSION})")
    this_run = commit.split()[0] if commit else ""
    if m and this_run and m.group(1) != this_run:
        line += f" (it discusses the run of commit {m.group(1)}, not this one)"
    return line + "."


SCALING_CONFIGS = ["pgss", "pgsq"]


def scaling_lines(out_dir, heading="##"):
    """The table of scaling.tsv (bench/scaling.sh) as markdown lines, or []"""
    rows = read_tsv(os.path.join(out_dir, "scaling.tsv"))
    if not rows:
        return []
    env = read_env(os.path.join(out_dir, "scaling_env.txt"))
    by = {(r["config"], int(r["size"])): r for r in rows}
    sizes = sorted({int(r["size"]) for r in rows})
    first = rows[0]
    lines = [f"{heading} Cost per statement as the number of known statements grows (callgrind, cache simulation)", ""]
    lines.append(f"`bench/scaling.sh`: one backend under `valgrind --tool=callgrind --cache-sim=yes` serving one pgbench "
                 f"client (`-M simple`) that runs K distinct statements `SELECT abalance FROM pgbench_accounts aK "
                 f"WHERE aid = N` (one query id per alias), each K twice in turn as warm-up, "
                 f"{env.get('settle', '0')} x K more at random to settle the caches (not measured), then phases of "
                 f"{first['t_lo']} and {first['t_hi']} statements picked at random among the K (fixed seed)"
                 + (f", {first['repeats']} times" if int(first.get('repeats') or 1) > 1 else "") + ". "
                 f"Per statement = (phase {first['t_hi']} - phase {first['t_lo']}) / "
                 f"{int(first['t_hi']) - int(first['t_lo'])}"
                 + (", the median over the repeats (each repeat's LL misses in the last column: memory a backend "
                    "touches for the first time misses once, in the repeat that touches it)"
                    if int(first.get('repeats') or 1) > 1 else "")
                 + f"; D1 misses = D1mr + D1mw, LL misses = ILmr + DLmr + DLmw; "
                 + ("\"added\" = the median over the repeats of the figure minus `none`'s in the same repeat (the "
                    "same statements and rows in each configuration, so what they share cancels)"
                    if int(first.get('repeats') or 1) > 1 else "\"added\" = minus `none` at the same size")
                 + "; \"corrected\" also takes the inclusive Ir of "
                 "`ExecIndexScan` and `pq_getbyte` out of both sides (they vary between runs of the same code by "
                 "up to a few hundred per statement: page state, and whether the client's next message is "
                 "already there under valgrind's scheduling; no extension runs code inside them). Entries: the "
                 "extension's entries for the K statements after the run.")
    lines.append("")
    lines.append(f"- Date: {env.get('date', '?')}, commit {env.get('commit', '?')}; {env.get('postgres', '?')}; "
                 f"{env.get('valgrind', '?')}; {env.get('cpu', '?')}")
    lines.append(f"- Simulated caches: {env.get('caches', '?')}")
    lines.append(f"- Settings: {env.get('settings', '?')}; run time {env.get('duration', '?')}"
                 + (f"; {env['runs']}" if 'runs' in env else ""))
    lines.append("")
    each = any(r.get("ll_per_stmt_each") for r in rows)
    lines.append("| config | statements | entries | Ir / stmt | D1 misses / stmt | LL misses / stmt "
                 "| Ir added | D1 added | LL added | Ir added, corrected |" + (" LL misses / stmt, each repeat |" if each else ""))
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if each else ""))
    for k in sizes:
        for c in CONFIG_ORDER:
            r = by.get((c, k))
            if not r:
                continue
            lines.append(f"| {c} | {k:,} | {r['entries']} | {float(r['ir_per_stmt']):,.0f} "
                         f"| {float(r['d1_per_stmt']):,.1f} | {float(r['ll_per_stmt']):,.3f} "
                         f"| {fmt_signed(r['ir_added'], 0)} | {fmt_signed(r['d1_added'], 1)} "
                         f"| {fmt_signed(r['ll_added'], 3)} | {fmt_signed(r['ir_added_corrected'], 0)} |"
                         + (f" {' / '.join(f'{float(x):.3f}' for x in r['ll_per_stmt_each'].split(','))} |"
                            if each else ""))
    lines.append("")
    if all((c, k) in by for c in ("none",) + tuple(SCALING_CONFIGS) for k in sizes):
        lines.append("Target: pg_stat_queries at or below pg_stat_statements' instructions and LL misses per statement "
                     "at every size (instructions: Ir added, corrected; LL misses: LL added, each repeat's against "
                     "none's same repeat, the median of those).")
        once = all(by[("pgsq", k)].get("ll_added_without_first_touch") not in (None, "", "-") for k in sizes)
        if once:
            lines.append("")
            lines.append("First touches: the LL misses inside `pending_first_use` and `resize_pending` (inclusive), "
                         "where pg_stat_queries writes a position of its pending array for the first time or "
                         "resizes it. They happen once per position in a backend's life, when a batch (a wall-clock second "
                         "of statements) is larger than any before, which under valgrind depends on the machine's "
                         "load; the last two columns leave them out.")
        lines.append("")
        lines.append("| statements | Ir added pgss | Ir added pgsq | Ir met | LL added pgss | LL added pgsq | LL met |"
                     + (" first touches pgsq, each repeat | LL added pgsq without them | met without them |"
                        if once else ""))
        lines.append("|---:|---:|---:|---|---:|---:|---|" + ("---:|---:|---|" if once else ""))
        for k in sizes:
            s_, q_ = by[("pgss", k)], by[("pgsq", k)]
            ir_ok = float(q_["ir_added_corrected"]) <= float(s_["ir_added_corrected"])
            ll_ok = float(q_["ll_added"]) <= float(s_["ll_added"])
            line = (f"| {k:,} | {fmt_signed(s_['ir_added_corrected'], 0)} | {fmt_signed(q_['ir_added_corrected'], 0)} "
                    f"| {'yes' if ir_ok else '**NO**'} | {fmt_signed(s_['ll_added'], 3)} "
                    f"| {fmt_signed(q_['ll_added'], 3)} | {'yes' if ll_ok else '**NO**'} |")
            if once:
                steady_ok = float(q_["ll_added_without_first_touch"]) <= float(s_["ll_added"])
                line += (f" {' / '.join(f'{float(x):.3f}' for x in q_['ll_first_touch_each'].split(','))} "
                         f"| {fmt_signed(q_['ll_added_without_first_touch'], 3)} "
                         f"| {'yes' if steady_ok else '**NO**'} |")
            lines.append(line)
        lines.append("")
    merges = read_tsv(os.path.join(out_dir, "scaling_merges.tsv"))
    if merges:
        pgss_added = {k: by[("pgss", k)]["ir_added_corrected"] for k in sizes if ("pgss", k) in by}
        lines.append("pg_stat_queries merges a statement's pending counters about once a wall-clock second, so "
                     "under valgrind nearly every execution of a statement among many is merged on its own. "
                     "Merges per statement in the measured phase (calls of `pgsq_merge_locked`), the same "
                     "workload's merges per statement with the server at full speed (a perf uprobe, two runs "
                     "of different length subtracted), the instructions of one batch (start the statement's "
                     "pending counts, `add_pending`, and merge them, `flush_one`; per call, inclusive), and Ir added with merges at the full-speed rate "
                     "(Ir added - (valgrind - full speed) x per batch): a model from measured parts, next to "
                     "the measurement above, which stays the figure judged.")
        lines.append("")
        lines.append("| statements | merges / stmt, valgrind | merges / stmt, full speed | Ir per batch "
                     "| Ir added pgsq (corrected) | at full-speed merge rate | Ir added pgss (corrected) |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for m in merges:
            k = int(m["size"])
            lines.append(f"| {k:,} | {float(m['merges_per_stmt_valgrind']):.3f} "
                         f"| {float(m['merges_per_stmt_native']):.3f} | {float(m['ir_per_batch']):,.0f} "
                         f"| {fmt_signed(m['ir_added'], 0)} | {fmt_signed(m['ir_added_native_rate'], 0)} "
                         f"| {fmt_signed(pgss_added[k], 0) if k in pgss_added else '-'} |")
        lines.append("")
    if os.path.exists(os.path.join(out_dir, "scaling.png")):
        lines.append("![cost per statement against the number of statements](scaling.png)")
        lines.append("")
    return lines


def fmt_signed(v, digits):
    try:
        return f"{float(v):+,.{digits}f}"
    except ValueError:
        return "-"


def make_scaling_chart(out_dir):
    """scaling.png: Ir added and LL misses per statement against the number of statements (log x)"""
    rows = read_tsv(os.path.join(out_dir, "scaling.tsv"))
    if not rows:
        return False
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    colors = {"none": "#9e9e9e", "pgss": "#e07b39", "pgsq": "#3a78b5"}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for c in CONFIG_ORDER:
        pts = sorted((int(r["size"]), r) for r in rows if r["config"] == c)
        if not pts:
            continue
        xs = [k for k, _ in pts]
        if c != "none" and all(r["ir_added_corrected"] not in ("-", "") for _, r in pts):
            ax1.plot(xs, [float(r["ir_added_corrected"]) for _, r in pts], marker="o", color=colors[c],
                     label=CONFIG_NAMES[c])
        ax2.plot(xs, [float(r["ll_per_stmt"]) for _, r in pts], marker="o", color=colors[c], label=CONFIG_NAMES[c])
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("known statements (log scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
        ax.set_ylim(bottom=0)
    ax1.set_ylabel("instructions added per statement (vs none, corrected)")
    ax1.set_title("Instructions added per statement")
    ax2.set_ylabel("LL misses per statement (ILmr + DLmr + DLmw)")
    ax2.set_title("Last-level cache misses per statement")
    fig.suptitle("Cost per statement against the number of known statements (callgrind --cache-sim=yes)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "scaling.png"), dpi=110)
    plt.close(fig)
    return True


def write_tsv(path, header, rows):
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(str(v) for v in r) + "\n")


def scaling_table(raw_dir, out_dir):
    """scaling.tsv: per configuration and size, the median over the repeats
    of each figure per statement, and of the figures added over none (each
    repeat minus none's same repeat: the same statements, the same rows, so
    what the repeats share, such as heap lines read for the first time,
    cancels); scaling_merges.tsv: pg_stat_queries' merges under valgrind, at
    full speed, and the model (see bench/scaling.sh)"""
    raw = read_tsv(os.path.join(raw_dir, "scaling_raw.tsv"))
    if not raw:
        print("no scaling_raw.tsv in " + raw_dir, file=sys.stderr)
        return 1
    per = {}                    # (config, size) -> list of per-repeat dicts
    order = []
    for r in raw:
        key = (r["config"], int(r["size"]))
        if key not in per:
            per[key] = []
            order.append(key)
        n = int(r["t_hi"]) - int(r["t_lo"])
        ir = (int(r["ir_hi"]) - int(r["ir_lo"])) / n
        per[key].append({
            "repeat": r.get("repeat") or "1",
            "entries": r["entries"], "t_lo": r["t_lo"], "t_hi": r["t_hi"],
            "ir": ir,
            "d1": (int(r["d1_hi"]) - int(r["d1_lo"])) / n,
            "ll": (int(r["ll_hi"]) - int(r["ll_lo"])) / n,
            "irc": ir - (int(r["noise_hi"]) - int(r["noise_lo"])) / n,
            "once": (int(r.get("once_hi") or 0) - int(r.get("once_lo") or 0)) / n,
        })
        per[key][-1]["steady"] = per[key][-1]["ll"] - per[key][-1]["once"]
    figures = ("ir", "d1", "ll", "irc", "once", "steady")
    has_once = "once_hi" in raw[0]      # runs before c432d5b did not count them
    med = {key: {m: statistics.median(x[m] for x in reps) for m in figures}
           for key, reps in per.items()}
    none_of = {k: {x["repeat"]: x for x in reps} for (c, k), reps in per.items() if c == "none"}
    added = {}                  # (config, size) -> figure -> median added
    for (c, k), reps in per.items():
        none = none_of.get(k, {})
        pairs = [(x, none[x["repeat"]]) for x in reps if x["repeat"] in none]
        if pairs:
            added[(c, k)] = {m: statistics.median(x[m] - n[m] for x, n in pairs) for m in figures}
    rows = []
    for key in order:
        c, k = key
        reps = per[key]
        m, a = med[key], added.get(key)
        fmt = (lambda f, d: f"{a[f]:.{d}f}") if a else (lambda f, d: "-")
        none = none_of.get(k, {})
        rows.append([c, k, reps[0]["entries"], len(reps), f"{m['ir']:.1f}", f"{m['d1']:.2f}", f"{m['ll']:.3f}",
                     fmt("ir", 1), fmt("d1", 2), fmt("ll", 3), fmt("irc", 1),
                     reps[0]["t_lo"], reps[0]["t_hi"],
                     ",".join(f"{x['ll']:.3f}" for x in reps),
                     ",".join(f"{x['irc'] - none[x['repeat']]['irc']:.1f}" if x["repeat"] in none else "-"
                              for x in reps),
                     *((f"{m['once']:.3f}", fmt("steady", 3), ",".join(f"{x['once']:.3f}" for x in reps))
                       if has_once else ("-", "-", "-"))])
    write_tsv(os.path.join(out_dir, "scaling.tsv"),
              ["config", "size", "entries", "repeats", "ir_per_stmt", "d1_per_stmt", "ll_per_stmt",
               "ir_added", "d1_added", "ll_added", "ir_added_corrected", "t_lo", "t_hi",
               "ll_per_stmt_each", "ir_added_corrected_each", "ll_first_touch", "ll_added_without_first_touch",
               "ll_first_touch_each"], rows)

    merges_path = os.path.join(out_dir, "scaling_merges.tsv")
    if os.path.exists(merges_path):
        os.remove(merges_path)
    batches = read_tsv(os.path.join(raw_dir, "scaling_batches.tsv"))
    native = {int(r["size"]): float(r["merges_per_stmt"])
              for r in read_tsv(os.path.join(raw_dir, "scaling_native.tsv"))}
    if not native:
        return 0
    by_size = {}
    for b in batches:
        by_size.setdefault(int(b["size"]), []).append(b)
    rows = []
    for c, k in order:
        if c != "pgsq" or k not in native or k not in by_size:
            continue
        mps = statistics.median(float(b["merges_per_stmt"]) for b in by_size[k])
        bir = statistics.median(float(b["batch_ir"]) for b in by_size[k])
        if (c, k) not in added:
            continue
        irc = added[(c, k)]["irc"]
        rows.append([k, f"{mps:.4f}", f"{native[k]:.4f}", f"{bir:.0f}", f"{irc:.1f}",
                     f"{irc - (mps - native[k]) * bir:.1f}"])
    write_tsv(merges_path, ["size", "merges_per_stmt_valgrind", "merges_per_stmt_native", "ir_per_batch",
                            "ir_added", "ir_added_native_rate"], rows)
    return 0


def write_scaling(out_dir):
    """scaling.png and scaling.md from scaling.tsv"""
    make_scaling_chart(out_dir)
    lines = scaling_lines(out_dir, "#")
    if not lines:
        print("no scaling.tsv in " + out_dir, file=sys.stderr)
        return 1
    with open(os.path.join(out_dir, "scaling.md"), "w") as f:
        f.write("\n".join(lines))
    return 0


def main():
    if sys.argv[1] == "--scaling":
        return write_scaling(sys.argv[2])
    if sys.argv[1] == "--scaling-table":
        return scaling_table(sys.argv[2], sys.argv[3])
    out_dir = sys.argv[1]
    env = read_env(os.path.join(out_dir, "env.txt"))
    runs = read_tsv(os.path.join(out_dir, "runs.tsv"))
    mixed = read_tsv(os.path.join(out_dir, "mixed.tsv"))
    cg = read_tsv(os.path.join(out_dir, "callgrind.tsv"))
    mixed_hot = int(env.get("mixed_hot", "1000"))

    workloads = [w for w in WORKLOAD_ORDER if any(r["workload"] == w for r in runs)]
    configs = [c for c in CONFIG_ORDER if any(r["config"] == c for r in runs)]

    # per (workload, config): list of TPS, summed waits, statuses, entries
    stats = {}
    for r in runs:
        key = (r["workload"], r["config"])
        s = stats.setdefault(key, {"tps": [], "waits": {"pgss": 0, "lwother": 0, "spin": 0, "other": 0, "cpu": 0},
                                   "top": {}, "status": [], "entries": [], "evicted": [], "by_repeat": {}})
        s["tps"].append(float(r["tps"]))
        s["by_repeat"][r["repeat"]] = float(r["tps"])
        s["status"].append(r["status"])
        w = parse_waits(r["waits"])
        for k in s["waits"]:
            s["waits"][k] += w[k]
        for t in w["top"]:
            name, _, n = t.rpartition(":")
            s["top"][name] = s["top"].get(name, 0) + int(n)
        if r["entries"] not in ("-", ""):
            s["entries"].append(r["entries"])
            untracked = r.get("untracked") or "-"
            s["evicted"].append(r["evicted"] + ("" if untracked == "-" else f", {untracked} untracked"))

    def median(key):
        s = stats.get(key)
        return statistics.median(s["tps"]) if s and s["tps"] else 0.0

    def paired(w, c):
        """TPS / TPS of none in the same repeat: neighbours in time share the machine's drift"""
        s, b = stats.get((w, c)), stats.get((w, "none"))
        if not s or not b:
            return []
        return [t / b["by_repeat"][r] for r, t in s["by_repeat"].items()
                if b["by_repeat"].get(r, 0) > 0]

    ratios = {}
    lines = []
    lines.append("# pg_stat_queries benchmark results")
    lines.append("")
    lines.append(f"- Date: {env.get('date', '?')}, commit {env.get('commit', '?')}")
    lines.append(f"- Machine: {env.get('cpu', '?')}, {env.get('memory', '?')}, a virtual machine whose speed drifts "
                 "by 10-20% within minutes")
    lines.append(f"- Server: {env.get('postgres', '?')}")
    lines.append(f"- Settings: {env.get('settings', '?')}")
    lines.append("- Order: for each repeat, for each workload, for each configuration (interleaved, "
                 "the configurations' order rotated by one at each repeat); "
                 "the server is restarted for every run with that configuration's shared_preload_libraries, "
                 "`.save = off`, so every run starts with empty statistics.")
    lines.append("- Paired ratio = TPS / TPS of `none` in the same repeat (runs minutes apart share the machine's "
                 "drift), median and range over the repeats. "
                 "(and (max-min)/median). Wait events: samples of the active client backends' "
                 "`pg_stat_activity` wait events once a second, summed over the repeats "
                 "(`LWLock:pg_stat_statements`, other `LWLock:*`, `Timeout:SpinDelay`, any other event; "
                 "CPU = active without a wait event); \"top\" lists the most frequent events.")
    if env.get("smoke") == "1":
        lines.append("- **Smoke run**: tiny sizes and durations, numbers mean nothing.")
    disc = discussion_line(out_dir, env.get("commit", ""))
    if disc:
        lines.append(disc)
    lines.append("")

    for w in workloads:
        lines.append(f"## {w}")
        lines.append("")
        lines.append(WORKLOAD_TEXT.get(w, ""))
        lines.append("")
        lines.append("| config | median TPS | ratio to none | paired ratio (range) | spread (min-max) | runs | entries at end (evicted, untracked executions) "
                     "| LWLock:pg_stat_statements | LWLock:other | SpinDelay | other waits | CPU | top wait events |")
        lines.append("|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|---|")
        base = median((w, "none"))
        for c in configs:
            s = stats.get((w, c))
            if not s:
                continue
            m = median((w, c))
            ratio = m / base if base > 0 else float("nan")
            ratios[(w, c)] = ratio
            lo, hi = min(s["tps"]), max(s["tps"])
            rel = (hi - lo) / m * 100 if m > 0 else 0
            ent = ", ".join(f"{e} ({v})" for e, v in zip(s["entries"], s["evicted"])) or "-"
            top = ", ".join(f"{k} {v}" for k, v in sorted(s["top"].items(), key=lambda kv: -kv[1])[:4]) or "-"
            bad = [x for x in s["status"] if x != "ok"]
            runs_txt = str(len(s["tps"])) + (f" ({', '.join(bad)})" if bad else "")
            wt = s["waits"]
            pr = paired(w, c)
            pr_txt = f"{statistics.median(pr):.3f} ({min(pr):.3f}-{max(pr):.3f})" if pr else "-"
            lines.append(f"| {CONFIG_NAMES[c]} | {fmt_tps(m)} | {ratio:.3f} | {pr_txt} | {fmt_tps(lo)}-{fmt_tps(hi)} (±{rel / 2:.1f}%) "
                         f"| {runs_txt} | {ent} | {wt['pgss']} | {wt['lwother']} | {wt['spin']} | {wt['other']} | {wt['cpu']} | {top} |")
        lines.append("")
        if w == "mixed" and mixed:
            lines.append(f"Hot-entry retention after each mixed run ({mixed_hot} hot statements; "
                         "calls kept = sum of `calls` of the hot entries / hot statements pgbench executed; "
                         "pgbench's per-script count is updated by its threads without a lock, so with more "
                         "than one thread it can run a little low and calls kept a little above 100%):")
            lines.append("")
            lines.append("| repeat | config | hot entries present | calls of hot entries | hot executed | calls kept "
                         "| hot entries re-created | executions refused | entries | evicted |")
            lines.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for m in mixed:
                kept = "-"
                try:
                    kept = f"{int(m['hot_calls']) / int(m['hot_executed']) * 100:.1f}%"
                except (ValueError, ZeroDivisionError):
                    pass
                lines.append(f"| {m['repeat']} | {m['config']} | {m['hot_entries']} / {mixed_hot} | {m['hot_calls']} "
                             f"| {m['hot_executed']} | {kept} | {m.get('hot_recreated', '-')} | {m.get('untracked', '-')} "
                             f"| {m['entries']} | {m['evicted']} |")
            lines.append("")

    # targets
    summary = []
    summary.append("| workload | target pgsq/none | pgss/none | pgsq/none | paired pgss/none | paired pgsq/none | target met | pgsq ahead of pgss |")
    summary.append("|---|---:|---:|---:|---:|---:|---|---|")
    for w in workloads:
        rs = ratios.get((w, "pgss"))
        rq = ratios.get((w, "pgsq"))
        met = "-"
        if rq is not None and w in TARGETS:
            ok = rq >= TARGETS[w]
            extra = NOISE_NOTE if rq > 1.0 else ""
            if w == "mixed":
                last = [m for m in mixed if m["config"] == "pgsq"]
                full = all(m["hot_entries"] == str(mixed_hot) for m in last) and last
                extra = f", hot entries {'all kept' if full else 'NOT all kept'}"
                ok = ok and bool(full)
            met = ("yes" if ok else "**NO**") + extra
        ahead = "-"
        if rs is not None and rq is not None:
            ahead = "yes" if rq > rs else "**NO**"
        ps, pq = paired(w, "pgss"), paired(w, "pgsq")
        summary.append(f"| {w} | {TARGETS.get(w, '-')} | {'-' if rs is None else f'{rs:.3f}'} "
                       f"| {'-' if rq is None else f'{rq:.3f}'} "
                       f"| {f'{statistics.median(ps):.3f}' if ps else '-'} | {f'{statistics.median(pq):.3f}' if pq else '-'} "
                       f"| {met} | {ahead} |")
    lines.append("## Targets")
    lines.append("")
    lines.extend(summary)
    lines.append("")
    noisy = sorted({w for (w, c), s in stats.items()
                    if s["tps"] and median((w, c)) > 0 and (max(s["tps"]) - min(s["tps"])) / median((w, c)) > 0.10})
    if noisy:
        lines.append(f"**Caution:** in {', '.join(noisy)} the TPS of one configuration varied by more than 10% "
                     "between repeats (see the spread columns), far more than the differences the targets are about; "
                     "single ratios there are not conclusive; the paired ratios are steadier. "
                     "The callgrind instruction counts below do not depend on that load.")
        lines.append("")

    # callgrind
    cg_lines = []
    if cg:
        rows = {r["config"]: r for r in cg}
        cg_lines.append("## Instructions per statement (callgrind)")
        cg_lines.append("")
        first = next(iter(rows.values()))
        cg_lines.append(f"One backend under `valgrind --tool=callgrind` serving `pgbench -n -S -M prepared -c 1 -t N`, "
                        f"N = {first['t_lo']} and {first['t_hi']}; instructions of that backend process (connection start "
                        f"to exit), with the pgbench tables prewarmed into shared buffers. Per statement = (Ir(N={first['t_hi']}) - Ir(N={first['t_lo']})) / "
                        f"{int(first['t_hi']) - int(first['t_lo'])}, so connection set-up is left out; "
                        "\"added\" is that minus the same for `none`; \"corrected\" also takes out the "
                        "difference in the instructions of the index scan (`ExecIndexScan`) and of the reads of client "
                        "messages (`pq_getbyte`, which waits or not depending on scheduling), inclusive: they vary by up "
                        "to a few hundred per statement between runs of the same code, and no extension runs inside them. "
                        f"The last column is the simple (total - total of none) / {first['t_hi']} at N = {first['t_hi']}.")
        cg_lines.append("")
        cg_lines.append("| config | Ir total (N lo) | Ir total (N hi) | Ir per statement | added per statement | added, corrected | (total - none) / N |")
        cg_lines.append("|---|---:|---:|---:|---:|---:|---:|")
        none = rows.get("none")

        def per_stmt(r):
            return (int(r["ir_hi"]) - int(r["ir_lo"])) / (int(r["t_hi"]) - int(r["t_lo"]))

        def scan_per_stmt(r):
            if not r.get("scan_hi"):
                return float("nan")
            return (int(r["scan_hi"]) - int(r["scan_lo"])) / (int(r["t_hi"]) - int(r["t_lo"]))
        for c in CONFIG_ORDER:
            r = rows.get(c)
            if not r:
                continue
            ps = per_stmt(r)
            added = ps - per_stmt(none) if none else float("nan")
            simple = (int(r["ir_hi"]) - int(none["ir_hi"])) / int(r["t_hi"]) if none else float("nan")
            corrected = added - (scan_per_stmt(r) - scan_per_stmt(none)) if none else float("nan")
            cg_lines.append(f"| {CONFIG_NAMES[c]} | {int(r['ir_lo']):,} | {int(r['ir_hi']):,} | {ps:,.0f} "
                            f"| {added:+,.0f} | {corrected:+,.0f} | {simple:+,.0f} |")
        cg_lines.append("")
        lines.extend(cg_lines)

    # bench/scaling.sh's table, when it ran (its own file scaling.md has the same)
    sc = scaling_lines(out_dir)
    if sc:
        lines.extend(l.replace("](scaling.png)", "](scaling.png) (details: [scaling.md](scaling.md))") for l in sc)

    errs_path = os.path.join(out_dir, "server_errors.log")
    if os.path.exists(errs_path) and os.path.getsize(errs_path) > 0:
        lines.append("## Server log messages during runs")
        lines.append("")
        lines.append("```")
        with open(errs_path) as f:
            lines.extend(f.read().splitlines()[:80])
        lines.append("```")
        lines.append("")

    chart = make_chart(out_dir, workloads, configs, stats, ratios)
    if chart:
        lines.append("![TPS ratio to none](tps_ratio.png)")
        lines.append("")

    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write("\n".join(lines))

    # README snippet: the summary table (TPS ratios), callgrind and the chart
    snip = []
    snip.append("### Benchmark")
    snip.append("")
    snip.append(f"`bench/run` ({env.get('postgres', '?')}; {env.get('cpu', '?')}; {env.get('settings', '')}). "
                "TPS relative to no extension, median of the repeats, configurations interleaved; "
                "details and wait events in [bench/results/results.md](bench/results/results.md).")
    snip.append("")
    snip.append("| workload | none TPS | pg_stat_statements | pg_stat_queries | target | met |")
    snip.append("|---|---:|---:|---:|---:|---|")
    for w in workloads:
        base = median((w, "none"))
        rs = ratios.get((w, "pgss"))
        rq = ratios.get((w, "pgsq"))
        met = "-"
        if rq is not None and w in TARGETS:
            met = ("yes" if rq >= TARGETS[w] else "no") + (NOISE_NOTE if rq > 1.0 else "")
        snip.append(f"| {w} | {fmt_tps(base)} | {'-' if rs is None else f'{rs:.3f}'} | "
                    f"{'-' if rq is None else f'{rq:.3f}'} | {TARGETS.get(w, '-')} | {met} |")
    snip.append("")
    if cg_lines:
        snip.extend(l.replace("## ", "#### ") for l in cg_lines)
    if chart:
        snip.append("![TPS ratio to no extension](bench/results/tps_ratio.png)")
        snip.append("")
    with open(os.path.join(out_dir, "README-snippet.md"), "w") as f:
        f.write("\n".join(snip))
    return 0


def make_chart(out_dir, workloads, configs, stats, ratios):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not workloads:
        return False
    colors = {"none": "#9e9e9e", "pgss": "#e07b39", "pgsq": "#3a78b5"}
    fig, ax = plt.subplots(figsize=(10, 5))
    width = 0.8 / max(len(configs), 1)
    for i, c in enumerate(configs):
        xs, ys, lo, hi = [], [], [], []
        for j, w in enumerate(workloads):
            r = ratios.get((w, c))
            if r is None:
                continue
            base = statistics.median(stats[(w, "none")]["tps"]) if (w, "none") in stats else 0
            t = stats[(w, c)]["tps"]
            xs.append(j + (i - (len(configs) - 1) / 2) * width)
            ys.append(r)
            if base > 0:
                lo.append(max(r - min(t) / base, 0))
                hi.append(max(max(t) / base - r, 0))
            else:
                lo.append(0)
                hi.append(0)
        ax.bar(xs, ys, width, label=CONFIG_NAMES[c], color=colors[c], yerr=[lo, hi], capsize=3)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.01, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    for j, w in enumerate(workloads):
        if w in TARGETS:
            ax.hlines(TARGETS[w], j - 0.45, j + 0.45, colors="black", linestyles="dashed", linewidth=1,
                      label="pgsq target" if j == 0 else None)
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels(workloads)
    ax.set_ylabel("TPS / TPS without extension (median)")
    ymax = max([1.1] + [v + 0.1 for v in ratios.values() if v == v])
    ax.set_ylim(0, ymax)
    ax.set_title("pgbench TPS relative to no extension (error bars: min-max of repeats)")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "tps_ratio.png"), dpi=110)
    plt.close(fig)
    return True


if __name__ == "__main__":
    sys.exit(main())
