#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (tests/fuzz/CMakeLists.txt), makes seed corpora from real
# and generated files, runs each fuzzer for XPACK_FUZZ_SECONDS (default 60, as issue #4 asks) and fails on any finding.
#
# usage: run_fuzzers.sh --work DIR [--real DIR] [--xpack PATH] [--subgraphs PATH] [--et-dump PATH]
#                       [--genmodel PATH] [--xnnpack PREFIX] [--only NAME]
#   --work       build dir, seeds, growing corpora and crash artifacts go under DIR
#   --real       the real .pte/.ptd folder (seeds; optional)
#   --xpack      the xpack CLI: `xpack pack` makes cache seeds from the real files, `--zstd` inflate seeds
#   --subgraphs  tests/core's xpack-subgraphs: `pack OUT.xpc` makes a cache seed
#   --et-dump    tests/et's et_dump: `--blobs DIR model.pte` cuts XNNPACK delegate blobs out (seeds)
#   --genmodel   the fixture generator: generated .pte/.ptd seeds
#   --xnnpack    XNNPACK's install prefix: builds fuzz_replay (replay and run through the real XNNPACK) and
#                fuzz_loader (the loader's open and look-ups, its families' probes on the real XNNPACK)
#   --only NAMES run only these fuzzers (pte, xnngraph, cache, inflate, archive, replay, loader; several separated
#                by spaces or commas); XPACK_FUZZ_ONLY=NAMES too
# Environment: XPACK_FUZZ_SECONDS (per fuzzer, default 60), CC_FUZZ (default clang),
#              XPACK_FUZZ_ARGS (extra libFuzzer flags, e.g. "-jobs=4 -workers=4").
# Exit: 0 clean, 1 a fuzzer found something (or the build failed), 77 skipped (no clang).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="" real="" xpack="" subgraphs="" et_dump="" genmodel="" xnnpack="" only=${XPACK_FUZZ_ONLY:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --real) real=$2; shift 2 ;;
    --xpack) xpack=$2; shift 2 ;;
    --subgraphs) subgraphs=$2; shift 2 ;;
    --et-dump) et_dump=$2; shift 2 ;;
    --genmodel) genmodel=$2; shift 2 ;;
    --xnnpack) xnnpack=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "run_fuzzers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$work" ] || { echo "run_fuzzers.sh: --work DIR is required" >&2; exit 2; }
seconds=${XPACK_FUZZ_SECONDS:-60}
cc=${CC_FUZZ:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "skipped: $cc not found (the fuzzers need clang with libFuzzer)"
  exit 77
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- build ----
# Configured every run, so that a build dir made without --xnnpack gains fuzz_replay and fuzz_loader.
. "$here/clang_project.sh"
. "$here/sanitizer_reports.sh"
clang_project_build "$here" "$work" "$cc" "$xnnpack" "the fuzzers" || exit 1

# ---- seeds (remade every run) and corpora (kept: they grow across runs) ----
seeds=$work/seeds
rm -rf "$seeds"
names="pte xnngraph cache inflate archive"
[ -x "$work/build/fuzz_replay" ] && [ -n "$xnnpack" ] && names="$names replay"
[ -x "$work/build/fuzz_loader" ] && [ -n "$xnnpack" ] && names="$names loader"
for d in $names; do mkdir -p "$seeds/$d" "$work/corpus/$d"; done
mkdir -p "$work/artifacts"
small_real=()
if [ -n "$real" ] && [ -d "$real" ]; then
  for f in "$real"/*.pte "$real"/*.ptd; do
    [ -f "$f" ] || continue
    cp "$f" "$seeds/pte/"
    case "$f" in *.pte) [ "$(stat -c %s "$f")" -le 300000 ] && small_real+=("$f") ;; esac
  done
else
  echo "note: no real test data folder; seeds come from generated files only"
fi
if [ -n "$genmodel" ] && [ -x "$genmodel" ]; then
  for kind in conv deconv bmm fp16 qd8-qc8w; do
    "$genmodel" "$kind" -o "$seeds/pte/gen_$kind.pte" >/dev/null 2>&1 || echo "note: xpack-genmodel $kind failed"
  done
  "$genmodel" ptd -o "$seeds/pte/gen_ptd.pte" --ptd "$seeds/pte/gen_ptd.ptd" >/dev/null 2>&1 || true
  "$genmodel" llm-q4 -o "$seeds/pte/gen_llm_q4.pte" --size 32K >/dev/null 2>&1 || true
  # fuzz_replay: no edits (byte 0 = 0), then a whole generated program of each kind the replay handles.
  if [ -d "$seeds/replay" ]; then
    for kind in conv deconv llm llm-q4 qd8-qc8w fp16 bmm; do
      size=()
      case "$kind" in llm*) size=(--size 32K) ;; esac
      "$genmodel" "$kind" -o "$seeds/replay/$kind.pte" "${size[@]}" >/dev/null 2>&1 &&
        { printf '\0'; cat "$seeds/replay/$kind.pte"; } >"$seeds/replay/$kind" && rm "$seeds/replay/$kind.pte"
    done
  fi
fi
if [ -n "$et_dump" ] && [ -x "$et_dump" ]; then
  for f in "$seeds/pte"/*.pte; do
    [ -f "$f" ] && "$et_dump" --blobs "$seeds/xnngraph" "$f" >/dev/null 2>&1
  done
fi
if [ -n "$subgraphs" ] && [ -x "$subgraphs" ]; then
  "$subgraphs" pack "$seeds/cache/demo_subgraphs.xpc" >/dev/null 2>&1 || echo "note: xpack-subgraphs pack failed"
fi
if [ -n "$xpack" ] && [ -x "$xpack" ]; then
  for f in "${small_real[@]}" "$seeds/pte"/gen_*.pte; do
    [ -f "$f" ] || continue
    b=$(basename "$f" .pte)
    extra=()
    [ -f "${f%.pte}.ptd" ] && extra=(--data "${f%.pte}.ptd")
    "$xpack" -q pack "$f" "${extra[@]}" -o "$seeds/cache/$b.xpc" >/dev/null 2>&1
    # The transport form (zstd frames): the inflate seeds, and the cache fuzzer's transport-form views.
    "$xpack" -q pack "$f" "${extra[@]}" --zstd=3 -o "$seeds/inflate/$b.z.xpc" >/dev/null 2>&1
    [ -f "$seeds/inflate/$b.z.xpc" ] && cp "$seeds/inflate/$b.z.xpc" "$seeds/cache/"
  done
  [ -f "$real/small_cnn.pte" ] &&
    "$xpack" -q pack "$real/small_cnn.pte" --page-size 16384 -o "$seeds/cache/small_cnn_16k.xpc" >/dev/null 2>&1
fi
# Archives holding a cache as an APK holds it (stored at several alignments, deflated, Zip64, with other
# members) and the hostile variants of tests/archive/make_archives.py, around the smallest cache made above.
small_cache=$(ls -S "$seeds/cache"/*.xpc 2>/dev/null | tail -n 1)
if [ -n "$small_cache" ] && command -v python3 >/dev/null 2>&1; then
  python3 "$here/../archive/make_archives.py" "$small_cache" "$seeds/archive" >/dev/null ||
    echo "note: make_archives.py failed: archive seeds are the caches alone"
fi
[ -n "$small_cache" ] && cp "$small_cache" "$seeds/archive/"
# The loader's seeds: the caches packed above by the main build, whose XNNPACK fuzz_loader links, so that their
# entries are served and mutations reach the serving path.
if [ -d "$seeds/loader" ]; then
  for f in "$seeds/cache"/*.xpc; do [ -f "$f" ] && cp "$f" "$seeds/loader/"; done
fi
# Real programs as cache seeds too (wrong magic: they exercise the first checks).
for f in "${small_real[@]:0:3}"; do cp "$f" "$seeds/cache/"; done
for d in $names; do
  echo "seeds $d: $(find "$seeds/$d" -type f | wc -l) files"
done

# ---- run ----
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
summary=""
for name in $names; do
  case " ${only//,/ } " in "  ") ;; *" $name "*) ;; *) continue ;; esac
  max_len=300000
  [ "$name" = xnngraph ] && max_len=65536
  [ "$name" = replay ] && max_len=600000 # 129 bytes of edits and the largest generated seed (fp16, 528 KiB)
  log=$work/fuzz_$name.log
  # A crafted graph can make XNNPACK ask for terabytes (a deconvolution's indirection buffer) or for
  # gigabytes it then fills (a depthwise convolution's, 10 GB in reshape): a model that size is not a bug,
  # and outside the fuzzer such an allocation fails or is the app's memory to give. Here one allocation is
  # bounded at 2 GiB (ASan returns NULL above it and XNNPACK reports out of memory), so that only what
  # touches too much in many smaller pieces reaches -rss_limit_mb.
  # Leaks inside XNNPACK's own failure paths are suppressed (replay.lsan.supp); XNNPACK has no frame
  # pointers, so telling them apart needs the slow unwinder.
  asan=$ASAN_OPTIONS limits=()
  [ "$name" = replay ] && asan="$ASAN_OPTIONS:allocator_may_return_null=1:max_allocation_size_mb=2048:fast_unwind_on_malloc=0" \
    limits=(-malloc_limit_mb=16777216)
  # libFuzzer's default error exit code is 77, which ctest would read as "skipped": use 1.
  # shellcheck disable=SC2086
  ASAN_OPTIONS=$asan LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/replay.lsan.supp} "$work/build/fuzz_$name" "${limits[@]}" -max_total_time="$seconds" -max_len=$max_len -rss_limit_mb=4096 -timeout=30 \
    -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$name-" ${XPACK_FUZZ_ARGS:-} \
    "$work/corpus/$name" "$seeds/$name" >"$log" 2>&1
  rc=$?
  execs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  cov=$(grep -hoE 'cov: [0-9]+' "$log" | tail -1)
  corpus=$(find "$work/corpus/$name" -type f | wc -l)
  line="fuzz_$name: $execs executions in ${seconds}s, $cov, corpus $corpus files"
  if [ $rc -ne 0 ] || sanitizer_report "$log" >/dev/null; then
    status=1
    line="$line: FAILED (exit $rc)"
    echo "---- fuzz_$name log (tail) ----"
    tail -60 "$log"
    for a in "$work/artifacts/$name-"*; do
      [ -f "$a" ] && echo "reproduce: $work/build/fuzz_$name $a"
    done
  fi
  echo "$line"
  summary="$summary$line"$'\n'
done
printf '%s' "$summary" >"$work/summary.txt"
[ $status -eq 0 ] && echo "all fuzzers clean"
exit $status
