#!/usr/bin/env bash
# Runtimes created again and again over one cache that misses (an app loading a method each session): XNNPACK's
# packing of each missed weight is kept once, and every later creation is answered with it. Through the real
# XNNPACK on the demo subgraphs (fully connected, convolution, deconvolution, which packs before asking), each
# graph defined anew (new weight pointers) three times, with a cache that holds every weight under other seeds,
# one refused whole (another build identifier), and one whose every family is refused for its probe: every
# repetition's outputs equal a run without a cache; the heap fallbacks after three repetitions are those after
# one; each miss after the first of its key is reused. With a cache that serves everything, nothing is kept.
XPACK=$1; SUB=$2; TAMPER=$3; RESEED=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$SUB" pack sub.xpc > /dev/null
"$SUB" run > n.txt
families=$("$XPACK" dump --json sub.xpc | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["families"]))')
"$RESEED" sub.xpc not_found.xpc > /dev/null || fail "reseed_cache"
cp sub.xpc incompatible.xpc && "$TAMPER" incompatible.xpc build-id
cp sub.xpc probe.xpc
for i in $(seq 0 $((families - 1))); do "$TAMPER" probe.xpc probe "$i"; done

stat_of() { grep '^stats ' "$1" | field "$2"; }
for kind in not_found incompatible probe; do
  "$SUB" run --cache $kind.xpc > once.txt
  "$SUB" run --cache $kind.xpc --repeat 3 > thrice.txt
  [ "$(outputs thrice.txt)" = "$(outputs n.txt; outputs n.txt; outputs n.txt)" ] ||
    fail "$kind: outputs of a repetition differ from a run without a cache"
  kept=$(stat_of thrice.txt heap_fallbacks) bytes=$(stat_of thrice.txt heap_fallback_bytes)
  misses=$(stat_of thrice.txt misses) reused=$(stat_of thrice.txt misses_reused) hits=$(stat_of thrice.txt hits)
  [ "$hits" = 0 ] && [ "$kept" -gt 0 ] || fail "$kind: expected every look-up to miss: $(grep '^stats ' thrice.txt)"
  [ "$kept" = "$(stat_of once.txt heap_fallbacks)" ] && [ "$bytes" = "$(stat_of once.txt heap_fallback_bytes)" ] ||
    fail "$kind: heap fallbacks grew with repetitions: $kept ($bytes bytes) after three, $(stat_of once.txt heap_fallbacks) after one"
  [ $((misses - reused)) = "$kept" ] || fail "$kind: $misses misses, $reused reused, $kept kept"
  echo "  $kind: 3 repetitions: $misses misses, $reused answered with the first packing, $kept kept ($bytes bytes, as after one)"
done
# Weights bound to nothing (an app whose weights lie elsewhere than the bytes it bound, as ExecuTorch's mmap
# loader puts them): every look-up misses as unbound, and each repetition's packing, identical to the first, is
# given back for it (once, each repetition kept a copy of every weight until the cache was closed).
"$SUB" run --cache sub.xpc --unbound > once.txt
"$SUB" run --cache sub.xpc --unbound --repeat 3 > thrice.txt
[ "$(outputs thrice.txt)" = "$(outputs n.txt; outputs n.txt; outputs n.txt)" ] || fail "unbound: outputs differ"
kept=$(stat_of thrice.txt heap_fallbacks) misses=$(stat_of thrice.txt misses) reused=$(stat_of thrice.txt misses_reused)
[ "$(stat_of thrice.txt hits)" = 0 ] && [ "$misses" = "$(stat_of thrice.txt misses_unbound)" ] && [ "$kept" -gt 0 ] ||
  fail "unbound: expected every look-up to miss as unbound: $(grep '^stats ' thrice.txt)"
[ "$kept" = "$(stat_of once.txt heap_fallbacks)" ] && [ "$(stat_of thrice.txt heap_fallback_bytes)" = "$(stat_of once.txt heap_fallback_bytes)" ] ||
  fail "unbound: heap fallbacks grew with repetitions: $kept after three, $(stat_of once.txt heap_fallbacks) after one"
echo "  unbound: 3 repetitions: $misses misses, $reused given the first packing back, $kept kept (as after one)"
"$SUB" run --cache sub.xpc --repeat 3 > served.txt
[ "$(outputs served.txt)" = "$(outputs n.txt; outputs n.txt; outputs n.txt)" ] || fail "served: outputs differ"
[ "$(stat_of served.txt hits)" = "$(stat_of served.txt lookups)" ] && [ "$(stat_of served.txt heap_fallbacks)" = 0 ] ||
  fail "served: $(grep '^stats ' served.txt)"
echo "  served: 3 repetitions, every look-up a hit, nothing kept"
