#!/usr/bin/env bash
# Generates the programs tests/core/reads_on_demand.c needs and runs it.
#   reads_on_demand.sh READS_ON_DEMAND GENMODEL
TEST=$1; GEN=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d "${TMPDIR:-/tmp}/reads_on_demand.XXXXXX"); trap 'rm -rf "$d"' EXIT
"$GEN" llm --size 2M -o "$d/large.pte" > /dev/null || fail "genmodel llm"
"$GEN" conv -o "$d/small.pte" > /dev/null || fail "genmodel conv"
"$GEN" llm --size 2M -o "$d/split.pte" --ptd "$d/split.ptd" > /dev/null || fail "genmodel llm --ptd"
"$TEST" "$d/large.pte" "$d/small.pte" "$d/split.pte" "$d/split.ptd"
