#!/usr/bin/env bash
# Every cache one xpack writes, another writes byte for byte: for each generated kind and every XNNPACK
# file of the real test data, `pack --jobs 1` and `--jobs 2` (and --zstd) with both binaries, then cmp.
# Used to show that a change of structure changes no output (compare with the previous main's build:
# tests/model/same_bytes.sh OLD/xpack NEW/xpack NEW/xpack-genmodel [REAL_DIR]).
# Both binaries must be built against the same XNNPACK on the same machine: packed bytes depend on both.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 REFERENCE_XPACK XPACK XPACK_GENMODEL [REAL_DIR]" >&2
  exit 2
fi
ref=$1; new=$2; gen=$3; real=${4:-}
for f in "$ref" "$new" "$gen"; do [ -x "$f" ] || { echo "same_bytes: $f is not an executable" >&2; exit 2; }; done
d=$(mktemp -d "${TMPDIR:-/tmp}/xpack-same-bytes.XXXXXX"); trap 'rm -rf "$d"' EXIT

programs=()
for kind in llm llm-q4 qd8-qc8w fp16 deconv bmm conv; do
  "$gen" "$kind" -o "$d/$kind.pte" > /dev/null
  programs+=("$d/$kind.pte")
done
"$gen" llm --delegates 3 --name-keys -o "$d/llm-d3.pte" > /dev/null
programs+=("$d/llm-d3.pte")
"$gen" ptd -o "$d/ptd.pte" --ptd "$d/ptd.ptd" > /dev/null
programs+=("$d/ptd.pte --data $d/ptd.ptd")
programs+=("$d/llm.pte $d/llm-d3.pte") # two programs in one cache
if [ -n "$real" ] && [ -d "$real" ]; then
  for f in "$real"/*.pte; do programs+=("$f"); done
fi

compared=0; differ=0; none=0
for p in "${programs[@]}"; do
  for opts in "--jobs 1" "--jobs 2" "--jobs 2 --zstd"; do
    # shellcheck disable=SC2086 # p and opts are word lists on purpose
    "$ref" pack $p $opts -o "$d/ref.xpc" > "$d/ref.out" 2>&1 && rs=0 || rs=$?
    # shellcheck disable=SC2086
    "$new" pack $p $opts -o "$d/new.xpc" > "$d/new.out" 2>&1 && ns=0 || ns=$?
    name="$(basename "${p%% *}") $opts"
    if [ "$rs" != "$ns" ]; then
      echo "DIFFER  $name: exit $rs (reference) vs $ns"; differ=$((differ + 1))
    elif [ -f "$d/ref.xpc" ] || [ -f "$d/new.xpc" ]; then
      if cmp -s "$d/ref.xpc" "$d/new.xpc"; then
        echo "same    $name ($(stat -c %s "$d/new.xpc") bytes)"; compared=$((compared + 1))
      else
        echo "DIFFER  $name"; differ=$((differ + 1))
      fi
    else
      echo "none    $name (neither writes a file, both exit $rs)"; none=$((none + 1))
    fi
    rm -f "$d/ref.xpc" "$d/new.xpc"
  done
done
echo "same_bytes: $compared identical, $differ different, $none written by neither"
[ "$differ" -eq 0 ]
