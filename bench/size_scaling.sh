#!/usr/bin/env bash
# Pack and load against model size: generates LLM-like programs of several sizes (xpack-genmodel --size), runs
# `xpack bench` on each (which packs, timing `xpack pack` and its peak RSS) and writes one JSON per model plus
# OUT/size_scaling.json, a summary with one row per model. Each model is deleted once measured.
#
# usage: size_scaling.sh --xpack XPACK --genmodel GEN --out DIR [--sizes 16M,64M,256M,1G,4G] [--kinds llm,llm-q4]
#                        [--reps N] [--variants LIST]
# A 4G fp32 model needs about 13 GB of memory for the nocache variant (mapped raw weights plus one packed copy
# per method) and 8 GB of disk (model and cache).
set -euo pipefail
XPACK=; GEN=; OUT=; SIZES=16M,64M,256M,1G,4G; KINDS=llm,llm-q4; REPS=3; VARIANTS=
usage() { sed -n '2,10p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --xpack) XPACK=$2; shift 2;;
    --genmodel) GEN=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --sizes) SIZES=$2; shift 2;;
    --kinds) KINDS=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    --variants) VARIANTS=$2; shift 2;;
    *) usage;;
  esac
done
[ -n "$XPACK" ] && [ -n "$GEN" ] && [ -n "$OUT" ] || usage
mkdir -p "$OUT"
work=$(mktemp -d "$OUT/models.XXXXXX"); trap 'rm -rf "$work"' EXIT
extra=(); [ -n "$VARIANTS" ] && extra=(--variants "$VARIANTS")
for kind in ${KINDS//,/ }; do
  for size in ${SIZES//,/ }; do
    model="$work/${kind}_${size}.pte"
    echo "== $kind $size" >&2
    "$GEN" "$kind" --size "$size" -o "$model" > /dev/null
    TMPDIR=$work "$XPACK" bench "$model" --reps "$REPS" "${extra[@]}" --json > "$OUT/size_${kind}_${size}.json"
    rm -f "$model"
  done
done
python3 - "$OUT" "$KINDS" "$SIZES" <<'PY'
import json, sys
out, kinds, sizes = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
runs = []
for kind in kinds:
    for size in sizes:
        b = json.load(open(f"{out}/size_{kind}_{size}.json"))
        runs.append({
            "kind": kind, "size": size, "model_bytes": b["model_bytes"], "packed_bytes": b["packed_bytes"],
            "entries": b["entries"], "pack_wall_ms": b["pack"]["wall_ms"],
            "pack_peak_rss_bytes": b["pack"]["peak_rss_bytes"], "largest_packed_bytes": b["largest_packed_bytes"],
            "open_us": b["open_us"], "create_ms": b["create_ms"], "ttfi_ms": b["ttfi_ms"],
            "peak_rss_bytes": b["peak_rss_bytes"], "private_dirty_bytes": b["private_dirty_bytes"],
        })
json.dump({"runs": runs}, open(f"{out}/size_scaling.json", "w"), indent=1)
PY
echo "wrote $OUT/size_scaling.json" >&2
