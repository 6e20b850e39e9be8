#!/usr/bin/env python3
"""bench/lib/cg_calls.py -- calls and inclusive instructions of functions in
one callgrind output file.

Usage: cg_calls.py [--events=EV,...] CALLGRIND_OUT FUNCTION...
       cg_calls.py --by-caller CALLGRIND_OUT FUNCTION...

Prints one line per function: "name calls inclusive_Ir" (with --events, the
sum of those events instead of Ir, e.g. ILmr,DLmr,DLmw), summed over every
call site in the file (callgrind_annotate shows inclusive costs but not
call counts per function).  A function matches by its name without the
file part; none of the ones asked for here recurse, so summing call sites
counts each call once.

With --by-caller it prints "function caller caller_object calls" for every
caller of the functions asked for instead (what bench/footprint sorts lock
acquisitions by).
"""

import collections
import os
import re
import sys


def main():
    args = sys.argv[1:]
    events = ["Ir"]
    by_caller = bool(args) and args[0] == "--by-caller"
    if by_caller:
        args = args[1:]
    if args and args[0].startswith("--events="):
        events = args[0][len("--events="):].split(",")
        args = args[1:]
    path, wanted = args[0], set(args[1:])
    columns = None          # positions of the events on a cost line
    names = {}              # compressed id -> name
    calls = {w: 0 for w in wanted}
    incl = {w: 0 for w in wanted}
    callee = None           # name of the function the next calls= line calls
    pending = None          # name whose inclusive cost is on the next line
    name_re = re.compile(r'^\((\d+)\)(?: (.*))?$')
    objects = {}            # compressed id -> object file
    caller = None           # the function whose cost lines follow
    caller_ob = ""          # and its object
    ob = ""
    per_caller = collections.Counter()

    def resolve(spec, table=names):
        m = name_re.match(spec.strip())
        if not m:
            return spec.strip()
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "")

    with open(path, errors="replace") as f:
        for line in f:
            if pending is not None:
                fields = line.split()
                incl[pending] += sum(int(fields[1 + c]) for c in columns if 1 + c < len(fields))
                pending = None
                continue
            if line.startswith("events:"):
                names_of_events = line.split()[1:]
                missing = [e for e in events if e not in names_of_events]
                if missing:
                    sys.exit(f"cg_calls.py: {path} has no event {', '.join(missing)}")
                columns = [names_of_events.index(e) for e in events]
            elif line.startswith("ob="):
                ob = os.path.basename(resolve(line[3:], objects))
            elif line.startswith("cob="):
                resolve(line[4:], objects)
            elif line.startswith("fn="):
                caller = resolve(line[3:]).split(":")[-1].split("'")[0]
                caller_ob = ob
                callee = None
            elif line.startswith("cfn="):
                callee = resolve(line[4:]).split(":")[-1].split("'")[0]
            elif line.startswith("calls="):
                if callee in wanted:
                    n = int(line[6:].split()[0])
                    calls[callee] += n
                    per_caller[(callee, caller, caller_ob)] += n
                    pending = callee
    if by_caller:
        for (callee, fn, obj), n in sorted(per_caller.items()):
            print(callee, fn, obj or "-", n)
        return
    for w in args[1:]:
        print(w, calls[w], incl[w])


if __name__ == "__main__":
    main()
