#!/usr/bin/env python3
"""Markdown tables for docs/BENCHMARKS.md from the JSON of `xpack bench --json`, xpack-bench-open --json and
bench/size_scaling.sh. Standard library only.

usage: report.py [MODEL.json ...] [--open open_scaling.json] [--sizes size_scaling.json] [--name FILE=LABEL ...]
"""
import argparse
import json
import os

TARGET_MIN_BYTES = 64 << 20  # the targets table is shown for caches at least this large
VARIANTS = ["nocache", "cache_warm", "cache_cold", "nocache_cold", "ideal", "cache_cold_seq", "cache_cold_willneed"]


def mib(b):
    return f"{b / 2**20:.1f}"


def size(b):
    """A byte count for prose: KiB below 1 MiB, MiB above."""
    return f"{b / 2**10:.1f} KiB" if b < 2**20 else f"{b / 2**20:.1f} MiB"


def ms(x):
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def model_table(path, label):
    b = json.load(open(path))
    if b.get("nothing_to_pack"):
        return [f"### {label}", "", "Nothing to pack (no XNNPACK weight reaches a weights cache): not measured.", ""]
    out = [f"### {label}", ""]
    out.append(f"Model files {size(b['model_bytes'])}; cache {size(b['cache_file_bytes'])}, {b['entries']} "
               f"entries, {size(b['packed_bytes'])} packed (largest weight {size(b['largest_packed_bytes'])}); "
               f"medians of {b['reps']} runs, each in a fresh process.")
    if b["pack"]:
        p = b["pack"]
        runs = f" (median of {len(p['runs'])}; largest peak {size(p['peak_rss_max_bytes'])})" if "runs" in p else ""
        out.append(f"`xpack pack`: {ms(p['wall_ms'])} ms wall, peak RSS {size(p['peak_rss_bytes'])}{runs}.")
        if p.get("disk_write_ms"):
            out.append(f"The disk's floor for that pack, measured in the same run: writing and fsyncing a file of the "
                       f"cache's size beside it, without packing, {ms(p['disk_write_ms'])} ms (median; pack wall / "
                       f"floor {p['wall_ms'] / p['disk_write_ms']:.2f}).")
    out += ["", "| variant | open (+ prefetch) ms | create ms | 1st inference ms | TTFI ms | TTFI vs nocache | RSS MiB | "
            "Private_Dirty MiB | peak RSS MiB | major faults | minor faults | hits/look-ups |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    base = b["ttfi_ms"]["nocache"]
    for v in VARIANTS:
        if v not in b["ttfi_ms"]:
            continue
        hits = "-" if v.startswith("nocache") else f"{b['hits'][v]}/{b['lookups'][v]}"
        out.append(f"| {v} | {ms(b['open_ms'][v] + b.get('prefetch_ms', {}).get(v, 0))} | {ms(b['create_ms'][v])} | {ms(b['first_inference_ms'][v])} | "
                   f"{ms(b['ttfi_ms'][v])} | {b['ttfi_ms'][v] / base:.3f} | {mib(b['rss_bytes'][v])} | "
                   f"{mib(b['private_dirty_bytes'][v])} | {mib(b['peak_rss_bytes'][v])} | {b['major_faults'][v]} | "
                   f"{b['minor_faults'][v]} | {hits} |")
    cold = []
    for v, pc in b["page_cache"].items():
        if "dropped" in pc:
            cold.append(f"{v}: {size(pc['resident_bytes'])} of {size(pc['file_bytes'])} still cached after "
                        f"POSIX_FADV_DONTNEED" + ("" if pc["dropped"] else " (NOT dropped: not cold)"))
    if cold:
        out += ["", "Page cache before the cold runs (mincore): " + "; ".join(cold) + "."]
    if b["packed_bytes"] < TARGET_MIN_BYTES:
        out += ["", f"(Targets are set for LLM-sized caches: with {mib(b['packed_bytes'])} MiB packed, process start-up "
                "and fixed costs dominate, so the ratios are in the JSON only.)", ""]
        return out
    out += ["", "| target | value | limit | |", "|---|---:|---:|---|"]
    for t in b["targets"]:
        if t["value"] is None:
            out.append(f"| {t['name']} | n/a | {t['limit']:g} | |")
        else:
            out.append(f"| {t['name']} | {t['value']:.4f} | {t['limit']:g} | {'met' if t['met'] else '**missed**'} |")
    out.append("")
    return out


def signed_ms(x):
    return f"{x:+.3f}" if abs(x) < 10 else f"{x:+.1f}"


def difference(p):
    """The paired difference of load + TTFI (cache - no cache, within each repetition): median [interval]."""
    if p is None:
        return "-"
    return f"{signed_ms(p['median_ms'])} [{signed_ms(p['low_ms'])}, {signed_ms(p['high_ms'])}]"


def never_slower_table(paths, names):
    """One row per model: what an app waits for (load + TTFI), with the cache and without, warm and cold."""
    out = ["### Never slower: load + time to first inference, every model", "",
           "load = opening the programs and replaying the delegates (binding weights to the cache); TTFI = open the "
           "cache + prefetch it (`xpack_cache_prefetch`) + create the runtimes + first inference. Medians of fresh processes; ratios are cache / no cache "
           "in the same run. Cold open: page faults + read calls during `xpack_cache_open`, bytes the kernel fetched "
           "from the disk. Model read cold: bytes of the model files in the page cache after cache_cold's first "
           "inference (they were dropped before it). The cache is opened as apps are advised to "
           "(XPACK_OPEN_PROBE_EARLY | XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD, then `xpack_cache_prefetch`): a file under 128 KiB is skipped "
           "unread (\"skipped\"), and so is one under 1 MiB out of the page cache (\"skipped cold\"). Difference: load + "
           "TTFI with the cache minus without, within each repetition (the variants of a repetition run one shortly "
           "after the other): the median of those differences and, in brackets, the sign test's interval for it "
           "(97 % coverage for 21 repetitions, the whole range under 6); a miss is beyond the run's spread when that "
           "interval lies wholly above 0, within it when it holds 0.", "",
           "| model | cache file | nocache ms | cache_warm ms | warm ratio | warm difference ms | nocache_cold ms | "
           "cache_cold ms | cold ratio | cold difference ms | cold open I/Os, bytes | model read cold | |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for path in paths:
        b = json.load(open(path))
        if b.get("nothing_to_pack") or "load_ttfi_ms" not in b:
            continue
        t = b["load_ttfi_ms"]
        if not all(v in t for v in ("nocache", "cache_warm", "cache_cold", "nocache_cold")):
            continue
        warm, cold = t["cache_warm"] / t["nocache"], t["cache_cold"] / t["nocache_cold"]
        io = f"{b['open_major_faults']['cache_cold'] + b['open_read_calls']['cache_cold']}, " \
             f"{size(b['open_storage_bytes']['cache_cold'])}"
        read = f"{size(b['model_resident_bytes']['cache_cold'])} of {size(b['model_bytes'])}"
        paired = b.get("load_ttfi_paired", {})
        missed = [(side, paired.get(v)) for side, v, r in (("warm", "cache_warm", warm), ("cold", "cache_cold", cold))
                  if r > 1]
        verdict = "met" if not missed else "**missed** (" + ", ".join(
            side + ("" if p is None else ": beyond the run's spread" if p["low_ms"] > 0 else ": within the run's spread")
            for side, p in missed) + ")"
        refused_warm = (b.get("samples", {}).get("cache_warm") or [{}])[0].get("cache_refused") or ""
        refused_cold = (b.get("samples", {}).get("cache_cold") or [{}])[0].get("cache_refused") or ""
        if refused_warm.startswith("skipped"):
            verdict = "skipped, " + verdict
        elif "SKIP_COLD" in refused_cold:
            verdict = "skipped cold, " + verdict
        label = names.get(path) or " ".join(os.path.basename(m) for m in b.get("models", []))
        out.append(f"| {label} | {size(b['cache_file_bytes'])} | {ms(t['nocache'])} | {ms(t['cache_warm'])} | {warm:.3f} | "
                   f"{difference(paired.get('cache_warm'))} | {ms(t['nocache_cold'])} | {ms(t['cache_cold'])} | {cold:.3f} | "
                   f"{difference(paired.get('cache_cold'))} | {io} | {read} | {verdict} |")
    out.append("")
    return out


def open_table(path):
    o = json.load(open(path))
    cold = all("cold_open_us_median" in p for p in o["points"])
    out = [f"### Open cost against entries (xpack-bench-open, {o['reps']} opens each, file in the page cache)", "",
           "| entries | bytes per weight | file MiB | median us | min us | allocations per open | bytes allocated |"
           + (" cold us | cold I/Os | read cold |" if cold else ""),
           "|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if cold else "")]
    for p in o["points"]:
        row = (f"| {p['entries']:,} | {p['payload_bytes']:,} | {mib(p['file_bytes'])} | {p['open_us_median']:.1f} | "
               f"{p['open_us_min']:.1f} | {p['allocations']} | {p['allocated_bytes']:,} |")
        if cold:
            row += f" {p['cold_open_us_median']:.1f} | {p['cold_major_faults']} | {size(p['cold_resident_bytes'])} |"
        out.append(row)
    if cold:
        out += ["", "Cold: the median of 5 opens, each after dropping the file from the page cache; I/Os are the "
                "major faults of that open, \"read cold\" the bytes of the file in the page cache after it (the "
                "kernel's read-ahead included)."]
    out.append("")
    return out


def sizes_table(path):
    s = json.load(open(path))
    out = ["### Pack and load against model size (bench/size_scaling.sh)", "",
           "| kind | size | model MiB | packed MiB | pack wall s | pack peak RSS MiB | create nocache ms | "
           "create cache_warm ms | TTFI nocache ms | TTFI cache_warm ms | TTFI cache_cold ms | peak RSS nocache MiB | "
           "peak RSS cache_warm MiB | open us |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in s["runs"]:
        c, t, p = r["create_ms"], r["ttfi_ms"], r["peak_rss_bytes"]
        out.append(f"| {r['kind']} | {r['size']} | {mib(r['model_bytes'])} | {mib(r['packed_bytes'])} | "
                   f"{r['pack_wall_ms'] / 1e3:.2f} | {mib(r['pack_peak_rss_bytes'])} | {ms(c['nocache'])} | "
                   f"{ms(c['cache_warm'])} | {ms(t['nocache'])} | {ms(t['cache_warm'])} | "
                   f"{ms(t['cache_cold']) if 'cache_cold' in t else '-'} | {mib(p['nocache'])} | "
                   f"{mib(p['cache_warm'])} | {r['open_us']:.1f} |")
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--open")
    ap.add_argument("--sizes")
    ap.add_argument("--name", action="append", default=[], help="FILE=LABEL: the heading of a model's table")
    a = ap.parse_args()
    names = dict(n.split("=", 1) for n in a.name)
    lines = never_slower_table(a.models, names) if a.models else []
    machine = None
    for path in a.models:
        b = json.load(open(path))
        machine = machine or b.get("machine")
        label = names.get(path) or " ".join(os.path.basename(m) for m in b.get("models", [])) or path
        lines += model_table(path, label)
    if machine:
        lines = [f"Machine: {machine['cpu']}, {machine['cpus']} CPUs, {mib(machine['memory_bytes'])} MiB, Linux "
                 f"{machine['kernel']}.", ""] + lines
    if a.open:
        lines += open_table(a.open)
    if a.sizes:
        lines += sizes_table(a.sizes)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
