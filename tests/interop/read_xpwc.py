#!/usr/bin/env python3
"""An independent reader of ExecuTorch's file-backed packed-weights cache (XPWC, version 2), written from
the format description (shared/reference/ANCHORS.md; ExecuTorch backends/xnnpack/runtime/XNNWeightsCache):

    packed data | index records | footer (the last 20 bytes)
    record = u32 name_len, name, u64 file_offset, u64 size, u32 seed
    footer = u64 index_start, u32 record_count, u32 magic 0x58505743 ("CWPX" on disk), u32 version 2

All little-endian. Every read is bounds-checked; anything out of place raises XpwcError naming the offset.
The reader is stricter than ExecuTorch's loader where xpack's export promises more: the index must end
exactly at the footer, names must be unique, sizes non-zero and offsets 64-byte aligned.

    read_xpwc.py show FILE                      every record, as JSON
    read_xpwc.py compare --xpwc F --xpc C --dump D.json --export E.json [--expect k=v,...]
                                                the export against the xpack cache, entry by entry
    read_xpwc.py selftest FILE                  damaged copies of a good FILE must all be refused
"""
import argparse
import json
import re
import struct
import sys

MAGIC = 0x58505743
VERSION = 2
FOOTER = 20
ALIGNMENT = 64


class XpwcError(Exception):
    pass


def read_xpwc(data):
    size = len(data)
    if size < FOOTER:
        raise XpwcError(f"{size} bytes: shorter than the {FOOTER}-byte footer")
    end = size - FOOTER
    index_start, count, magic, version = struct.unpack_from("<QIII", data, end)
    if magic != MAGIC:
        raise XpwcError(f"footer magic at offset {end + 12} is 0x{magic:08x}, expected 0x{MAGIC:08x}")
    if version != VERSION:
        raise XpwcError(f"footer version at offset {end + 16} is {version}, expected {VERSION}")
    if index_start >= end:
        raise XpwcError(f"index_start {index_start} is not below the footer at {end}")
    records, names, cursor = [], set(), index_start
    for i in range(count):
        if end - cursor < 4:
            raise XpwcError(f"record {i} at offset {cursor}: no room for name_len before the footer at {end}")
        (name_len,) = struct.unpack_from("<I", data, cursor)
        if name_len > end - cursor - 4 - 20:
            raise XpwcError(f"record {i} at offset {cursor}: name_len {name_len} runs past the footer at {end}")
        name = bytes(data[cursor + 4:cursor + 4 + name_len])
        offset, length, seed = struct.unpack_from("<QQI", data, cursor + 4 + name_len)
        if offset >= index_start or length > index_start - offset:
            raise XpwcError(f"record {i} at offset {cursor}: data [{offset}, +{length}) is not inside [0, {index_start})")
        if length == 0:
            raise XpwcError(f"record {i} at offset {cursor}: size 0")
        if offset % ALIGNMENT:
            raise XpwcError(f"record {i} at offset {cursor}: data offset {offset} is not {ALIGNMENT}-byte aligned")
        if name in names:
            raise XpwcError(f"record {i} at offset {cursor}: name {name!r} appears twice")
        names.add(name)
        records.append({"name": name, "offset": offset, "size": length, "seed": seed})
        cursor += 4 + name_len + 20
    if cursor != end:
        raise XpwcError(f"{end - cursor} bytes between the last record (ends at {cursor}) and the footer at {end}")
    return {"index_start": index_start, "records": records}


# ---- xpack's identities and ExecuTorch's names (docs/FORMAT.md section 6, docs/INTEGRATION.md) ----

CONTENT_KEY = re.compile(r"(scale_)?[0-9a-f]{64}")
MODULE_PATH = re.compile(r"(.*)#xxh3-128:[0-9a-f]{32}:[0-9]+", re.S)


PACKING_SUFFIX = re.compile(r"\|xnn:[0-9a-f]{32}$")


def name_of(identity):
    """(kind, ExecuTorch name or None) of one xpack identity. A weight's packing suffix is xpack's:
    ExecuTorch names the bytes alone."""
    identity = PACKING_SUFFIX.sub("", identity)
    if identity.startswith("xpack:"):
        return "unnamed", None
    if CONTENT_KEY.fullmatch(identity):
        return "content", identity
    m = MODULE_PATH.fullmatch(identity)
    if m:
        return "module", m.group(1)
    return "other", None


def expected_export(dump):
    """What the export must contain: per entry its outcome, and the records by name."""
    outcome, names = {}, {}
    for i, e in enumerate(dump["entries"]):
        kinds = [name_of(e["kernel"])] + ([name_of(e["bias"])] if e["bias"] is not None else [])
        if any(k == "unnamed" for k, _ in kinds):
            outcome[i] = "unnamed_constant"
        elif any(k == "other" for k, _ in kinds):
            outcome[i] = "not_an_executorch_key"
        else:
            name = "".join(n for _, n in kinds)
            names.setdefault(name, []).append(i)
            outcome[i] = ("module" if any(k == "module" for k, _ in kinds) else "content", name)
    records = {}
    for name, idx in names.items():
        keys = {(dump["entries"][i]["seed"], dump["entries"][i]["region"]) for i in idx}
        if len(keys) == 1:
            records[name] = idx
        else:
            for i in idx:
                outcome[i] = "ambiguous_name"
    return outcome, records


def compare(xpwc_path, xpc_path, dump_path, export_path, expect):
    xpwc = open(xpwc_path, "rb").read()
    xpc = open(xpc_path, "rb").read()
    dump = json.load(open(dump_path))
    report = json.load(open(export_path))
    parsed = read_xpwc(xpwc)
    outcome, expected = expected_export(dump)
    regions = dump["regions"]
    page = dump["page_alignment"]
    in_file = {r["name"].decode("utf-8"): r for r in parsed["records"]}

    assert set(in_file) == set(expected), (
        f"names differ: missing {sorted(set(expected) - set(in_file))[:5]}, extra {sorted(set(in_file) - set(expected))[:5]}")
    # Entry by entry: the record ExecuTorch's look-up would find (name, then seed) holds the cache's bytes.
    offsets_of_region = {}
    for name, idx in expected.items():
        rec = in_file[name]
        e = dump["entries"][idx[0]]
        region = regions[e["region"]]
        assert rec["seed"] == e["seed"], f"{name}: seed {rec['seed']} != {e['seed']}"
        assert rec["size"] == region["size"], f"{name}: size {rec['size']} != {region['size']}"
        got = xpwc[rec["offset"]:rec["offset"] + rec["size"]]
        want = xpc[region["offset"]:region["offset"] + region["size"]]
        assert len(want) == region["size"] and got == want, f"{name}: packed bytes differ"
        if rec["size"] >= page:
            assert rec["offset"] % page == 0, f"{name}: {rec['size']}-byte region at {rec['offset']} not {page}-aligned"
        offsets_of_region.setdefault(e["region"], set()).add(rec["offset"])
    assert all(len(s) == 1 for s in offsets_of_region.values()), "one packed weight written twice"
    spans = sorted((next(iter(s)), regions[r]["size"]) for r, s in offsets_of_region.items())
    for (a, n), (b, _) in zip(spans, spans[1:]):
        assert a + n <= b, f"packed weights overlap at {a} and {b}"
    # ExecuTorch's look-up for every entry: by name, then the seed must be equal. Exported entries hit (their
    # bytes were compared above through the entry that stands for the record); ambiguous names are absent.
    for i, e in enumerate(dump["entries"]):
        o = outcome[i]
        if isinstance(o, tuple):
            rec = in_file[o[1]]
            assert rec["seed"] == e["seed"], f"entry {i}: would miss on its seed"
            assert rec["offset"] in offsets_of_region[e["region"]], f"entry {i}: would get other bytes"

    def count(what):
        return sum(1 for o in outcome.values() if (o[0] if isinstance(o, tuple) else o) in what)

    counts = {
        "entries": len(dump["entries"]),
        "exported": count(("content", "module")),
        "skipped": len(dump["entries"]) - count(("content", "module")),
        "records": len(expected),
        "unnamed_constant": count(("unnamed_constant",)),
        "not_an_executorch_key": count(("not_an_executorch_key",)),
        "ambiguous_name": count(("ambiguous_name",)),
        "module_path_records": sum(1 for idx in expected.values() if outcome[idx[0]][0] == "module"),
        "regions": len(offsets_of_region),
        "shared_regions": sum(1 for r in offsets_of_region if sum(
            1 for idx in expected.values() if dump["entries"][idx[0]]["region"] == r) > 1),
        "merged_records": sum(1 for idx in expected.values() if len(idx) > 1),
    }
    said = {
        "entries": report["entries"], "exported": report["exported"], "records": report["records"],
        "unnamed_constant": report["skipped"]["unnamed_constant"],
        "not_an_executorch_key": report["skipped"]["not_an_executorch_key"],
        "ambiguous_name": report["skipped"]["ambiguous_name"],
        "module_path_records": report["module_path_records"], "regions": report["regions"],
    }
    for k, v in said.items():
        assert counts[k] == v, f"export says {k} = {v}, the files say {counts[k]}"
    assert report["file_size"] == len(xpwc), (report["file_size"], len(xpwc))
    assert report["data_bytes"] == sum(regions[r]["size"] for r in offsets_of_region)
    listed = {s["entry"]: s["reason"] for s in report["skipped_entries"]}
    assert listed == {i: o for i, o in outcome.items() if not isinstance(o, tuple)}, listed
    for kv in filter(None, expect.split(",")):
        k, v = kv.split("=")
        assert counts[k] == int(v), f"expected {k} = {v}, got {counts[k]}"
    print(f"  {xpwc_path}: {counts['records']} records for {counts['exported']} of {counts['entries']} entries match "
          f"the cache byte for byte; skipped {counts['entries'] - counts['exported']} "
          f"(unnamed {counts['unnamed_constant']}, not ExecuTorch keys {counts['not_an_executorch_key']}, "
          f"ambiguous {counts['ambiguous_name']})")


def selftest(path):
    good = open(path, "rb").read()
    parsed = read_xpwc(good)
    assert parsed["records"], "selftest needs a file with records"
    size, end = len(good), len(good) - FOOTER
    index_start, count, _, _ = struct.unpack_from("<QIII", good, end)
    first_len = struct.unpack_from("<I", good, index_start)[0]
    rec = index_start + 4 + first_len  # file_offset of the first record

    def patched(at, fmt, value, base=good):
        b = bytearray(base)
        struct.pack_into(fmt, b, at, value)
        return bytes(b)

    cases = {
        "empty": b"",
        "19 bytes": good[-19:],
        "last byte cut": good[:-1],
        "magic": patched(end + 12, "<I", 0x58505744),
        "version 1": patched(end + 16, "<I", 1),
        "index_start at footer": patched(end, "<Q", end),
        "index_start past the end": patched(end, "<Q", 1 << 62),
        "one record more": patched(end + 8, "<I", count + 1),
        "one record less": patched(end + 8, "<I", count - 1),
        "name_len huge": patched(index_start, "<I", 0xFFFFFFF0),
        "offset at index": patched(rec, "<Q", index_start),
        "size past index": patched(rec + 8, "<Q", index_start),
        "size wraps": patched(rec + 8, "<Q", (1 << 64) - 1),
        "size 0": patched(rec + 8, "<Q", 0),
        "misaligned": patched(rec, "<Q", 8),
    }
    if count >= 2:  # the second record renamed to the first's name
        second = index_start + 4 + first_len + 20
        if struct.unpack_from("<I", good, second)[0] == first_len:
            b = bytearray(good)
            b[second + 4:second + 4 + first_len] = good[index_start + 4:index_start + 4 + first_len]
            cases["duplicate name"] = bytes(b)
    refused = 0
    for what, data in cases.items():
        try:
            read_xpwc(data)
        except XpwcError as e:
            refused += 1
            print(f"  refused ({what}): {e}")
            continue
        raise AssertionError(f"damaged copy accepted: {what}")
    print(f"  selftest: {refused} of {len(cases)} damaged copies refused, the good file reads {len(parsed['records'])} records")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("show")
    s.add_argument("file")
    c = sub.add_parser("compare")
    for a in ("--xpwc", "--xpc", "--dump", "--export"):
        c.add_argument(a, required=True)
    c.add_argument("--expect", default="")
    t = sub.add_parser("selftest")
    t.add_argument("file")
    args = ap.parse_args()
    try:
        if args.cmd == "show":
            p = read_xpwc(open(args.file, "rb").read())
            for r in p["records"]:
                r["name"] = r["name"].decode("utf-8", "backslashreplace")
            print(json.dumps(p, indent=1))
        elif args.cmd == "compare":
            compare(args.xpwc, args.xpc, args.dump, args.export, args.expect)
        else:
            selftest(args.file)
    except XpwcError as e:
        print(f"read_xpwc: {getattr(args, 'file', None) or args.xpwc}: {e}", file=sys.stderr)
        return 1
    except AssertionError as e:
        print(f"read_xpwc: FAIL: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
