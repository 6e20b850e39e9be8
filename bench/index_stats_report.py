#!/usr/bin/env python3
"""bench/index_stats_report.py OUT_DIR -- turn the raw files bench/index_stats.sh
left in OUT_DIR into index_stats.md and, when matplotlib can be imported,
index_stats.png.

Inputs: index_stats.csv (one line per timed call), index_stats_device.csv (one
line per direct-I/O read of the device file) and index_stats_env.txt (machine
and settings, key=value).

Throughput is index bytes / time, in MiB/s (1 MiB = 1,048,576 bytes).  The
device's bandwidth is the median of every fio sample of the run (of every dd
sample when there is none); each cold median is given as a fraction of it.
Targets (issue 22): cold pg_index_stats at least 85% of the device's bandwidth
for the 1 GB indexes at default settings (every configuration but
worker-tuned), and at least pgstatindex's cold throughput at every size.

Everything in index_stats.md is written here, notes included; the reading of
the figures is kept by hand in discussion.md, to which the file links.
"""

import csv
import os
import statistics
import sys

MIB = 1048576.0
FUNCS = ["pgstatindex", "pg_index_stats"]
CONFIG_ORDER = ["sync", "worker", "io_uring", "worker-tuned"]
CONFIG_TEXT = {
    "sync": "io_method=sync, every other setting at its default",
    "worker": "io_method=worker (PostgreSQL's default), every other setting at its default",
    "io_uring": "io_method=io_uring, every other setting at its default",
    "worker-tuned": "io_method=worker, io_workers=8, effective_io_concurrency=64 (not a default)",
}
# configurations whose settings are all defaults but io_method
DEFAULT_CONFIGS = {"sync", "worker", "io_uring"}
DEVICE_TARGET = 0.85
DEVICE_TARGET_MB = 1024


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return env


def ordered(values, order):
    """values sorted by their place in order, unknown ones last"""
    return sorted(set(values), key=lambda v: (order.index(v) if v in order else len(order), v))


def mib_s(nbytes, ms):
    return nbytes / MIB / (ms / 1000.0)


def phase_group(phase):
    """the row of the device table a sample belongs to: the reads made next
    to the cold calls (phase cold-CONFIG-SIZE-LAYOUT) are grouped by configuration"""
    if phase.startswith("cold-"):
        return "during the cold calls of " + phase[len("cold-"):].rsplit("-", 2)[0]
    if phase.startswith("before-"):
        return "before " + phase[len("before-"):]
    return "end of the run" if phase == "end" else phase


def device_figures(rows):
    """per (row of the device table, tool): MiB/s of each sample, in the order of the run"""
    out = {}
    for r in rows:
        out.setdefault((phase_group(r["phase"]), r["tool"]), []).append(mib_s(float(r["bytes"]), float(r["ms"])))
    return out


def cell_device(rows, tool):
    """per cold cell (config, size, layout): median MiB/s of the device reads made between its calls"""
    out = {}
    for r in rows:
        if r["tool"] == tool and r["phase"].startswith("cold-"):
            cfg, size, layout = r["phase"][len("cold-"):].rsplit("-", 2)
            out.setdefault((cfg, int(size), layout), []).append(mib_s(float(r["bytes"]), float(r["ms"])))
    return {k: statistics.median(v) for k, v in out.items()}


def device_bandwidth(rows):
    """(MiB/s, tool) of the device: median of all fio samples, else of dd's"""
    for tool in ("fio", "dd"):
        v = [mib_s(float(r["bytes"]), float(r["ms"])) for r in rows if r["tool"] == tool]
        if v:
            return statistics.median(v), tool
    return None, None


def cells(samples):
    """per (config, cache, size, layout): index bytes and, per function, the times in ms by round"""
    out = {}
    for r in samples:
        key = (r["config"], r["cache"], int(r["size_mb"]), r["layout"])
        c = out.setdefault(key, {"bytes": int(r["index_bytes"]), "ms": {f: {} for f in FUNCS}})
        c["ms"].setdefault(r["function"], {})[int(r["repeat"])] = float(r["ms"])
    return out


def paired_ratio(c):
    """median over the rounds of pgstatindex time / pg_index_stats time (calls
    of one round ran back to back); above 1 means pg_index_stats was faster"""
    a, b = c["ms"]["pgstatindex"], c["ms"]["pg_index_stats"]
    ratios = [a[r] / b[r] for r in a if r in b and b[r] > 0]
    return statistics.median(ratios) if ratios else float("nan")


def summarize(c, device):
    """medians, spreads, throughputs and fractions of one cell"""
    s = {"bytes": c["bytes"], "paired": paired_ratio(c)}
    for f in FUNCS:
        v = list(c["ms"][f].values())
        med = statistics.median(v)
        s[f] = {"ms": med, "min": min(v), "max": max(v), "n": len(v),
                "mib_s": mib_s(c["bytes"], med),
                "frac": mib_s(c["bytes"], med) / device if device else None}
    return s


def fmt_frac(x):
    return "-" if x is None else f"{x * 100:.0f}%"


def fmt_local(dev, ours):
    """the device's median next to one cell's calls, and pg_index_stats' share of it"""
    return "-" if not dev else f"{dev:,.0f} MiB/s ({ours / dev * 100:.0f}%)"


def cold_verdicts(cfg, size, s):
    """target verdicts of one cold cell, as (text for the table, list of misses)"""
    out, misses = [], []
    ours, theirs = s["pg_index_stats"], s["pgstatindex"]
    if ours["mib_s"] >= theirs["mib_s"]:
        out.append(">= pgstatindex: met")
    else:
        out.append(">= pgstatindex: **NOT met**")
        misses.append(f"pg_index_stats {ours['mib_s']:.0f} MiB/s < pgstatindex {theirs['mib_s']:.0f} MiB/s")
    if size == DEVICE_TARGET_MB and cfg in DEFAULT_CONFIGS and ours["frac"] is not None:
        if ours["frac"] >= DEVICE_TARGET:
            out.append(f">= {DEVICE_TARGET:.0%} of device: met")
        else:
            out.append(f">= {DEVICE_TARGET:.0%} of device: **NOT met**")
            misses.append(f"pg_index_stats at {fmt_frac(ours['frac'])} of the device (< {DEVICE_TARGET:.0%})")
    return "; ".join(out), misses


def device_lines(dev_rows, device, tool):
    figs = device_figures(dev_rows)
    phases = []
    for r in dev_rows:
        if phase_group(r["phase"]) not in phases:
            phases.append(phase_group(r["phase"]))
    tools = ordered([r["tool"] for r in dev_rows], ["fio", "dd"])
    lines = ["## The device", ""]
    if device is None:
        return lines + ["No device measurement in this run.", ""]
    lines.append(f"**Device bandwidth: {device:,.0f} MiB/s** (median of all {len([r for r in dev_rows if r['tool'] == tool])} "
                 f"{tool} samples below); every cold throughput is given as a fraction of it.")
    lines.append("")
    lines.append("| when | " + " | ".join(f"{t} MiB/s, median (min-max)" for t in tools) + " |")
    lines.append("|---|" + "---:|" * len(tools))
    for p in phases:
        row = []
        for t in tools:
            v = figs.get((p, t), [])
            row.append(f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})" if v else "-")
        lines.append(f"| {p} | " + " | ".join(row) + " |")
    row = []
    for t in tools:
        v = [x for (p, tt), xs in figs.items() if tt == t for x in xs]
        row.append(f"**{statistics.median(v):,.0f}** ({min(v):,.0f}-{max(v):,.0f})")
    lines.append("| whole run | " + " | ".join(row) + " |")
    lines.append("")
    return lines


def write_md(out_dir, env, samples, dev_rows):
    device, tool = device_bandwidth(dev_rows)
    by_cell = cells(samples)
    configs = ordered([k[0] for k in by_cell], CONFIG_ORDER)
    sizes = sorted({k[2] for k in by_cell})
    layouts = ordered([k[3] for k in by_cell], ["seq", "frag"])
    summary = {k: summarize(c, device) for k, c in by_cell.items()}
    L = ["# pg_index_stats and pgstatindex against the device's bandwidth", ""]
    L.append("Written by bench/index_stats.sh (bench/index_stats_report.py); replaced at every run. "
             "The reading of these figures is in [discussion.md](discussion.md#pg_index_stats-vs-pgstatindex).")
    L.append("")
    uring = "built with liburing" if env.get("liburing") == "yes" else "built without liburing"
    L.append(f"Environment: {env.get('postgres', '?')} ({env.get('build', '?')}, {uring}), "
             f"{env.get('cpus', '?')} CPUs ({env.get('cpu', '?')}), {env.get('memory_gb', '?')} GB RAM, "
             f"kernel {env.get('kernel', '?')}, {env.get('disk', '?')} ({env.get('filesystem', '?')}, "
             f"read_ahead_kb {env.get('read_ahead_kb', '?')}, scheduler {env.get('scheduler', '?')}), "
             f"shared_buffers {env.get('shared_buffers', '?')}, {env.get('date', '?')}, commit {env.get('commit', '?')}.")
    L.append("")
    L.append(f"Load average (1, 5, 15 min) at the start: {env.get('load_start', '?')}; at the end: "
             f"{env.get('load_end', '?')}. The 1-minute load average of every sample is in index_stats.csv.")
    L.append("")
    L.append("### Method")
    L.append("")
    L.append(f"- **Device:** before every configuration and at the end of the run, {env.get('device_repeats', '?')} "
             f"sequential reads of {env.get('device_file', 'a file of the cluster')} with direct I/O (the page cache "
             f"bypassed): `fio` ({env.get('fio', '?')}, 1 MiB reads, queue depth {env.get('fio_iodepth', '?')}, libaio) "
             f"and `dd bs=1M iflag=direct` (one read in flight); and one more fio read of the same file before every "
             f"round of cold calls. The device's bandwidth is the median of all fio samples (dd's if fio is missing): "
             f"what the device gives one sequential reader with a deep queue, over the whole run.")
    L.append(f"- **Cold:** server restarted and kernel page cache dropped before every call; "
             f"{env.get('repeats', '?')} calls per function, alternating (ABBA). Free page reporting of the "
             f"virtual machine: {env.get('page_reporting', 'not recorded')} (freed pages handed back to the host cost a "
             f"host fault each when the page cache is refilled; bench/index_stats.sh explains).")
    L.append(f"- **Warm:** per index one session, index loaded with pg_prewarm, {env.get('warm_warmup', '?')} untimed calls "
             f"per function, then {env.get('warm_calls', '?')} timed calls per function, alternating (ABBA).")
    L.append("- Each call is timed on the server around the call only. Times are medians in ms (min-max in parentheses); "
             "throughput = index bytes / median time in MiB/s; *of device* = that throughput / the device's bandwidth; "
             "*paired* = median over the rounds of pgstatindex time / pg_index_stats time for the two calls of one "
             "round, which ran back to back (above 1: pg_index_stats faster); *device alongside* = median of the fio "
             "reads made before each round of that cell, and pg_index_stats' throughput as a share of it (the "
             "targets are judged on the run's device bandwidth, not on this).")
    L.append("- Indexes: int4 B-trees of each size, *seq* built by CREATE INDEX on rows in key order, *frag* filled "
             "by inserting rows in random key order (leaf pages out of key order on disk, about 70% full).")
    L.append("- Configurations, applied identically to both functions: " +
             "; ".join(f"**{c}** = {CONFIG_TEXT.get(c, c)}" for c in configs) +
             ". Defaults: io_workers=3, effective_io_concurrency=16, io_combine_limit=128kB.")
    L.append(f"- Targets (issue 22): cold pg_index_stats at least {DEVICE_TARGET:.0%} of the device's bandwidth for the "
             f"1 GB indexes at default settings (judged for every configuration but worker-tuned), and cold "
             f"pg_index_stats throughput at least pgstatindex's at every size (judged on the medians). Warm figures "
             f"have no target; they show what the read stream costs once nothing is read from the device.")
    L.append("")
    L += device_lines(dev_rows, device, tool)
    L.append("## Cold cache")
    L.append("")
    if device is not None:
        L.append("![cold throughput as a share of the device's bandwidth](index_stats.png)")
        L.append("")
    local_dev = cell_device(dev_rows, tool) if tool else {}
    L.append("| config | size (MB) | layout | index MiB | pgstatindex ms | MiB/s | of device | "
             "pg_index_stats ms | MiB/s | of device | paired | device alongside | targets |")
    L.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    misses = []
    for cfg in configs:
        for size in sizes:
            for layout in layouts:
                s = summary.get((cfg, "cold", size, layout))
                if s is None:
                    continue
                a, b = s["pgstatindex"], s["pg_index_stats"]
                verdict, miss = cold_verdicts(cfg, size, s)
                misses += [f"{cfg} {size} MB {layout}: {m}" for m in miss]
                L.append(f"| {cfg} | {size} | {layout} | {s['bytes'] / MIB:.1f} | "
                         f"{a['ms']:.1f} ({a['min']:.1f}-{a['max']:.1f}) | {a['mib_s']:,.0f} | {fmt_frac(a['frac'])} | "
                         f"{b['ms']:.1f} ({b['min']:.1f}-{b['max']:.1f}) | {b['mib_s']:,.0f} | **{fmt_frac(b['frac'])}** | "
                         f"{s['paired']:.2f}x | {fmt_local(local_dev.get((cfg, size, layout)), b['mib_s'])} | {verdict} |")
    L.append("")
    L.append("Targets not met:")
    L.append("")
    L += [f"- {m}" for m in misses] or ["- none"]
    L.append("")
    L.append("## Warm cache (index in shared_buffers)")
    L.append("")
    L.append("| config | size (MB) | layout | pgstatindex ms | MiB/s | pg_index_stats ms | MiB/s | "
             "pgstatindex / pg_index_stats | paired |")
    L.append("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for cfg in configs:
        for size in sizes:
            for layout in layouts:
                s = summary.get((cfg, "warm", size, layout))
                if s is None:
                    continue
                a, b = s["pgstatindex"], s["pg_index_stats"]
                L.append(f"| {cfg} | {size} | {layout} | {a['ms']:.2f} ({a['min']:.2f}-{a['max']:.2f}) | {a['mib_s']:,.0f} | "
                         f"{b['ms']:.2f} ({b['min']:.2f}-{b['max']:.2f}) | {b['mib_s']:,.0f} | "
                         f"{a['ms'] / b['ms']:.2f}x | {s['paired']:.2f}x |")
    L.append("")
    L.append("Raw samples: index_stats.csv (calls), index_stats_device.csv (device reads), index_stats_env.txt.")
    L.append("")
    with open(os.path.join(out_dir, "index_stats.md"), "w") as f:
        f.write("\n".join(L))
    return summary, configs, sizes, layouts, device, tool


def make_chart(out_dir, summary, configs, sizes, layouts, device, tool):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("index_stats_report.py: matplotlib not available, no chart", file=sys.stderr)
        return
    if device is None:
        return
    labels = [f"{size} MB\n{layout}" for size in sizes for layout in layouts]
    fig, axes = plt.subplots(1, len(configs), figsize=(4.2 * len(configs) + 1, 4.8), sharey=True, squeeze=False)
    colors = {"pgstatindex": "tab:gray", "pg_index_stats": "tab:blue"}
    top = 1.1
    for ax, cfg in zip(axes[0], configs):
        width = 0.38
        for i, fn in enumerate(FUNCS):
            vals = []
            for size in sizes:
                for layout in layouts:
                    s = summary.get((cfg, "cold", size, layout))
                    vals.append(s[fn]["frac"] * 100 if s else 0)
            top = max(top, max(vals) / 100 + 0.1)
            ax.bar([x + (i - 0.5) * width for x in range(len(labels))], vals, width, label=fn, color=colors[fn])
        ax.axhline(100, color="black", linewidth=0.8)
        ax.axhline(DEVICE_TARGET * 100, color="tab:red", linewidth=0.8, linestyle="--",
                   label=f"target {DEVICE_TARGET:.0%} (1 GB)")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_title(f"io_method: {cfg}" if cfg in DEFAULT_CONFIGS else cfg, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylim(0, top * 100)
    axes[0][0].set_ylabel(f"cold throughput, % of the device's {device:,.0f} MiB/s ({tool}, direct I/O)")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.suptitle("pg_index_stats and pgstatindex, cold cache: index bytes / time as a share of the device's bandwidth",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "index_stats.png"), dpi=110)


def main():
    if len(sys.argv) != 2:
        print("usage: bench/index_stats_report.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    samples = read_csv(os.path.join(out_dir, "index_stats.csv"))
    if not samples:
        print(f"index_stats_report.py: no samples in {out_dir}/index_stats.csv", file=sys.stderr)
        return 1
    dev_rows = read_csv(os.path.join(out_dir, "index_stats_device.csv"))
    env = read_env(os.path.join(out_dir, "index_stats_env.txt"))
    make_chart(out_dir, *write_md(out_dir, env, samples, dev_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
