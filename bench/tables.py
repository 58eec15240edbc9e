#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of docs/benchmarks.rst, from one run's summary.csv.

  bench/tables.py DIR [GROUP...]

Prints reStructuredText: for each row the median, and the interquartile
range in brackets; live rows as ns over the same run's "none" (paired by
round), test runs as ns per run, updates in µs. "-" where the setup
failed (the reason is listed under the table).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot import ORDER, load  # noqa: E402


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 100000:
        return "{:,.0f}".format(v)
    if a >= 100:
        return "{:,.0f}".format(v)
    return "{:.1f}".format(v) if a < 10 else "{:.0f}".format(v)


def cell(r, delta=True):
    if r is None:
        return "-"
    if num_or0(r.get("rounds")) < 2 or (delta and r.get("paired")):
        # no spread: one value, or the round-paired difference
        v = r["delta"] if delta and r["delta"] is not None else r["median"]
        return fmt(v)
    if delta and r["delta"] is not None:
        return "%s [%s, %s]" % (fmt(r["delta"]), fmt(r["delta_q1"]),
                                fmt(r["delta_q3"]))
    if r["median"] is None:
        return "-"
    return "%s [%s, %s]" % (fmt(r["median"]), fmt(r["q1"]), fmt(r["q3"]))


def num_or0(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return 0


def table(head, rows):
    w = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = "  ".join("=" * n for n in w)
    out = [line, "  ".join(str(h).ljust(n) for h, n in zip(head, w)), line]
    for r in rows:
        out.append("  ".join(str(c).ljust(n) for c, n in zip(r, w)))
    out.append(line)
    return "\n".join(out)


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def paths(rows):
    seen = {r["path"] for r in rows}
    return [p for p in ORDER if p in seen and p != "none"]


def errors(rows):
    out = []
    for r in rows:
        if r["error"] and r["median"] is None:
            e = "%s %s n=%d: %s" % (r["path"], r["shape"], r["n"] or 0,
                                    r["error"].split("; the end")[0][:160])
            if e not in out:
                out.append(e)
    return out


def hook(rows):
    rs = [r for r in rows if r["group"] == "hook"]
    cols = [("elsewhere", "udp4-eg"), ("empty", "udp4-eg"),
            ("empty", "udp6-eg"), ("empty", "udp4-in"), ("one", "udp4-eg"),
            ("one", "udp6-eg"), ("one", "udp4-in"), ("one", "udp6-in"),
            ("one", "tcp4"), ("one", "tcp6")]
    head = ["path"] + ["%s %s" % c for c in cols]
    body = []
    for p in paths(rs):
        line = [p]
        for shape, probe in cols:
            r = None
            for x in rs:
                if x["path"] == p and x["shape"] == shape and \
                        x["probe"] == probe and (
                            not probe.startswith("tcp") or
                            x["dir"] == "egress"):
                    r = x
            line.append(cell(r))
        body.append(line)
    none = [find(rs, path="none", probe=pr) for pr in
            ("udp4-eg", "udp6-eg", "udp4-in", "udp6-in", "tcp4", "tcp6")]
    print("Nothing bound: " + ", ".join(
        "%s %s" % (r["probe"], cell(r, False)) for r in none if r))
    print()
    print(table(head, body))
    tr = [r for r in rs if r["probe"].startswith("tr")
          and r["median"] is not None]
    print()
    body = []
    for p in paths(tr):
        line = [p]
        for shape, d, pr in (("empty", "egress", "tr4"),
                             ("empty", "egress", "tr6"),
                             ("one", "egress", "tr4"),
                             ("one", "egress", "tr6"),
                             ("one", "ingress", "tr4")):
            line.append(cell(find(tr, path=p, shape=shape, dir=d, probe=pr),
                             False))
        body.append(line)
    print(table(["path", "empty tr4", "empty tr6", "one tr4", "one tr6",
                 "one ingress tr4"], body))


def scaling(rows, group, shape, probe, xs_label):
    rs = [r for r in rows if r["group"] == group and r["shape"] == shape]
    ns = sorted({r["n"] for r in rs if r["n"]})
    if not ns:
        return
    head = ["path"] + ["%s %d" % (xs_label, n) for n in ns]
    body = []
    for p in paths(rs):
        body.append([p] + [cell(find(rs, path=p, n=n, probe=probe))
                           for n in ns])
    print(table(head, body))
    tr = [r for r in rs if r["probe"].startswith("tr")]
    if tr:
        print()
        body = []
        for p in paths(tr):
            probes = sorted({r["probe"] for r in tr if r["path"] == p})
            for pr in probes:
                name = p if len(probes) == 1 else "%s %s" % (p, pr)
                body.append([name] + [cell(find(tr, path=p, n=n, probe=pr),
                                           False) for n in ns])
        print(table(["test run"] + head[1:], body))
    ld = [r for r in rs if r["apply_ms"] is not None]
    if ld:
        print()
        body = []
        for p in paths(ld):
            line = [p]
            for n in ns:
                r = find(ld, path=p, n=n)
                line.append("-" if not r else "%s ms, %s kB" % (
                    fmt(r["apply_ms"]), fmt(r["kmem_kb"])))
            body.append(line)
        print(table(["apply, kernel memory"] + head[1:], body))


def update(rows):
    rs = [r for r in rows if r["group"] == "update"]
    body = []
    for p in paths(rs):
        body.append([p] + [cell(find(rs, path=p, probe=pr), False)
                           for pr in ("update-raw", "update", "reapply")])
    print(table(["path", "in place (tool)", "cgfw update", "re-apply"], body))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    groups = sys.argv[2:] or ["hook", "rules", "sets", "cgroups", "update"]
    for g in groups:
        print(".. %s" % g)
        print()
        if g == "hook":
            hook(rows)
        elif g == "rules":
            for shape in ("friendly", "mixed"):
                scaling(rows, "rules", shape, "udp4-eg-" + shape, "rules")
                print()
        elif g == "sets":
            for shape in ("hash", "interval"):
                scaling(rows, "sets", shape, "udp4-eg-set", shape)
                print()
        elif g == "cgroups":
            scaling(rows, "cgroups", "flat", "udp4-eg", "cgroups")
            print()
            for shape in ("hier-top", "hier-all"):
                rs = [r for r in rows if r["group"] == "cgroups"
                      and r["shape"] == shape]
                print("%s: %s" % (shape, ", ".join(
                    "%s %s" % (p, cell(find(rs, path=p, probe="udp4-eg")))
                    for p in paths(rs))))
        elif g == "update":
            update(rows)
        errs = errors([r for r in rows if r["group"] == g])
        if errs:
            print()
            for e in errs:
                print("* " + e)
        print()


if __name__ == "__main__":
    main()
