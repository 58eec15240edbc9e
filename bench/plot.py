#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Plots of one cgfw_bench run (DIR/summary.csv) into DIR/*.png.

  bench/plot.py DIR [--title TEXT]

rules-friendly.png, rules-mixed.png  ns/packet against rules, log-log
hook.png                             what a hook costs: bars per path
sets.png                             ns/packet against set size
cgroups.png                          ns/packet against bound cgroups
update.png                           one element into a large set
load.png                             apply time and kernel memory
Medians with the interquartile range as error bars; the dashed line is
the same run's "none".
"""
import csv
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "none": ("black", "-", "o"),
    "prog-empty": ("0.5", "-", "x"),
    "bpf": ("tab:blue", "-", "o"),
    "nft-native": ("tab:red", "-", "s"),
    "nft-emulated": ("tab:orange", "-", "^"),
    "both": ("tab:purple", "-", "D"),
    "composed": ("tab:olive", "-", "P"),
    "nft-socket": ("tab:brown", "--", "v"),
    "nft-socket-vmap": ("tab:pink", "--", "<"),
    "ipt-nft": ("tab:green", ":", ">"),
    "ipt-legacy": ("darkkhaki", ":", "p"),
    "systemd": ("tab:cyan", "-.", "*"),
    "systemd-unit": ("tab:gray", "-.", "h"),
}
ORDER = list(STYLE)


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def load(d):
    with open(os.path.join(d, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("n", "median", "q1", "q3", "min", "max", "delta",
                  "delta_q1", "delta_q3", "delta_round", "apply_ms",
                  "kmem_kb", "memlock_kb"):
            r[k] = num(r.get(k))
        # no adjacent baseline (the quick plan): the difference to the
        # round's "none", without a spread
        r["paired"] = r["delta"] is None and r["delta_round"] is not None
        if r["paired"]:
            r["delta"] = r["delta_q1"] = r["delta_q3"] = r["delta_round"]
    return rows


def label(rows, path):
    for r in rows:
        if r["path"] == path:
            return r["label"]
    return path


def paths_in(rows):
    seen = {r["path"] for r in rows}
    return [p for p in ORDER if p in seen] + sorted(seen - set(ORDER))


def curve(ax, rows, path, probe, xkey="n", ykey="median"):
    pts = sorted(((r[xkey], r) for r in rows
                  if r["path"] == path and r["probe"] == probe
                  and r[ykey] is not None and r[xkey] is not None),
                 key=lambda t: t[0])
    if not pts:
        return False
    c, ls, m = STYLE.get(path, ("k", "-", "."))
    xs = [x for x, _ in pts]
    ys = [r[ykey] for _, r in pts]
    if ykey == "median":
        lo = [r["median"] - r["q1"] for _, r in pts]
        hi = [r["q3"] - r["median"] for _, r in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], color=c, ls=ls, marker=m,
                    capsize=2, label=label(rows, path))
    else:
        ax.plot(xs, ys, color=c, ls=ls, marker=m, label=label(rows, path))
    return True


def none_line(ax, rows, group, probe):
    for r in rows:
        if r["group"] == group and r["path"] == "none" \
                and r["probe"] == probe and r["median"]:
            ax.axhline(r["median"], color="black", ls="--", lw=0.8,
                       label="nothing bound")
            return


def failed(rows):
    """setups that reported an error, for a note under a plot"""
    out = []
    for r in rows:
        if r["error"] and r["median"] is None:
            key = "%s %s n=%d: %s" % (r["path"], r["shape"], r["n"] or 0,
                                      r["error"][:70])
            if key not in out:
                out.append(key)
    return out


def note(fig, lines):
    if lines:
        fig.text(0.01, 0.005, "not measured: " + "; ".join(lines[:4]) +
                 (" ..." if len(lines) > 4 else ""), fontsize=6,
                 va="bottom", wrap=True)


def save(fig, d, name, title):
    if title:
        fig.suptitle(title, fontsize=9, y=0.995)
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    fig.savefig(os.path.join(d, name), dpi=110)
    plt.close(fig)


def plot_rules(rows, d, title):
    for shape in ("friendly", "mixed"):
        rs = [r for r in rows if r["group"] == "rules"
              and r["shape"] in (shape, "none")]
        if not any(r["shape"] == shape for r in rs):
            continue
        fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8))
        live = "udp4-eg-" + shape
        for p in paths_in(rs):
            if p != "none":
                curve(a, rs, p, live)
                curve(b, rs, p, "tr4-" + shape)
        none_line(a, rs, "rules", live)
        for ax in (a, b):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("rules")
            ax.grid(True, which="both", lw=0.3)
        a.set_ylabel("ns per packet (live UDP egress, IPv4)")
        b.set_ylabel("ns per run (BPF_PROG_TEST_RUN)")
        a.set_title("%s rules: live egress" % shape, fontsize=9)
        b.set_title("%s rules: the bpf program alone" % shape, fontsize=9)
        a.legend(fontsize=7)
        if b.lines:
            b.legend(fontsize=7)
        note(fig, failed([r for r in rs if r["shape"] == shape]))
        save(fig, d, "rules-%s.png" % shape, title)


def bars(ax, rs, cats, names):
    """grouped bars of the delta to none: one group per category
    (shape, dir, probe), one bar per path"""
    paths = [p for p in paths_in(rs)
             if any((r["shape"], r["dir"], r["probe"]) in cats
                    for r in rs if r["path"] == p)]
    w = 0.8 / max(len(paths), 1)
    for i, p in enumerate(paths):
        xs, ys, lo, hi = [], [], [], []
        for j, cat in enumerate(cats):
            for r in rs:
                if r["path"] == p and r["delta"] is not None and \
                        (r["shape"], r["dir"], r["probe"]) == cat:
                    xs.append(j + i * w)
                    ys.append(r["delta"])
                    lo.append(r["delta"] - r["delta_q1"])
                    hi.append(r["delta_q3"] - r["delta"])
        ax.bar(xs, ys, w, yerr=[lo, hi], color=STYLE.get(p, ("k",))[0],
               capsize=1.5, label=label(rs, p))
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(cats))])
    ax.set_xticklabels(names, fontsize=7)
    ax.axhline(0, color="black", lw=0.6)
    ax.grid(True, axis="y", lw=0.3)
    if paths:
        ax.legend(fontsize=6, ncol=4)


def plot_hook(rows, d, title):
    rs = [r for r in rows if r["group"] == "hook" and r["path"] != "none"]
    if not rs:
        return
    fig, axes = plt.subplots(4, 1, figsize=(12, 15))
    udp = [("udp4-eg", "egress", "IPv4 egress"),
           ("udp6-eg", "egress", "IPv6 egress"),
           ("udp4-in", "ingress", "IPv4 ingress"),
           ("udp6-in", "ingress", "IPv6 ingress")]
    cats, names = [], []
    for shape, what in (("elsewhere", "bound elsewhere"),
                        ("empty", "empty"), ("one", "one rule")):
        for pr, dr, n in udp:
            cats.append((shape, dr, pr))
            names.append("%s\n%s" % (what, n))
    bars(axes[0], rs, cats[:8], names[:8])
    bars(axes[1], rs, cats[8:], names[8:])
    axes[0].set_title("UDP: an empty chain or program bound to a sibling "
                      "cgroup (left), to the sender's (right)", fontsize=9)
    axes[1].set_title("UDP, one rule that does not match", fontsize=9)
    for ax in axes[:2]:
        ax.set_ylabel("ns per packet over nothing bound")
    cats, names = [], []
    for shape, what in (("empty", "empty"), ("one", "one rule")):
        for dr in ("egress", "ingress"):
            for pr in ("tcp4", "tcp6"):
                cats.append((shape, dr, pr))
                names.append("%s %s\n%s" % (what, dr,
                                            "IPv4" if pr == "tcp4" else
                                            "IPv6"))
    bars(axes[2], rs, cats, names)
    axes[2].set_title("TCP request/response over veth (one byte each way), "
                      "the chain in one direction", fontsize=9)
    axes[2].set_ylabel("ns per transaction over nothing bound")
    ax = axes[3]
    trs = [r for r in rs if r["probe"].startswith("tr")
           and r["median"] is not None]
    keys = []
    for r in trs:
        k = (r["path"], r["shape"], r["dir"], r["probe"])
        if k not in keys:
            keys.append(k)
    keys.sort(key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99,
                             k[1], k[2], k[3]))
    for i, k in enumerate(keys):
        r = next(r for r in trs if (r["path"], r["shape"], r["dir"],
                                    r["probe"]) == k)
        ax.bar(i, r["median"], 0.8,
               yerr=[[r["median"] - r["q1"]], [r["q3"] - r["median"]]],
               color=STYLE.get(k[0], ("k",))[0], capsize=1.5)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["%s %s %s %s" % (k[0], k[1], k[2][:2], k[3])
                        for k in keys], rotation=70, fontsize=6)
    ax.set_ylabel("ns per run (BPF_PROG_TEST_RUN)")
    ax.set_title("the programs alone", fontsize=9)
    ax.grid(True, axis="y", lw=0.3)
    save(fig, d, "hook.png", title)


def plot_sets(rows, d, title):
    rs = [r for r in rows if r["group"] == "sets"]
    if not [r for r in rs if r["path"] != "none"]:
        return
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    for col, shape in enumerate(("hash", "interval")):
        sr = [r for r in rs if r["shape"] == shape]
        for p in paths_in(sr):
            curve(axes[0][col], sr, p, "udp4-eg-set")
            curve(axes[1][col], sr, p, "tr4-set")
        none_line(axes[0][col], rs, "sets", "udp4-eg-set")
        axes[0][col].set_title("%s set: live egress" % shape, fontsize=9)
        axes[1][col].set_title("%s set: the bpf program alone" % shape,
                               fontsize=9)
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xscale("log")
            ax.set_xlabel("elements")
            ax.grid(True, which="both", lw=0.3)
            if ax.lines:
                ax.legend(fontsize=7)
        axes[0][col].set_ylabel("ns per packet")
        axes[1][col].set_ylabel("ns per run")
    note(fig, failed(rs))
    save(fig, d, "sets.png", title)


def plot_cgroups(rows, d, title):
    rs = [r for r in rows if r["group"] == "cgroups"]
    if not [r for r in rs if r["path"] != "none"]:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8),
                               gridspec_kw={"width_ratios": [3, 2]})
    flat = [r for r in rs if r["shape"] == "flat"]
    for p in paths_in(flat):
        curve(a, flat, p, "udp4-eg")
    none_line(a, rs, "cgroups", "udp4-eg")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("bound cgroups at one level (packets from the last)")
    a.set_ylabel("ns per packet (live UDP egress)")
    a.grid(True, which="both", lw=0.3)
    a.legend(fontsize=7)
    hier = [r for r in rs if r["shape"].startswith("hier")
            and r["probe"] == "udp4-eg"]
    paths = paths_in(hier)
    for i, p in enumerate(paths):
        for j, shape in enumerate(("hier-top", "hier-all")):
            for r in hier:
                if r["path"] == p and r["shape"] == shape \
                        and r["delta"] is not None:
                    b.bar(j + i * 0.8 / len(paths), r["delta"],
                          0.8 / len(paths),
                          yerr=[[r["delta"] - r["delta_q1"]],
                                [r["delta_q3"] - r["delta"]]],
                          color=STYLE.get(p, ("k",))[0], capsize=1.5,
                          label=label(rs, p) if j == 0 else None)
    b.set_xticks([0.4, 1.4])
    b.set_xticklabels(["bound at level 1 of 10", "bound at all 10 levels"],
                      fontsize=8)
    b.set_ylabel("ns over nothing bound, packets from the leaf")
    b.axhline(0, color="black", lw=0.6)
    b.grid(True, axis="y", lw=0.3)
    b.legend(fontsize=6)
    note(fig, failed(rs))
    save(fig, d, "cgroups.png", title)


def plot_update(rows, d, title):
    rs = [r for r in rows if r["group"] == "update"]
    if not rs:
        return
    fig, ax = plt.subplots(figsize=(10, 4.5))
    probes = ["update-raw", "update", "reapply"]
    names = {"update-raw": "the tool's own update (bpf_map_update_elem, "
             "nft add element)", "update": "cgfw update",
             "reapply": "re-apply the whole ruleset"}
    paths = paths_in(rs)
    w = 0.8 / len(probes)
    for j, pr in enumerate(probes):
        xs, ys = [], []
        for i, p in enumerate(paths):
            for r in rs:
                if r["path"] == p and r["probe"] == pr and r["median"]:
                    xs.append(i + j * w)
                    ys.append(r["median"])
        ax.bar(xs, ys, w, label=names[pr],
               color=("tab:green", "tab:blue", "tab:red")[j])
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(paths))])
    ax.set_xticklabels([label(rs, p) for p in paths], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("µs, wall time")
    n = next((r["n"] for r in rs if r["n"]), 0)
    ax.set_title("one element into a set of %d" % n, fontsize=9)
    ax.grid(True, axis="y", which="both", lw=0.3)
    ax.legend(fontsize=7)
    note(fig, failed(rs))
    save(fig, d, "update.png", title)


def plot_load(rows, d, title):
    rr = [r for r in rows if r["group"] == "rules" and r["path"] != "none"]
    sr = [r for r in rows if r["group"] == "sets" and r["path"] != "none"]
    if not rr and not sr:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for p in paths_in(rr):
        curve(axes[0], [r for r in rr if r["shape"] == "friendly"], p,
              "udp4-eg-friendly", ykey="apply_ms")
        curve(axes[1], [r for r in rr if r["shape"] == "mixed"], p,
              "udp4-eg-mixed", ykey="apply_ms")
    for p in paths_in(sr):
        curve(axes[2], [r for r in sr if r["shape"] == "hash"], p,
              "udp4-eg-set", ykey="kmem_kb")
    for ax, t in zip(axes, ("apply time, friendly rules",
                            "apply time, mixed rules",
                            "kernel memory, hash set")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(t, fontsize=9)
        ax.grid(True, which="both", lw=0.3)
        if ax.lines:
            ax.legend(fontsize=6)
    axes[0].set_xlabel("rules")
    axes[1].set_xlabel("rules")
    axes[2].set_xlabel("elements")
    axes[0].set_ylabel("ms, wall time of the whole command")
    axes[2].set_ylabel("kB: SUnreclaim + VmallocUsed + Percpu, after - before")
    save(fig, d, "load.png", title)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d = args[0]
    title = args[args.index("--title") + 1] if "--title" in args else ""
    if not title and os.path.exists(os.path.join(d, "env.txt")):
        env = dict(line.rstrip("\n").split(": ", 1)
                   for line in open(os.path.join(d, "env.txt"))
                   if ": " in line)
        title = "%s, %s CPUs, %s; %s rounds of %s s a probe" % (
            env.get("kernel", "").split(" ")[0], env.get("cpus", "?"),
            env.get("cpu", "").strip(), env.get("rounds", "?"),
            env.get("secs per probe", "?"))
        if "icount" in env:
            # bench/vm.sh VM_BENCH_ICOUNT: the guest's clock counted
            title += "; -icount %s: a guest instruction is 2^%s ns" % (
                env["icount"].split(" ")[0],
                env["icount"].split("=")[1].split(" ")[0])
    rows = load(d)
    for fn in (plot_rules, plot_hook, plot_sets, plot_cgroups, plot_update,
               plot_load):
        fn(rows, d, title)
    print("plots: %s" % " ".join(sorted(f for f in os.listdir(d)
                                        if f.endswith(".png"))))


if __name__ == "__main__":
    main()
