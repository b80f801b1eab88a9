#!/usr/bin/env bash
# Running out of memory at any allocation: every allocation of `xpack pack`, `inspect`, `dump` and `verify` is made
# to fail in turn (fail_alloc.so, preloaded). Each run either succeeds with what it gives with memory to spare (pack:
# the same entries, regions and families; the others: the same report) or fails with exit 4 and a message naming
# memory, leaving no output file and no temporary file; never a signal. A pack that ran out of memory in one delegate used to go on and write a cache
# without that delegate's entries, exit 0, and XNNPACK 4ea82e5 crashed when it could not allocate the workspace it
# makes for a runtime given none. Not covered: `run` and `bench`, where XNNPACK's own reshape (xnn_plan_memory) does
# not check two allocations and crashes (docs/TRUST.md).
# Over the XNNPACKs ExecuTorch pins (1adaa7c7, 92a7ad50) XNNPACK's own runtime creation does not check several
# allocations (xnn_subgraph_rewrite_ssa, the fingerprint cache, binary elementwise operators) and crashes there:
# with them a signal is counted, not failed, and everything else is checked as with 4ea82e5.
#   out_of_memory.sh XPACK GENMODEL FAIL_ALLOC_SO
set -uo pipefail
XPACK=$1; GEN=$2; SHIM=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
signals_are_xnnpacks=0
"$XPACK" --version | grep -q '^XNNPACK 0\.0~git20241108\.4ea82e5' || signals_are_xnnpacks=1
xnnpack_crashes=0
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
# Two programs without a weight in common: a delegate that is not packed leaves its weights out of the file.
"$GEN" llm --size 64K -o g.pte > /dev/null && "$GEN" fp16 -o h.pte > /dev/null || fail "genmodel"
"$XPACK" -q pack g.pte h.pte -o ref.xpc || fail "pack with memory to spare"
content() { "$XPACK" dump --json "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["entries"], d["regions"], d["families"]]))'; }
content ref.xpc > ref.content || fail "dump of the reference"

# try NAME OUT -- COMMAND...: every allocation of COMMAND fails in turn. OUT: the file it writes (compared by
# content), or "" for a command whose stdout is its result (compared whole).
try() {
  local name=$1 out=$2; shift 3
  local total
  "$@" > ref.stdout 2> /dev/null
  total=$(XPACK_COUNT_ALLOCS=1 LD_PRELOAD="$SHIM" "$@" 2>&1 >/dev/null | sed -n 's/^allocations: //p' | tail -1)
  [ -n "$total" ] && [ "$total" -gt 0 ] || fail "$name: the shim counted no allocation"
  local n rc failed=0 passed=0
  for n in $(seq 1 $((total + 5))); do
    rm -f "$out"
    # A hang on an error path fails the test here, not at ctest's timeout.
    XPACK_FAIL_ALLOC=$n LD_PRELOAD="$SHIM" timeout 120 "$@" > out.txt 2> err.txt
    rc=$?
    [ $rc != 124 ] || fail "$name, allocation $n failing: still running after 120 s"
    if [ $rc -ge 128 ]; then
      [ $signals_are_xnnpacks = 1 ] || fail "$name, allocation $n failing: killed by signal $((rc - 128)): $(tail -3 err.txt)"
      xnnpack_crashes=$((xnnpack_crashes + 1))
      rm -f "$out"; rm -rf .xpack-* 2>/dev/null # what a killed pack leaves, as after SIGKILL (TRUST.md)
      continue
    fi
    if [ $rc -ne 0 ]; then
      if [ $rc = 1 ] && [ "$name" = verify ] && grep -q 'probe_failed, .*out of memory' out.txt; then
        : # a family whose probe could not run is refused here, as verify says, and it says why
      elif [ $rc != 4 ]; then
        fail "$name, allocation $n failing: exit $rc, expected 4: $(tail -2 err.txt)"
      fi
      grep -qi 'memory\|alloc' err.txt out.txt || fail "$name, allocation $n failing: no message names memory: $(tail -2 err.txt)"
      [ -z "$out" ] || [ ! -e "$out" ] || fail "$name, allocation $n failing: $out was left behind"
      failed=$((failed + 1))
    elif [ -n "$out" ]; then
      [ "$(content "$out")" = "$(cat ref.content)" ] || fail "$name, allocation $n failing: exit 0, but not the reference's entries"
      passed=$((passed + 1))
    else
      cmp -s out.txt ref.stdout || fail "$name, allocation $n failing: exit 0, but not the reference's report: $(diff out.txt ref.stdout | head -4)"
      passed=$((passed + 1))
    fi
    leftover=$(ls -A | grep -v '^[gh]\.pte$\|^ref\.\|^out\.txt$\|^err\.txt$\|^x\.xpc$' || true)
    [ -z "$leftover" ] || fail "$name, allocation $n failing: left $leftover"
  done
  echo "$name: $total allocations, each made to fail: $failed runs failed cleanly, $passed did without it"
}
# One job: the Nth allocation is the same call in every run. Then the default jobs, where the order varies.
try pack x.xpc -- "$XPACK" -q pack --jobs 1 g.pte h.pte -o x.xpc
try "pack --jobs 2" x.xpc -- "$XPACK" -q pack --jobs 2 g.pte h.pte -o x.xpc
try inspect "" -- "$XPACK" inspect g.pte
try dump "" -- "$XPACK" dump ref.xpc
try verify "" -- "$XPACK" verify ref.xpc
[ $xnnpack_crashes = 0 ] || echo "this XNNPACK ($("$XPACK" --version | sed -n 's/^XNNPACK \([^,]*\).*/\1/p')) crashed in $xnnpack_crashes runs, on allocations of its own it does not check"
echo "PASS: out of memory at any allocation of pack, inspect, dump and verify: a clean failure or the full result"
