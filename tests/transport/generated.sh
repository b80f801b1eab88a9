#!/usr/bin/env bash
# The transport form end to end on generated programs and on a C API cache: pack --zstd, verify (every
# frame decoded), dump (ratios), inflate, byte-identical to a plain pack; the loader and run --cache refuse
# the transport form naming inflate (exit 3); the inflated file serves XNNPACK with identical outputs;
# command-line errors.
XPACK=$1; GEN=$2; SUB=$3; API=$4
. "$(dirname "$0")/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

# roundtrip NAME PACK_ARGS...: plain pack, --zstd pack, verify, dump, inflate, cmp.
roundtrip() {
  local name=$1; shift
  "$XPACK" pack "$@" -o "$name.xpc" > /dev/null || fail "$name: pack"
  "$XPACK" pack "$@" -o "$name.z.xpc" --zstd=3 --json > "$name.pack.json" || fail "$name: pack --zstd"
  "$XPACK" verify "$name.z.xpc" > verify.txt || fail "$name: verify of the transport form: $(cat verify.txt)"
  "$XPACK" dump --json "$name.z.xpc" > "$name.dump.json" || fail "$name: dump"
  "$XPACK" dump "$name.z.xpc" > "$name.dump.txt" || fail "$name: dump (text)"
  grep -q "^transport .* ratio 0\.[0-9]*" "$name.dump.txt" || fail "$name: dump does not show the total ratio"
  "$XPACK" inflate "$name.z.xpc" "$name.back.xpc" --json > "$name.inflate.json" || fail "$name: inflate"
  cmp "$name.back.xpc" "$name.xpc" || fail "$name: inflate(pack --zstd) differs from pack"
  python3 - "$name" <<'PY' || fail "$name: sizes and ratios"
import json, os, sys
n = sys.argv[1]
p, d, i = (json.load(open(f"{n}.{k}.json")) for k in ("pack", "dump", "inflate"))
z, plain = os.path.getsize(f"{n}.z.xpc"), os.path.getsize(f"{n}.xpc")
assert d["transport_form"] is True and d["data"]["offset"] == 64, "transport header"
assert p["zstd_level"] == 3 and p["transport_size"] == z and p["mappable_size"] == plain, p
t = d["totals"]
frames = sum(r["stored_size"] for r in d["regions"])
assert t["region_stored_bytes"] == frames == p["frame_bytes"] == i["frame_bytes"], (t, p, i)
assert t["stored_bytes"] == i["region_bytes"] and abs(t["region_ratio"] - frames / t["stored_bytes"]) < 1e-5
for r in d["regions"]:
    assert abs(r["ratio"] - r["stored_size"] / r["size"]) < 1e-5, r
assert i["output_size"] == plain and i["input_size"] == z and i["regions"] == len(d["regions"]), i
print(f"  {n}: {len(d['regions'])} regions, {plain} -> {z} bytes, regions ratio {t['region_ratio']:.3f}")
PY
}

# Every generated kind (fp32 LLM-like, 4-bit, qd8 x qc8w, fp16, deconvolution, conv, .ptd weights; bmm packs nothing).
for k in llm llm-q4 qd8-qc8w fp16 deconv conv; do
  "$GEN" $k -o $k.pte > /dev/null || fail "generate $k"
  roundtrip $k $k.pte
done
"$GEN" ptd -o ptd.pte --ptd w.ptd > /dev/null
roundtrip ptd ptd.pte --data w.ptd
# Two programs in one cache, and 16 KiB pages: inflate restores the page alignment exactly.
"$GEN" llm --variant B -o llmb.pte > /dev/null
roundtrip two llm.pte llmb.pte
roundtrip llm16k llm.pte --page-size 16384
# A region larger than the 8 MiB window: the frame is not single-segment.
"$GEN" qd8-qc8w -o big.pte --scale 8 > /dev/null
roundtrip big big.pte
python3 -c '
import json; d = json.load(open("big.dump.json"))
assert max(r["size"] for r in d["regions"]) > 8 << 20, "no region above 8 MiB"' || fail "big: no region above 8 MiB"
# Its frame declares a window (not single-segment); raised to 128 MiB, readers must refuse it (9.2).
python3 - <<'PY' || fail "big: window descriptor"
import json
d = json.load(open("big.dump.json"))
i, r = max(enumerate(d["regions"]), key=lambda x: x[1]["size"])
b = bytearray(open("big.z.xpc", "rb").read())
fhd = b[r["offset"] + 4]
assert not (fhd >> 5) & 1, "a frame above 8 MiB must not be single-segment"
assert b[r["offset"] + 5] >> 3 <= 13, "window above 8 MiB"   # Window_Descriptor: log2 = 10 + exponent
b[r["offset"] + 5] = 17 << 3                                  # 2^27 bytes
open("wide.xpc", "wb").write(b)
open("wide.region", "w").write(str(i))
PY
set +e; "$XPACK" inflate wide.xpc wide.back.xpc 2> err.txt; st=$?; set -e
[ "$st" = 3 ] || fail "inflate of a frame with a 128 MiB window: exit $st"
grep -q "region $(cat wide.region) at offset .*needs a window of 134217728 bytes" err.txt || fail "window message: $(cat err.txt)"
[ ! -e wide.back.xpc ] || fail "wide window: output written"
"$XPACK" verify wide.xpc > v.txt && fail "verify accepted a 128 MiB window"
grep -q "^region $(cat wide.region) at offset" v.txt || fail "verify: $(cat v.txt)"
# The default level (19) and level 1 give the same mappable file.
"$XPACK" pack llm.pte -o llm.z19.xpc --zstd > /dev/null || fail "pack --zstd (default level)"
"$XPACK" pack llm.pte -o llm.z1.xpc --zstd=1 > /dev/null || fail "pack --zstd=1"
for l in 19 1; do
  "$XPACK" -q inflate llm.z$l.xpc llm.back$l.xpc || fail "inflate level $l"
  cmp llm.back$l.xpc llm.xpc || fail "level $l: inflate differs from pack"
done
# Regions compressed by one thread or several: the same transport file.
"$XPACK" pack llm.pte -o llm.z1j1.xpc --zstd=1 --jobs 1 > /dev/null || fail "pack --zstd=1 --jobs 1"
"$XPACK" pack llm.pte -o llm.z1j3.xpc --zstd=1 --jobs 3 > /dev/null || fail "pack --zstd=1 --jobs 3"
cmp llm.z1j1.xpc llm.z1j3.xpc || fail "pack --zstd: --jobs 3 made other bytes than --jobs 1"

# The loader refuses the transport form, naming inflate; the inflated file serves every weight.
"$XPACK" run llm.pte --json > n.json
set +e; "$XPACK" run llm.pte --cache llm.z.xpc --json > c.json 2> err.txt; st=$?; set -e
[ "$st" = 3 ] || fail "run --cache on the transport form: exit $st"
grep -q "xpack inflate" err.txt || fail "run --cache message does not name xpack inflate: $(cat err.txt)"
set +e; "$XPACK" verify llm.z.xpc --model llm.pte > v.txt 2>&1; st=$?; set -e
[ "$st" = 1 ] && grep -q "inflate" v.txt || fail "verify --model on the transport form: exit $st: $(cat v.txt)"
grep -q "packed bytes differ" v.txt && fail "verify --model compared frames with packed bytes: $(cat v.txt)"
"$XPACK" verify llm.back.xpc --model llm.pte > /dev/null || fail "verify --model of the inflated file"
"$XPACK" run llm.pte --cache llm.back.xpc --json > c.json || fail "run --cache on the inflated file"
compare_runs n.json c.json
"$XPACK" run llm-q4.pte --json > n.json
"$XPACK" run llm-q4.pte --cache llm-q4.back.xpc --json > c.json
compare_runs n.json c.json

# A cache written through the C API (xpack-subgraphs): libpack's compress and inflate directly.
"$SUB" pack demo.xpc > /dev/null || fail "xpack-subgraphs pack"
mkdir api
"$API" demo.xpc api || fail "transport API on the C API cache"
"$API" llm-q4.xpc api || fail "transport API on llm-q4"

# Command-line errors: exit 2, nothing written.
for bad in --zstd=0 --zstd=20 --zstd=abc --zstd= --zstd=3x; do
  st=$(status_of "$XPACK" pack llm.pte -o bad.xpc "$bad")
  [ "$st" = 2 ] || fail "pack $bad: exit $st"
done
"$XPACK" pack llm.pte -o bad.xpc --zstd=-1 > /dev/null 2>&1 && fail "pack --zstd=-1 accepted"
set +e; "$XPACK" inflate llm.xpc bad.xpc 2> err.txt; st=$?; set -e
[ "$st" = 2 ] || fail "inflate of a mappable file: exit $st"
grep -q "already in the mappable form" err.txt || fail "inflate of a mappable file: $(cat err.txt)"
[ "$(status_of "$XPACK" inflate llm.z.xpc)" = 2 ] || fail "inflate without OUT"
[ "$(status_of "$XPACK" inflate llm.z.xpc a b)" = 2 ] || fail "inflate with three paths"
[ "$(status_of "$XPACK" inflate llm.z.xpc out.xpc --fast)" = 2 ] || fail "inflate with an unknown option"
[ "$(status_of "$XPACK" inflate missing.xpc out.xpc)" = 3 ] || fail "inflate of a missing file"
[ "$(status_of "$XPACK" inflate llm.z.xpc no/such/dir/out.xpc)" = 2 ] || fail "inflate into a missing directory"
[ "$(status_of "$XPACK" inflate llm.z.xpc /proc/xpack-out.xpc)" = 4 ] || fail "inflate into /proc"
[ ! -e bad.xpc ] && [ ! -e out.xpc ] || fail "a failed command wrote a file"
ls -A | grep -q '^\.' && fail "temporary files left behind: $(ls -A | grep '^\.')"
echo "transport generated: ok"
