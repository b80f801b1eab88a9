#!/usr/bin/env bash
# Every benchmark of docs/BENCHMARKS.md, on a quiet machine: open scaling, the generated LLM-like programs (fp32
# and 4-bit), every file of the real test data, pack and load against size, parallel packing; then the tables and PNG
# plot. With --docs it also rewrites the measured part of docs/BENCHMARKS.md (between its bench:begin and
# bench:end markers; nothing else in the file is touched) and docs/benchmarks.png.
#
# usage: bench/run_all.sh [--build DIR] [--out DIR] [--reps N] [--small-reps N] [--llm-size 768M]
#                         [--sizes 16M,...,4G] [--real DIR] [--no-sizes] [--docs]
# Defaults: --build build, --out bench-out, --reps 5, --small-reps 21 (the generated kinds at their default
# sizes and the real files: runs of 0.1 to 200 ms, whose medians need more runs to settle), --llm-size 768M,
# --sizes 16M,64M,256M,1G,4G, --real ../shared/testdata/real. The 4G size needs 13 GB of memory, 8 GB of disk.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build; OUT=$ROOT/bench-out; REPS=5; SMALL_REPS=21; LLM_SIZE=768M; SIZES=16M,64M,256M,1G,4G
REAL=$ROOT/../shared/testdata/real; DO_SIZES=1; DOCS=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2;;
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    --small-reps) SMALL_REPS=$2; shift 2;;
    --llm-size) LLM_SIZE=$2; shift 2;;
    --sizes) SIZES=$2; shift 2;;
    --real) REAL=$2; shift 2;;
    --no-sizes) DO_SIZES=0; shift;;
    --docs) DOCS=1; shift;;
    *) sed -n '2,11p' "$0" >&2; exit 2;;
  esac
done
XPACK=$BUILD/tools/xpack; GEN=$BUILD/xpack-genmodel; OPEN=$BUILD/xpack-bench-open
for t in "$XPACK" "$GEN" "$OPEN"; do [ -x "$t" ] || { echo "missing $t: build first (tools/dev.sh)" >&2; exit 3; }; done
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
say() { echo "== $*" >&2; }

# The plot needs matplotlib: Debian's python3-matplotlib, for Debian's python3.
PY=/usr/bin/python3
if ! $PY -c 'import matplotlib' 2> /dev/null; then
  say "installing python3-matplotlib (Debian)"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    python3-matplotlib > /dev/null
fi

say "machine"; { uname -a; nproc; grep -m1 'model name' /proc/cpuinfo; grep MemTotal /proc/meminfo; uptime; } \
  | tee "$OUT/machine.txt" >&2

say "open cost against entries"
"$OPEN" --json > "$OUT/open_scaling.json"

work=$(mktemp -d "$OUT/work.XXXXXX"); trap 'rm -rf "$work"' EXIT
models=(); names=()
for kind in llm llm-q4; do
  say "generated $kind $LLM_SIZE"
  "$GEN" "$kind" --size "$LLM_SIZE" -o "$work/$kind.pte" > /dev/null
  TMPDIR=$work "$XPACK" bench "$work/$kind.pte" --reps "$REPS" --readahead --json > "$OUT/model_$kind.json"
  rm -f "$work/$kind.pte"
  models+=("$OUT/model_$kind.json")
  label="generated LLM-like, $LLM_SIZE, "; [ $kind = llm ] && label+="fp32" || label+="4-bit (qc4w/qb4w)"
  names+=(--name "$OUT/model_$kind.json=$label")
done

# Every other generated kind at its default size: the small and medium programs most apps ship.
for kind in $("$GEN" --list | awk '{print $1}'); do
  case "$kind" in llm|llm-q4) continue ;; esac
  say "generated $kind (default size)"
  data=() ptd=(); [ "$kind" = ptd ] && data=(--data "$work/$kind.ptd") ptd=(--ptd "$work/$kind.ptd")
  "$GEN" "$kind" -o "$work/$kind.pte" "${ptd[@]}" > /dev/null
  set +e; TMPDIR=$work "$XPACK" -q bench "$work/$kind.pte" "${data[@]}" --reps "$SMALL_REPS" --json > "$OUT/gen_$kind.json" \
    2> "$work/err.txt"; st=$?; set -e
  rm -f "$work/$kind.pte" "$work/$kind.ptd"
  if [ $st != 0 ]; then
    echo "   $kind: not measured (exit $st: $(head -c 200 "$work/err.txt"))" >&2; rm -f "$OUT/gen_$kind.json"; continue
  fi
  models+=("$OUT/gen_$kind.json"); names+=(--name "$OUT/gen_$kind.json=generated: $kind")
done

if [ -d "$REAL" ]; then
  for f in "$REAL"/*.pte; do
    n=$(basename "$f" .pte)
    say "real $n"
    set +e; TMPDIR=$work "$XPACK" -q bench "$f" --reps "$SMALL_REPS" --json > "$OUT/real_$n.json" 2> "$work/err.txt"; st=$?; set -e
    if [ $st != 0 ]; then
      echo "   $n: not measured (exit $st: $(head -c 200 "$work/err.txt"))" >&2; rm -f "$OUT/real_$n.json"; continue
    fi
    if grep -q '"nothing_to_pack"' "$OUT/real_$n.json"; then
      echo "   $n: nothing to pack" >&2; echo "$n" >> "$OUT/nothing_to_pack.txt"; rm -f "$OUT/real_$n.json"; continue
    fi
    models+=("$OUT/real_$n.json"); names+=(--name "$OUT/real_$n.json=real: $n.pte")
  done
else
  say "no real test data at $REAL: skipped"
fi

size_args=()
if [ $DO_SIZES = 1 ]; then
  say "pack and load against size: $SIZES"
  bash "$ROOT/bench/size_scaling.sh" --xpack "$XPACK" --genmodel "$GEN" --out "$OUT/sizes" --sizes "$SIZES" \
    --kinds llm,llm-q4 --reps "$REPS" --variants nocache,cache_warm,cache_cold
  size_args=(--sizes "$OUT/sizes/size_scaling.json")
fi

say "parallel packing: --jobs 1 against --jobs 2, and two processes at once"
bash "$ROOT/bench/parallel_pack.sh" --xpack "$XPACK" --genmodel "$GEN" --out "$OUT/parallel" --size "$LLM_SIZE" \
  --delegates 8 --reps 3 > /dev/null

python3 "$ROOT/bench/report.py" "${models[@]}" "${names[@]}" --open "$OUT/open_scaling.json" "${size_args[@]}" \
  > "$OUT/tables.md"
{ printf '\n### Parallel packing (bench/parallel_pack.sh, medians of 3; same bytes for every --jobs)\n\n'
  cat "$OUT/parallel/parallel_pack.md"; } >> "$OUT/tables.md"
[ -f "$OUT/nothing_to_pack.txt" ] && printf '\nNothing to pack (not measured): %s.\n' \
  "$(paste -sd, "$OUT/nothing_to_pack.txt" | sed 's/,/, /g')" >> "$OUT/tables.md"
$PY "$ROOT/bench/plot.py" -o "$OUT/benchmarks.png" "${models[@]}" "${names[@]}"
$PY "$ROOT/bench/plot.py" -o "$OUT/scaling.png" --open "$OUT/open_scaling.json" "${size_args[@]}"
say "wrote $OUT/tables.md, $OUT/benchmarks.png, $OUT/scaling.png and the JSON beside them"

if [ $DOCS = 1 ]; then
  cp "$OUT/benchmarks.png" "$ROOT/docs/benchmarks.png"
  cp "$OUT/scaling.png" "$ROOT/docs/benchmarks-scaling.png"
  python3 - "$ROOT/docs/BENCHMARKS.md" "$OUT/tables.md" <<'PY'
import sys
doc, tables = sys.argv[1], open(sys.argv[2]).read()
text = open(doc).read()
begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
i, j = text.index(begin) + len(begin), text.index(end)
open(doc, "w").write(text[:i] + "\n" + tables.rstrip() + "\n" + text[j:])
PY
  say "updated docs/BENCHMARKS.md (between the bench markers), docs/benchmarks.png, docs/benchmarks-scaling.png"
fi
