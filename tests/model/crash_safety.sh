#!/usr/bin/env bash
# Crash safety of `xpack pack`: SIGKILL at random points of a pack that takes a good fraction of a second.
# After every kill the target holds either the previous complete file or the new complete file (or nothing,
# only when there was nothing before), `xpack verify` passes on it, and it equals a complete pack output
# byte for byte (packing is deterministic). A killed pack leaves no temporary file: it has no name until the
# instant before the rename (O_TMPFILE), and a kill in the microseconds between that link and the rename leaves
# at most one, which the next pack into the folder removes. Where a file system refuses O_TMPFILE (XPACK_TEST_NAMED_TEMP takes
# that path here) a killed pack's named temporary file is removed by the next pack into that folder, and
# only that: a locked one (whose writer still runs) and files of other forms stay.
#   crash_safety.sh XPACK XPACK-GENMODEL [ROUNDS]
XPACK=$1; GEN=$2; ROUNDS=${3:-24}
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$GEN" llm -o big.pte --size 256M > /dev/null
"$GEN" llm -o small.pte --size 1M --seed 2 > /dev/null
"$XPACK" pack small.pte -o previous.xpc > /dev/null       # "the previous complete file"
"$XPACK" pack big.pte -o new.xpc > /dev/null              # what a complete pack writes
t0=$(date +%s%N)                                          # the duration of a pack with warm caches
"$XPACK" pack big.pte -o new2.xpc > /dev/null
pack_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cmp -s new.xpc new2.xpc || fail "two packs of one program differ"
rm new2.xpc
"$XPACK" verify previous.xpc > /dev/null && "$XPACK" verify new.xpc > /dev/null || fail "reference packs are not sound"
new_size=$(stat -c %s new.xpc)
echo "  one pack of $(stat -c %s big.pte) bytes of program takes $pack_ms ms here and writes $new_size bytes"

temps() { find . -maxdepth 1 -name '.xpack-*.tmp' | wc -l; }
# The size of the largest file the pack (PID) writes here: its temporary files have no name to look for.
writing_size() {
  local fd path size=0 s
  for fd in /proc/"$1"/fd/*; do
    path=$(readlink "$fd" 2> /dev/null) || continue
    case "$path" in "$d"/big.pte) ;; "$d"/*) s=$(stat -L -c %s "$fd" 2> /dev/null || echo 0); [ "$s" -gt "$size" ] && size=$s ;; esac
  done
  echo "$size"
}
before_rename=0 after_rename=0 finished=0 absent_rounds=0 leftover_max=0 left_rounds=0
RANDOM=12345
for round in $(seq 0 $((ROUNDS - 1))); do
  if [ $((round % 4)) = 3 ]; then rm -f target.xpc; had=absent; absent_rounds=$((absent_rounds + 1))
  else cp previous.xpc target.xpc; had=previous; fi
  # Where to kill: right at the start, a few ms in, once the temporary file has reached its final size (the
  # header, fsync and rename follow), as soon as the new file is at the target (the directory fsync and the
  # clean-up follow), or after a random delay across the whole pack and a bit beyond.
  rm -f before.link; [ -e target.xpc ] && ln target.xpc before.link   # to see the rename without a fork
  case $((round % 6)) in
    0) how="at once" ;;
    1) how="after 0.00$((RANDOM % 10))s" ;;
    2) how="when the temporary file is complete" ;;
    3) how="when the target changes" ;;
    *) how="after $(awk -v ms=$((RANDOM % (pack_ms * 12 / 10 + 1))) 'BEGIN{printf "%.3f", ms/1000}')s" ;;
  esac
  "$XPACK" pack big.pte -o target.xpc > /dev/null 2>&1 &
  pid=$!
  case "$how" in
    "at once") ;;
    "when the temporary file is complete")
      while kill -0 "$pid" 2> /dev/null; do
        [ "$(writing_size "$pid")" -ge "$new_size" ] && break
      done ;;
    "when the target changes")
      if [ -e before.link ]; then while [ target.xpc -ef before.link ] && kill -0 "$pid" 2> /dev/null; do :; done
      else while [ ! -e target.xpc ] && kill -0 "$pid" 2> /dev/null; do :; done; fi ;;
    *) sleep "${how#after }"; how="${how%s}s" ;;
  esac
  kill -KILL "$pid" 2> /dev/null || true
  set +e; { wait "$pid"; } 2> /dev/null; st=$?; set -e
  [ "$st" = 0 ] || [ "$st" = 137 ] || fail "round $round: pack exited $st"
  # What is at the target now?
  if [ ! -e target.xpc ]; then
    [ "$had" = absent ] || fail "round $round (killed $how): the previous file vanished"
    state=absent
  else
    "$XPACK" verify target.xpc > verify.txt || fail "round $round (killed $how): verify fails: $(cat verify.txt)"
    if cmp -s target.xpc new.xpc; then state=new
    elif cmp -s target.xpc previous.xpc; then
      [ "$had" = previous ] || fail "round $round: a previous file appeared from nowhere"
      state=previous
    else fail "round $round (killed $how): the target is neither the previous nor the new complete file"; fi
  fi
  if [ "$st" = 0 ]; then finished=$((finished + 1)); [ "$state" = new ] || fail "round $round: finished but the target is $state"
  elif [ "$state" = new ]; then after_rename=$((after_rename + 1))
  else before_rename=$((before_rename + 1)); fi
  left=$(temps); [ "$left" -gt "$leftover_max" ] && leftover_max=$left
  [ "$left" = 0 ] || left_rounds=$((left_rounds + 1))
  echo "  round $round: target was $had, killed $how (exit $st): target is $state; temporary files present: $left"
done
echo "crash_safety: rounds=$ROUNDS (target absent before: $absent_rounds) killed_before_rename=$before_rename" \
  "killed_after_rename=$after_rename finished_before_the_kill=$finished max_temporary_files_left=$leftover_max" \
  "rounds_leaving_one=$left_rounds"
# SIGKILL cannot be blocked, and a file without a name cannot be renamed over the target: a kill that lands
# between naming the file and the rename leaves that one name. Never more than one (each pack removes the
# earlier ones before it writes), and the next complete pack removes it.
[ "$leftover_max" -le 1 ] || fail "killed packs left $leftover_max temporary files: $(ls -A)"
"$XPACK" pack small.pte -o other.xpc > /dev/null
[ "$(temps)" = 0 ] || fail "a complete pack did not remove the temporary files killed packs left: $(ls -A)"
rm other.xpc

# That window on purpose: strace holds the rename for 5 s (only the rename: the pack is otherwise unchanged),
# the pack is killed once its file has a name, and exactly that one file is left, which the next pack removes.
if strace -o /dev/null -e inject=rename:delay_enter=1 true 2> /dev/null; then
  cp previous.xpc target.xpc
  strace -f -o /dev/null -e inject=rename:delay_enter=5000000 "$XPACK" pack small.pte -o target.xpc > /dev/null 2>&1 &
  tracer=$!
  for _ in $(seq 600); do [ "$(temps)" -ge 1 ] && break; sleep 0.1; done
  [ "$(temps)" = 1 ] || fail "a pack held before its rename has no named temporary file: $(ls -A)"
  pkill -KILL -P "$tracer" || fail "no pack process under strace"
  wait "$tracer" 2> /dev/null || true
  cmp -s target.xpc previous.xpc || fail "a pack killed before its rename changed the target"
  [ "$(temps)" = 1 ] || fail "a pack killed between naming its file and the rename left $(temps) temporary files"
  "$XPACK" pack small.pte -o other.xpc > /dev/null
  [ "$(temps)" = 0 ] || fail "the next pack did not remove a killed pack's named temporary file: $(ls -A)"
  rm other.xpc
  echo "  killed between naming its file and the rename: one temporary file, removed by the next pack"
else
  echo "  strace cannot delay a system call here: the kill between naming and rename was not forced"
fi

# Named temporary files: a killed pack's is removed by the next pack into the folder; one of the same form
# but locked (as a running writer's is) stays, and so do files named like the temporary files of earlier
# versions.
# Up to five tries: a pack that finishes before the poll sees its temporary file leaves none to test with.
for attempt in 1 2 3 4 5; do
  XPACK_TEST_NAMED_TEMP=1 "$XPACK" pack big.pte -o target.xpc > /dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2> /dev/null && [ "$(temps)" -lt 1 ]; do :; done
  kill -KILL "$pid" 2> /dev/null || true
  { wait "$pid"; } 2> /dev/null || true
  [ "$(temps)" -ge 1 ] && break
done
killed_temp=$(find . -maxdepth 1 -name '.xpack-*.tmp')
[ -n "$killed_temp" ] && [ "$(temps)" = 1 ] || fail "expected one temporary file to test with: $(ls -A)"
exec 9> .xpack-Held01.tmp
flock -x 9
echo "not ours" > .other.xpc.AbC123
"$XPACK" pack small.pte -o target.xpc > /dev/null
[ ! -e "$killed_temp" ] || fail "the killed pack's temporary file $killed_temp remains after the next pack"
[ -e .xpack-Held01.tmp ] || fail "a pack removed a locked temporary file"
[ -e .other.xpc.AbC123 ] || fail "a pack removed a file named like an earlier version's temporary file"
rm .xpack-Held01.tmp
exec 9>&-
"$XPACK" pack big.pte -o target.xpc > /dev/null
[ "$(temps)" = 0 ] || fail "temporary files remain: $(ls -a)"
cmp -s target.xpc new.xpc || fail "the last pack did not write the complete file"
echo "  the next pack removed the killed pack's named temporary file; a locked one and another form stayed"

# Interrupted (SIGINT, SIGTERM, SIGHUP: Ctrl-C, a build system stopping, a closed terminal), a pack removes its
# named temporary file itself and ends by the signal; the target keeps its previous contents. Before, it stayed
# until the next pack into the folder (found by a review).
cp previous.xpc target.xpc
set -m # job control: a background job of a script ignores SIGINT otherwise
for sig in INT TERM HUP; do
  for attempt in 1 2 3 4 5; do
    XPACK_TEST_NAMED_TEMP=1 "$XPACK" pack big.pte -o target.xpc > /dev/null 2>&1 &
    pid=$!
    while kill -0 "$pid" 2> /dev/null && [ "$(temps)" -lt 1 ]; do :; done
    seen=$(temps)
    kill -"$sig" "$pid" 2> /dev/null || true
    st=0; { wait "$pid"; } 2> /dev/null || st=$?
    [ "$seen" -ge 1 ] && break
  done
  [ "$seen" -ge 1 ] || fail "SIG$sig: no pack was caught with its temporary file"
  [ "$(temps)" = 0 ] || fail "SIG$sig: the interrupted pack left its temporary file: $(ls -A)"
  [ "$st" -ge 128 ] || [ "$st" = 0 ] || fail "SIG$sig: the pack ended with exit $st, not by the signal"
  if [ "$st" -ge 128 ]; then cmp -s target.xpc previous.xpc || fail "SIG$sig: the target changed"; fi
  [ "$st" -ge 128 ] || fail "SIG$sig: the pack was not interrupted (exit $st)"
  cp previous.xpc target.xpc
done
set +m
echo "  SIGINT, SIGTERM and SIGHUP: the interrupted pack removed its named temporary file"
echo "crash_safety: ok"
