"""Zip archives holding a cache, as an app bundle (APK) holds its assets, and hostile variants of them.

make_archives.py CACHE OUTDIR: writes OUTDIR/NAME.apk for each case below and prints one line per archive,
"NAME DATA_OFFSET" (the cache member's data offset, or - when it has none that can be computed), so that the
test can check what xpack reports against what Python's zipfile wrote. Each hostile case changes one record
of a sound archive, as a crafted file would."""
import struct
import sys
import warnings
import zipfile

cache_path, out = sys.argv[1], sys.argv[2]
cache = open(cache_path, "rb").read()
MEMBER = "assets/model.xpc"


def write(path, align=None, shift=0, deflate=False, zip64=False, extra_members=(), comment=b""):
    """An archive with a manifest, a stored dex and the cache; align/shift place the cache's bytes as zipalign
    does (padding the local header's extra field); returns the cache's data offset."""
    saved = zipfile.ZIP64_LIMIT
    if zip64:
        zipfile.ZIP64_LIMIT = 0  # every record in its Zip64 form, as a writer of a > 4 GiB bundle does
    try:
        with zipfile.ZipFile(path, "w", allowZip64=True) as z:
            z.writestr("AndroidManifest.xml", b"<manifest/>" * 50, compress_type=zipfile.ZIP_DEFLATED)
            z.writestr("classes.dex", bytes(range(256)) * 13, compress_type=zipfile.ZIP_STORED)
            for name, data, method in extra_members:
                z.writestr(name, data, compress_type=method)
            info = zipfile.ZipInfo(MEMBER)
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            if align:
                header_end = z.fp.tell() + 30 + len(MEMBER)
                pad = (-(header_end + 4) % align + shift) % align
                info.extra = b"\xff\xff" + pad.to_bytes(2, "little") + b"\0" * pad
            z.writestr(info, cache)
            z.comment = comment
    finally:
        zipfile.ZIP64_LIMIT = saved
    if zip64:  # the end record's own fields marked, as a writer of a > 4 GiB bundle leaves them: only Zip64 tells
        data = bytearray(open(path, "rb").read())
        end = data.rindex(b"PK\x05\x06", 0, len(data) - len(comment))
        struct.pack_into("<HHII", data, end + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
        open(path, "wb").write(bytes(data))
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        i = z.getinfo(MEMBER)
        f.seek(i.header_offset + 26)
        n, m = struct.unpack("<HH", f.read(4))
        return i.header_offset + 30 + n + m


def records(data):
    """Offsets of the end record, of the central directory and of the cache's central and local records."""
    end = data.rindex(b"PK\x05\x06")
    central = struct.unpack_from("<I", data, end + 16)[0]
    at = central
    while True:
        assert data[at:at + 4] == b"PK\x01\x02"
        n, m, k = struct.unpack_from("<HHH", data, at + 28)
        if data[at + 46:at + 46 + n] == MEMBER.encode():
            local = struct.unpack_from("<I", data, at + 42)[0]
            return end, central, at, local
        at += 46 + n + m + k


def hostile(name, change):
    path = f"{out}/{name}.apk"
    write(path, align=4096)
    data = bytearray(open(path, "rb").read())
    change(data, *records(data))
    open(path, "wb").write(bytes(data))
    print(name, "-")


cases = {"page": (4096, 0), "xnn": (4096, 64), "agp": (4096, 4)}  # agp: Android Studio's 4-byte alignment
for name, (align, shift) in cases.items():
    print(name, write(f"{out}/{name}.apk", align, shift))
print("deflated", write(f"{out}/deflated.apk", deflate=True))
print("zip64", write(f"{out}/zip64.apk", align=4096, zip64=True))
# A comment as long as a zip allows: the Zip64 locator lies before the last 65,557 bytes the end is looked for in.
print("zip64_comment", write(f"{out}/zip64_comment.apk", align=4096, zip64=True, comment=b"c" * 65535))
print("others", write(f"{out}/others.apk", align=4096, extra_members=[
    ("assets/old.xpc", cache, zipfile.ZIP_DEFLATED), ("assets/renamed.bin", cache, zipfile.ZIP_STORED)]))

# Two members of the cache's name (the second not a cache): Android's reader refuses such an archive.
path = f"{out}/duplicate.apk"
with zipfile.ZipFile(path, "w") as z:
    warnings.simplefilter("ignore")  # zipfile warns of the duplicate name, and writes it
    z.writestr(MEMBER, cache, compress_type=zipfile.ZIP_STORED)
    z.writestr(MEMBER, b"not the cache", compress_type=zipfile.ZIP_STORED)
print("duplicate", "-")

hostile("count", lambda d, end, central, rec, local: struct.pack_into("<HH", d, end + 8, 60000, 60000))
hostile("central_past_end", lambda d, end, central, rec, local: struct.pack_into("<I", d, end + 16, len(d) - 10))
hostile("local_method", lambda d, end, central, rec, local: struct.pack_into("<H", d, local + 8, 8))
hostile("local_name", lambda d, end, central, rec, local: d.__setitem__(slice(local + 30, local + 31), b"X"))
hostile("local_signature", lambda d, end, central, rec, local: d.__setitem__(slice(local, local + 4), b"PK\x09\x09"))
hostile("encrypted", lambda d, end, central, rec, local: struct.pack_into("<H", d, rec + 8, 1))
hostile("sizes_differ", lambda d, end, central, rec, local: struct.pack_into("<I", d, rec + 24, len(cache) + 1))
hostile("past_central", lambda d, end, central, rec, local: struct.pack_into("<II", d, rec + 20, 1 << 30, 1 << 30))
hostile("local_offset", lambda d, end, central, rec, local: struct.pack_into("<I", d, rec + 42, central - 10))
hostile("name_length", lambda d, end, central, rec, local: struct.pack_into("<H", d, rec + 28, 65535))
hostile("zip64_marked", lambda d, end, central, rec, local: struct.pack_into("<I", d, rec + 24, 0xFFFFFFFF))
def zip64_hostile(name, change):
    path = f"{out}/{name}.apk"
    write(path, align=4096, zip64=True)
    data = bytearray(open(path, "rb").read())
    locator = data.rindex(b"PK\x06\x07")
    change(data, locator)
    open(path, "wb").write(bytes(data))
    print(name, "-")


zip64_hostile("zip64_locator", lambda d, locator: struct.pack_into("<Q", d, locator + 8, locator - 8))
zip64_hostile("zip64_end", lambda d, locator: d.__setitem__(slice(struct.unpack_from("<Q", d, locator + 8)[0],
                                                                  struct.unpack_from("<Q", d, locator + 8)[0] + 4), b"PK\0\0"))
# What Android's reader refuses too: local and central records that disagree on sizes or CRC (no data
# descriptor), bytes after the end record or before the first member, another member's name with a zero byte.
hostile("local_sizes", lambda d, end, central, rec, local: struct.pack_into("<II", d, local + 18, 100, 100))
hostile("local_crc", lambda d, end, central, rec, local: struct.pack_into("<I", d, local + 14, 0x04030201))
hostile("trailing", lambda d, end, central, rec, local: d.extend(b"\0" * 100))
def other_name_zero(d, end, central, rec, local):
    n = struct.unpack_from("<H", d, central + 28)[0]  # the first record: the manifest's
    d[central + 46 + n - 1] = 0
hostile("name_zero", other_name_zero)
path = f"{out}/prefix.apk"
write(path, align=4096)
data = open(path, "rb").read()
open(path, "wb").write(b"#!/bin/sh\n" + data)  # offsets now miss by 10 bytes too; the first check names the prefix
print("prefix", "-")
# Another archive hidden in a member's bytes: the real end record's comment length claims one byte more than the
# file holds, so a reader that falls back to an earlier end record (one inside the member, pointing at a central
# directory of its own) reads another archive than other readers do.
def hidden_archive(d, end, central, rec, local):
    struct.pack_into("<H", d, end + 20, struct.unpack_from("<H", d, end + 20)[0] + 1)
hidden = f"{out}/hidden.apk"
inner = f"{out}/inner.zip"
with zipfile.ZipFile(inner, "w") as z:
    z.writestr(MEMBER, cache, compress_type=zipfile.ZIP_STORED)
with zipfile.ZipFile(hidden, "w") as z:
    z.writestr(MEMBER, cache, compress_type=zipfile.ZIP_STORED)
    z.writestr("assets/inner.bin", open(inner, "rb").read(), compress_type=zipfile.ZIP_STORED)
data = bytearray(open(hidden, "rb").read())
hidden_archive(data, *records(data))
open(hidden, "wb").write(bytes(data))
print("hidden", "-")
hostile("multi_disk", lambda d, end, central, rec, local: struct.pack_into("<H", d, end + 4, 1))
hostile("no_end", lambda d, end, central, rec, local: d.__setitem__(slice(end, end + 4), b"PK\x00\x00"))
hostile("truncated", lambda d, end, central, rec, local: d.__delitem__(slice(len(d) // 2, len(d))))
