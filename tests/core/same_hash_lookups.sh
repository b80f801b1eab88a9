#!/usr/bin/env bash
# Entries sharing one key hash (issue 16): the loader, inside apps, looks keys up by key hash, and read the
# whole run of equal key hashes on every look-up. 1,000,000 entries carrying one key's hash (a 40 MB cache
# whose other key hashes are wrong, which only verify recomputes; a writer gives one key hash to one entry)
# made each look-up of that key take 3 ms. Now one binary search over key hash, seed and identities (the
# order FORMAT.md 5.3 gives entries of equal key hash) finds it: 1,000 look-ups must take well under 0.5 s.
RUN_LOOKUPS=$1; CRAFT=$2
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
bound_address_space $((1024 * 1024)) # KiB: 1 GiB

"$CRAFT" "$d/one.xpc" same-hash 1
timeout 20 "$RUN_LOOKUPS" "$d/one.xpc" 1000 0.5 || fail "one entry: look-ups do not hit in time"
"$CRAFT" "$d/run.xpc" same-hash 1000000
echo "same_hash_lookups: $(stat -c %s "$d/run.xpc") bytes"
timeout 20 "$RUN_LOOKUPS" "$d/run.xpc" 1000 0.5 || fail "1,000,000 entries of one key hash: look-ups not served in time"
echo "same_hash_lookups: OK"
