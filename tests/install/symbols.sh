#!/usr/bin/env bash
# libpack's symbol policy (issue 14): a static archive shares one namespace with the app that links it, so
# the public prefix xpack_ belongs to what the public headers declare, and every other global symbol carries
# one of the internal prefixes below, which no user name is expected to start with.
# Fails when an archive in ARCHIVE_DIR defines a global symbol that starts with xpack_ and is not declared
# in PUBLIC_INCLUDE_DIR/*.h (comments left out), or one that starts with none of ALLOWED_INTERNAL_PREFIXES.
# Usage: symbols.sh ARCHIVE_DIR PUBLIC_INCLUDE_DIR
ALLOWED_INTERNAL_PREFIXES="xp_"
# Names a linker convention fixes: the et_adapter's stand-ins for XNNPACK's functions under -Wl,--wrap.
ALLOWED_EXACT="__wrap_xnn_create_runtime_v4 __wrap_xnn_delete_runtime"

set -euo pipefail
ARCHIVES=$1 INCLUDE=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

shopt -s nullglob
archives=("$ARCHIVES"/*.a)
headers=("$INCLUDE"/*.h)
[ ${#archives[@]} -gt 0 ] || fail "no static archive in $ARCHIVES"
[ ${#headers[@]} -gt 0 ] || fail "no public header in $INCLUDE"

# Names declared as functions (or function-like objects) in the public headers, comments removed first so
# that a name a comment mentions does not count as declared.
declared=$(perl -0777 -pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g' "${headers[@]}" |
           grep -oE '\bxpack_[A-Za-z0-9_]+[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' | sort -u)
[ -n "$declared" ] || fail "no xpack_ function declared in $INCLUDE/*.h"

# archive[object]: name type value size, for every global definition.
defined=""
for a in "${archives[@]}"; do
  out=$(nm -A -P --defined-only -g "$a") || fail "nm $a"
  defined+="$out"$'\n'
done
[ -n "$(tr -d '\n' <<< "$defined")" ] || fail "the archives in $ARCHIVES define no global symbol"

bad_public="" bad_internal=""
while read -r where name _; do
  [ -n "$name" ] || continue
  if [[ $name == xpack_* ]]; then
    grep -qxF "$name" <<< "$declared" || bad_public+="  $name  (${where%:})"$'\n'
    continue
  fi
  allowed=0
  for exact in $ALLOWED_EXACT; do
    if [[ $name == "$exact" ]]; then allowed=1; fi
  done
  for prefix in $ALLOWED_INTERNAL_PREFIXES; do
    if [[ $name == "$prefix"* ]]; then allowed=1; fi
  done
  [ "$allowed" = 1 ] || bad_internal+="  $name  (${where%:})"$'\n'
done <<< "$defined"

status=0
if [ -n "$bad_public" ]; then
  echo "global symbols with the public prefix xpack_ that no public header declares:"
  printf '%s' "$bad_public"
  status=1
fi
if [ -n "$bad_internal" ]; then
  echo "global symbols with none of the internal prefixes ($ALLOWED_INTERNAL_PREFIXES):"
  printf '%s' "$bad_internal"
  status=1
fi
[ "$status" = 0 ] && echo "symbols: ${#archives[@]} archives, every global symbol is public and declared or internal"
exit "$status"
