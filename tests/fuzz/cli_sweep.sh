#!/usr/bin/env bash
# Runs the fuzzers' corpora through the xpack CLI (by hand; not a ctest): every cache of corpus/{cache,inflate,loader}
# through dump, verify, inflate, export --executorch, run --cache (three programs, mapped, read with region checks,
# and the chooser over the file twice), verify --model and bench --cache; every program of corpus/pte through
# inspect, pack, run, then run --cache and verify --model of what it packed. Build the CLI with sanitizers
# (tools/dev.sh build --sanitize) to make the sweep worth its time. A finding is a sanitizer report, an assertion,
# a signal or a timeout (60 s), a failure that says nothing on stderr, or an input whose bytes changed.
# usage: cli_sweep.sh --xpack PATH --work BUILD/fuzz [--jobs N]
#   --work   the fuzz_all work folder: its corpus/ (what the fuzzers kept) and seeds/pte/ (the programs run with
#            each cache: gen_conv.pte, gen_llm_q4.pte and person_detect_int8.pte when they are there)
# Prints one line per finding and a count; exit 0 when there is none, 1 otherwise.
set -u
. "$(dirname "$0")/sanitizer_reports.sh"
xpack="" work="" jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --xpack) xpack=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "cli_sweep.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

one() { # KIND FILE
  local kind=$1 f=$2 t
  t=$(mktemp -d "${TMPDIR:-/tmp}/cli_sweep.XXXXXX")
  local before
  before=$(sha256sum "$f" 2>/dev/null | cut -c1-64) || { rm -rf "$t"; return 0; } # the fuzzer removed it since
  check() { # NAME COMMAND...
    local name=$1
    shift
    timeout 60 "$@" >"$t/out" 2>"$t/err"
    local rc=$?
    local report
    report=$(sanitizer_report "$t/err")
    if [ $rc -ge 124 ] || [ -n "$report" ]; then
      echo "FINDING exit $rc: $name $f: $(printf '%s' "$report" | cut -c1-200)"
    elif [ $rc -ne 0 ] && [ ! -s "$t/err" ] && [ ! -s "$t/out" ]; then
      echo "FINDING exit $rc without a word: $name $f"
    fi
    return $rc
  }
  local p=$work/seeds/pte
  case $kind in
    cache)
      check dump "$xpack" dump "$f" --json
      check verify "$xpack" verify "$f"
      check inflate "$xpack" inflate "$f" "$t/inflated.xpc"
      check export "$xpack" export --executorch "$f" "$t/exported.bin"
      [ -f "$p/gen_conv.pte" ] && check run "$xpack" run "$p/gen_conv.pte" --cache "$f"
      [ -f "$p/gen_llm_q4.pte" ] && check run_read "$xpack" run "$p/gen_llm_q4.pte" --cache "$f" --read --check-regions
      [ -f "$p/person_detect_int8.pte" ] && check run_choose "$xpack" run "$p/person_detect_int8.pte" --cache "$f" --cache "$f"
      [ -f "$p/gen_conv.pte" ] && check verify_model "$xpack" verify "$f" --model "$p/gen_conv.pte"
      [ -f "$p/gen_conv.pte" ] && check bench "$xpack" bench "$p/gen_conv.pte" --cache "$f" --reps 1 --variants cache_warm
      ;;
    pte)
      check inspect "$xpack" inspect "$f" --json
      check pack "$xpack" pack "$f" -o "$t/packed.xpc"
      check run "$xpack" run "$f"
      if [ -f "$t/packed.xpc" ]; then
        check run_cache "$xpack" run "$f" --cache "$t/packed.xpc"
        check verify_model "$xpack" verify "$t/packed.xpc" --model "$f"
      fi
      ;;
  esac
  [ "$(sha256sum "$f" | cut -c1-64)" = "$before" ] || echo "FINDING: $f changed"
  rm -rf "$t"
}

[ -x "$xpack" ] && [ -d "$work/corpus" ] || { echo "usage: cli_sweep.sh --xpack PATH --work BUILD/fuzz [--jobs N]" >&2; exit 2; }
export xpack work
export -f one sanitizer_report
log=$(mktemp)
for kind in cache pte; do
  dirs=()
  if [ $kind = cache ]; then
    for d in cache inflate loader; do [ -d "$work/corpus/$d" ] && dirs+=("$work/corpus/$d"); done
  else
    [ -d "$work/corpus/pte" ] && dirs+=("$work/corpus/pte")
  fi
  [ ${#dirs[@]} -gt 0 ] || continue
  n=$(find "${dirs[@]}" -type f | wc -l)
  echo "cli_sweep: $n inputs as ${kind}s" >&2
  find "${dirs[@]}" -type f -print0 | xargs -0 -P "$jobs" -n 1 bash -c 'one "$0" "$1"' "$kind" | tee -a "$log"
done
findings=$(grep -c '^FINDING' "$log")
rm -f "$log"
echo "cli_sweep: $findings findings"
[ "$findings" -eq 0 ]
