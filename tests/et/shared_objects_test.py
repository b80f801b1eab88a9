#!/usr/bin/env python3
"""Crafted programs and .ptd files whose many entries point at one shared table, vector or string.

usage: shared_objects_test.py XPACK

Flatbuffer offsets only point forward, but nothing stops them from converging: a vector of N offsets to
one table of N delegates, or N values sharing one dims vector of N entries, is a file of 8N bytes that a
reader building one record per entry turns into N x N records. Before the readers charged what they
materialize against the buffer's size (xp_fb_charge), a 16 KB program (2,000 methods sharing one list of
2,000 delegates) took 3.6 GB and 16 s to inspect, a 128 KB one was killed at 120 s with 13 GB; a 256 KB
XNNPACK graph (32,000 values sharing one 32,000-entry dims vector) took 4 GB; a 1 MB program whose
16,000 named_data entries share one 1 MB key spent 2.5 s comparing it (n log n x key length).

Each file must now be refused (exit 3) naming the field, within a 1 GiB address-space limit and a 60 s
timeout that the unfixed readers exceed (or fail with exit 4, out of memory). No timing is asserted.
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

MEMORY_LIMIT = 1 << 30
TIMEOUT_S = 60
SHARED = "share tables, vectors or strings"
BLOB_BUDGET = "more than 64 times the file's"


class Builder:
    """A forward-layout flatbuffer writer: objects are appended in order, their offsets patched in later."""

    def __init__(self, prefix=b""):
        self.b = bytearray(prefix)

    def pad_to(self, alignment):
        while len(self.b) % alignment:
            self.b.append(0)

    def offset_slot(self):
        self.pad_to(4)
        at = len(self.b)
        self.b += b"\0" * 4
        return at

    def point(self, slot, target):
        assert target > slot
        struct.pack_into("<I", self.b, slot, target - slot)

    def table(self, fields):
        """fields[i] is None (absent) or (kind, value) with kind off/u8/u32/u64; returns (position, {id: slot})."""
        widths = {"off": 4, "u8": 1, "u32": 4, "u64": 8}
        offsets, inline = [], 4
        for f in fields:
            if f is None:
                offsets.append(0)
                continue
            w = widths[f[0]]
            inline = (inline + w - 1) // w * w
            offsets.append(inline)
            inline += w
        vtable_size = 4 + 2 * len(fields)
        self.pad_to(2)
        while (len(self.b) + vtable_size) % 8:
            self.b.append(0)
        vtable = len(self.b)
        self.b += struct.pack("<HH", vtable_size, inline) + b"".join(struct.pack("<H", o) for o in offsets)
        table = len(self.b)
        self.b += b"\0" * ((inline + 7) // 8 * 8)
        struct.pack_into("<i", self.b, table, table - vtable)
        slots = {}
        for i, f in enumerate(fields):
            if f is None:
                continue
            at = table + offsets[i]
            if f[0] == "off":
                slots[i] = at
            else:
                struct.pack_into({"u8": "<B", "u32": "<I", "u64": "<Q"}[f[0]], self.b, at, f[1])
        return table, slots

    def offsets_to(self, count, target_of):
        """A vector of `count` offsets; element i points at target_of(i), placed later by the caller."""
        self.pad_to(4)
        vector = len(self.b)
        self.b += struct.pack("<I", count) + b"\0" * (4 * count)
        return vector, [vector + 4 + 4 * i for i in range(count)]

    def u32_vector(self, values):
        self.pad_to(4)
        at = len(self.b)
        self.b += struct.pack("<I", len(values)) + b"".join(struct.pack("<I", v) for v in values)
        return at

    def string(self, data):
        self.pad_to(4)
        at = len(self.b)
        self.b += struct.pack("<I", len(data)) + data + b"\0"
        return at

    def bytes_vector(self, data):
        self.pad_to(16)
        self.b += b"\0" * 12  # the data (after the 4-byte length) starts 16-aligned
        at = len(self.b)
        self.b += struct.pack("<I", len(data)) + data
        return at


def program(plans=1, delegates=1, blob=b"", named=0, named_key=b""):
    """A .pte: `plans` methods all sharing one plan whose `delegates` entries share one XNNPACK delegate
    (INLINE data `blob`), and `named` named_data entries sharing one entry with key `named_key`."""
    b = Builder()
    root = b.offset_slot()
    b.b += b"ET12"
    prog, ps = b.table([("u32", 0), ("off",), None, ("off",), ("off",), None, None, ("off",)])
    b.point(root, prog)
    vec, slots = b.offsets_to(plans, None)
    b.point(ps[1], vec)
    plan, pl = b.table([("off",)] + [None] * 6 + [("off",)])
    for s in slots:
        b.point(s, plan)
    b.point(pl[0], b.string(b"forward"))
    vec, slots = b.offsets_to(delegates, None)
    b.point(pl[7], vec)
    delegate, ds = b.table([("off",), ("off",)])
    for s in slots:
        b.point(s, delegate)
    b.point(ds[0], b.string(b"XnnpackBackend"))
    ref, _ = b.table([("u8", 0), ("u32", 0)])  # location INLINE, index 0
    b.point(ds[1], ref)
    vec, slots = b.offsets_to(1, None)
    b.point(ps[4], vec)
    segment, _ = b.table([("u64", 0), ("u64", 0)])  # one empty segment, for named_data to name
    b.point(slots[0], segment)
    vec, slots = b.offsets_to(named, None)
    b.point(ps[7], vec)
    if named:
        entry, es = b.table([("off",), ("u32", 0)])
        for s in slots:
            b.point(s, entry)
        b.point(es[0], b.string(named_key))
    vec, slots = b.offsets_to(1, None)
    b.point(ps[3], vec)
    data, dd = b.table([("off",)])
    b.point(slots[0], data)
    b.point(dd[0], b.bytes_vector(blob))
    return bytes(b.b)


def graph_sharing_dims(values):
    """An XNNPACK graph (no XH00 header) whose `values` xvalues share one tensor with `values` dims."""
    b = Builder()
    root = b.offset_slot()
    b.b += b"XN01"
    g, gs = b.table([None, None, ("off",)])
    b.point(root, g)
    vec, slots = b.offsets_to(values, None)
    b.point(gs[2], vec)
    xvalue, xs = b.table([("u8", 1), ("off",)])  # XNNTensorValue
    for s in slots:
        b.point(s, xvalue)
    tensor, ts = b.table([None, ("u32", values), ("off",)])
    b.point(xs[1], tensor)
    b.point(ts[2], b.u32_vector([1] * values))
    return bytes(b.b)


def ptd_sharing_key(entries, key):
    """A .ptd (2025-06 layout) whose `entries` named_data entries share one entry with key `key`."""
    b = Builder()
    root = b.offset_slot()
    b.b += b"FT01" + b"FH01" + struct.pack("<I", 40) + b"\0" * 32  # FH01 fields patched below
    ft, fs = b.table([("u32", 0), ("off",), ("off",)])
    b.point(root, ft)
    vec, slots = b.offsets_to(1, None)
    b.point(fs[1], vec)
    segment, _ = b.table([("u64", 0), ("u64", 0)])
    b.point(slots[0], segment)
    vec, slots = b.offsets_to(entries, None)
    b.point(fs[2], vec)
    entry, es = b.table([("off",), ("u32", 0)])
    for s in slots:
        b.point(s, entry)
    b.point(es[0], b.string(key))
    b.pad_to(8)
    end = len(b.b)
    struct.pack_into("<QQQQ", b.b, 16, 0, end, end, 0)  # flatbuffer [0, end), no segment data
    return bytes(b.b)


def limit_memory():
    # A sanitized build (XPACK_TEST_SANITIZED, tests/CMakeLists.txt) cannot start under the bound: ASan
    # reserves terabytes of address space. The checks then run without it.
    if not os.environ.get("XPACK_TEST_SANITIZED"):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    xpack = sys.argv[1]
    cases = [
        # name, bytes, the field the message must name, .ptd given with it
        ("plans_share_delegates.pte", program(plans=16000, delegates=16000, blob=b"\0" * 64), ".delegates", None),
        ("values_share_dims.pte", program(blob=graph_sharing_dims(32000)), "xvalue_union.dims", None),
        ("named_data_share_key.pte", program(delegates=0, named=16000, named_key=b"k" * 1000000),
         "named_data[1].key", None),
        ("ptd_entries_share_key.ptd", ptd_sharing_key(16000, b"k" * 1000000), "named_data[1].key",
         program(delegates=0)),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, field, ptd_program in cases:
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            args = [xpack, "inspect", path]
            if ptd_program is not None:  # a .ptd is read as --data of a program without delegates
                args = [xpack, "inspect", os.path.join(tmp, "plain.pte"), "--data", path]
                with open(args[2], "wb") as f:
                    f.write(ptd_program)
            try:
                r = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S,
                                   preexec_fn=limit_memory)
            except subprocess.TimeoutExpired:
                failures.append(f"{name} ({len(data)} bytes): still running after {TIMEOUT_S} s")
                continue
            # Delegates sharing one list also name one blob thousands of times: the budget on blob bytes
            # (64 times the file) may refuse the file before the shared list is charged; either refusal will do.
            reasons = (SHARED, BLOB_BUDGET) if field == ".delegates" else (SHARED,)
            ok = r.returncode == 3 and any(x in r.stderr for x in reasons) and field in r.stderr and not r.stdout
            print(f"{'ok  ' if ok else 'FAIL'} {name} ({len(data)} bytes): exit {r.returncode}: {r.stderr.strip()[:300]}")
            if not ok:
                failures.append(f"{name}: expected exit 3 naming {field!r} and {SHARED!r}, got exit {r.returncode}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
