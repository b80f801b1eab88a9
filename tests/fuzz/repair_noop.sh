#!/usr/bin/env bash
# repair_noop over sound caches of generated programs, in both forms (mappable and transport).
#   repair_noop.sh REPAIR_NOOP XPACK GENMODEL
set -euo pipefail
NOOP=$1 XPACK=$2 GEN=$3
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
files=()
for k in llm llm-q4 conv ptd; do
  "$GEN" $k -o "$d/$k.pte" > /dev/null
  data=(); [ ! -f "$d/$k.ptd" ] || data=(--data "$d/$k.ptd")
  "$XPACK" -q pack "$d/$k.pte" "${data[@]}" -o "$d/$k.xpc"
  "$XPACK" -q pack "$d/$k.pte" "${data[@]}" -o "$d/$k.z.xpc" --zstd=1
  files+=("$d/$k.xpc" "$d/$k.z.xpc")
done
"$NOOP" "${files[@]}"
