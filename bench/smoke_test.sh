#!/usr/bin/env bash
# xpack bench end to end on a tiny generated model: every required key, sane values, hits in every cache
# variant, outputs identical across variants (the tool itself fails otherwise); usage errors; xpack-bench-open
# allocates nothing per entry; size_scaling.sh and report.py work on the smallest sizes;
# xpack-bench-skip runs every case and refuses a cache it would not skip. No timing asserted.
set -euo pipefail
XPACK=$1; GEN=$2; OPEN=$3; SKIP=$4
HERE=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm -o llm.pte > /dev/null
TMPDIR=$d "$XPACK" bench llm.pte --reps 1 --readahead --json > b.json || fail "bench exit $?"
ls "$d" | grep -q xpack-bench- && fail "bench left its temporary directory behind"

# A bench killed outright (SIGKILL: a CI timeout) takes its children with it, and the next bench removes the
# folder it left; a folder kept with --keep stays.
mkdir kt
"$GEN" llm --size 128M -o big.pte > /dev/null # a pack that lasts long enough to be killed in
TMPDIR=$d/kt "$XPACK" -q bench big.pte --reps 1 > /dev/null 2>&1 & pid=$!
for _ in $(seq 1000); do pgrep -f " pack .*-o $d/kt/" > /dev/null && break; sleep 0.01; done
pgrep -f " pack .*-o $d/kt/" > /dev/null || fail "the bench's pack child never started"
kill -KILL $pid; wait $pid 2> /dev/null || true
for _ in $(seq 600); do pgrep -f "$d/kt/" > /dev/null || break; sleep 0.05; done
! pgrep -f "$d/kt/" > /dev/null || fail "a killed bench's children run on: $(pgrep -af "$d/kt/")"
left=$(ls kt); [ -n "$left" ] || fail "the killed bench left no folder (it is expected to)"
[ ! -e "kt/$left/bench.xpc" ] || fail "the killed bench's pack child went on and wrote its cache"
rm big.pte
TMPDIR=$d/kt "$XPACK" bench llm.pte --reps 1 --keep --json > /dev/null 2> kt.err || fail "bench after a killed one: $(cat kt.err)"
grep -q "removed $d/kt/$left, left by a bench that was killed" kt.err || fail "the killed bench's folder was not removed: $(cat kt.err)"
kept=$(ls kt); [ -n "$kept" ] && [ "$kept" != "$left" ] && [ -f "kt/$kept/bench.xpc" ] || fail "--keep kept: $(ls -R kt)"
TMPDIR=$d/kt "$XPACK" -q bench llm.pte --reps 1 --json > /dev/null || fail "bench after a kept one"
[ "$(ls kt)" = "$kept" ] && [ -f "kt/$kept/bench.xpc" ] || fail "a later bench removed the folder kept with --keep"
echo "a killed bench: its children end with it, the next bench removes its folder, a kept one stays"
python3 - <<'PY' || fail "bench JSON"
import json
b = json.load(open("b.json"))
core = ["nocache", "cache_warm", "cache_cold", "nocache_cold", "ideal"]
for key in ["create_ms", "ttfi_ms", "open_ms", "prefetch_ms", "first_inference_ms", "rss_bytes", "private_dirty_bytes",
            "peak_rss_bytes", "major_faults", "minor_faults", "hits", "lookups", "misses"]:
    for v in core + ["cache_cold_seq", "cache_cold_willneed"]:
        assert v in b[key], (key, v)
for v in core:
    assert b["ttfi_ms"][v] > 0 and b["create_ms"][v] > 0, v
    assert b["rss_bytes"][v] > 0 and b["peak_rss_bytes"][v] >= b["rss_bytes"][v] > b["private_dirty_bytes"][v] > 0, v
    s = b["samples"][v]
    assert len(s) == 1 and s[0]["failed"] == 0 and s[0]["delegates"] == 2, (v, s)
    assert abs(s[0]["ttfi_ms"] - (s[0]["open_ms"] + s[0]["prefetch_ms"] + s[0]["create_ms"] + s[0]["first_inference_ms"])) <= 1e-4 * s[0]["ttfi_ms"], s[0]
for v in ["cache_warm", "cache_cold", "ideal", "cache_cold_seq", "cache_cold_willneed"]:
    assert b["hits"][v] > 0 and b["hits"][v] == b["lookups"][v] and b["misses"][v] == 0, (v, b["hits"], b["lookups"])
for v in ["nocache", "nocache_cold"]:
    assert b["lookups"][v] == 0 and b["open_ms"][v] == 0, v
outs = {v: b["samples"][v][0]["output_xxh3"] for v in b["samples"]}
assert len(set(outs.values())) == 1 and len(outs["nocache"].split()) == 2, outs
assert b["outputs_identical"] is True and b["problem"] is None
assert b["open_us"] > 0 and abs(b["open_us"] - b["open_ms"]["cache_warm"] * 1e3) <= 1e-4 * b["open_us"]
assert b["packed_bytes"] > 0 and b["entries"] > 0 and b["largest_packed_bytes"] <= b["packed_bytes"]
assert b["cache_file_bytes"] >= b["packed_bytes"] and b["model_bytes"] > 0
assert b["pack"]["wall_ms"] > 0 and b["pack"]["peak_rss_bytes"] > 0 and len(b["pack"]["runs"]) == 1
for v in ["cache_cold", "nocache_cold"]:
    pc = b["page_cache"][v]
    assert pc["file_bytes"] > 0 and pc["resident_bytes"] >= 0 and isinstance(pc["dropped"], bool), pc
assert len(b["targets"]) == 13 and all(t["met"] in (True, False) for t in b["targets"]), b["targets"]
for v in b["ttfi_ms"]:
    assert abs(b["load_ttfi_ms"][v] - b["load_ms"][v] - b["ttfi_ms"][v]) <= 1e-3, (v, b["load_ttfi_ms"])
    assert 0 < b["model_resident_bytes"][v] <= b["model_bytes"], (v, b["model_resident_bytes"])
# Cold with a full hit, the program's raw weights stay unread (XPACK_MODEL_SET_WEIGHTS_ON_DEMAND); without a
# cache XNNPACK reads them all to pack them. Only meaningful when the kernel really dropped the files.
if b["page_cache"]["cache_cold"]["dropped"] and b["page_cache"]["nocache_cold"]["dropped"]:
    assert b["model_resident_bytes"]["cache_cold"] * 2 < b["model_resident_bytes"]["nocache_cold"], b["model_resident_bytes"]
    assert b["open_major_faults"]["cache_cold"] + b["open_read_calls"]["cache_cold"] >= 1, b["open_major_faults"]
else:
    print("  note: the page cache was not dropped here; the cold checks are skipped")
assert b["machine"]["cpus"] > 0 and b["reps"] == 1
print(f"  bench: {b['entries']} entries, ttfi nocache {b['ttfi_ms']['nocache']:.2f} ms, cache_warm {b['ttfi_ms']['cache_warm']:.2f} ms, outputs identical")
PY

# A cache of another program (variant B: another head) still serves the shared layers; the misses show.
"$GEN" llm --variant B -o b.pte > /dev/null
"$XPACK" -q pack b.pte -o b.xpc
# The ideal provider is filled from the same cache, so it has the same holes: XNNPACK packs those (misses). It
# keeps what was packed, so a second look-up of a weight shared by both methods hits there (the loader, which
# serves only its file, misses it again).
"$XPACK" bench llm.pte --cache b.xpc --reps 1 --variants cache_warm,ideal --json > other.json || fail "bench --cache"
python3 - <<'PY' || fail "bench --cache JSON"
import json
b = json.load(open("other.json"))
assert b["pack"] is None and set(b["create_ms"]) == {"nocache", "cache_warm", "ideal"}, b["create_ms"]
assert 0 < b["hits"]["cache_warm"] < b["lookups"]["cache_warm"] and b["misses"]["cache_warm"] > 0, b
assert b["lookups"]["ideal"] == b["lookups"]["cache_warm"] == b["hits"]["ideal"] + b["misses"]["ideal"], b
assert 0 < b["misses"]["ideal"] <= b["misses"]["cache_warm"], b
assert b["outputs_identical"] is True
PY
# A convolution, which XNNPACK 4ea82e5 looks up twice (the second time as an insert with no bytes): every variant
# counts each key once, so that their look-ups compare.
"$GEN" conv -o conv.pte > /dev/null
"$XPACK" -q pack conv.pte -o conv.xpc
"$XPACK" bench conv.pte --cache conv.xpc --reps 1 --variants cache_warm,ideal --serve-small --json > conv.json ||
  fail "bench conv"
python3 - <<'PY' || fail "bench conv: look-ups counted otherwise by the cache and the ideal"
import json
b = json.load(open("conv.json"))
assert b["lookups"]["ideal"] == b["lookups"]["cache_warm"] == b["hits"]["cache_warm"] == b["hits"]["ideal"] > 0, b
PY
# A cache the ideal provider cannot read is an error naming the file, not a floor that packs everything.
head -c 4096 b.xpc > cut.xpc
"$XPACK" bench llm.pte --cache cut.xpc --reps 1 --variants ideal > /dev/null 2> cut.err && fail "bench accepted a cut cache"
grep -q "cut.xpc" cut.err || fail "cut cache: the error does not name the file: $(cat cut.err)"
# The text report names every variant and the targets.
"$XPACK" bench llm.pte --reps 1 > b.txt 2> /dev/null || fail "bench text"
for w in nocache cache_warm cache_cold nocache_cold ideal targets "bit-identical" "within each repetition"; do
  grep -q "$w" b.txt || fail "text report lacks $w"
done
# The paired differences, recomputed here from the samples: the median of cache - base within each repetition
# and the sign test's interval, [d(k), d(n+1-k)] for the widest k whose miss chance 2 P(X <= k-1) is <= 5 %.
"$XPACK" bench llm.pte --reps 9 --variants cache_warm,cache_cold,nocache_cold --json > paired.json 2> /dev/null ||
  fail "bench --reps 9"
python3 - <<'PY' || fail "paired differences"
import json, math
b = json.load(open("paired.json"))
for v, base in (("cache_warm", "nocache"), ("cache_cold", "nocache_cold")):
    p = b["load_ttfi_paired"][v]
    d = sorted(x["load_ttfi_ms"] - y["load_ttfi_ms"] for x, y in zip(b["samples"][v], b["samples"][base]))
    n = len(d)
    miss = lambda k: 2 * sum(math.comb(n, i) for i in range(k)) / 2**n
    k = max(k for k in range(1, (n + 1) // 2 + 1) if k == 1 or miss(k) <= 0.05)
    assert p["base"] == base and p["pairs"] == n == 9, p
    near = lambda x, y: abs(x - y) <= 1e-5 * max(1.0, abs(y))  # the JSON's numbers have 6 significant digits
    assert near(p["median_ms"], d[n // 2]) and near(p["low_ms"], d[k - 1]), (p, d, k)
    assert near(p["high_ms"], d[n - k]) and near(p["coverage"], 1 - miss(k)), (p, d, k)
    assert k == 2 and p["low_ms"] <= p["median_ms"] <= p["high_ms"], (p, k)
assert b["unlike_app"] == [], b["unlike_app"]
for v, samples in b["samples"].items():  # an app's flags: probes on their thread, small and cold files skipped
    want = 0 if v.startswith("nocache") else 0x20 | 0x80 | 0x100
    assert all(x["open_flags"] == want for x in samples), (v, [x["open_flags"] for x in samples])
one = json.load(open("b.json"))["load_ttfi_paired"]["cache_warm"]
assert one["pairs"] == 1 and one["coverage"] == 0 and one["low_ms"] == one["median_ms"] == one["high_ms"], one
print(f"  paired: cache_warm - nocache median {b['load_ttfi_paired']['cache_warm']['median_ms']:+.3f} ms over 9 repetitions")
PY

# --probe-late opens without XPACK_OPEN_PROBE_EARLY (the families probed inside runtime creation): same hits.
"$XPACK" bench llm.pte --reps 1 --variants cache_warm --probe-late --json > late.json 2> /dev/null || fail "--probe-late"
python3 - <<'PY' || fail "--probe-late JSON"
import json
b = json.load(open("late.json"))
assert b["unlike_app"] == ["probe_late"], b["unlike_app"]
s = b["samples"]["cache_warm"][0]
assert s["open_flags"] == 0x80 | 0x100 and s["hits"] == s["lookups"] > 0, s
PY
grep -q -- "--probe-late" <("$XPACK" bench llm.pte --reps 1 --variants cache_warm --probe-late 2> /dev/null) ||
  fail "the text report does not say the cache variants probed late"

# --no-prefetch leaves out xpack_cache_prefetch: nothing timed for it, same hits; by default it is timed.
"$XPACK" bench llm.pte --reps 1 --variants cache_warm --no-prefetch --json > nopf.json 2> /dev/null || fail "--no-prefetch"
python3 - <<'PY' || fail "--no-prefetch JSON"
import json
b = json.load(open("nopf.json"))
assert b["unlike_app"] == ["no_prefetch"], b["unlike_app"]
s = b["samples"]["cache_warm"][0]
assert s["prefetch_ms"] == 0 and s["hits"] == s["lookups"] > 0, s
d = json.load(open("late.json"))["samples"]["cache_warm"][0]
assert d["prefetch_ms"] > 0 and abs(d["ttfi_ms"] - (d["open_ms"] + d["prefetch_ms"] + d["create_ms"] + d["first_inference_ms"])) <= 1e-4 * d["ttfi_ms"], d
PY

# Usage and input errors.
st() { set +e; "$@" > /dev/null 2>&1; local s=$?; set -e; echo $s; }
[ "$(st "$XPACK" bench)" = 2 ] || fail "no model: not exit 2"
[ "$(st "$XPACK" bench llm.pte --reps 0)" = 2 ] || fail "--reps 0: not exit 2"
[ "$(st "$XPACK" bench llm.pte --variants warm)" = 2 ] || fail "bad variant: not exit 2"
[ "$(st "$XPACK" bench missing.pte)" = 3 ] || fail "missing model: not exit 3"
head -c 100 llm.pte > cut.pte
[ "$(st "$XPACK" bench cut.pte --reps 1)" = 3 ] || fail "truncated model: not exit 3"
[ "$(st "$XPACK" bench llm.pte --cache missing.xpc --reps 1)" = 3 ] || fail "missing cache: not exit 3"
[ "$(st "$XPACK" bench llm.pte --variants ,,)" = 2 ] || fail "--variants naming none: not exit 2"
[ "$(st "$XPACK" bench llm.pte --variants '')" = 2 ] || fail "--variants '': not exit 2"
"$XPACK" -q pack llm.pte -o t.xpc --zstd=1
set +e; "$XPACK" bench llm.pte --cache t.xpc --reps 1 > /dev/null 2> t.err; s=$?; set -e
[ $s = 3 ] && grep -q "transport form; run \`xpack inflate" t.err || fail "a transport-form cache: exit $s, $(cat t.err)"

# Open cost: the same allocations whatever the entry count (no allocation per entry).
"$OPEN" --reps 3 --max-entries 1000 --big-payload 4096 --json > open.json || fail "xpack-bench-open"
python3 - <<'PY' || fail "open scaling JSON"
import json
p = json.load(open("open.json"))["points"]
assert [x["entries"] for x in p] == [10, 100, 1000, 1000], p
assert len({x["allocations"] for x in p}) == 1, f"allocations depend on the entry count: {p}"
assert all(x["open_us_median"] > 0 and x["file_bytes"] > x["entries"] * 64 for x in p), p
print(f"  open: {p[0]['allocations']} allocations at 10 and at 1000 entries")
PY

# The size-scaling script and the markdown report on the smallest sizes.
bash "$HERE/size_scaling.sh" --xpack "$XPACK" --genmodel "$GEN" --out sizes --sizes 256K,1M --kinds llm --reps 1 \
  > /dev/null || fail "size_scaling.sh"
python3 - <<'PY' || fail "size scaling JSON"
import json
s = json.load(open("sizes/size_scaling.json"))
assert [(r["kind"], r["size"]) for r in s["runs"]] == [("llm", "256K"), ("llm", "1M")], s
assert s["runs"][0]["packed_bytes"] < s["runs"][1]["packed_bytes"]
PY
python3 "$HERE/report.py" b.json --open open.json --sizes sizes/size_scaling.json > tables.md || fail "report.py"
grep -q "| cache_warm |" tables.md && grep -q "entries" tables.md || fail "report.py tables: $(head -20 tables.md)"
if /usr/bin/python3 -c 'import matplotlib' 2> /dev/null; then
  /usr/bin/python3 "$HERE/plot.py" -o plot.png b.json || fail "plot.py"
  [ "$(head -c 4 plot.png | od -An -c | tr -d ' ')" = "211PNG" ] || fail "plot.py did not write a PNG"
else
  echo "  (python3-matplotlib absent: plot.py not checked; bench/run_all.sh installs it)"
fi
# xpack-bench-skip: every case runs and is printed; a cache that would not be skipped is refused, not measured.
"$GEN" conv -o conv.pte > /dev/null && "$XPACK" -q pack conv.pte -o conv.xpc 2> /dev/null || fail "packing conv"
"$SKIP" conv.xpc --reps 2 > skip.txt || fail "xpack-bench-skip: $(cat skip.txt)"
for c in stat skip stat_bound skip_bound code_fault; do
  grep -Eq "^$c +[0-9.]+ +[0-9.]+ +[0-9.]+$" skip.txt || fail "xpack-bench-skip printed no $c row: $(cat skip.txt)"
done
"$GEN" llm --size 1M -o skip_big.pte > /dev/null && "$XPACK" -q pack skip_big.pte -o skip_big.xpc 2> /dev/null || fail "packing llm"
"$SKIP" skip_big.xpc --reps 1 > /dev/null 2> skip.err && fail "xpack-bench-skip measured a cache it does not skip"
grep -q "was opened, not skipped" skip.err || fail "xpack-bench-skip on a large cache: $(cat skip.err)"
echo "bench smoke: all checks passed"
