#!/usr/bin/env bash
# An external value's declared dims are what `run` sizes its input and output buffers by, and a crafted program
# declares what it likes: dynamic_mul.pte (1.7 KB, a Multiply of inputs [8] and [1]) with its second input
# declared [2^31 - 1] once made `run` zero and fill 8 GiB of input, 12 to 23 s and 8.4 GB of memory, before
# XNNPACK's reshape refused the broadcast (found by a review). The runtime is now reshaped and its externals
# checked before any buffer is allocated: exit 4, the reshape named, and the process's peak memory that of a
# small run.
XPACK=$1; REAL=$2; GEN_DIR=$3
. "$(dirname "$0")/lib.sh"
[ -f "$REAL/dynamic_mul.pte" ] ||
  { echo "SKIP: $REAL/dynamic_mul.pte is absent (real ExecuTorch files are read in place from ../shared/testdata/real)"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

python3 - "$REAL/dynamic_mul.pte" "$d/wide.pte" "$GEN_DIR" "$(dirname "$0")/../../format/xnnpack_graph.fbs" <<'PY' || fail "could not write wide.pte"
import struct, sys
sys.path.insert(0, sys.argv[3])
import fb_tables
data = bytearray(open(sys.argv[1], "rb").read())
blob = data.find(b"XH00") - 4                      # the XNNPACK header: 4 bytes, then its magic
graph = blob + struct.unpack_from("<I", data, blob + 10)[0]
assert data[graph + 4:graph + 8] == b"XN01", "no XN01 flatbuffer after the XH00 header"
widened = 0
for t in fb_tables.tables(fb_tables.Schema(sys.argv[4]), bytes(data[graph:])):
    fields = {name: off for name, off, _ in t.fields}
    if t.type_name != "XNNTensorValue" or "dims" not in fields or "flags" not in fields: continue
    at = graph + t.pos + fields["dims"]
    vec = at + struct.unpack_from("<I", data, at)[0]
    flags = struct.unpack_from("<I", data, graph + t.pos + fields["flags"])[0]
    if flags == 1 and struct.unpack_from("<II", data, vec) == (1, 1):
        struct.pack_into("<I", data, vec + 4, 2**31 - 1)
        widened += 1
assert widened == 1, f"expected one external input of dims [1], found {widened}"
open(sys.argv[2], "wb").write(data)
PY

python3 - "$XPACK" "$d/wide.pte" <<'PY' || fail "run of a program declaring an input 2^31 - 1 wide"
import resource, subprocess, sys
p = subprocess.run([sys.argv[1], "run", sys.argv[2]], capture_output=True, text=True)
peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"  exit {p.returncode}, peak {peak_mib:.0f} MiB: {p.stderr.strip()}")
assert p.returncode == 4, f"exit {p.returncode}, expected 4"
assert "reshaping the runtime failed" in p.stderr, "the message does not name the reshape"
assert peak_mib < 1024, f"peak memory {peak_mib:.0f} MiB: buffers were allocated by the declared size"
PY
echo "PASS: an external input declared 2^31 - 1 wide is refused at the reshape, before any buffer is allocated"
