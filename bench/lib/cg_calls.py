#!/usr/bin/env python3
"""bench/lib/cg_calls.py -- calls and inclusive instructions of functions in
one callgrind output file.

Usage: cg_calls.py CALLGRIND_OUT FUNCTION...

Prints one line per function: "name calls inclusive_Ir", summed over every
call site in the file (callgrind_annotate shows inclusive costs but not
call counts per function).  A function matches by its name without the
file part; none of the ones asked for here recurse, so summing call sites
counts each call once.
"""

import re
import sys


def main():
    path, wanted = sys.argv[1], set(sys.argv[2:])
    names = {}              # compressed id -> name
    calls = {w: 0 for w in wanted}
    incl = {w: 0 for w in wanted}
    callee = None           # name of the function the next calls= line calls
    pending = None          # name whose inclusive cost is on the next line
    name_re = re.compile(r'^\((\d+)\)(?: (.*))?$')

    def resolve(spec):
        m = name_re.match(spec.strip())
        if not m:
            return spec.strip()
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    with open(path, errors="replace") as f:
        for line in f:
            if pending is not None:
                fields = line.split()
                if len(fields) >= 2:
                    incl[pending] += int(fields[1])
                pending = None
                continue
            if line.startswith("fn="):
                resolve(line[3:])
                callee = None
            elif line.startswith("cfn="):
                callee = resolve(line[4:]).split(":")[-1].split("'")[0]
            elif line.startswith("calls="):
                if callee in wanted:
                    calls[callee] += int(line[6:].split()[0])
                    pending = callee
    for w in sys.argv[2:]:
        print(w, calls[w], incl[w])


if __name__ == "__main__":
    main()
