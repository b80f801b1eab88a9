#!/usr/bin/env bash
# The loader's thread-safety promises under ThreadSanitizer (ctest tsan_loader): builds tests/tsan with clang and
# -fsanitize=thread over the real XNNPACK, packs the sample subgraphs with that build, then
#   - xpack-subgraphs run --threads 4 over the cache: mapped, with XPACK_OPEN_PROBE_EARLY, read into memory
#     (four threads create and run every sample subgraph through one provider; their outputs must agree);
#   - loader_threads CACHE 20 (look-ups, bindings, statistics, families, prefetch, warm-up, the mapped-file
#     registry and other opens of the file, all at once: loader_threads.c);
#   - with --xpack and --genmodel (the main build's, to make the programs and their caches): tests/core's
#     adapter_threads cases, the ExecuTorch adapter from several threads (another cache's probes while one is
#     attached, 40 rounds of 4 concurrent attaches, runtimes created during an attach, 300 rounds of concurrent
#     warm-ups).
# Any report of ThreadSanitizer fails the test (halt_on_error=1, exit 66).
# usage: run_tsan.sh --work DIR --xnnpack PREFIX [--xpack PATH --genmodel PATH]
# Environment: CC_TSAN (default clang). Exit: 0 clean, 1 a race or a failure, 77 skipped (no clang, no XNNPACK
# prefix, or no working ThreadSanitizer here).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="" xnnpack="" xpack="" genmodel=""
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --xnnpack) xnnpack=$2; shift 2 ;;
    --xpack) xpack=$2; shift 2 ;;
    --genmodel) genmodel=$2; shift 2 ;;
    *) echo "run_tsan.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$work" ] || { echo "run_tsan.sh: --work DIR is required" >&2; exit 2; }
cc=${CC_TSAN:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "skipped: $cc not found (the thread tests need clang)"; exit 77; }
[ -n "$xnnpack" ] && [ -f "$xnnpack/include/xnnpack.h" ] ||
  { echo "skipped: no XNNPACK prefix (--xnnpack) to link the thread tests with"; exit 77; }
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ThreadSanitizer needs its runtime and an address-space layout it supports (some kernels' ASLR settings are not).
printf 'int main(void) { return 0; }\n' >"$work/tsan_works.c"
if ! "$cc" -fsanitize=thread "$work/tsan_works.c" -o "$work/tsan_works" >"$work/tsan_works.log" 2>&1 ||
   ! "$work/tsan_works" >>"$work/tsan_works.log" 2>&1; then
  echo "skipped: ThreadSanitizer does not work here ($cc -fsanitize=thread):"
  tail -5 "$work/tsan_works.log"
  exit 77
fi

. "$here/../fuzz/clang_project.sh"
. "$here/../fuzz/sanitizer_reports.sh"
clang_project_build "$here" "$work" "$cc" "$xnnpack" "the thread tests" || exit 1

export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
status=0
step() { # NAME COMMAND...: runs it, keeps its output in the work dir, shows it when it fails (exit 77: not run)
  local name=$1 log="$work/$1.log"
  shift
  "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc = 77 ] && ! sanitizer_report "$log" >/dev/null; then
    echo "not run: $name ($(tail -1 "$log"))"
    return 1
  fi
  if [ $rc -ne 0 ] || sanitizer_report "$log" >/dev/null; then
    echo "FAIL: $name (exit $rc)"
    tail -60 "$log"
    status=1
    return 1
  fi
  echo "ok: $name"
}
cache=$work/demo.xpc
step pack "$work/build/xpack-subgraphs" pack "$cache" || exit 1
for mode in "" "--probe-early" "--read"; do
  name="threads${mode:+_${mode#--}}"
  # shellcheck disable=SC2086 # mode is one option or none
  if step "$name" "$work/build/xpack-subgraphs" run --cache "$cache" $mode --threads 4; then
    grep -q '^threads 4 agree' "$work/$name.log" || { echo "FAIL: $name: the threads' outputs differ"; status=1; }
  fi
done
step loader_threads "$work/build/loader_threads" "$cache" 20 && tail -1 "$work/loader_threads.log"
if [ -x "$xpack" ] && [ -x "$genmodel" ]; then
  at=$work/adapter
  mkdir -p "$at"
  "$genmodel" llm --size 4M -o "$at/llm.pte" > /dev/null && "$genmodel" qd8-qc8w -o "$at/mid.pte" > /dev/null &&
    "$xpack" -q pack "$at/llm.pte" -o "$at/llm.xpc" && "$xpack" -q pack "$at/mid.pte" -o "$at/mid.xpc" ||
    { echo "FAIL: making the adapter's programs and caches"; exit 1; }
  step adapter_probe_after "$work/build/adapter_threads" probe-after "$at/llm.pte" "$at/llm.xpc" "$at/mid.xpc"
  step adapter_attach_race "$work/build/adapter_threads" attach-race "$at/llm.pte" "$at/llm.xpc" 40 4 &&
    tail -1 "$work/adapter_attach_race.log"
  step adapter_create_during_attach "$work/build/adapter_threads" create-during-attach "$at/llm.pte" "$at/llm.xpc" 10 &&
    tail -1 "$work/adapter_create_during_attach.log"
  step adapter_warm_up "$work/build/adapter_threads" warm-up "$at/mid.xpc" 300
else
  echo "not run: the adapter's threads (no --xpack and --genmodel to make their programs and caches)"
fi
[ $status -eq 0 ] && echo "no race reported"
exit $status
