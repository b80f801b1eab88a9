#!/usr/bin/env bash
# A pack in a process with a cache attached to the ExecuTorch adapter writes the file the CLI writes
# (tests/core/adapter_pack.c says why it once did not).
#   adapter_pack.sh XPACK GENMODEL ADAPTER_PACK
XPACK=$1; GEN=$2; AP=$3
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"
"$GEN" llm --size 4M -o llm.pte > /dev/null
"$XPACK" pack llm.pte -o llm.xpc 2> /dev/null || fail "pack llm"
"$AP" llm.pte llm.xpc attached.xpc || fail "pack while attached"
cmp -s attached.xpc llm.xpc || fail "the file packed while attached differs from the CLI's pack of the same program"
echo "adapter_pack: packed while attached, the same bytes as the CLI's pack"
