#!/usr/bin/env bash
# Transport compression: for generated LLM-like programs (fp32 and 4-bit) and every real XNNPACK program
# that packs, the size of the mappable cache, of `xpack pack --zstd` (default level), of `gzip -9` and
# `zstd -19` of the whole mappable file, and the throughput of `xpack inflate` (median of N runs, as the
# command reports it: bytes of mappable file written per second, fsync included). Checks on the way that
# every inflated file is byte-identical to the plain pack. Writes a markdown table (OUT/transport.md) and
# one JSON object per model (OUT/transport.jsonl).
#
# usage: bench/transport.sh --xpack PATH --genmodel PATH [--real DIR] [--out DIR] [--size 256M] [--reps 3]
set -euo pipefail
xpack="" genmodel="" real="" out="" size=256M reps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --xpack) xpack=$2; shift 2 ;;
    --genmodel) genmodel=$2; shift 2 ;;
    --real) real=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "transport.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$xpack" ] && [ -x "$genmodel" ] || { echo "transport.sh: --xpack and --genmodel must name executables" >&2; exit 2; }
for tool in gzip zstd python3; do
  command -v $tool > /dev/null || { echo "transport.sh: $tool is needed" >&2; exit 2; }
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d -p "$out")
trap 'rm -rf "$work"' EXIT
jsonl=$out/transport.jsonl
: > "$jsonl"

seconds() { python3 -c 'import time; print(time.monotonic())'; }

# measure NAME PACK_ARGS...: one JSON line for a model that packs; nothing for one that does not.
measure() {
  local name=$1; shift
  local raw=$work/$name.xpc z=$work/$name.z.xpc back=$work/$name.back.xpc t0 t1 t2
  t0=$(seconds)
  "$xpack" -q pack "$@" -o "$raw" > /dev/null
  t1=$(seconds)
  [ -f "$raw" ] || { echo "  $name: nothing to pack, skipped" >&2; return 0; }
  "$xpack" -q pack "$@" -o "$z" --zstd > /dev/null
  t2=$(seconds)
  local gz zs
  gz=$(gzip -9 -c "$raw" | wc -c)
  zs=$(zstd -19 -q -c "$raw" | wc -c)
  : > "$work/inflate.jsonl"
  for _ in $(seq "$reps"); do
    rm -f "$back"
    /usr/bin/env time -f '%M' -o "$work/rss.txt" "$xpack" inflate "$z" "$back" --json > "$work/i.json"
    cmp -s "$back" "$raw" || { echo "transport.sh: $name: inflated file differs from the plain pack" >&2; exit 1; }
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["max_rss_kb"]=int(open(sys.argv[2]).read().split()[-1]); print(json.dumps(d))' \
      "$work/i.json" "$work/rss.txt" >> "$work/inflate.jsonl"
  done
  python3 - "$name" "$raw" "$z" "$gz" "$zs" "$t0" "$t1" "$t2" "$work/inflate.jsonl" >> "$jsonl" <<'PY'
import json, os, statistics, sys
name, raw, z, gz, zs, t0, t1, t2, runs = sys.argv[1:]
runs = [json.loads(l) for l in open(runs)]
raw_size, z_size = os.path.getsize(raw), os.path.getsize(z)
print(json.dumps({
    "model": name, "raw_bytes": raw_size, "zstd_transport_bytes": z_size, "gzip9_bytes": int(gz),
    "zstd19_bytes": int(zs), "pack_seconds": float(t1) - float(t0), "pack_zstd_seconds": float(t2) - float(t1),
    "inflate_mb_per_s": statistics.median(r["output_mb_per_s"] for r in runs),
    "inflate_seconds": statistics.median(r["seconds"] for r in runs),
    "inflate_max_rss_kb": max(r["max_rss_kb"] for r in runs), "inflate_runs": len(runs)}))
PY
  echo "  $name: done" >&2
}

echo "generated models ($size of weights each)" >&2
"$genmodel" llm -o "$work/llm.pte" --size "$size" > /dev/null
measure "llm-$size-fp32" "$work/llm.pte"
rm -f "$work"/llm*
"$genmodel" llm-q4 -o "$work/q4.pte" --size "$size" > /dev/null
measure "llm-q4-$size" "$work/q4.pte"
rm -f "$work"/q4*
if [ -n "$real" ] && [ -d "$real" ]; then
  echo "real programs in $real" >&2
  for f in "$real"/*.pte; do
    [ -f "$f" ] || continue
    measure "$(basename "$f" .pte)" "$f" 2> /dev/null || true # programs without packed weights write nothing
  done
else
  echo "no real test data folder: generated models only" >&2
fi

python3 - "$jsonl" > "$out/transport.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def mib(n): return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 1024:.1f} KiB"
print("| model | mappable .xpc | xpack --zstd (19) | ratio | gzip -9 | ratio | zstd -19 | ratio | inflate MB/s | inflate peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    raw = r["raw_bytes"]
    print(f"| {r['model']} | {mib(raw)} | {mib(r['zstd_transport_bytes'])} | {r['zstd_transport_bytes'] / raw:.3f} "
          f"| {mib(r['gzip9_bytes'])} | {r['gzip9_bytes'] / raw:.3f} | {mib(r['zstd19_bytes'])} | {r['zstd19_bytes'] / raw:.3f} "
          f"| {r['inflate_mb_per_s']:.0f} | {r['inflate_max_rss_kb'] / 1024:.1f} MiB |")
PY
cat "$out/transport.md"
echo "JSON: $jsonl" >&2
