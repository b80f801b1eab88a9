# The corruption matrix, sourced by tests/core/corruption.sh (a cache of C-built demo subgraphs) and
# tests/model/corruption_model.sh (caches packed from ExecuTorch programs).
#
# It damages a sound cache in every way below and checks each damaged file with real processes:
#   - every byte of the header, of the metadata area (tables and directory) and of the footer, one at a
#     time: `xpack verify` must exit 1 with a message; the workload run with the damaged cache must either
#     be refused at open (exit 3, with a message naming the file) or finish with outputs identical to the
#     run without a cache;
#   - five bytes of every region: verify must name that region. Region bytes are not hashed when served
#     (docs/FORMAT.md, section 8), so a run that uses them may compute other outputs: those runs are only
#     checked for crashes, and counted;
#   - truncation at many points, bytes appended, a block cut from the middle: open and verify both refuse;
#   - every rule of docs/FORMAT.md that no checksum covers (key order and uniqueness, flags, family names,
#     reserved fields, alignments, placement, sizes, padding), broken once with every checksum re-sealed
#     by tests/core/xpc_tamper: checked as a flipped byte is (verify reports it; a run is refused at open or
#     computes the outputs without a cache). A rule the cache cannot break (one entry, one family, no large
#     region after a gap) is counted as not applicable;
#   - wrong magic, wrong major version, not a cache at all: the messages say so.
# No process may crash (exit status >= 128) or print a sanitizer report.
#
# The caller sets XPACK (the xpack tool) and FLIP (tests/core/flipbyte; tests/core/xpc_tamper lies beside
# it), has `fail` defined, and defines
#   cache_run FILE OUT       runs the workload with cache FILE, stdout to OUT (stderr is captured); returns its status
#   outputs_match OUT        succeeds when OUT holds the outputs of the run without a cache
# then calls  matrix_run GOOD.xpc WORKDIR LABEL [RUN_EVERY]  (WORKDIR: an existing scratch directory).
# RUN_EVERY=N, for slow workloads, runs the workload on every Nth damaged file that opens: `xpack dump`
# then opens every file, and every file it refuses is still run. matrix_run fails the test on any
# violation and prints one line of counts.

# Runs "$@" with stdout to $MX/out and stderr to $MX/err; sets ST. Counts a crash on a signal exit or a
# sanitizer report.
mx_exec() {
  local what=$1; shift
  set +e; "$@" > "$MX/out" 2> "$MX/err"; ST=$?; set -e
  MX_ERR=()
  [ -s "$MX/err" ] && mapfile -t MX_ERR < "$MX/err"   # a builtin: no process per check
  if [ "$ST" -ge 128 ] || [[ "${MX_ERR[*]}" == *Sanitizer* || "${MX_ERR[*]}" == *"runtime error:"* ]]; then
    echo "CRASH (exit $ST) $what: $*" >&2; sed -n 1,5p "$MX/err" >&2
    mx_crashes=$((mx_crashes + 1))
  fi
}

mx_problem() { echo "PROBLEM: $*" >&2; mx_problems=$((mx_problems + 1)); }

# Checks $MX/bad.xpc. $1: description; $2: "flip" or "short" (truncated or otherwise resized: must not open).
# Whether the file opens is what the run says (exit 3: refused at open); when runs are sampled
# (RUN_EVERY > 1), `xpack dump` says it for the files not run.
mx_check() {
  local desc=$1 kind=$2 opened=
  mx_damaged=$((mx_damaged + 1))
  mx_exec "verify, $desc" "$XPACK" verify "$MX/bad.xpc"
  if [ "$ST" = 1 ] && [ -s "$MX/out" ]; then mx_verify_rejected=$((mx_verify_rejected + 1))
  else mx_problem "verify exit $ST without a problem line on $desc: $(head -c 300 "$MX/out")"; fi
  if [ "$mx_run_every" -gt 1 ]; then
    mx_exec "dump, $desc" "$XPACK" dump "$MX/bad.xpc"
    if [ "$ST" = 0 ]; then
      opened=1; mx_opened=$((mx_opened + 1))
      [ $((mx_opened % mx_run_every)) = 0 ] || { mx_check_opened "$desc" "$kind"; return 0; }
    else
      opened=0; mx_refused "$desc" "dump"
    fi
  fi
  mx_exec "run, $desc" cache_run "$MX/bad.xpc" "$MX/run.out"
  if [ "$ST" = 3 ]; then
    mx_run_refused=$((mx_run_refused + 1))
    [ -n "$opened" ] || mx_refused "$desc" "run"
    [ "$opened" != 1 ] || mx_problem "the loader refuses a file that dump opens: $desc"
  elif [ "$ST" = 0 ]; then
    [ "$opened" != 0 ] || mx_problem "the loader opened a file that dump refuses: $desc"
    [ -n "$opened" ] || mx_opened=$((mx_opened + 1))
    mx_check_opened "$desc" "$kind"
    mx_runs=$((mx_runs + 1))
    if outputs_match "$MX/run.out"; then mx_identical=$((mx_identical + 1))
    else echo "WRONG OUTPUT: $desc" >&2; mx_wrong=$((mx_wrong + 1)); fi
  elif [ "$ST" -lt 128 ]; then
    mx_problem "run exit $ST on $desc: $(head -c 300 "$MX/err")"
  fi
}

# A file was refused at open ($2: by which process): counted, and the message must name the file.
mx_refused() {
  mx_open_rejected=$((mx_open_rejected + 1))
  [[ "${MX_ERR[*]}" == *bad.xpc* ]] || mx_problem "$2 refused $1 without a message naming the file: ${MX_ERR[*]:0:300}"
}
mx_check_opened() { [ "$2" != short ] || mx_problem "a resized file opens: $1"; }

# Prints the distinct values of "$@" below $mx_size, ascending.
mx_points() { printf '%s\n' "$@" | awk -v n="$mx_size" '$1 >= 0 && $1 < n' | sort -n -u; }

matrix_run() {
  local good=$1 label=$3
  mx_run_every=${4:-1}
  MX=$2/matrix-$label
  mkdir -p "$MX"
  mx_damaged=0 mx_verify_rejected=0 mx_open_rejected=0 mx_opened=0 mx_run_refused=0 mx_runs=0 mx_identical=0
  mx_wrong=0 mx_crashes=0 mx_problems=0 mx_region_flips=0 mx_region_named=0 mx_region_runs=0 mx_region_differ=0
  mx_resized=0 mx_rules=0 mx_rules_na=0
  mx_size=$(stat -c %s "$good")
  "$XPACK" dump --json "$good" > "$MX/dump.json"
  python3 - "$MX/dump.json" > "$MX/layout.txt" <<'PY'
import json, random, sys
d = json.load(open(sys.argv[1]))
print("meta", d["metadata"]["offset"])
print("data", d["data"]["offset"], d["data"]["size"])
rnd = random.Random(1)
end, large, gap = d["data"]["offset"], None, None
for r in d["regions"]:
    if large is None and r["size"] >= d["page_alignment"] and r["offset"] - end >= 64: large = r["index"]
    if gap is None and r["offset"] > end > d["data"]["offset"]: gap = end
    end = r["offset"] + r["size"]
print("rules", large if large is not None else -1, gap if gap is not None else -1)
for r in d["regions"]:
    o, n = r["offset"], r["size"]
    picks = sorted({o, o + n // 2, o + n - 1, rnd.randrange(o, o + n), rnd.randrange(o, o + n)})
    print("region", r["index"], o, n, *picks)
PY
  local meta data_off data_size off idx ro rn
  read -r _ meta < <(grep '^meta ' "$MX/layout.txt")
  read -r _ data_off data_size < <(grep '^data ' "$MX/layout.txt")
  "$XPACK" verify "$good" > /dev/null || fail "$label: the cache to damage is not sound"
  cp "$good" "$MX/bad.xpc"

  # Every byte of the header, the metadata area and the footer, flipped in place; one flipbyte process
  # undoes the previous flip and makes the next.
  local undo=()
  for off in $(seq 0 63) $(seq "$meta" $((mx_size - 1))); do
    "$FLIP" "$MX/bad.xpc" "${undo[@]}" "$off" $((1 << (off % 8)))
    undo=("$off" $((1 << (off % 8))))
    mx_check "byte $off flipped" flip
  done
  "$FLIP" "$MX/bad.xpc" "${undo[@]}"
  cmp -s "$good" "$MX/bad.xpc" || fail "$label: the working copy was not restored"

  # Bytes of every region: verify names the region.
  while read -r _ idx ro rn picks; do
    for off in $picks; do
      "$FLIP" "$MX/bad.xpc" "$off" 0x40
      mx_region_flips=$((mx_region_flips + 1))
      mx_exec "verify, region $idx byte $off" "$XPACK" verify "$MX/bad.xpc"
      if [ "$ST" = 1 ] && grep -q "^region $idx at offset $ro: XXH3-64" "$MX/out"; then mx_region_named=$((mx_region_named + 1))
      else mx_problem "verify does not name region $idx for byte $off: $(head -c 300 "$MX/out")"; fi
      mx_exec "run, region $idx byte $off" cache_run "$MX/bad.xpc" "$MX/run.out"
      if [ "$ST" = 0 ]; then
        mx_region_runs=$((mx_region_runs + 1))
        outputs_match "$MX/run.out" || mx_region_differ=$((mx_region_differ + 1))
      fi
      "$FLIP" "$MX/bad.xpc" "$off" 0x40
    done
  done < <(grep '^region ' "$MX/layout.txt")
  cmp -s "$good" "$MX/bad.xpc" || fail "$label: the working copy was not restored"

  # Every rule no checksum covers, broken once with every checksum re-sealed.
  local tamper large gap rule
  tamper=$(dirname "$FLIP")/xpc_tamper
  read -r _ large gap < <(grep '^rules ' "$MX/layout.txt")
  local rules=(dup-key entry-flags family-flags family-order family-dup reserved page-alignment huge-alignment
               "region-size 0" "move-region $large" "poke 100" "poke $gap")
  for rule in "${rules[@]}"; do
    cp "$good" "$MX/bad.xpc"
    case "$rule" in
      "poke -1"|"move-region -1") mx_rules_na=$((mx_rules_na + 1)); continue ;;
      poke*) printf '\001' | dd of="$MX/bad.xpc" bs=1 seek="${rule#poke }" conv=notrunc status=none ;;
      *) if ! "$tamper" "$MX/bad.xpc" $rule 2> /dev/null; then mx_rules_na=$((mx_rules_na + 1)); continue; fi ;;
    esac
    mx_rules=$((mx_rules + 1))
    mx_check "rule broken: $rule" flip
  done
  cp "$good" "$MX/bad.xpc"

  # Truncation: inside the header, at and around every boundary, inside every region, inside the metadata
  # and the footer, and at 12 pseudo-random points.
  local points
  points=$(mx_points 0 1 7 8 63 64 65 143 144 $((data_off - 1)) "$data_off" $((data_off + 1)) \
    $((data_off + data_size)) "$meta" $((meta + 1)) $((meta + (mx_size - 80 - meta) / 2)) \
    $((mx_size - 81)) $((mx_size - 80)) $((mx_size - 79)) $((mx_size - 8)) $((mx_size - 1)) \
    $(grep '^region ' "$MX/layout.txt" | awk '{print $3 + 1, $3 + int($4 / 2), $3 + $4}') \
    $(awk -v n="$mx_size" 'BEGIN { srand(7); for (i = 0; i < 12; i++) print int(rand() * n) }'))
  for off in $points; do
    head -c "$off" "$good" > "$MX/bad.xpc"
    mx_resized=$((mx_resized + 1))
    mx_check "truncated to $off bytes" short
  done
  # Grown or shortened with the footer intact: the footer's file_size catches both.
  { cat "$good"; printf '\0'; } > "$MX/bad.xpc"; mx_resized=$((mx_resized + 1)); mx_check "1 byte appended" short
  { cat "$good"; tail -c 80 "$good"; } > "$MX/bad.xpc"; mx_resized=$((mx_resized + 1)); mx_check "footer appended again" short
  { head -c "$data_off" "$good"; tail -c +$((data_off + 4097)) "$good"; } > "$MX/bad.xpc"
  mx_resized=$((mx_resized + 1)); mx_check "4096 bytes cut after the header page" short
  "$XPACK" dump "$MX/bad.xpc" 2> "$MX/err" > /dev/null && fail "$label: dump opened a shortened file"
  grep -q "file_size says $mx_size bytes, the file has $((mx_size - 4096))" "$MX/err" ||
    fail "$label: a shortened file is not reported with both sizes: $(cat "$MX/err")"

  # Wrong magic, wrong major version, not a cache at all.
  cp "$good" "$MX/bad.xpc"; "$FLIP" "$MX/bad.xpc" 1 0x20
  "$XPACK" dump "$MX/bad.xpc" 2> "$MX/err" > /dev/null && fail "$label: dump accepted a wrong magic"
  grep -q "header magic" "$MX/err" || fail "$label: wrong magic message: $(cat "$MX/err")"
  cp "$good" "$MX/bad.xpc"; "$FLIP" "$MX/bad.xpc" $((mx_size - 80 + 56)) 0x03  # footer major 1 -> 2
  set +e; "$XPACK" dump "$MX/bad.xpc" 2> "$MX/err" > /dev/null; ST=$?; set -e
  [ "$ST" = 3 ] || fail "$label: dump of major 2: exit $ST"
  grep -Eq "format version 2\.[0-9]+, this xpack reads major version 1 only" "$MX/err" || fail "$label: major message: $(cat "$MX/err")"
  echo "not an xpack file at all" > "$MX/bad.xpc"
  ("$XPACK" verify "$MX/bad.xpc" || true) | grep -q "not an xpack cache" || fail "$label: plain text not reported"

  echo "corruption[$label]: damaged_files=$mx_damaged (flipped_bytes=$((mx_damaged - mx_resized - mx_rules)) resized=$mx_resized)" \
    "rejected_by_verify=$mx_verify_rejected rejected_at_open=$mx_open_rejected opened=$mx_opened" \
    "runs_refused_at_open=$mx_run_refused runs_completed=$mx_runs outputs_identical=$mx_identical" \
    "wrong_outputs=$mx_wrong crashes=$mx_crashes problems=$mx_problems" \
    "region_flips=$mx_region_flips named_by_verify=$mx_region_named region_runs=$mx_region_runs" \
    "region_runs_with_other_outputs=$mx_region_differ rules_broken=$mx_rules rules_not_applicable=$mx_rules_na"
  [ "$mx_crashes" = 0 ] && [ "$mx_wrong" = 0 ] && [ "$mx_problems" = 0 ] || fail "$label: corruption matrix"
  rm -rf "$MX"
}
