#!/usr/bin/env bash
# bf16 fully-connected layers (xpack-genmodel bf16: input, filters and output bf16, fp32 biases), which xpack
# replays as ExecuTorch main defines them: each layer into an fp32 tensor, converted to its bf16 output.
# What this XNNPACK build can do with them decides what is checked:
#   - no bf16 fully-connected at all (4ea82e5, HAS_BF16_FC=0): pack refuses node 0 as XNNPACK refuses to
#     define it (exit 3); SKIP, saying so.
#   - a bf16 fully-connected but no kernel for it here (1adaa7c7 built without AVX512-BF16, as gcc < 13
#     builds it): the nodes define (before the replay's rewrite XNNPACK refused node 0's bf16 output), and
#     run and pack fail cleanly when XNNPACK cannot create the runtime (exit 4, unsupported hardware, no
#     file written); SKIP, saying so.
#   - it runs: pack writes a cache (it failed before the rewrite), every look-up of a run with it hits and
#     outputs are bit-identical to a run without it. Unless XNNPACK converted the bf16 weights to fp32
#     copies of its own and packed those (92a7ad50 without a bf16 kernel): those copies are no weight of the
#     program (xpack's providers do not take XNNPACK's alias_data), so pack records none of them, saying
#     so, and every look-up of the run misses as unbound; outputs still bit-identical.
XPACK=$1; GEN=$2; HAS_BF16_FC=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" bf16 -o bf16.pte > /dev/null

if [ "$HAS_BF16_FC" = 0 ]; then
  set +e; "$XPACK" pack bf16.pte -o bf16.xpc 2> err.txt; st=$?; set -e
  [ "$st" = 3 ] && grep -q "node 0 (FullyConnected): XNNPACK refused to define it" err.txt \
    || fail "an XNNPACK without bf16 fully-connected: pack exited $st: $(cat err.txt)"
  echo "SKIP: this XNNPACK has no bf16 fully-connected (it refuses a bf16 input at definition): $(cat err.txt)"
  exit 77
fi

set +e; "$XPACK" run bf16.pte --json > n.json 2> run_err.txt; st=$?; set -e
if [ "$st" != 0 ]; then
  grep -q "refused to define" run_err.txt && fail "run: a node was refused at definition: $(cat run_err.txt)"
  [ "$st" = 4 ] && grep -q "xnn_create_runtime_v4 failed (status 5: unsupported hardware)" run_err.txt \
    || fail "run exited $st, expected 4 with XNNPACK's unsupported hardware (status 5): $(cat run_err.txt)"
  set +e; "$XPACK" pack bf16.pte -o bf16.xpc 2> pack_err.txt; st=$?; set -e
  [ "$st" = 4 ] && grep -q "xnn_create_runtime_v4 failed (status 5: unsupported hardware)" pack_err.txt && [ ! -e bf16.xpc ] \
    || fail "pack exited $st without a kernel: $(cat pack_err.txt)"
  echo "SKIP: this XNNPACK build has no bf16 fully-connected kernel on this CPU (unsupported hardware when it"
  echo "  creates the runtime): $(cat run_err.txt)"
  exit 77
fi

"$XPACK" pack bf16.pte -o bf16.xpc --json > pack.json 2> pack_err.txt || fail "pack: $(cat pack_err.txt)"
"$XPACK" run bf16.pte --cache bf16.xpc --json > c.json || fail "run --cache"
python3 - <<'PY'
import json
p, n, c = (json.load(open(f)) for f in ("pack.json", "n.json", "c.json"))
assert n["failed"] == 0 and c["failed"] == 0 and n["delegates"] == c["delegates"] == 1
for a, b in zip(n["delegates_detail"], c["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"] and a["output_xxh3"], f"outputs differ: {a['method']}#{a['index']}"
assert c["lookups"] == 2, f"{c['lookups']} look-ups, expected one per layer"
family = "fully_connected in=bf16 w=bf16 b=f32 out=f32 transpose=0"
if p["entries"] > 0:
    assert p["entries"] == 2 and p["unbound"] == 0, p
    assert c["hits"] == c["lookups"] and c["misses"] == 0, (c["hits"], c["lookups"], c["misses"])
    fam = {f["name"]: f for f in c["families"]}
    assert list(fam) == [family] and fam[family]["status"] == "served", c["families"]
    print(f"  native bf16 kernel: {c['hits']} of {c['lookups']} look-ups served ({family}), outputs identical")
else:
    assert p["unbound"] == 2, f"no entry recorded, but not for want of identity: {p}"
    assert c["misses"] == c["misses_unbound"] == c["lookups"], c
    print(f"  XNNPACK packed fp32 copies of the bf16 weights (no bf16 kernel here): {p['unbound']} weights without"
          f" identity, not recorded; {c['lookups']} look-ups missed as unbound; outputs identical")
PY
echo "bf16: ok"
