#!/usr/bin/env python3
#
# scripts/regress-parity-compare.py -- compare statement statistics dumped by
# scripts/regress-parity (which runs it; see there for the whole test).
#
# Each input is a CSV file with a header and the columns
#   rolname, datname, toplevel, calls, rows, query, queryid
# one line per row of pg_stat_statements or pg_stat_queries ('?' for a role
# or database that no longer exists, '<NULL>' for a missing text).
#
# Role and database OIDs, and the query ids of statements naming objects by
# OID, differ between clusters, so rows are aggregated by (role, database,
# toplevel, normalized text), summing calls and rows.  The text is normalized
# only where it carries something that depends on the cluster or the run
# directory, never on the extension:
#   - the run's own paths (input and output directories of the regression
#     suite), given as --replace PATH=TOKEN;
#   - temporary schema names pg_temp_N / pg_toast_temp_N, numbered by the
#     backend's proc number, which depends on scheduling;
#   - the names REFRESH MATERIALIZED VIEW CONCURRENTLY gives its work tables,
#     pg_temp_<OID of the view>_<n>, and their row type pg_temp_<OID>;
#   - OIDs the suite writes into statements it builds (\gset, \gexec): TOAST
#     tables pg_toast.pg_toast_<OID of the table>, LARGE OBJECT <OID>.
# What remains different between two runs of the same extension (the floor)
# is mostly which of several spellings of one query id concurrent tests
# store first (BEGIN / BEGIN TRANSACTION), texts with random values, and row
# counts of statements reading catalogs other tests change meanwhile.
#
# pg_stat_queries replaces every literal of a text with a placeholder, also
# where pg_stat_statements leaves it (values the parser keeps as strings in
# utility statements): keys whose texts are the same once every literal and
# placeholder is read as one (literal_free_form) are grouped like the keys
# of one query id, and every text of the candidate must be free of literals
# (a literal left fails the comparison whatever the counts).
#
# A second view, for reading only, aggregates by (role, database, toplevel,
# query id) instead, over the query ids all three runs have with a text in
# common (the candidate's and a reference's).  PostgreSQL 18 jumbles
# relations by name, so most query ids (not those of statements using
# functions, types or operators the suite creates) are the same in every
# cluster, and this view shows differences of counting apart from
# differences of the text stored for a statement.
#
# Usage:
#   regress-parity-compare.py [--replace PATH=TOKEN ...] [--show N]
#       [--tolerance N] REFERENCE.csv CANDIDATE.csv FLOOR.csv
#
# Compares REFERENCE (pg_stat_statements) with CANDIDATE (pg_stat_queries)
# and REFERENCE with FLOOR (pg_stat_statements again, the run-to-run noise),
# prints the figures and the first differing keys of each, and exits 0 when
# the candidate's differing keys (by text) are at most the floor's plus the
# tolerance.

import argparse
import csv
import re
import sys

csv.field_size_limit(sys.maxsize)

TEMP_NAME = re.compile(r'\b(pg_(?:toast_)?temp_)[0-9]+(_[0-9]+)?\b')
OIDS = [(re.compile(r'\bpg_toast_[0-9]+\b'), 'pg_toast_OID'),
        (re.compile(r'\b(LARGE OBJECT) [0-9]+\b', re.I), r'\1 OID')]


def normalize(text, replacements):
    for path, token in replacements:
        text = text.replace(path, token)
    text = TEMP_NAME.sub(lambda m: m.group(1) + ('N_N' if m.group(2) else 'N'), text)
    for pattern, repl in OIDS:
        text = pattern.sub(repl, text)
    return text


class Dump:
    """One run's rows, aggregated by text and by query id"""

    def __init__(self, path, replacements):
        self.by_text = {}       # (role, db, top, text) -> [calls, rows]
        self.by_id = {}         # (role, db, top, queryid) -> [calls, rows]
        self.id_text = {}       # (role, db, top, queryid) -> a text
        self.texts_of = {}      # queryid -> its texts
        self.ids_of = {}        # (role, db, top, text) -> its query ids
        with open(path, newline='') as f:
            for rec in csv.DictReader(f):
                text = normalize(rec['query'], replacements)
                head = (rec['rolname'], rec['datname'], rec['toplevel'])
                for agg, key in ((self.by_text, head + (text,)),
                                 (self.by_id, head + (rec['queryid'],))):
                    v = agg.setdefault(key, [0, 0])
                    v[0] += int(rec['calls'])
                    v[1] += int(rec['rows'])
                self.id_text.setdefault(head + (rec['queryid'],), text)
                self.ids_of.setdefault(head + (text,), set()).add(rec['queryid'])
                self.texts_of.setdefault(rec['queryid'], set()).add(text)


def compare(a, b):
    """Differing keys of two aggregates, by category"""
    only_a = sorted(k for k in a if k not in b)
    only_b = sorted(k for k in b if k not in a)
    both = sorted(k for k in a if k in b)
    calls = [k for k in both if a[k][0] != b[k][0]]
    rows = [k for k in both if a[k][1] != b[k][1]]
    keys = set(only_a) | set(only_b) | set(calls) | set(rows)
    return {'only_a': only_a, 'only_b': only_b, 'calls': calls,
            'rows': rows, 'total': len(keys)}


# The literal tokens of PostgreSQL's scanner, and what a literal-free text
# keeps as written: quoted identifiers, comments, parameters
TOKEN = re.compile(r"""
    (?P<keep>"(?:[^"]|"")*" | --[^\n]* | /\*.*?\*/)
  | (?P<param>\$[0-9]+)
  | (?P<dollar>\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$)
  | (?P<string>[eE]'(?:[^'\\]|\\.|'')*' | (?:[bBxX]|[uU]&)?'(?:[^']|'')*')
  | (?P<number>0[xXoObB][0-9A-Fa-f_]+ | (?:[0-9][0-9_]*\.?[0-9_]*|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?)
  | (?P<word>[A-Za-z_\x80-\uffff][A-Za-z_0-9$\x80-\uffff]*)
  | (?P<other>.)
""", re.S | re.X)


def literal_free_form(text):
    """
    A text with each literal and each placeholder read as '?', and the
    number of literals it has
    """
    out = []
    literals = 0
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        kind = m.lastgroup
        pos = m.end()
        if kind == 'dollar':
            end = text.find(m.group(), pos)
            pos = len(text) if end < 0 else end + len(m.group())
        if kind in ('dollar', 'string', 'number'):
            literals += 1
            out.append('?')
        elif kind == 'param':
            out.append('?')
        else:
            out.append(m.group())
    return ''.join(out), literals


LITERAL = re.compile(r"'|\b[0-9]")
PLACEHOLDER = re.compile(r'\\\$[0-9]+')


def spelling(text):
    """A text with case and runs of white space ignored"""
    return ' '.join(text.lower().split())


def normalized_form_of(norm, raw):
    """Whether norm is raw with some of its constants replaced by $n"""
    if '$' not in norm:
        return False
    pattern = PLACEHOLDER.sub(lambda m: '.+?', re.escape(spelling(norm)))
    return re.fullmatch(pattern, spelling(raw), re.S) is not None


def text_choices(ref, cand, c):
    """
    Differing keys explained by the choice of text alone: the keys of one
    statement (same role, database, level and query id) on both sides, whose
    calls and rows summed over each side are equal.  pg_stat_statements and
    pg_stat_queries keep one text per statement, and which one differs:
    between two runs of pg_stat_statements, which of several spellings
    concurrent tests store first; for pg_stat_queries also by design
    (README, "Normalization and literals"): where pg_stat_statements has no
    constant locations (SET ROLE name, a cursor's query run at FETCH) it
    stores the raw text with its constants, pg_stat_queries the normalized
    text the parser produced, or none.  Returns the explained keys and the
    groups (keys of A, keys of B).
    """
    differing = (set(c['only_a']) | set(c['only_b']) | set(c['calls']) |
                 set(c['rows']))
    statements = {}             # (role, db, top, queryid) -> ([A keys], [B keys])
    for side, dump in ((0, ref), (1, cand)):
        for k in differing:
            for q in dump.ids_of.get(k, ()):
                statements.setdefault(k[:3] + (q,), ([], []))[side].append(k)
            # the same text with literals and placeholders read as one
            if k in dump.by_text:
                form = ('literal-free', literal_free_form(k[3])[0])
                statements.setdefault(k[:3] + form, ([], []))[side].append(k)
    # one statement's keys may be another's too: merge groups sharing keys
    groups = []
    for a, b in statements.values():
        keys = set(a) | set(b)
        for g in [g for g in groups if g & keys]:
            groups.remove(g)
            keys |= g
        groups.append(keys)
    explained = set()
    shown = []
    for keys in groups:
        sums = [[sum(agg.get(k, [0, 0])[i] for k in keys) for i in (0, 1)]
                for agg in (ref.by_text, cand.by_text)]
        if sums[0] == sums[1]:
            explained |= keys
            shown.append((sorted(k for k in keys if k in ref.by_text),
                          sorted(k for k in keys if k in cand.by_text)))
    return explained, shown


def short(text, width=140):
    text = ' '.join(text.split())
    return text if len(text) <= width else text[:width - 3] + '...'


def describe(key, texts=None):
    """role/db top|nested text (for a query id key: id and a text of it)"""
    role, db, top, last = key
    if texts is not None:
        last = '%s %s' % (last, texts.get(key, '?'))
    return '%s/%s %s %s' % (role, db, 'top' if top == 't' else 'nested',
                            short(last))


def figures(c):
    return ('only in A: %d, only in B: %d, calls differ: %d, rows differ: %d, '
            'total differing keys: %d' % (len(c['only_a']), len(c['only_b']),
                                          len(c['calls']), len(c['rows']),
                                          c['total']))


def report(title, a, b, c, show, texts=None):
    print('== %s' % title)
    print('   ' + figures(c))
    # keys on both sides first, then those on one side ordered by text, so
    # that two spellings of one statement come next to each other
    lines = []
    for k in sorted(set(c['calls']) | set(c['rows'])):
        lines.append('  differ  calls %d/%d rows %d/%d  %s'
                     % (a[k][0], b[k][0], a[k][1], b[k][1], describe(k, texts)))
    one_side = [(k, 'A', a) for k in c['only_a']] + [(k, 'B', b) for k in c['only_b']]
    one_side.sort(key=lambda e: (str(texts.get(e[0], '') if texts else e[0][3]).lower(), e[1]))
    for k, side, agg in one_side:
        lines.append('  only %s  calls=%-6d rows=%-6d %s'
                     % (side, agg[k][0], agg[k][1], describe(k, texts)))
    for line in lines[:show]:
        print(line)
    if len(lines) > show:
        print('  ... %d more' % (len(lines) - show))


def same(x, y, k):
    """Whether two aggregates agree on a key (present in neither counts)"""
    if k in x and k in y:
        return x[k] == y[k]
    return k not in x and k not in y


def odd_ones(ref, cand, flo, show, texts=None):
    """Keys where the candidate differs from both reference runs, which agree"""
    keys = set(ref) | set(cand) | set(flo)
    odd = sorted(k for k in keys if same(ref, flo, k) and not same(ref, cand, k))
    for k in odd[:show]:
        a = ref.get(k, ['-', '-'])
        b = cand.get(k, ['-', '-'])
        print('  calls %s/%s rows %s/%s  %s' % (a[0], b[0], a[1], b[1], describe(k, texts)))
    if len(odd) > show:
        print('  ... %d more' % (len(odd) - show))
    return odd


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--replace', action='append', default=[], metavar='PATH=TOKEN')
    p.add_argument('--show', type=int, default=20)
    p.add_argument('--tolerance', type=int, default=0)
    p.add_argument('reference')
    p.add_argument('candidate')
    p.add_argument('floor')
    args = p.parse_args()

    # longest path first, so a directory inside another is replaced as a whole
    repl = sorted((tuple(r.split('=', 1)) for r in args.replace),
                  key=lambda r: -len(r[0]))
    ref = Dump(args.reference, repl)
    cand = Dump(args.candidate, repl)
    flo = Dump(args.floor, repl)
    print('keys (aggregated rows): A %d, B %d, floor %d'
          % (len(ref.by_text), len(cand.by_text), len(flo.by_text)))

    c_cand = compare(ref.by_text, cand.by_text)
    c_floor = compare(ref.by_text, flo.by_text)
    report('pgss vs pgsq (A = pg_stat_statements, B = pg_stat_queries)',
           ref.by_text, cand.by_text, c_cand, args.show)
    report('pgss vs pgss, the floor (A = pg_stat_statements, B = pg_stat_statements again)',
           ref.by_text, flo.by_text, c_floor, args.show)
    print('== pgsq differs where both pgss runs agree')
    odd = odd_ones(ref.by_text, cand.by_text, flo.by_text, args.show)
    print('   %d keys' % len(odd))

    # The same by query id: counting apart from the choice of text
    texts = dict(ref.id_text)
    texts.update((k, v) for k, v in cand.id_text.items() if k not in texts)
    # only query ids all three runs have, for statements with a text in
    # common: the others depend on OIDs, which also differ because the two
    # extensions create different objects (one id may then name another
    # statement in the other cluster)
    stable = {q for q in ref.texts_of.keys() & flo.texts_of.keys() & cand.texts_of.keys()
              if cand.texts_of[q] & (ref.texts_of[q] | flo.texts_of[q])}
    for d in (ref, cand, flo):
        d.by_id = {k: v for k, v in d.by_id.items() if k[3] in stable}
    i_cand = compare(ref.by_id, cand.by_id)
    i_floor = compare(ref.by_id, flo.by_id)
    print('== by query id instead of text, ids all runs have with a text in common (%d; for reading, '
          'not part of the verdict)' % len(stable))
    print('   pgss vs pgsq:  ' + figures(i_cand))
    print('   pgss vs pgss:  ' + figures(i_floor))
    print('== by query id, pgsq differs where both pgss runs agree')
    odd = odd_ones(ref.by_id, cand.by_id, flo.by_id, args.show, texts)
    print('   %d keys' % len(odd))

    # Texts of the candidate that keep a literal, and texts of the reference
    # that the candidate has only with placeholders in its literals' places
    leaks = sorted(k for k in cand.by_text if literal_free_form(k[3])[1] > 0)
    cand_forms = {k[:3] + (literal_free_form(k[3])[0],) for k in cand.by_text}
    changed = [k for k in ref.by_text
               if k not in cand.by_text and literal_free_form(k[3])[1] > 0 and
               k[:3] + (literal_free_form(k[3])[0],) in cand_forms]
    print('== texts of pgss with literals that pgsq stores with placeholders: %d keys'
          % len(changed))
    for k in changed[:args.show]:
        print('  ' + describe(k))
    print('== texts of pgsq that keep a literal: %d' % len(leaks))
    for k in leaks[:args.show]:
        print('  ' + describe(k))

    verdict = []
    for title, other, c in (('pgss vs pgsq', cand, c_cand), ('pgss vs pgss', flo, c_floor)):
        explained, groups = text_choices(ref, other, c)
        strict = compare({k: v for k, v in ref.by_text.items() if k not in explained},
                         {k: v for k, v in other.by_text.items() if k not in explained})
        print('== %s, with the texts of one statement grouped: %d statements (%d keys) differ '
              'only in the text kept' % (title, len(groups), len(explained)))
        for theirs, ours in groups[:args.show // 2]:
            print('  A %s' % '; '.join(describe(k) for k in theirs[:2]) +
                  (' ...' if len(theirs) > 2 else ''))
            print('  B %s' % '; '.join(describe(k) for k in ours[:2]) +
                  (' ...' if len(ours) > 2 else ''))
        report('%s, what differs beyond the text kept' % title, ref.by_text,
               other.by_text, strict, args.show)
        verdict.append(strict['total'])
    differing, floor = verdict
    print('== verdict: pgss vs pgsq %d differing keys beyond the text kept (%d by text), '
          'floor %d (%d by text), tolerance %d'
          % (differing, c_cand['total'], floor, c_floor['total'], args.tolerance))
    return 0 if differing <= floor + args.tolerance and not leaks else 1


if __name__ == '__main__':
    sys.exit(main())
