#!/usr/bin/env python3
"""PNG plots from `xpack bench --json` results: load + time to first inference, its ratio cache / no cache
(warm and cold) and RSS for nocache, cache_warm and cache_cold, one group of bars per model; with --sizes, pack and load against model size; with --open, open
time against entries. Needs matplotlib (Debian: python3-matplotlib; bench/run_all.sh installs it).

usage: plot.py -o OUT.png MODEL.json ... [--sizes size_scaling.json] [--open open_scaling.json]
               [--name FILE=LABEL ...]
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SHOWN = [("nocache", "#c44e52"), ("cache_warm", "#55a868"), ("cache_cold", "#4c72b0")]
RATIOS = [("cache_warm", "nocache", "#55a868"), ("cache_cold", "nocache_cold", "#4c72b0")]


def waited_ms(b):
    """What an app waits for: load + TTFI per variant (results before load_ttfi_ms: TTFI alone)."""
    return b.get("load_ttfi_ms") or b["ttfi_ms"]


def model_panels(ax_time, ax_ratio, ax_rss, results):
    n = len(results)
    width = 0.8 / len(SHOWN)
    for k, (v, color) in enumerate(SHOWN):
        xs = [i + (k - (len(SHOWN) - 1) / 2) * width for i in range(n)]
        ax_time.bar(xs, [waited_ms(b).get(v, 0) for _, b in results], width, label=v, color=color)
        ax_rss.bar(xs, [b["rss_bytes"].get(v, 0) / 2**20 for _, b in results], width, label=f"{v} RSS",
                   color=color)
        ax_rss.scatter(xs, [b["peak_rss_bytes"].get(v, 0) / 2**20 for _, b in results], marker="_", s=200,
                       color="black", zorder=3, label="peak RSS" if k == 0 else None)
    width = 0.8 / len(RATIOS)
    for k, (cache, base, color) in enumerate(RATIOS):
        xs = [i + (k - (len(RATIOS) - 1) / 2) * width for i in range(n)]
        ys = [waited_ms(b)[cache] / waited_ms(b)[base] if waited_ms(b).get(cache) and waited_ms(b).get(base) else 0
              for _, b in results]
        ax_ratio.bar(xs, ys, width, label=f"{cache} / {base}", color=color)
    ax_ratio.axhline(1, color="gray", linestyle="--", linewidth=1, label="never slower: 1")
    for ax in (ax_time, ax_ratio, ax_rss):
        ax.set_xticks(range(n))
        ax.set_xticklabels([label for label, _ in results], rotation=30, ha="right", fontsize=8)
        ax.legend(fontsize=8)
    ax_time.set_yscale("log")
    ax_time.set_ylabel("load + time to first inference, ms (log)")
    ax_time.set_title("open programs + replay + open cache + create runtime + first inference")
    ax_ratio.set_yscale("log")
    ax_ratio.set_ylabel("load + TTFI, cache / no cache (log)")
    ax_ratio.set_title("never slower: below the line")
    ax_rss.set_ylabel("MiB")
    ax_rss.set_title("RSS after first inference (bars), peak RSS (ticks)")


def size_panel(ax, path):
    runs = json.load(open(path))["runs"]
    for kind in sorted({r["kind"] for r in runs}):
        rs = [r for r in runs if r["kind"] == kind]
        x = [r["model_bytes"] / 2**20 for r in rs]
        ax.plot(x, [r["pack_wall_ms"] for r in rs], "o-", label=f"{kind}: xpack pack wall")
        ax.plot(x, [r["ttfi_ms"]["nocache"] for r in rs], "s--", label=f"{kind}: TTFI nocache")
        ax.plot(x, [r["ttfi_ms"]["cache_warm"] for r in rs], "^-", label=f"{kind}: TTFI cache_warm")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("model MiB")
    ax.set_ylabel("ms")
    ax.set_title("pack and load against model size")
    ax.legend(fontsize=7)


def open_panel(ax, path):
    points = json.load(open(path))["points"]
    small = [p for p in points if p["payload_bytes"] == points[0]["payload_bytes"]]
    ax.plot([p["entries"] for p in small], [p["open_us_median"] for p in small], "o-", label="median")
    ax.plot([p["entries"] for p in small], [p["open_us_min"] for p in small], "x:", label="min")
    for p in points:
        if p not in small:
            ax.scatter([p["entries"]], [p["open_us_median"]], marker="D", color="red",
                       label=f"{p['payload_bytes']} B weights", zorder=3)
    ax.axhline(50, color="gray", linestyle="--", linewidth=1, label="50 us target")
    ax.set_xscale("log")
    ax.set_xlabel("entries")
    ax.set_ylabel("xpack_cache_open, us")
    ax.set_title("open time against entries")
    ax.legend(fontsize=7)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--sizes")
    ap.add_argument("--open")
    ap.add_argument("--name", action="append", default=[], help="FILE=LABEL")
    a = ap.parse_args()
    names = dict(n.split("=", 1) for n in a.name)
    results = []
    for path in a.models:
        b = json.load(open(path))
        if b.get("nothing_to_pack"):
            continue
        label = names.get(path) or " ".join(os.path.basename(m) for m in b["models"])
        results.append((label, b))
    panels = (3 if results else 0) + (1 if a.sizes else 0) + (1 if a.open else 0)
    if panels == 0:
        ap.error("nothing to plot")
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 5.5), squeeze=False)
    axes = list(axes[0])
    if results:
        model_panels(axes.pop(0), axes.pop(0), axes.pop(0), results)
    if a.sizes:
        size_panel(axes.pop(0), a.sizes)
    if a.open:
        open_panel(axes.pop(0), a.open)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)


if __name__ == "__main__":
    main()
