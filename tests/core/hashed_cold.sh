#!/usr/bin/env bash
# What a served program must read all the same comes from storage in large reads, not one page per fault,
# although apps open programs with weights on demand (MADV_RANDOM; xpack_et_read_ahead, called by
# libpack/replay/replay_read_ahead.c): the raw weights of a program keyed by module path, which xpack hashes
# before serving them (docs/FORMAT.md section 6), and quantization scales, which XNNPACK reads at definition.
#   `xpack bench --variants cache_cold` (cache and program dropped from the page cache, the program opened as
#   apps are advised to) on generated LLM-like programs of 8 MiB: fp32 keyed by module path, 4-bit keyed by
#   content (its scales), and fp32 keyed by content, whose raw weights are never read: the first two may take
#   no more major page faults than the third, plus a few (page by page: about 1,500 and 150). All are served
#   in full, outputs bit-identical to no cache (bench checks them).
#   Exit 77 when the kernel keeps dropped files in the page cache (tmpfs): nothing here can be cold.
#   hashed_cold.sh XPACK GENMODEL PAGE_CACHE
XPACK=$1; GEN=$2; PC=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d "${TMPDIR:-/tmp}/hashed_cold.XXXXXX"); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm --size 8M --name-keys -o paths.pte > /dev/null || fail "genmodel --name-keys"
"$GEN" llm --size 8M -o content.pte > /dev/null || fail "genmodel"
"$GEN" llm-q4 --size 8M -o scales.pte > /dev/null || fail "genmodel llm-q4"
st=0; "$PC" drop content.pte || st=$?
if [ $st = 77 ]; then echo "skipped: the kernel kept $d/content.pte in the page cache after POSIX_FADV_DONTNEED (tmpfs?)"; exit 77; fi
[ $st = 0 ] || fail "page_cache drop: exit $st"
for m in paths scales content; do
  "$XPACK" pack $m.pte -o $m.xpc > /dev/null 2>&1 || fail "pack $m"
  TMPDIR="$d" "$XPACK" bench $m.pte --cache $m.xpc --variants cache_cold --reps 1 --json > $m.json 2> $m.err ||
    fail "bench $m: $(cat $m.err)"
done
python3 - <<'PY' || fail "see above"
import json
r = {m: json.load(open(f"{m}.json")) for m in ("paths", "scales", "content")}
for m, d in r.items():
    assert d["hits"]["cache_cold"] > 0 and d["hits"]["cache_cold"] == d["lookups"]["cache_cold"], \
        f"{m}: {d['hits']['cache_cold']} hits of {d['lookups']['cache_cold']} look-ups, cold"
faults = {m: d["major_faults"]["cache_cold"] for m, d in r.items()}
read = {m: d["model_resident_bytes"]["cache_cold"] for m, d in r.items()}
print(f"cold, served in full: module-path keys {faults['paths']} major faults ({read['paths']} bytes of the program read), "
      f"4-bit {faults['scales']} ({read['scales']} bytes read), content keys {faults['content']} ({read['content']} bytes read)")
assert read["paths"] > read["content"], "the module-path program's weights were not read: nothing hashed them?"
assert faults["paths"] <= faults["content"] + 32, \
    "hashing the module-path program's weights faulted them in page by page, not in large reads"
assert faults["scales"] <= faults["content"] + 32, \
    "the 4-bit program's quantization scales were faulted in page by page, not in large reads"
PY
