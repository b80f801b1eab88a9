#!/usr/bin/env bash
# Pack the sample subgraphs, then in fresh processes: verify, dump, and run with and without the cache.
XPACK=$1; SUB=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

"$SUB" pack "$d/demo.xpc" > "$d/pack.txt" || fail "pack failed"
cat "$d/pack.txt"
# 9 graphs: 7 keys (shared_decode reuses shared_prefill's; XNNPACK 4ea82e5 never offers depthwise weights to a
# cache), 6 regions (copy/weight packs to the same bytes as fc/weight). The XNNPACKs of ExecuTorch 1.x offer
# depthwise weights too (libpack/loader/xnn_compat.h): one entry and region more, in a family of its own.
dw=$(field caches_depthwise < "$d/pack.txt")
[ "$(field entries < "$d/pack.txt")" = $((7 + dw)) ] || fail "expected $((7 + dw)) entries"
[ "$(field regions < "$d/pack.txt")" = $((6 + dw)) ] || fail "expected $((6 + dw)) regions (identical packed bytes stored once)"
[ "$(field no_family < "$d/pack.txt")" = 0 ] || fail "every packed weight must have a family"
[ "$(field reused < "$d/pack.txt")" = 1 ] || fail "the shared weight must be packed once"
[ "$(field unbound < "$d/pack.txt")" = 0 ] || fail "every packed weight must be bound"

"$XPACK" verify "$d/demo.xpc" || fail "verify of a fresh cache failed"
"$XPACK" verify --json "$d/demo.xpc" | grep -q '"sound":true' || fail "verify --json"
"$XPACK" dump "$d/demo.xpc" > "$d/dump.txt" || fail "dump failed"
"$XPACK" dump --json "$d/demo.xpc" > "$d/dump.json" || fail "dump --json failed"
[ "$(grep -c 'shared/layer.weight' "$d/dump.txt")" = 1 ] || fail "the shared weight must have one entry"
saved=$(json_int dedup_saved_bytes < "$d/dump.json")
[ "$saved" -gt 0 ] || fail "dedup must save bytes (copy/weight)"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/dump.json" || fail "dump --json is not JSON"

# Regions: aligned to 64, large ones to 4096.
python3 - "$d/dump.json" <<'PY' || fail "region alignment"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["regions"]:
    assert r["offset"] % 64 == 0, r
    if r["size"] >= 4096: assert r["offset"] % 4096 == 0, r
PY

"$SUB" run > "$d/nocache.txt" || fail "run without cache failed"
"$SUB" run --cache "$d/demo.xpc" > "$d/cache.txt" || fail "run with cache failed"
"$SUB" run --cache "$d/demo.xpc" --read > "$d/cache_read.txt" || fail "run with --read failed"
# XPACK_OPEN_PROBE_EARLY: the families are probed on the cache's own thread from open on; same verdicts.
"$SUB" run --cache "$d/demo.xpc" --probe-early > "$d/cache_early.txt" || fail "run with --probe-early failed"
cat "$d/cache.txt"
diff <(outputs "$d/nocache.txt") <(outputs "$d/cache.txt") || fail "outputs differ with the cache"
diff <(outputs "$d/nocache.txt") <(outputs "$d/cache_read.txt") || fail "outputs differ with the read mode"
diff <(outputs "$d/nocache.txt") <(outputs "$d/cache_early.txt") || fail "outputs differ with early probes"
# One look-up per graph, counted once: eight graphs, and depthwise where XNNPACK offers it to a cache (4ea82e5's repeat
# of a convolution's look-up, an insert with no bytes, is answered and not counted: it once made this 9 there).
keys=$((8 + dw))
for f in cache cache_read cache_early; do
  s=$(grep '^stats ' "$d/$f.txt")
  [ "$(echo "$s" | field lookups)" = $keys ] || fail "$f: expected $keys look-ups, one per key: $s"
  [ "$(echo "$s" | field hits)" = $keys ] || fail "$f: every look-up must hit"
  [ "$(echo "$s" | field misses)" = 0 ] || fail "$f: no misses"
  [ "$(echo "$s" | field hits_after_packing)" = 1 ] || fail "$f: deconvolution is served after XNNPACK packs it"
  [ "$(echo "$s" | field heap_fallbacks)" = 0 ] || fail "$f: no heap fallback"
done

# Per graph: FC and convolution hit without packing; 4ea82e5 never offers depthwise weights to a cache, the
# XNNPACKs of ExecuTorch 1.x do and are served.
grep -q "^graph dwconv_f32 .* lookups $dw hits $dw " "$d/cache.txt" || fail "depthwise: XNNPACK behaviour changed, update docs"
grep '^graph ' "$d/cache.txt" | grep -v dwconv | grep -v ' misses 0 ' && fail "a graph missed"

# Eight threads create and run every graph at once through one cache: same outputs as one thread without it.
"$SUB" run --cache "$d/demo.xpc" --threads 8 > "$d/threads.txt" || fail "threaded run failed"
cat "$d/threads.txt"
grep -q '^threads 8 agree' "$d/threads.txt" || fail "threads disagree"
[ "$(grep '^threads' "$d/threads.txt" | cut -d' ' -f4- | tr -d ' ')" = "$(grep -o 'output_xxh3 [0-9a-f]*' "$d/nocache.txt" | tr -d '\n ')" ] \
  || fail "threaded outputs differ from the no-cache run"
s=$(grep '^stats ' "$d/threads.txt")
[ "$(echo "$s" | field misses)" = 0 ] && [ "$(echo "$s" | field hits)" = $((8 * keys)) ] || fail "threaded stats: $s"
# Early probes racing eight threads' look-ups, and closing while the prober may still run (no graph used).
"$SUB" run --cache "$d/demo.xpc" --threads 8 --probe-early > "$d/threads_early.txt" || fail "threaded early run failed"
s=$(grep '^stats ' "$d/threads_early.txt")
[ "$(echo "$s" | field misses)" = 0 ] && [ "$(echo "$s" | field hits)" = $((8 * keys)) ] || fail "threaded early stats: $s"
for _ in 1 2 3 4 5; do
  "$SUB" run --cache "$d/demo.xpc" --probe-early --only no-such-graph > /dev/null || fail "open and close at once"
done

# Deterministic output; re-packing over an existing file replaces it atomically and leaves no temporary file.
"$SUB" pack "$d/demo2.xpc" > /dev/null
cmp "$d/demo.xpc" "$d/demo2.xpc" || fail "two packs of the same input differ"
"$SUB" pack "$d/demo.xpc" > /dev/null
[ -z "$(find "$d" -name '.*' -type f)" ] || fail "temporary file left behind"
# A pack into a directory that does not exist fails cleanly.
st=$(status_of "$SUB" pack "$d/missing/dir/x.xpc")
[ "$st" = 1 ] || fail "pack into a missing directory: exit $st"
echo "roundtrip: ok"
