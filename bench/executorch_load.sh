#!/usr/bin/env bash
# load_method of stock ExecuTorch (the real runtime, tests/executorch/et_harness) in fresh processes:
#   nocache    weight cache off (XNNPACK packs every weight)
#   et_first   ExecuTorch's own packed_cache_path file, first launch: no file yet, it packs and writes it
#   et_second  the same file, second launch: it maps the file it wrote
#   xpack      xpack's export (xpack pack + xpack export --executorch), first launch of the app
#   adapter    xpack's loader inside ExecuTorch (xpack::et_adapter, et_harness_xpack, built here against
#              this build's `cmake --install`): xpack_et_adapter_attach with the flags apps are advised to
#              pass, then load_method with ExecuTorch's own cache off
# Each configuration runs REPS (>= 5) fresh processes, interleaved. The table gives medians of the per-process
# load time (load_method summed over the program's methods; for the adapter, plus xpack_et_adapter_attach,
# which opens, binds, sizes and probes), the ratio to nocache measured in the same run, and the weights packed
# anew / served from the file (et_harness's counts, last rep). With --execute every method also runs once,
# and a second table gives load + first execution (the cache's pages are first touched there) of nocache,
# xpack's export and the adapter; off by default: the harness's few portable kernels take seconds on some
# real programs (img_dec_small_q8: 10 s), in every configuration alike.
# The page cache is warm (files were just written or read); XNNPACK and the threadpool are initialized
# before timing (--pre-init: about 15 ms here, the same in every configuration), so the times are the
# program's. --pre-init then waits 50 ms: just after their creation
# the pool's threads spin-wait, and a load in that window took 8 to 27 ms instead of 0.4 here, at random,
# in every configuration. A sync before each process: nothing the one before wrote is written back during it.
#
#   bench/executorch_load.sh [--reps N] [--size 768M] [--real DIR] [--execute] [--out FILE.md]
# Environment: XPACK_BUILD_DIR (default: ./build; its tools/xpack, xpack-genmodel and its install),
# XNNPACK_PREFIX, XPACK_ET_VERSION (see tests/executorch/env.sh). Not a test: it prints Markdown tables
# (and writes them to --out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=5; size=768M; real="$root/../shared/testdata/real"; out=""; execute=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --real) real=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --execute) execute=1; shift ;;
    *) echo "usage: $0 [--reps N] [--size 768M] [--real DIR] [--execute] [--out FILE.md]" >&2; exit 2 ;;
  esac
done
[ "$reps" -ge 5 ] || { echo "--reps must be >= 5" >&2; exit 2; }
build=${XPACK_BUILD_DIR:-$root/build}
XPACK=$build/tools/xpack
XPACK_GENMODEL=$build/xpack-genmodel
source "$root/tests/executorch/env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/et_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The adapter's harness, built as an app would build it.
HX=$(et_build_adapter_harness "$work" "$build") || { echo "installing xpack or building et_harness_xpack failed" >&2; exit 1; }
# The flags docs/INTEGRATION.md advises apps to pass: XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD (and
# XPACK_OPEN_PROBE_EARLY, advised before 2026-11-29, which attach now ignores).
# XPACK_ADAPTER_FLAGS replaces them (e.g. 256, without XPACK_OPEN_SKIP_SMALL, to see where a served cache breaks even).
app_flags=${XPACK_ADAPTER_FLAGS:-$((0x80 | 0x100))}

# sum KEY LINE-PREFIX FILE: the sum of KEY=value over the lines that start with LINE-PREFIX.
sum() { awk -v k="$1=" -v p="$2" 'index($0, p) == 1 {for(i=1;i<=NF;i++) if(index($i, k) == 1) s += substr($i, length(k) + 1)} END{printf "%.3f", s}' "$3"; }
load_ms() { awk -v a="$(sum load_ms "method " "$1")" -v b="$(sum attach_ms "xpack " "$1")" 'BEGIN{printf "%.3f", a + b}'; }
start_ms() { awk -v a="$(load_ms "$1")" -v b="$(sum ms "execute " "$1")" 'BEGIN{printf "%.3f", a + b}'; }
total() { sed -n "s/^total .*\b$2=\([0-9]*\).*/\1/p" "$1"; }
median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) printf "%.3f", a[(NR+1)/2]; else printf "%.3f", (a[NR/2]+a[NR/2+1])/2 }'; }

rows=()
bench_program() { # name pte [ptd]
  local name=$1 pte=$2 r cfg data=()
  [ $# -ge 3 ] && data=(--data "$3")
  "$XPACK" pack "$pte" "${data[@]}" -o "$work/p.xpc" > /dev/null 2>&1 || { echo "  $name: xpack pack wrote nothing, skipped" >&2; return; }
  rm -f "$work/p.export"
  "$XPACK" export --executorch "$work/p.xpc" "$work/p.export" > /dev/null 2>&1 # nothing exported: no file, and n/a

  for cfg in "${configs[@]}"; do : > "$work/$cfg.ms"; : > "$work/$cfg.start"; done
  # timed CFG HARNESS ARGS...: one fresh process of configuration CFG, its load time appended to CFG.ms and its
  # load + first execution to CFG.start. The sync first: no write-back of what the one before wrote
  # (ExecuTorch's own file, the copied export) is in flight during its load, whichever configuration it is.
  timed() {
    local cfg=$1 harness=$2; shift 2
    sync
    local run_it=(--no-execute); [ $execute = 1 ] && run_it=()
    "$harness" "$pte" "${data[@]}" "$@" "${run_it[@]}" --pre-init > "$work/$cfg.txt" 2>/dev/null || return 1
    load_ms "$work/$cfg.txt" >> "$work/$cfg.ms"; echo >> "$work/$cfg.ms"
    start_ms "$work/$cfg.txt" >> "$work/$cfg.start"; echo >> "$work/$cfg.start"
  }
  for r in $(seq "$reps"); do
    timed nocache "$ET_HARNESS" --no-weight-cache || return
    rm -f "$work/own.packed"
    timed et_first "$ET_HARNESS" --cache-file "$work/own.packed" || return
    timed et_second "$ET_HARNESS" --cache-file "$work/own.packed" || return
    if [ -f "$work/p.export" ]; then
      cp "$work/p.export" "$work/app.packed"
      timed xpack "$ET_HARNESS" --cache-file "$work/app.packed" || return
    fi
    timed adapter "$HX" --xpack-cache "$work/p.xpc" --xpack-flags "$app_flags" || return
  done
  local row="| $name |" start_row="| $name |" cfg
  for cfg in "${configs[@]}"; do row+=" $(cell "$cfg" ms) |"; done
  for cfg in nocache xpack adapter; do start_row+=" $(cell "$cfg" start) |"; done
  [ -f "$work/p.export" ] || : > "$work/xpack.txt"
  row+=" $(total "$work/et_first.txt" packed) / $(total "$work/et_second.txt" from_file) / $(total "$work/xpack.txt" packed) / $(total "$work/xpack.txt" from_file) / $(total "$work/adapter.txt" from_file) of $(total "$work/et_second.txt" lookups) | $(adapter_cache "$work/adapter.txt") |"
  start_row+=" $(adapter_cache "$work/adapter.txt") |"
  rows+=("$row")
  start_rows+=("$start_row")
  echo "$row" >&2
  [ $execute = 1 ] && echo "$start_row" >&2
}
# adapter_cache FILE: whether the adapter's cache served (its hits) or was skipped (which flag skipped it).
adapter_cache() {
  local flag; flag=$(sed -n 's/^xpack refusal: skipped unread (\(XPACK_OPEN_SKIP_[A-Z]*\)).*/\1/p' "$1")
  if [ -n "$flag" ]; then echo "skipped ($flag)"; return; fi
  echo "served: $(sed -n 's/^xpack .*\bhits=\([0-9]*\).*/\1/p' "$1") of $(sed -n 's/^xpack .*\blookups=\([0-9]*\).*/\1/p' "$1") look-ups hit"
}
# cell CFG EXT: the median of CFG's samples and its ratio to nocache's (n/a without samples: nothing exported).
cell() {
  local m base
  grep -q . "$work/$1.$2" || { echo "n/a"; return; }
  m=$(grep . "$work/$1.$2" | median)
  base=$(grep . "$work/nocache.$2" | median)
  echo "$m ($(awk -v a="$m" -v b="$base" 'BEGIN{printf "%.3gx", a/b}'))"
}
configs=(nocache et_first et_second xpack adapter)
start_rows=()

echo "ExecuTorch runtime: $ET_PREFIX ($(sed -n 's/^EXECUTORCH_VERSION=//p' "$ET_PREFIX/et.env")), $reps fresh processes per configuration" >&2
"$XPACK_GENMODEL" llm --size "$size" -o "$work/llm.pte" > /dev/null || exit 1
bench_program "llm $size (fp32, prefill+decode)" "$work/llm.pte"
rm -f "$work/llm.pte" "$work/p.xpc" "$work/p.export" "$work/own.packed" "$work/app.packed"
# The generated kinds at their default sizes, as in docs/BENCHMARKS.md's never-slower table.
for kind in qd8-qc8w fp16 deconv conv ptd; do
  if [ $kind = ptd ]; then
    "$XPACK_GENMODEL" ptd -o "$work/g.pte" --ptd "$work/g.ptd" > /dev/null || exit 1
    bench_program "generated $kind" "$work/g.pte" "$work/g.ptd"
  else
    "$XPACK_GENMODEL" $kind -o "$work/g.pte" > /dev/null || exit 1
    bench_program "generated $kind" "$work/g.pte"
  fi
done
for f in conv linear129 qint8_linear small_cnn person_detect_fp32 person_detect_int8 stress_mlp img_dec_small_q8 img_enc_fp32; do
  [ -f "$real/$f.pte" ] && bench_program "real $f.pte" "$real/$f.pte"
done

{
  echo "load_method (ms, ratio to no cache):"
  echo
  echo "| program | nocache ms | ExecuTorch's cache, 1st launch | ExecuTorch's cache, 2nd launch | xpack export, 1st launch | xpack adapter (attach + load) | packed 1st / served 2nd / xpack packed / xpack served / adapter served of look-ups | adapter's cache |"
  echo "|---|---:|---:|---:|---:|---:|---|---|"
  printf '%s\n' "${rows[@]}"
  if [ $execute = 1 ]; then
    echo
    echo "load + first execution of every method (ms, ratio to no cache):"
    echo
    echo "| program | nocache ms | xpack export | xpack adapter | adapter's cache |"
    echo "|---|---:|---:|---:|---|"
    printf '%s\n' "${start_rows[@]}"
  fi
} | tee ${out:+"$out"}
