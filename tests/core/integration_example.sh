#!/usr/bin/env bash
# Builds nothing itself: runs the docs/INTEGRATION.md example program both ways and compares.
EXAMPLE=$1
set -euo pipefail
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$EXAMPLE" pack "$d/model.xpc"
"$EXAMPLE" run none > "$d/none.txt"
"$EXAMPLE" run "$d/model.xpc" | tee "$d/cache.txt"
[ "$(grep checksum "$d/none.txt")" = "$(grep checksum "$d/cache.txt")" ] || { echo "FAIL: outputs differ"; exit 1; }
grep -q "cache: 1 look-ups, 1 hits, 0 misses, 0 heap-fallback bytes" "$d/cache.txt" || { echo "FAIL: stats"; exit 1; }
"$EXAMPLE" run "$d/missing.xpc" 2> "$d/err.txt" > /dev/null
grep -q "cache not used: .*missing.xpc: cannot open" "$d/err.txt" || { echo "FAIL: missing-cache message"; exit 1; }
echo "integration example: ok"
