#!/bin/bash
# xpack pack --jobs N: the cache is the same bytes for N = 1, 2 and 4 (generated programs of several kinds,
# several programs at once, and every real file when ${XPACK_REAL_TESTDATA} exists); the parallel one verifies.
# PACK_REVERSE is tests/model/pack_reverse.c: xpack_pack_files with XPACK_PACK_ORDER_REVERSE.
set -u
XPACK=$1 GEN=$2 PACK_REVERSE=$3 REAL=${4:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

# Packs "$@" with --jobs 1, 2 and 4 and compares exit codes and bytes.
same_for_any_jobs() {
  local name=$1; shift
  local rc1 rc
  "$XPACK" pack "$@" -o "$T/$name.j1.xpc" --jobs 1 -q >/dev/null 2>"$T/$name.j1.err"; rc1=$?
  for j in 2 4 r2; do
    # r2: two workers taking delegates last first, so regions reach the writer out of file order and the
    # writer's re-ordering copy runs
    if [ $j = r2 ]; then
      "$PACK_REVERSE" "$T/$name.j$j.xpc" "$@" >/dev/null 2>"$T/$name.j$j.err"; rc=$?
    else
      "$XPACK" pack "$@" -o "$T/$name.j$j.xpc" --jobs $j -q >/dev/null 2>"$T/$name.j$j.err"; rc=$?
    fi
    if [ $rc -ne $rc1 ]; then
      echo "FAIL $name: --jobs $j exit $rc, --jobs 1 exit $rc1"; cat "$T/$name.j$j.err"; fail=1; continue
    fi
    if [ $rc1 -ne 0 ]; then  # a failed pack writes nothing, whatever N
      if [ -e "$T/$name.j$j.xpc" ]; then echo "FAIL $name: --jobs $j exit $rc and wrote a file"; fail=1; fi
      continue
    fi
    if [ ! -e "$T/$name.j1.xpc" ]; then  # nothing to pack: no file, whatever N
      if [ -e "$T/$name.j$j.xpc" ]; then echo "FAIL $name: --jobs $j wrote a file, --jobs 1 none"; fail=1; fi
      continue
    fi
    if ! cmp "$T/$name.j1.xpc" "$T/$name.j$j.xpc"; then echo "FAIL $name: --jobs $j differs from --jobs 1"; fail=1; fi
  done
  if [ $rc1 -eq 0 ] && [ ! -e "$T/$name.j1.xpc" ]; then
    echo "ok $name (nothing to pack for every --jobs)"
  elif [ $rc1 -eq 0 ]; then
    if ! "$XPACK" verify "$T/$name.j4.xpc" --model "$@" -q >/dev/null 2>"$T/$name.verify.err"; then
      echo "FAIL $name: the --jobs 4 cache does not verify"; cat "$T/$name.verify.err"; fail=1
    fi
    echo "ok $name ($(stat -c %s "$T/$name.j1.xpc") bytes)"
  else
    echo "ok $name (exit $rc1 for every --jobs)"
  fi
}

"$GEN" llm -o "$T/llm.pte" --size 8M --alias-decode >/dev/null || exit 1
"$GEN" llm -o "$T/llmb.pte" --size 8M --variant B >/dev/null || exit 1
"$GEN" llm -o "$T/llm2.pte" --size 8M --seed 2 >/dev/null || exit 1
"$GEN" llm-q4 -o "$T/q4.pte" --size 8M >/dev/null || exit 1
"$GEN" conv -o "$T/conv.pte" >/dev/null || exit 1
# Many delegates: within a method none share a weight (packed side by side), across methods all do (each
# waits for its twin in the other method: pack_schedule).
"$GEN" llm -o "$T/d4.pte" --size 8M --delegates 4 >/dev/null || exit 1
"$GEN" llm-q4 -o "$T/q4d3.pte" --size 8M --delegates 3 >/dev/null || exit 1
same_for_any_jobs llm "$T/llm.pte"
same_for_any_jobs llm_q4 "$T/q4.pte"
same_for_any_jobs conv "$T/conv.pte"
same_for_any_jobs llm_4_delegates "$T/d4.pte"
same_for_any_jobs llm_q4_3_delegates "$T/q4d3.pte"
same_for_any_jobs delegates_and_programs "$T/d4.pte" "$T/llm.pte" "$T/q4d3.pte"
same_for_any_jobs two_programs "$T/llm.pte" "$T/llmb.pte"
same_for_any_jobs many_programs "$T/llm2.pte" "$T/conv.pte" "$T/q4.pte" "$T/llm.pte" "$T/llmb.pte"
# A malformed program after one sharing its weights: its delegates wait for the first program's, and the
# malformed one stops the schedule while a waiting one has not run. Every --jobs must fail as --jobs 1 does
# (once, --jobs 2 reported the delegates up to the first one that never ran, missed the error and wrote a
# partial cache with exit 0).
python3 - "$T/llmb.pte" "$T/llmbad.pte" <<'PY' || exit 1
import sys
data = open(sys.argv[1], "rb").read()
assert data.count(b"XN01") >= 2, "no XNNPACK graphs to break"
open(sys.argv[2], "wb").write(data.replace(b"XN01", b"ZZZZ"))
PY
same_for_any_jobs malformed_after_shared "$T/llm.pte" "$T/llmbad.pte"

"$XPACK" pack "$T/conv.pte" -o "$T/x.xpc" --jobs 0 -q >/dev/null 2>&1; rc=$?
if [ $rc -ne 2 ]; then echo "FAIL --jobs 0: exit $rc, expected 2 (usage)"; fail=1; fi

if [ -n "$REAL" ] && [ -d "$REAL" ]; then
  for f in "$REAL"/*.pte; do
    case $(basename "$f") in bad_*) continue ;; esac
    same_for_any_jobs "real_$(basename "$f" .pte)" "$f"
  done
else
  echo "note: no real files (${REAL:-XPACK_REAL_TESTDATA unset}): generated programs only"
fi
exit $fail
