#!/usr/bin/env bash
# Every known packing family, probed in two processes: the same family names and the same hashes (a probe
# that depended on addresses or uninitialised bytes would differ between processes and refuse good caches).
PROBES=$1
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$PROBES" > "$d/a.txt" || fail "family_probes failed"
"$PROBES" > "$d/b.txt" 2> /dev/null || fail "family_probes failed in the second process"
cmp "$d/a.txt" "$d/b.txt" || fail "probes differ between two processes"
n=$(grep -c ' probe ' "$d/a.txt")
[ "$n" -ge 1 ] || fail "no family could be probed"
echo "family probes: $n families probed, identical in two processes"
