"""Lists every table of a flatbuffer with its vtable's declared inline size and where its fields lie, by
walking the buffer with a .fbs schema (format/*.fbs). flatc decodes values but hides the vtables; the
short-vtable fixtures (xpack-genmodel --short-vtables) are about the vtables.

Covers what the project's schemas use: tables, enums, unions, strings, vectors of scalars, strings and
tables. No structs, no vectors of unions."""

import re
import struct

SCALAR_WIDTH = {"bool": 1, "byte": 1, "ubyte": 1, "int8": 1, "uint8": 1, "short": 2, "ushort": 2, "int16": 2,
                "uint16": 2, "int": 4, "uint": 4, "int32": 4, "uint32": 4, "float": 4, "float32": 4, "long": 8,
                "ulong": 8, "int64": 8, "uint64": 8, "double": 8, "float64": 8}


class Schema:
    def __init__(self, path):
        with open(path) as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        self.tables, self.unions, self.enums = {}, {}, {}
        for kind, name, base, body in re.findall(r"\b(table|union|enum)\s+(\w+)\s*(?::\s*(\w+))?\s*\{(.*?)\}",
                                                  text, re.S):
            if kind == "enum":
                self.enums[name] = SCALAR_WIDTH[base]
            elif kind == "union":
                # "Alias: Table" or "Table"; the union's type number is the position + 1.
                members = [m.strip() for m in body.split(",") if m.strip()]
                self.unions[name] = [m.split(":")[-1].strip() for m in members]
            else:
                fields = []
                for decl in body.split(";"):
                    m = re.match(r"\s*(\w+)\s*:\s*(\[?\s*\w+\s*\]?)", decl)
                    if m:
                        fields.append((m.group(1), m.group(2).replace(" ", "")))
                self.tables[name] = fields
        self.root = re.search(r"root_type\s+(\w+)\s*;", text).group(1)

    def width(self, t):
        """Inline width of a field of type t: scalars and enums their own, everything else an offset."""
        return SCALAR_WIDTH.get(t) or self.enums.get(t) or 4


class Table:
    """One table: its type, byte position, declared inline size, and (field, offset in table, width) of
    each present field."""

    def __init__(self, type_name, pos, declared, fields):
        self.type_name, self.pos, self.declared, self.fields = type_name, pos, declared, fields

    def last_start(self):
        return max((off for _, off, _ in self.fields), default=0)

    def needed(self):
        """Inline bytes its fields occupy: 4 (the soffset) at least, else up to the end of the last field."""
        return max([4] + [off + w for _, off, w in self.fields])


def _u32(buf, at):
    return struct.unpack_from("<I", buf, at)[0]


def tables(schema, buf, root_at=0):
    """Every table reachable from the root offset at `root_at`, in walk order."""
    out = []

    def deref(at):
        return at + _u32(buf, at)

    def visit(type_name, pos):
        vt = pos - struct.unpack_from("<i", buf, pos)[0]
        vt_size, declared = struct.unpack_from("<HH", buf, vt)
        present = []
        slot = 0
        for name, t in schema.tables[type_name]:
            slots = [(name + "_type", "ubyte"), (name, t)] if t in schema.unions else [(name, t)]
            for fname, ft in slots:
                voff = 4 + 2 * slot
                off = struct.unpack_from("<H", buf, vt + voff)[0] if voff + 2 <= vt_size else 0
                if off:
                    present.append((fname, ft, off))
                slot += 1
        out.append(Table(type_name, pos, declared, [(n, off, schema.width(t)) for n, t, off in present]))
        union_type = {n: buf[pos + off] for n, t, off in present if n.endswith("_type")}
        for fname, t, off in present:
            at = pos + off
            if t in schema.tables:
                visit(t, deref(at))
            elif t in schema.unions:
                visit(schema.unions[t][union_type[fname + "_type"] - 1], deref(at))
            elif t.startswith("[") and t[1:-1] in schema.tables:
                vec = deref(at)
                for i in range(_u32(buf, vec)):
                    visit(t[1:-1], deref(vec + 4 + 4 * i))

    visit(schema.root, deref(root_at))
    return out
