#!/usr/bin/env python3
"""Per-read costs from a perf recording of one backend (bench/full_read.sh --profile).

Usage: perf_breakdown.py PERF_DATA READS FREQ [FUNCTION,...]

Reads `perf script` call chains (recorded with --call-graph dwarf at FREQ Hz,
cpu-clock), and prints, in CPU milliseconds per read (samples / FREQ / READS):
the total, the inclusive time of each FUNCTION named (also without the
samples taken in page faults), the page faults by the three frames that
caused them, and the self time of the top symbols."""

import collections
import subprocess
import sys


def chains(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"],
                         capture_output=True, text=True, check=True).stdout
    cur = []
    for line in out.split("\n"):
        s = line.strip()
        if not s:
            if cur:
                yield cur
                cur = []
            continue
        parts = s.split(None, 1)
        cur.append(parts[1] if len(parts) > 1 else "?")
    if cur:
        yield cur


def main():
    data, reads, freq = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    wanted = [f for f in (sys.argv[4] if len(sys.argv) > 4 else "").split(",") if f]
    samples = list(chains(data))
    n = len(samples)
    if n == 0:
        print("no samples")
        return
    per = 1000.0 / freq / reads  # ms per read of one sample

    def line(count, what):
        return f"  {count * 100.0 / n:5.1f}%  {count * per:6.3f} ms  {what}"

    print(f"samples {n}, reads {reads}: {n * per:.2f} ms of CPU per read")
    if wanted:
        print("inclusive (all samples | without page faults):")
        for f in wanted:
            c = sum(1 for st in samples if f in st)
            c2 = sum(1 for st in samples if f in st and "asm_exc_page_fault" not in st)
            if c:
                print(f"  {c * 100.0 / n:5.1f}%  {c * per:6.3f} ms | {c2 * per:6.3f} ms  {f}")
    faults = collections.Counter()
    total_faults = 0
    for st in samples:
        if "asm_exc_page_fault" in st:
            i = st.index("asm_exc_page_fault")
            faults[" < ".join(st[i + 1:i + 4])] += 1
            total_faults += 1
    print(line(total_faults, "page faults, by where they happened:"))
    for k, v in faults.most_common(6):
        print("  " + line(v, k))
    print("self time, top symbols:")
    for k, v in collections.Counter(st[0] for st in samples).most_common(25):
        print(line(v, k))


if __name__ == "__main__":
    main()
