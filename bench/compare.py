#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Across runs: how TCG distorts, and what the series costs unbound.

  bench/compare.py HOST_DIR VM_DIR OUT_DIR

HOST_DIR  a make bench run (summary.csv)
VM_DIR    a make vm-bench run: VM_DIR/patched, VM_DIR/unpatched and
          VM_DIR/key-*-N, each with summary.csv

Writes OUT_DIR/tcg.csv and tcg.png: the rows both runs have, each path's
cost over "none" on the host and in the guest, and the guest/host factor
(if TCG slowed everything alike, the factor would be one number); and
OUT_DIR/key.csv and key.png: "none" (nothing bound) in the patched and in
the unpatched kernel, per probe and boot.
"""
import csv
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot import STYLE, load  # noqa: E402


def key(r):
    return (r["group"], r["path"], r["shape"], r["n"], r["dir"], r["probe"])


def tcg(host, guest, out):
    h = {key(r): r for r in host}
    rows = []
    for g in guest:
        r = h.get(key(g))
        if not r or g["path"] == "none":
            continue
        hv = r["delta"] if r["delta"] is not None else \
            (r["median"] if r["probe"].startswith("tr") else None)
        gv = g["delta"] if g["delta"] is not None else \
            (g["median"] if g["probe"].startswith("tr") else None)
        if hv is None or gv is None:
            continue
        rows.append((key(g), hv, gv))
    with open(os.path.join(out, "tcg.csv"), "w") as f:
        w = csv.writer(f)
        w.writerow(["group", "path", "shape", "n", "dir", "probe", "host_ns",
                    "guest_ns", "guest_over_host"])
        for k, hv, gv in rows:
            w.writerow(list(k) + ["%.1f" % hv, "%.1f" % gv,
                                  "%.1f" % (gv / hv) if hv > 0 else ""])
    fig, ax = plt.subplots(figsize=(7, 6))
    for path in sorted({k[1] for k, _, _ in rows}):
        pts = [(hv, gv) for k, hv, gv in rows if k[1] == path
               and hv > 0 and gv > 0]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14,
                       color=STYLE.get(path, ("k",))[0], label=path)
    lo, hi = ax.get_xlim()
    ax.set_xscale("log")
    ax.set_yscale("log")
    for f in (1, 10, 100):
        ax.plot([1, 1e6], [f, f * 1e6], color="0.7", lw=0.6, ls="--")
    ax.set_xlim(max(lo, 1), hi)
    ax.set_xlabel("host: ns over nothing bound (test runs: ns per run)")
    ax.set_ylabel("guest (TCG): the same")
    ax.set_title("the same rows on the host and under TCG "
                 "(dashed: factor 1, 10, 100)", fontsize=9)
    ax.grid(True, which="both", lw=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "tcg.png"), dpi=110)
    plt.close(fig)


def key_rows(vm):
    out = []
    for d in sorted(os.listdir(vm)):
        p = os.path.join(vm, d, "summary.csv")
        if not os.path.exists(p):
            continue
        kernel = "unpatched" if "unpatched" in d else "patched"
        for r in load(os.path.join(vm, d)):
            if r["group"] == "hook" and r["path"] == "none" \
                    and r["median"] is not None:
                out.append((kernel, d, r))
    return out


def static_key(vm, out):
    rows = key_rows(vm)
    if not rows:
        return
    with open(os.path.join(out, "key.csv"), "w") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "boot", "probe", "unit", "rounds", "median",
                    "q1", "q3"])
        for k, d, r in rows:
            w.writerow([k, d, r["probe"], r["unit"], r["rounds"],
                        r["median"], r["q1"], r["q3"]])
    probes = sorted({r["probe"] for _, _, r in rows})
    fig, axes = plt.subplots(1, len(probes), figsize=(2.6 * len(probes), 4))
    if len(probes) == 1:
        axes = [axes]
    for ax, pr in zip(axes, probes):
        pts = [(k, d, r) for k, d, r in rows if r["probe"] == pr]
        for i, (k, d, r) in enumerate(pts):
            ax.bar(i, r["median"],
                   yerr=[[r["median"] - r["q1"]], [r["q3"] - r["median"]]],
                   color="tab:red" if k == "patched" else "0.6", capsize=2)
        ax.set_xticks(range(len(pts)))
        ax.set_xticklabels([d for _, d, _ in pts], rotation=70, fontsize=6)
        ax.set_title(pr, fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    axes[0].set_ylabel("ns, nothing bound (red: with the series)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "key.png"), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    host, vm, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    patched = os.path.join(vm, "patched")
    if os.path.exists(os.path.join(host, "summary.csv")) and \
            os.path.exists(os.path.join(patched, "summary.csv")):
        tcg(load(host), load(patched), out)
    static_key(vm, out)
    print("compare: %s" % " ".join(sorted(f for f in os.listdir(out)
                                          if f.endswith((".png", ".csv")))))


if __name__ == "__main__":
    main()
