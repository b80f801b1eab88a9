# Shared helpers for the core test scripts.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# Value of a "key N" pair on a line of xpack-subgraphs output.
field() { tr ' ' '\n' | awk -v k="$1" 'p{print; exit} $0==k{p=1}'; }
# The graph lines without timings: what must be identical with and without a cache.
outputs() { grep '^graph ' "$1" | sed -E 's/ create_us [0-9]+ lookups [0-9]+ hits [0-9]+ misses [0-9]+//'; }
# An integer field of `xpack dump --json` (first occurrence).
json_int() { grep -o "\"$1\":[0-9]*" | head -n1 | cut -d: -f2; }
# bound_address_space KIB: ulimit -v KIB for this script and what it runs, except in a sanitized build
# (XPACK_TEST_SANITIZED, set by tests/CMakeLists.txt), where ASan cannot start under the bound: the checks run
# without it there.
bound_address_space() { [ -n "${XPACK_TEST_SANITIZED:-}" ] || ulimit -v "$1"; }
# exit status of a command, without tripping set -e
status_of() { set +e; "$@" > /dev/null 2>&1; local s=$?; set -e; echo $s; }
# A top-level field of a JSON file (`xpack run --json` and the like), as Python prints it (None, True, ...).
json_value() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
# The XXH3-64 of every output of every delegate of an `xpack run --json` file: what must be identical with and
# without a cache.
run_output_hashes() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(h for x in d["delegates_detail"] for h in x["output_xxh3"]))' "$1"; }
