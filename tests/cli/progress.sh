#!/usr/bin/env bash
# The progress line of `xpack pack`: under a pseudo-terminal, a pack lasting more than a second shows
# "xpack pack: DONE/TOTAL delegates, SIZE packed" redrawn with \r and erased at the end; piped, with -q or with
# --json it never appears. No timing is asserted: XPACK_PROGRESS_DELAY_MS=0 replaces the one-second delay, so the
# line is drawn at once whatever this machine's speed (a pack may end before the first 100 ms redraw tick).
XPACK=$1; GEN=$2
. "$(dirname "$0")/../model/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
export XPACK_PROGRESS_DELAY_MS=0
"$GEN" llm -o big.pte --size 256M > /dev/null

# pty_run LOG ARGS...: runs xpack with stdin, stdout and stderr on a pseudo-terminal, everything it drew into LOG.
pty_run() {
  python3 - "$@" <<'PY'
import os, pty, sys
log, argv = sys.argv[1], sys.argv[2:]
out = open(log, "wb")
def read(fd):
    data = os.read(fd, 65536)
    out.write(data)
    return data
status = pty.spawn(argv, read)
sys.exit(os.waitstatus_to_exitcode(status))
PY
}
pty_run tty.log "$XPACK" pack big.pte -o tty.xpc > /dev/null || fail "pack under a pseudo-terminal"
python3 - <<'PY' || fail "progress line under a pseudo-terminal: $(tr '\r' '\n' < tty.log | head -5)"
import re
t = open("tty.log", "rb").read().decode()
lines = re.findall(r"\rxpack pack: (\d+)/(\d+) delegates, ([0-9.]+ [KMG]?i?B) packed", t)
assert lines, "no progress line"
done, total = int(lines[-1][0]), int(lines[-1][1])
assert total > 0 and 0 <= done <= total, lines[-1]
assert re.search(r"\r +\r", t), "the progress line is not erased"
assert t.index("wrote tty.xpc") > t.rindex("delegates,"), "the summary comes before the progress line ends"
print(f"  {len(lines)} redraws, last {lines[-1]}")
PY
pty_run q.log "$XPACK" pack -q big.pte -o q.xpc > /dev/null || fail "pack -q under a pseudo-terminal"
grep -q "delegates," q.log && fail "-q: a progress line was drawn"
pty_run j.log "$XPACK" pack big.pte -o j.xpc --json > /dev/null || fail "pack --json under a pseudo-terminal"
grep -q "delegates," j.log && fail "--json: a progress line was drawn"
"$XPACK" pack big.pte -o p.xpc > out.txt 2> err.txt || fail "pack piped"
grep -q "delegates," err.txt out.txt && fail "piped: a progress line was drawn"
tr -d '\r' < out.txt | grep -q "^wrote p.xpc" || fail "piped: no summary"
echo "progress: drawn on a terminal, erased at the end; not piped, not with -q or --json"
