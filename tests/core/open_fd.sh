#!/usr/bin/env bash
# A cache stored inside another file (an app's asset in its APK), opened by descriptor, offset and size
# (xpack_cache_open_fd): inside a zip archive built as Android packs uncompressed assets, at a page-aligned
# offset, at one on XNNPACK's alignment only, and at an odd one (read into memory), the demo subgraphs run
# through the real XNNPACK hit every look-up as the cache's own file does, with outputs identical to no cache;
# the API's promises and refusals (open_fd.c) hold at each offset, and xpack_cache_open_best_fd keeps this
# build's cache over another build's beside it in the archive.
XPACK=$1; SUB=$2; API=$3; TAMPER=$4
. "$(dirname "$0")/lib.sh"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
cd "$d"

"$SUB" pack model.xpc > /dev/null
"$SUB" run > n.txt
"$SUB" run --cache model.xpc > own.txt
size=$(stat -c %s model.xpc)
cp model.xpc other.xpc && "$TAMPER" other.xpc build-id # a second asset: a cache of another XNNPACK build
# An APK-like archive: the caches (another build's, then this one's) stored, not deflated, after other entries,
# their data placed at the given alignment by padding the local header's extra field, as zipalign does; prints
# the data's offset of this build's cache, then of the other's.
zip_with_cache() { # OUT ALIGN SHIFT: data at a multiple of ALIGN, plus SHIFT bytes
  python3 - "$@" <<'PY'
import sys, zipfile
out, align, shift = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with zipfile.ZipFile(out, "w") as z:
    z.writestr("AndroidManifest.xml", b"<manifest/>" * 50, compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("classes.dex", bytes(range(256)) * 13, compress_type=zipfile.ZIP_STORED)
    for file in ("other.xpc", "model.xpc"):
        name = "assets/" + file
        header_end = z.fp.tell() + 30 + len(name)
        pad = (-(header_end + 4) % align + shift) % align  # 4: the extra field's own header
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_STORED
        info.extra = b"\xff\xff" + pad.to_bytes(2, "little") + b"\0" * pad
        z.writestr(info, open(file, "rb").read())
with zipfile.ZipFile(out) as z, open(out, "rb") as f:
    for file in ("model.xpc", "other.xpc"):
        i = z.getinfo("assets/" + file)
        f.seek(i.header_offset + 26)
        n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
        print(i.header_offset + 30 + n + m, end=" " if file == "model.xpc" else "\n")
PY
}
for case in page:4096:0 xnn:4096:64 odd:4096:3; do
  IFS=: read -r name align shift <<< "$case"
  read -r offset other <<< "$(zip_with_cache app_$name.apk "$align" "$shift")"
  [ $(( (offset - shift) % align )) = 0 ] || fail "$name: the archive's data offset $offset is not as asked"
  cmp -s <(tail -c +$((offset + 1)) app_$name.apk | head -c "$size") model.xpc || fail "$name: the cache's bytes are not at $offset"
  "$SUB" run --cache app_$name.apk --cache-at "$offset" "$size" > in.txt || fail "$name: run"
  [ "$(outputs in.txt)" = "$(outputs n.txt)" ] || fail "$name: outputs differ from no cache"
  hits=$(grep '^stats ' in.txt | field hits) lookups=$(grep '^stats ' in.txt | field lookups)
  [ "$hits" = "$lookups" ] && [ "$hits" = "$(grep '^stats ' own.txt | field hits)" ] ||
    fail "$name: $hits of $lookups look-ups hit (the cache's own file: $(grep '^stats ' own.txt | field hits))"
  echo "  $name: cache at offset $offset of the archive: $hits of $lookups look-ups hit, outputs identical"
  "$API" app_$name.apk "$offset" "$size" "$other" || fail "$name: open_fd"
done
