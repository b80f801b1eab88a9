#!/usr/bin/env bash
# Another CPU for real: caches packed natively (AVX2 kernels), then `xpack run --cache` in qemu-user with a
# CPU model without AVX (XNNPACK picks SSE kernels there). With the cache, outputs are bit-identical to a
# run without it on the same CPU, no look-up is served, and every family is refused for the probe reason
# (not for the build: it is the same XNNPACK binary), and a weight found under another seed only is named as
# held by its refused family. `xpack verify` in qemu exits 1 naming the families.
# Natively the same caches hit every look-up. Models: generated fp32 LLM-like, 4-bit LLM-like, qd8 x qc8w,
# convolution, deconvolution; and small real programs when ../shared/testdata/real is present.
XPACK=$1; GEN=$2; REAL=${3:-}
. "$(dirname "$0")/lib.sh"
QEMU=$(command -v qemu-x86_64 || true)
[ -n "$QEMU" ] || { echo "SKIP: qemu-x86_64 is not installed (Debian: qemu-user)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the host is $(uname -m), this test runs x86-64 binaries"; exit 77; }
grep -qw avx2 /proc/cpuinfo || { echo "SKIP: the host CPU has no AVX2, so qemu's older CPU would pick the same kernels"; exit 77; }
CPU=""
models=$("$QEMU" -cpu help || true)  # exits 1 after listing; no pipe into grep -q (SIGPIPE)
for model in Nehalem Westmere Penryn; do
  if grep -qw "$model" <<< "$models"; then CPU=$model; break; fi
done
[ -n "$CPU" ] || { echo "SKIP: qemu-x86_64 offers none of Nehalem, Westmere, Penryn"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
echo "qemu-x86_64 -cpu $CPU (no AVX); host has AVX2"

programs=()
for k in llm llm-q4 qd8-qc8w conv deconv; do
  case $k in llm*) size="--size 256K" ;; *) size="" ;; esac
  "$GEN" $k -o $k.pte $size > /dev/null
  programs+=("$k.pte")
done
if [ -n "$REAL" ] && [ -d "$REAL" ]; then
  for f in person_detect_fp32 person_detect_int8 linear129; do
    [ -f "$REAL/$f.pte" ] && programs+=("$REAL/$f.pte")
  done
else
  echo "note: real test data absent ($REAL): generated programs only"
fi

for p in "${programs[@]}"; do
  name=$(basename "$p" .pte)
  "$XPACK" pack "$p" -o "$name.xpc" > /dev/null || fail "$name: pack"
  "$XPACK" run "$p" --cache "$name.xpc" --json > native.json || fail "$name: native run"
  "$QEMU" -cpu "$CPU" "$XPACK" run "$p" --json > qemu_nocache.json || fail "$name: run in qemu"
  "$QEMU" -cpu "$CPU" "$XPACK" run "$p" --cache "$name.xpc" --json > qemu_cache.json || fail "$name: run --cache in qemu"
  python3 - "$name" native.json qemu_nocache.json qemu_cache.json <<'PY' || fail "$name"
import json, sys
name, native, plain, cached = sys.argv[1], *(json.load(open(p)) for p in sys.argv[2:])
assert native["hits"] == native["lookups"] > 0 and native["misses"] == 0, ("native", native["hits"], native["lookups"])
assert all(f["status"] == "served" for f in native["families"]), native["families"]
assert plain["failed"] == 0 and cached["failed"] == 0
for a, b in zip(plain["delegates_detail"], cached["delegates_detail"]):
    assert a["output_xxh3"] == b["output_xxh3"] and a["output_xxh3"], f"outputs differ in qemu: {a['method']}#{a['index']}"
assert cached["cache_refused"] is None, cached["cache_refused"]  # same XNNPACK build: not refused as a whole
assert cached["hits"] == 0, f"{cached['hits']} look-ups served on another CPU"
assert cached["families"] and all(f["status"] == "refused" and f["reason"] == "probe_differs"
                                  and f["local_probe"] != f["packed_probe"] for f in cached["families"]), cached["families"]
# Both CPUs are reported: the packing one from the cache's INFO "cpu", and this one (qemu-user shows the
# host's /proc/cpuinfo, so here they read the same; tests/cross checks them different).
assert native["packed_on_cpu"] == native["this_cpu"] and native["this_cpu"].startswith("x86-64, "), native["this_cpu"]
assert cached["packed_on_cpu"] == native["packed_on_cpu"] and cached["this_cpu"].startswith("x86-64, "), cached
# A weight keyed otherwise here (tile sizes are part of the seed) is named as held by its refused family.
for m in (m for d in cached["delegates_detail"] for m in d["missed"]):
    assert m["reason"] != "not_found" or "which this machine refuses" in m["why"], m["why"]
not_found, refused = cached["misses_not_found"], cached["refused_probe"]
print(f"  {name}: {len(cached['families'])} famil{'y' if len(cached['families']) == 1 else 'ies'} refused (probe_differs); "
      f"{cached['lookups']} look-ups in qemu: {not_found} not found (other seeds), {refused} refused by probe; "
      f"outputs identical to no cache")
PY
  "$QEMU" -cpu "$CPU" "$XPACK" run "$p" --cache "$name.xpc" > qemu_cache.txt || fail "$name: run --cache in qemu (text)"
  grep -q "^[0-9]* famil[a-z]* refused as packed or keyed otherwise on this CPU; the cache was packed on: x86-64, .*; this machine: x86-64, " \
    qemu_cache.txt || fail "$name: the text run in qemu does not name both CPUs: $(tail -n 3 qemu_cache.txt)"
  "$XPACK" dump "$name.xpc" --json > dump.json || fail "$name: dump"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format_version"]["minor"] >= 2 and d["info"]["cpu"].startswith("x86-64, "), d["info"]' \
    dump.json || fail "$name: dump has no INFO cpu"
  set +e; "$QEMU" -cpu "$CPU" "$XPACK" verify "$name.xpc" > verify.txt; st=$?; set -e
  [ "$st" = 1 ] || fail "$name: verify in qemu exited $st: $(cat verify.txt)"
  grep -q "probe_differs" verify.txt || fail "$name: verify in qemu does not name the refused families: $(cat verify.txt)"
  "$XPACK" verify "$name.xpc" > /dev/null || fail "$name: verify natively"
done
echo "qemu families: ok"
