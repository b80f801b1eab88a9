#!/usr/bin/env bash
# One field of a small program that makes xpack spend memory or time by its value, found by a review
# (2026-11-29) on a 7 KB generated program:
# - XNNGraph.num_externs: XNNPACK makes room for that many values when the subgraph is created. 2,000,000 cost
#   `pack` 690 MB and 6 s, `inspect` 395 MB. Now refused by the reader (exit 3, the field named), in milliseconds.
# - a convolution's padding_top: every declared dim stays small, but XNNPACK's reshape computes the output from the
#   padding and plans that memory. 250,000 cost `run` 1.3 GB and 6 s. `run` now refuses, before reshaping, a graph
#   whose computed values outgrow their declared dims by more than XPACK_REPLAY_GROWTH_BUDGET (256 MiB) in all (exit
#   3, the growth and the value that grows most named); `pack` still packs it (nothing is reshaped there, and
#   ExecuTorch runs such a graph). A padding of 3, a few KiB beyond the declared dims, still runs.
# - a value's datatype 0 ("invalid"): malformed, exit 3; it was "unsupported" (exit 4, and a pack of several
#   delegates would have passed this one over and written the rest with exit 0).
# - a datatype past the known ones (a newer exporter's) stays unsupported: pack passes that delegate over, and verify
#   --model notes it and compares the rest.
# Each edit is made in place, in the conv kind's XNNPACK flatbuffer (fields located with tests/gen/fb_tables.py).
XPACK=$1; GENMODEL=$2; GEN_DIR=$3; SCHEMA=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$GENMODEL" conv -o "$d/conv.pte" > /dev/null

# edit IN OUT TABLE FIELD WIDTH VALUE: sets FIELD (WIDTH bytes) of the first table of type TABLE that has it.
edit() {
  python3 - "$@" "$GEN_DIR" "$SCHEMA" <<'PY'
import struct, sys
src, out, table, field, width, value = sys.argv[1:7]
sys.path.insert(0, sys.argv[-2])
import fb_tables
data = bytearray(open(src, "rb").read())
blob = data.find(b"XH00") - 4                      # the XNNPACK header: 4 bytes, then its magic
graph = blob + struct.unpack_from("<I", data, blob + 10)[0]
assert data[graph + 4:graph + 8] == b"XN01", "no XN01 flatbuffer after the XH00 header"
found = [t for t in fb_tables.tables(fb_tables.Schema(sys.argv[-1]), bytes(data[graph:]))
         if t.type_name == table and field in {name for name, _, _ in t.fields}]
assert found, f"no table {table} with {field} present"
at = graph + found[0].pos + {name: off for name, off, _ in found[0].fields}[field]
struct.pack_into({"2": "<h", "4": "<I"}[width], data, at, int(value, 0))
open(out, "wb").write(data)
PY
}

# run_measured EXPECTED_EXIT NEEDLE XPACK-ARGS...: runs xpack, checks the exit, the message and the peak memory.
run_measured() {
  python3 - "$XPACK" "$@" <<'PY'
import resource, subprocess, sys, time
xpack, expected, needle, args = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
t = time.monotonic()
p = subprocess.run([xpack] + args, capture_output=True, text=True, timeout=120)
seconds = time.monotonic() - t
peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"  xpack {' '.join(args[:1])}: exit {p.returncode}, {seconds:.2f} s, peak {peak_mib:.0f} MiB: {p.stderr.strip()[:300]}")
assert p.returncode == expected, f"exit {p.returncode}, expected {expected}"
assert needle in p.stderr, f"the message does not say {needle!r}"
assert peak_mib < 256, f"peak memory {peak_mib:.0f} MiB"
PY
}

edit "$d/conv.pte" "$d/externs.pte" XNNGraph num_externs 4 2000000 || fail "could not write externs.pte"
run_measured 3 "num_externs: 2000000 is more than the graph's" pack "$d/externs.pte" -o "$d/externs.xpc" ||
  fail "pack of num_externs 2,000,000"
run_measured 3 "num_externs" inspect "$d/externs.pte" || fail "inspect of num_externs 2,000,000"
[ ! -e "$d/externs.xpc" ] || fail "a refused pack left externs.xpc"

edit "$d/conv.pte" "$d/padded.pte" _XNNNodeConv padding_top 4 250000 || fail "could not write padded.pte"
run_measured 3 "larger than their declared dims, more than the 268435456 it may" run "$d/padded.pte" ||
  fail "run of a convolution padded 250,000 high"
edit "$d/conv.pte" "$d/padded3.pte" _XNNNodeConv padding_top 4 3 || fail "could not write padded3.pte"
"$XPACK" run "$d/padded3.pte" > /dev/null || fail "run of a convolution padded 3 high (a growth of a few KiB)"
[ "$(status_of "$XPACK" pack "$d/padded.pte" -o "$d/padded.xpc")" = 0 ] || fail "pack of the padded program"
# verify --model: the program's refusal is the model's, not a problem of its cache (it said "1 problem", exit 1).
set +e; "$XPACK" verify "$d/padded.xpc" --model "$d/padded.pte" > "$d/verify.out" 2> "$d/verify.err"; st=$?; set -e
[ "$st" = 3 ] && [ ! -s "$d/verify.out" ] && grep -q "larger than their declared dims" "$d/verify.err" ||
  fail "verify --model of the padded program: exit $st: $(head -c 300 "$d/verify.out" "$d/verify.err")"
"$XPACK" run "$d/conv.pte" > /dev/null || fail "run of the unedited program"

edit "$d/conv.pte" "$d/invalid.pte" XNNTensorValue datatype 2 0 || fail "could not write invalid.pte"
run_measured 3 "datatype invalid (0)" pack "$d/invalid.pte" -o "$d/invalid.xpc" || fail "pack of datatype 0"
# A datatype past the known ones is a newer exporter's, unsupported: pack passes that delegate over, and verify --model
# notes it and compares the rest (it counted the delegate a problem of the cache, exit 1).
"$GENMODEL" llm --size 1M --delegates 2 -o "$d/two.pte" > /dev/null
python3 - "$d/two.pte" "$d/two15.pte" "$GEN_DIR" "$SCHEMA" <<'PY' || fail "could not write two15.pte"
import struct, sys
sys.path.insert(0, sys.argv[3])
import fb_tables
data = bytearray(open(sys.argv[1], "rb").read())
second = data.find(b"XH00", data.find(b"XH00") + 4)  # the second delegate's blob
assert second > 0, "no second XNNPACK delegate"
graph = second - 4 + struct.unpack_from("<I", data, second + 6)[0]
tensors = [t for t in fb_tables.tables(fb_tables.Schema(sys.argv[4]), bytes(data[graph:]))
           if t.type_name == "XNNTensorValue" and "datatype" in {name for name, _, _ in t.fields}]
t = tensors[0]
struct.pack_into("<h", data, graph + t.pos + {name: off for name, off, _ in t.fields}["datatype"], 15)
open(sys.argv[2], "wb").write(data)
PY
"$XPACK" pack "$d/two15.pte" -o "$d/two15.xpc" > /dev/null 2> "$d/pack.err" || fail "pack of a program with one delegate of an unknown datatype"
grep -q "not packed: .*datatype unknown (15)" "$d/pack.err" || fail "pack did not pass the delegate over: $(cat "$d/pack.err")"
"$XPACK" verify "$d/two15.xpc" --model "$d/two15.pte" > "$d/verify.out" 2> "$d/verify.err" ||
  fail "verify --model with a delegate this XNNPACK cannot define: exit $?: $(head -c 300 "$d/verify.out")"
grep -q "note: .*not run: .*datatype unknown (15)" "$d/verify.err" && grep -q ": sound$" "$d/verify.out" ||
  fail "verify --model did not note the delegate it passed over: $(cat "$d/verify.err")"
echo "PASS: num_externs, a padding and datatype 0 are refused where they would cost memory or pass as unsupported"
