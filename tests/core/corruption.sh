#!/usr/bin/env bash
# The corruption matrix (corruption_matrix.sh) on a cache of the C-built demo subgraphs: every byte of the
# header, metadata and footer flipped, bytes of every region, truncations, wrong magic and major version.
# The workload is `xpack-subgraphs run --cache`, compared with its run without a cache.
XPACK=$1; SUB=$2
FLIP=$(dirname "$SUB")/flipbyte
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/corruption_matrix.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT

"$SUB" pack "$d/good.xpc" > /dev/null
"$SUB" run > "$d/nocache.txt"
EXPECTED=$(outputs "$d/nocache.txt")
cache_run() { "$SUB" run --cache "$1" > "$2"; }
outputs_match() { [ "$(outputs "$1")" = "$EXPECTED" ]; }

matrix_run "$d/good.xpc" "$d" demo-subgraphs
echo "corruption: ok"
