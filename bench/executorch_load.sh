#!/usr/bin/env bash
# load_method of stock ExecuTorch (the real runtime, tests/executorch/et_harness) in fresh processes:
#   nocache    weight cache off (XNNPACK packs every weight)
#   et_first   ExecuTorch's own packed_cache_path file, first launch: no file yet, it packs and writes it
#   et_second  the same file, second launch: it maps the file it wrote
#   xpack      xpack's export (xpack pack + xpack export --executorch), first launch of the app
# Each configuration runs REPS (>= 5) fresh processes, interleaved; the table gives medians of the
# per-process load time (load_method summed over the program's methods), the ratio to nocache measured
# in the same run, and the weights packed anew / served from the file (et_harness's counts, last rep).
# The page cache is warm (files were just written or read); nothing is executed (--no-execute); XNNPACK
# and the threadpool are initialized before timing (--pre-init: about 15 ms here, the same in every
# configuration), so the times are the program's. --pre-init then waits 50 ms: just after their creation
# the pool's threads spin-wait, and a load in that window took 8 to 27 ms instead of 0.4 here, at random,
# in every configuration. A sync before each process: nothing the one before wrote is written back during it.
#
#   bench/executorch_load.sh [--reps N] [--size 768M] [--real DIR] [--out FILE.md]
# Environment: XPACK, XPACK_GENMODEL (default: ./build), XNNPACK_PREFIX, XPACK_ET_VERSION (see
# tests/executorch/env.sh). Not a test: it prints a Markdown table (and writes it to --out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=5; size=768M; real="$root/../shared/testdata/real"; out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --real) real=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--reps N] [--size 768M] [--real DIR] [--out FILE.md]" >&2; exit 2 ;;
  esac
done
[ "$reps" -ge 5 ] || { echo "--reps must be >= 5" >&2; exit 2; }
XPACK=${XPACK:-$root/build/tools/xpack}
XPACK_GENMODEL=${XPACK_GENMODEL:-$root/build/xpack-genmodel}
source "$root/tests/executorch/env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/et_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

load_ms() { awk '/^method /{for(i=1;i<=NF;i++) if($i ~ /^load_ms=/){sub("load_ms=","",$i); s+=$i}} END{printf "%.3f", s}' "$1"; }
total() { sed -n "s/^total .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) printf "%.3f", a[(NR+1)/2]; else printf "%.3f", (a[NR/2]+a[NR/2+1])/2 }'; }

rows=()
bench_program() { # name pte
  local name=$1 pte=$2 r cfg
  "$XPACK" pack "$pte" -o "$work/p.xpc" > /dev/null 2>&1 || { echo "  $name: xpack pack wrote nothing, skipped" >&2; return; }
  "$XPACK" export --executorch "$work/p.xpc" "$work/p.export" > /dev/null 2>&1
  [ -f "$work/p.export" ] || { echo "  $name: nothing exported, skipped" >&2; return; }
  for cfg in nocache et_first et_second xpack; do : > "$work/$cfg.ms"; done
  # timed CFG ARGS...: one fresh process of configuration CFG, its load time appended to CFG.ms. The sync first:
  # no write-back of what the one before wrote (ExecuTorch's own file, the copied export) is in flight during
  # its load, whichever configuration it is.
  timed() {
    local cfg=$1; shift
    sync
    "$ET_HARNESS" "$pte" "$@" --no-execute --pre-init > "$work/$cfg.txt" 2>/dev/null || return 1
    load_ms "$work/$cfg.txt" >> "$work/$cfg.ms"; echo >> "$work/$cfg.ms"
  }
  for r in $(seq "$reps"); do
    timed nocache --no-weight-cache || return
    rm -f "$work/own.packed"
    timed et_first --cache-file "$work/own.packed" || return
    timed et_second --cache-file "$work/own.packed" || return
    cp "$work/p.export" "$work/app.packed"
    timed xpack --cache-file "$work/app.packed" || return
  done
  local base; base=$(grep . "$work/nocache.ms" | median)
  local row="| $name |"
  for cfg in nocache et_first et_second xpack; do
    local m; m=$(grep . "$work/$cfg.ms" | median)
    row+=" $m ($(awk -v a="$m" -v b="$base" 'BEGIN{printf "%.3gx", a/b}')) |"
  done
  row+=" $(total "$work/et_first.txt" packed) / $(total "$work/et_second.txt" from_file) / $(total "$work/xpack.txt" packed) / $(total "$work/xpack.txt" from_file) of $(total "$work/xpack.txt" lookups) |"
  rows+=("$row")
  echo "$row" >&2
}

echo "ExecuTorch runtime: $ET_PREFIX ($(sed -n 's/^EXECUTORCH_VERSION=//p' "$ET_PREFIX/et.env")), $reps fresh processes per configuration" >&2
"$XPACK_GENMODEL" llm --size "$size" -o "$work/llm.pte" > /dev/null || exit 1
bench_program "llm $size (fp32, prefill+decode)" "$work/llm.pte"
rm -f "$work/llm.pte" "$work/p.xpc" "$work/p.export" "$work/own.packed" "$work/app.packed"
for f in conv linear129 qint8_linear small_cnn person_detect_fp32 person_detect_int8 stress_mlp img_dec_small_q8 img_enc_fp32; do
  [ -f "$real/$f.pte" ] && bench_program "real $f.pte" "$real/$f.pte"
done

{
  echo "| program | nocache ms | ExecuTorch's cache, 1st launch | ExecuTorch's cache, 2nd launch | xpack export, 1st launch | packed 1st / served 2nd / xpack packed / xpack served of look-ups |"
  echo "|---|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
} | tee ${out:+"$out"}
