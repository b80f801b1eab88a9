#!/usr/bin/env bash
# The command line itself, for every command: `xpack help CMD` and `xpack CMD --help` print the usage and exit 0;
# an unknown option is a usage error (exit 2) naming the option; --json output parses as one JSON document;
# an error leaves stdout empty and says why on stderr; -q (before or after the command) silences notes and
# warnings but not errors, and the summaries on stdout; -v adds per-delegate lines; --version [--json]; help and
# version into a full stdout exit 4.
XPACK=$1; GEN=$2
. "$(dirname "$0")/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm -o m.pte --size 4M > /dev/null
"$GEN" llm -o w.pte --ptd w.ptd --size 4M > /dev/null
"$XPACK" pack m.pte -o m.xpc > /dev/null || fail "pack"
"$XPACK" pack m.pte -o m.z.xpc --zstd=3 > /dev/null || fail "pack --zstd"

COMMANDS="pack run inspect dump verify bench inflate export"
for c in $COMMANDS; do
  "$XPACK" help "$c" > help.txt 2> err.txt || fail "xpack help $c exits $?"
  grep -q "^usage: xpack $c" help.txt || fail "xpack help $c: no usage line: $(head -2 help.txt)"
  [ -s err.txt ] && fail "xpack help $c writes to stderr: $(cat err.txt)"
  for h in --help -h; do
    "$XPACK" "$c" m.pte "$h" > help2.txt || fail "xpack $c $h exits $?"
    cmp -s help.txt help2.txt || fail "xpack $c $h differs from xpack help $c"
  done
  # Usage errors are found before any file is opened: a missing input does not turn them into exit 3.
  set +e; "$XPACK" "$c" nope.pte --no-such-option > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 2 ] || fail "$c --no-such-option: exit $s, expected 2"
  grep -q -- "--no-such-option" err.txt || fail "$c: the usage error does not name the option: $(cat err.txt)"
  [ -s out.txt ] && fail "$c: usage error wrote to stdout: $(cat out.txt)"
  # A missing input: exit 3, stdout empty even with --json, the file named on stderr.
  case $c in
    inflate) args="nope.xpc out.xpc" ;;
    export) args="--executorch nope.xpc out.xpwc" ;;
    *) args="nope.xpc" ;;
  esac
  set +e; "$XPACK" "$c" $args --json > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 3 ] || fail "$c $args: exit $s, expected 3"
  [ -s out.txt ] && fail "$c $args --json: an error wrote to stdout: $(cat out.txt)"
  grep -q "nope.xpc" err.txt || fail "$c $args: the error does not name the file: $(cat err.txt)"
  # -q silences notes and warnings, never errors.
  set +e; "$XPACK" "$c" -q $args > /dev/null 2> err.txt; set -e
  grep -q "nope.xpc" err.txt || fail "$c -q: the error is gone"
done
set +e; "$XPACK" help nosuch > out.txt 2> err.txt; s=$?; set -e
[ "$s" = 2 ] && [ ! -s out.txt ] && grep -q nosuch err.txt || fail "xpack help nosuch: exit $s"
[ "$(status_of "$XPACK" --no-such-option)" = 2 ] || fail "xpack --no-such-option"
[ "$(status_of "$XPACK")" = 2 ] || fail "xpack without a command"
"$XPACK" --help | grep -q "^exit codes:" || fail "xpack --help lists no exit codes"

# Every option that takes a value says so when it has none (at the end, or followed by another option).
for c in "pack m.pte -o" "pack m.pte --page-size" "pack m.pte --jobs" "pack m.pte --data" "run m.pte --cache" \
         "run m.pte --method" "run m.pte --data" "inspect m.pte --data" "verify m.xpc --model" "verify m.xpc --data" \
         "bench m.pte --reps" "bench m.pte --cache" "bench m.pte --variants" "bench m.pte --data" "pack m.pte -o --json"; do
  set +e; "$XPACK" $c > out.txt 2> err.txt; s=$?; set -e
  opt=$(echo "$c" | awk '{print $3}')
  [ "$s" = 2 ] || fail "$c: exit $s, expected 2"
  grep -q -- "$opt needs a value" err.txt || fail "$c: does not say '$opt needs a value': $(cat err.txt)"
  [ -s out.txt ] && fail "$c: a usage error wrote to stdout"
done
# An option that takes one value may not be given twice (`-o a -o b` once wrote b alone); files may repeat.
for c in "pack m.pte -o a.xpc -o b.xpc" "pack m.pte --jobs 1 --jobs 2 -o n.xpc" "pack m.pte --zstd --zstd=3 -o n.xpc" \
         "run m.pte --method forward --method forward" "bench m.pte --reps 3 --reps 4"; do
  set +e; "$XPACK" $c > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 2 ] && grep -q "given twice" err.txt || fail "$c: exit $s: $(cat err.txt)"
  [ -e a.xpc ] || [ -e b.xpc ] || [ -e n.xpc ] && fail "$c: wrote a file"
done
# Numbers are parsed strictly (digits only, in range); the error names the option and what it accepts.
for c in "pack m.pte --page-size 0" "pack m.pte --page-size 16384x" "pack m.pte --page-size 4294971392" \
         "pack m.pte --page-size 8192" "pack m.pte --jobs 0" "pack m.pte --jobs 1x" "pack m.pte --jobs -1" \
         "pack m.pte --jobs 18446744073709551617" "pack m.pte --zstd=0" "pack m.pte --zstd=20" "pack m.pte --zstd=3x" \
         "pack m.pte --zstd=" "bench m.pte --reps 0" "bench m.pte --reps 2x"; do
  out_opt=; case $c in pack*) out_opt="-o n.xpc" ;; esac
  set +e; "$XPACK" $c $out_opt > out.txt 2> err.txt; s=$?; set -e
  opt=$(echo "$c" | awk '{print $3}'); opt=${opt%%=*}
  [ "$s" = 2 ] || fail "$c: exit $s, expected 2"
  grep -q -- "$opt.*expected .*[0-9]" err.txt || fail "$c: the error does not name $opt and what it accepts: $(cat err.txt)"
  [ -e n.xpc ] && fail "$c: wrote a file"
done
# The options that say how to open a cache are usage errors without --cache (they were once ignored in silence).
for o in --read --check-regions --skip-small --skip-cold; do
  set +e; "$XPACK" run m.pte $o > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 2 ] && grep -q -- "$o .*no --cache" err.txt || fail "run m.pte $o without --cache: exit $s: $(cat err.txt)"
  [ -s out.txt ] && fail "run m.pte $o: a usage error wrote to stdout"
done
# --method names a method of the given programs: another name is a usage error listing theirs.
set +e; "$XPACK" run m.pte --method nosuch > out.txt 2> err.txt; s=$?; set -e
[ "$s" = 2 ] || fail "run --method nosuch: exit $s, expected 2"
grep -q "nosuch.*prefill, decode" err.txt || fail "run --method nosuch: no list of the methods: $(cat err.txt)"
# The same file twice (by the same or another path) is refused, naming both.
ln -sf w.ptd w2.ptd
# bench too, with its own cache (its measuring children find it: once exit 4) or packing one.
for c in "run w.pte --data w.ptd --data w.ptd" "pack w.pte --data w.ptd --data w2.ptd -o n.xpc" "pack m.pte m.pte -o n.xpc" \
         "bench m.pte m.pte --reps 1 --variants nocache" "bench w.pte --data w.ptd --data w2.ptd --cache m.xpc --reps 1 --variants nocache"; do
  set +e; "$XPACK" $c > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 2 ] && grep -q "given twice (the same file as" err.txt || fail "$c: exit $s: $(cat err.txt)"
  [ -e n.xpc ] && fail "$c: wrote a file"
done
# A command that fails (exit 2, 3, 4) leaves stdout empty, with or without --json, however late it fails:
# a malformed input, a delegate that cannot run (a program without its .ptd), an output that cannot be
# written; a report that cannot be written to stdout is exit 4.
head -c 3000 /dev/urandom > junk.bin
expect_failed() { # CODE ARGS...
  local want=$1; shift
  for j in "" --json; do
    set +e; "$XPACK" "$@" $j > out.txt 2> err.txt; s=$?; set -e
    [ "$s" = "$want" ] || fail "$* $j: exit $s, expected $want: $(head -c 300 err.txt)"
    [ -s out.txt ] && fail "$* $j: failed (exit $s) but wrote to stdout: $(head -c 300 out.txt)"
    [ -s err.txt ] || fail "$* $j: failed (exit $s) with nothing on stderr"
  done
}
for c in "pack junk.bin -o n.xpc" "run junk.bin" "inspect junk.bin" "dump junk.bin" "inflate junk.bin n.xpc" \
         "export --executorch junk.bin n.pwc" "bench junk.bin --reps 1 --variants nocache" \
         "run w.pte" "inspect w.pte" "bench w.pte --reps 1 --variants nocache" "verify m.xpc --model junk.bin"; do
  expect_failed 3 $c
done
for c in "pack m.pte -o nodir/n.xpc" "inflate m.z.xpc nodir/n.xpc" "export --executorch m.xpc nodir/n.pwc"; do
  expect_failed 2 $c   # a folder that does not exist: a bad -o, found before the work
done
for c in "pack m.pte -o /proc/xpack-n.xpc" "inflate m.z.xpc /proc/xpack-n.xpc" "export --executorch m.xpc /proc/xpack-n.pwc"; do
  expect_failed 4 $c   # a folder where the file system makes no file
done
for c in "pack m.pte -o full.xpc" "run m.pte" "inspect m.pte" "dump m.xpc" "verify m.xpc" "inflate m.z.xpc full2.xpc" \
         "export --executorch m.xpc full.pwc" "bench m.pte --reps 1 --variants nocache" --version "--version --json" \
         --help "help pack" "pack --help"; do
  set +e; "$XPACK" $c > /dev/full 2> err.txt; s=$?; set -e
  [ "$s" = 4 ] && grep -q "stdout" err.txt || fail "$c > /dev/full: exit $s, not 4 naming stdout: $(cat err.txt)"
done
# A long path does not cut the message short of its reason (once 512 bytes, with the path in it twice).
long=$d/$(printf 'x%.0s' $(seq 120))/$(printf 'y%.0s' $(seq 120))/$(printf 'z%.0s' $(seq 120))
set +e; "$XPACK" pack m.pte -o "$long/out.xpc" > /dev/null 2> err.txt; s=$?; set -e
[ "$s" = 2 ] && grep -q "does not exist$" err.txt || fail "a missing folder of a long path: exit $s: $(cat err.txt)"
# An empty input path is named as such (once "xpack: : cannot open").
for c in "pack '' -o e.xpc" "verify ''" "run m.pte --cache ''" "inspect ''" "bench ''"; do
  set +e; eval "\"\$XPACK\" $c" > /dev/null 2> err.txt; s=$?; set -e
  [ "$s" = 3 ] && grep -q "an input is an empty path" err.txt || fail "$c: exit $s: $(cat err.txt)"
done
# -q leaves stdout to what was asked for: the summaries of pack, inflate and export are gone.
for c in "pack m.pte -o q.xpc" "inflate m.z.xpc q2.xpc" "export --executorch m.xpc q.pwc"; do
  "$XPACK" -q $c > out.txt || fail "-q $c: exit $?"
  [ ! -s out.txt ] || fail "-q $c printed: $(head -c 200 out.txt)"
done

# verify --model with nothing to compare (here a .ptd alone) agrees with any cache: a note says nothing was
# compared and why, -q silences it, and the exit stays 0 (the cache itself is sound).
"$XPACK" verify m.xpc --model w.ptd > /dev/null 2> err.txt || fail "verify --model w.ptd exits $?"
grep -q "note: --model: nothing compared: no program was given" err.txt ||
  fail "verify --model w.ptd: no note that nothing was compared: $(cat err.txt)"
"$XPACK" -q verify m.xpc --model w.ptd > /dev/null 2> err.txt || fail "verify -q --model w.ptd exits $?"
grep -q "nothing compared" err.txt && fail "verify -q --model w.ptd still notes: $(cat err.txt)"
"$XPACK" verify m.xpc --model m.pte > /dev/null 2> err.txt || fail "verify --model m.pte exits $?"
grep -q "nothing compared" err.txt && fail "verify --model m.pte says nothing was compared: $(cat err.txt)"

# --json on every command: one JSON document on stdout.
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" || fail "$2: --json output does not parse: $(head -c 300 "$1")"; }
run_json() { local name=$1; shift; "$XPACK" "$@" --json > "$name.json" || fail "$name exits $?"; json_ok "$name.json" "$name"; }
run_json pack pack m.pte -o j.xpc
run_json run run m.pte --cache m.xpc
run_json inspect inspect m.pte
run_json dump dump m.xpc
run_json verify verify m.xpc
run_json bench bench m.pte --reps 1 --variants nocache,cache_warm
run_json inflate inflate m.z.xpc i.xpc
run_json export -q export --executorch m.xpc m.xpwc
# Names that are not UTF-8 (file names here; backend and family names come from files too) are written
# as U+FFFD: the document is still valid UTF-8 JSON.
bad=$(printf 'bad\xff\xc3.pte'); cp m.pte "$bad"
utf8_ok() { python3 -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1" ||
  fail "$2: --json output is not valid UTF-8 JSON: $(head -c 300 "$1" | od -c | head -5)"; }
for c in "pack $bad -o $(printf 'out\xe9.xpc')" "inspect $bad" "run $bad --cache m.xpc" "dump m.xpc"; do
  # shellcheck disable=SC2086 # c is a word list on purpose
  "$XPACK" $c --json > utf8.json || fail "$c --json exits $?"
  utf8_ok utf8.json "$c"
done
grep -q 'bad\\ufffd\\ufffd.pte' utf8.json 2>/dev/null || "$XPACK" inspect "$bad" --json | grep -q 'bad\\ufffd\\ufffd.pte' ||
  fail "inspect --json: the invalid bytes of the file name are not written as U+FFFD"
# Nothing to pack is a result: exit 0, no file, and with --json still a JSON document.
"$GEN" bmm -o bmm.pte > /dev/null
"$XPACK" pack bmm.pte -o bmm.xpc --json > nothing.json || fail "pack with nothing to pack exits $?"
python3 -c 'import json,sys; v=json.load(open("nothing.json")); assert v["written"] is False and v["output"] is None and v["nothing_to_pack"], v' ||
  fail "nothing to pack --json: $(cat nothing.json)"
[ -e bmm.xpc ] && fail "nothing to pack wrote a file"
# A cache too small to pay off at load says so: a note on stderr, likely_slower_than_packing in --json.
"$GEN" conv -o small.pte > /dev/null
"$XPACK" pack small.pte -o small.xpc 2> small.err > /dev/null || fail "pack small.pte exits $?"
grep -q "^note: small.xpc is under 128.0 KiB .* will not make the app start sooner" small.err || fail "small cache: no note: $(cat small.err)"
"$XPACK" pack small.pte -o small.xpc --json > small.json 2> /dev/null || fail "pack small.pte --json exits $?"
"$XPACK" pack m.pte -o m2.xpc --json > m2.json 2> m2.err || fail "pack m.pte --json exits $?"
python3 -c 'import json; assert json.load(open("small.json"))["likely_slower_than_packing"] is True; assert json.load(open("m2.json"))["likely_slower_than_packing"] is False' ||
  fail "likely_slower_than_packing: $(cat small.json m2.json)"
python3 -c 'import json; assert json.load(open("m2.json"))["written"] is True' || fail "pack --json: written is not true: $(cat m2.json)"
grep -q "^note: .*start sooner" m2.err && fail "a 4 MiB cache is called too small: $(cat m2.err)"
"$XPACK" --version > v.txt || fail "--version"
grep -q "^xpack [0-9]" v.txt && grep -q "build identifier [0-9a-f]\{16,\}" v.txt || fail "--version: $(cat v.txt)"
# The XNNPACK version comes from the prefix's .complete at configure time: a build of setup-deps.sh's names one.
grep -q "^XNNPACK [0-9a-z.~]*, build identifier" v.txt || fail "--version names no XNNPACK version (an XNNPACK_PREFIX without .complete needs -DXPACK_XNNPACK_VERSION=...): $(cat v.txt)"
"$XPACK" --version --json > v.json || fail "--version --json"
python3 - <<'PY' || fail "--version --json keys"
import json, re
v = json.load(open("v.json"))
assert re.fullmatch(r"[0-9a-f]{16,}", v["xnnpack_build_identifier"]) and v["xpack_version"] and v["xnnpack_version"], v
PY

# -q and -v, before and after the command name. A .ptd given as a program is a note; export warns.
for q in "-q pack" "pack -q" "pack --quiet"; do
  "$XPACK" $q w.pte w.ptd -o w.xpc > out.txt 2> err.txt || fail "xpack $q exits $?"
  [ -s err.txt ] && fail "xpack $q: notes not silenced: $(cat err.txt)"
  [ -s out.txt ] && fail "xpack $q: summary not silenced: $(cat out.txt)"
done
"$XPACK" pack w.pte w.ptd -o w.xpc > /dev/null 2> err.txt || fail "pack (notes)"
grep -q "^note: " err.txt || fail "pack without -q shows no note for a .ptd given as a program: $(cat err.txt)"
"$XPACK" export --executorch m.xpc e.xpwc > /dev/null 2> err.txt || fail "export"
grep -q "warning" err.txt || fail "export without -q gives no warning"
"$XPACK" export --executorch m.xpc e.xpwc -q > /dev/null 2> err.txt || fail "export -q"
[ -s err.txt ] && fail "export -q: warning not silenced: $(cat err.txt)"
"$XPACK" pack m.pte -o v.xpc -v > /dev/null 2> err.txt || fail "pack -v"
grep -q "^packed m.pte: method" err.txt || fail "pack -v adds no per-delegate line: $(cat err.txt)"
"$XPACK" -v pack m.pte -o v.xpc > /dev/null 2> err.txt || fail "-v pack"
grep -q "^packed m.pte: method" err.txt || fail "-v pack adds no per-delegate line"
# A FIFO as input is refused at once (exit 3, named), not opened and waited on; a mapping the machine
# cannot make (address space limit) is "could not complete" (exit 4), not a bad input.
mkfifo fifo.pte
for c in "inspect fifo.pte" "pack fifo.pte -o f.xpc" "run fifo.pte" "verify fifo.pte" "dump fifo.pte" \
         "inflate fifo.pte f.xpc" "export --executorch fifo.pte f.pwc" "pack m.pte --data fifo.pte -o f.xpc"; do
  set +e; timeout 20 "$XPACK" $c > out.txt 2> err.txt; s=$?; set -e
  [ "$s" = 3 ] || fail "$c: a FIFO input exits $s, not 3 (124 = it hung)"
  grep -q "fifo.pte: a FIFO" err.txt || fail "$c: the error does not name the FIFO: $(cat err.txt)"
  [ -e f.xpc ] && fail "$c: wrote an output"
done
if [ -z "${XPACK_TEST_SANITIZED:-}" ]; then   # ASan cannot run within 60 MB of address space
  "$GEN" llm --size 96M -o big.pte > /dev/null
  set +e; (ulimit -v 60000; "$XPACK" inspect big.pte > /dev/null 2> err.txt); s=$?; set -e
  [ "$s" = 4 ] || fail "inspect of a 100 MB program within 60 MB of address space exits $s, not 4: $(cat err.txt)"
  grep -q "big.pte: mmap of .* failed" err.txt || fail "the failed mapping is not named: $(cat err.txt)"
  rm -f big.pte
else
  echo "  a mapping the address space cannot hold: not checked in a sanitized build"
fi
# Names from files reach the terminal defused: a program whose method name is an escape sequence (OSC, BEL,
# and the C1 control CSI in UTF-8) gets '?' for each control character in every text report and message
# (once written raw: a crafted program could retitle the terminal or rewrite what xpack printed); --json
# keeps the name, escaped.
python3 - m.pte esc.pte <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
at = b.find(b'prefill')
assert at > 0 and b.count(b'prefill') == 1
b[at:at + 7] = b'\x1b]0;\x07\xc2\x9b'   # 7 bytes, as long as "prefill": the flatbuffer stays valid
open(sys.argv[2], 'wb').write(b)
PY
for c in "inspect esc.pte" "inspect esc.pte -v" "run esc.pte" "pack esc.pte -o esc.xpc -v" "run esc.pte --method none"; do
  set +e; "$XPACK" $c > out.txt 2> err.txt; set -e
  grep -q '?]0;?' out.txt err.txt || fail "$c: the method name is not shown defused: $(head -c 300 out.txt err.txt)"
  if LC_ALL=C grep -q $'[\x1b\x07]\|\xc2\x9b' out.txt err.txt; then fail "$c: a control character from the program reached the terminal"; fi
done
"$XPACK" inspect esc.pte --json | python3 -c 'import json, sys
names = [m["name"] for m in json.load(sys.stdin)["programs"][0]["methods"]]
sys.exit(0 if "\x1b]0;\x07\x9b" in names else 1)' || fail "inspect --json does not keep the method name"
rm -f esc.xpc
# Standard descriptors closed by the caller: messages never go into a file xpack opens in their place (once
# `pack -v 2>&-` wrote its per-delegate lines into the cache it wrote, exit 0); a report with stdout closed
# is still exit 4, the file written.
for z in "" --zstd=3; do
  rm -f closed.xpc
  # shellcheck disable=SC2086
  "$XPACK" pack m.pte -o closed.xpc -v $z 2>&- > /dev/null || fail "pack -v $z with stderr closed"
  cmp -s closed.xpc "$([ -z "$z" ] && echo m.xpc || echo m.z.xpc)" ||
    fail "pack -v $z with stderr closed wrote another file than pack does: $("$XPACK" verify closed.xpc 2>&1 | head -2)"
done
set +e; "$XPACK" pack m.pte -o closed.xpc -v >&- 2> err.txt; s=$?; set -e
[ "$s" = 4 ] && grep -q "cannot write the report to stdout" err.txt || fail "pack with stdout closed: exit $s: $(cat err.txt)"
cmp -s closed.xpc m.xpc || fail "pack with stdout closed wrote another file than pack does"
rm -f closed.xpc
# A reader that closes the pipe before the report is written: exit 4 naming stdout, not death by SIGPIPE (141).
set +e
python3 - "$XPACK" m.xpc <<'PY' 2> err.txt
import os, subprocess, sys
r, w = os.pipe()
os.close(r)  # no reader at all: the report's write fails, whenever it comes
sys.exit(subprocess.run([sys.argv[1], "dump", sys.argv[2]], stdout=w).returncode % 256)
PY
s=$?; set -e
[ "$s" = 4 ] && grep -q "cannot write the report to stdout" err.txt ||
  fail "dump into a pipe without a reader: exit $s (243 = killed by SIGPIPE, as Python reports it): $(cat err.txt)"
# No command at all is a usage error: the usage goes to stderr, stdout stays empty, exit 2.
set +e; "$XPACK" > out.txt 2> err.txt; s=$?; set -e
[ "$s" = 2 ] || fail "xpack with no command exits $s, not 2"
[ -s out.txt ] && fail "xpack with no command wrote to stdout: $(head -2 out.txt)"
grep -q "^usage: xpack" err.txt || fail "xpack with no command prints no usage on stderr"
# A .ptd that no XNNPACK delegate of the programs names (another export's) gets a note; its own program's does not.
"$GEN" ptd -o p.pte --ptd p.ptd > /dev/null
"$XPACK" pack m.pte --data p.ptd -o mp.xpc > /dev/null 2> note.txt || fail "pack m.pte --data p.ptd: $(cat note.txt)"
grep -q "^note: p.ptd: no XNNPACK delegate of the programs given names any of its [0-9]* entries" note.txt ||
  fail "no note for a .ptd no program names: $(cat note.txt)"
"$XPACK" pack w.pte --data w.ptd -o ww.xpc > /dev/null 2> note.txt || fail "pack w.pte --data w.ptd"
! grep -q "no XNNPACK delegate" note.txt || fail "a note for the program's own .ptd: $(cat note.txt)"
"$XPACK" pack w.pte --data w.ptd -o ww2.xpc --jobs 2 > /dev/null 2> note.txt || fail "pack --jobs 2"
! grep -q "no XNNPACK delegate" note.txt || fail "a note for the program's own .ptd with --jobs 2: $(cat note.txt)"
# bench --keep -q --json: the kept cache is named in the JSON (-q silences the "kept" line), null without --keep.
mkdir keep
TMPDIR=$PWD/keep "$XPACK" bench m.pte --reps 1 --variants nocache,cache_warm --keep -q --json > keep.json ||
  fail "bench --keep -q --json"
kept=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kept_cache"])' keep.json)
case "$kept" in "$PWD"/keep/*) [ -f "$kept" ] || fail "bench --keep names $kept, which is not there";;
  *) fail "bench --keep -q --json names no kept cache: $kept";; esac
"$XPACK" verify "$kept" > /dev/null || fail "the kept cache is not sound"
"$XPACK" bench m.pte --reps 1 --variants nocache --json | python3 -c 'import json, sys; assert json.load(sys.stdin)["kept_cache"] is None' ||
  fail "bench without --keep names a kept cache"
echo "cli: every command's help, usage errors, --json, errors on stderr, -q and -v"
