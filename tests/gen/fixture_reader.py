"""Reads ExecuTorch .pte/.ptd files for the fixture tests: headers by hand, flatbuffers through
`flatc --json --raw-binary --strict-json` with the project's schemas (format/*.fbs)."""

import json
import os
import re
import struct
import subprocess
import tempfile

UINT64_MAX = (1 << 64) - 1


class FixtureError(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise FixtureError(msg)


def flatc_json(schema, data, tmpdir, stem):
    """Decodes flatbuffer bytes to a dict. flatc prints inf/nan unquoted; they become strings."""
    path = os.path.join(tmpdir, stem + ".bin")
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "-o", tmpdir, schema, "--", path],
                       capture_output=True, text=True)
    check(r.returncode == 0, "flatc failed on %s: %s" % (stem, r.stderr.strip()))
    with open(os.path.join(tmpdir, stem + ".json")) as f:
        text = f.read()
    text = re.sub(r'(?<=[:\s\[,])(-?)(inf|nan)\b', lambda m: '"%s%s"' % (m.group(1), m.group(2)), text)
    return json.loads(text)


class Blob:
    def __init__(self, data, segment_index):
        self.data = data
        self.segment_index = segment_index
        check(data[4:8] == b"XH00", "delegate segment %d has no XH00 header" % segment_index)
        self.header_length = struct.unpack_from("<H", data, 8)[0]
        self.fb_offset, self.fb_size, self.const_offset = struct.unpack_from("<III", data, 10)
        self.const_size = struct.unpack_from("<Q", data, 22)[0]
        self.flatbuffer = data[self.fb_offset:self.fb_offset + self.fb_size]
        self.graph = None


class Pte:
    def __init__(self, path, schema_dir, tmpdir, ptd_path=None):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        check(d[4:8] == b"ET12", "%s: no ET12 identifier" % path)
        check(d[8:12] == b"eh00", "%s: no eh00 extended header" % path)
        self.root_offset = struct.unpack_from("<I", d, 0)[0]
        self.header_length = struct.unpack_from("<I", d, 12)[0]
        self.program_size, self.segment_base = struct.unpack_from("<QQ", d, 16)
        self.segment_data_size = struct.unpack_from("<Q", d, 32)[0] if self.header_length >= 32 else None
        stem = os.path.basename(path).replace(".", "_")
        self.program = flatc_json(os.path.join(schema_dir, "executorch_program.fbs"), d[:self.program_size],
                                  tmpdir, stem + "_program")
        self.segments = [(s.get("offset", 0), s.get("size", 0)) for s in self.program.get("segments", [])]
        self.blobs = {}
        for plan in self.program["execution_plan"]:
            for dl in plan.get("delegates", []):
                if dl.get("id") != "XnnpackBackend":
                    continue
                check(dl["processed"].get("location") == "SEGMENT", "delegate not in a segment")
                idx = dl["processed"].get("index", 0)
                if idx not in self.blobs:
                    b = Blob(self.segment_bytes(idx), idx)
                    b.graph = flatc_json(os.path.join(schema_dir, "xnnpack_graph.fbs"), b.flatbuffer, tmpdir,
                                         "%s_seg%d" % (stem, idx))
                    self.blobs[idx] = b
        self.named = {}
        for nd in self.program.get("named_data", []):
            self.named[nd["key"]] = self.segment_bytes(nd.get("segment_index", 0))
        self.ptd = Ptd(ptd_path, schema_dir, tmpdir) if ptd_path else None

    def segment_bytes(self, index):
        check(index < len(self.segments), "segment index %d out of range" % index)
        off, size = self.segments[index]
        start = self.segment_base + off
        check(start + size <= len(self.data), "segment %d past end of file" % index)
        return self.data[start:start + size]

    def resolve(self, key):
        if self.ptd and key in self.ptd.named:
            check(key not in self.named, "key %s in both .ptd and .pte" % key)
            return self.ptd.named[key]
        check(key in self.named, "named key %s not found" % key)
        return self.named[key]

    def plan(self, name):
        for p in self.program["execution_plan"]:
            if p["name"] == name:
                return p
        raise FixtureError("no method %s" % name)

    def method_graphs(self, name):
        return [self.blobs[d["processed"].get("index", 0)].graph for d in self.plan(name).get("delegates", [])]

    def method_keys(self, name):
        keys = []
        for g in self.method_graphs(name):
            keys += [c["named_key"] for c in g.get("constant_data", [])[1:]]
        return keys


class Ptd:
    def __init__(self, path, schema_dir, tmpdir):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        check(d[4:8] == b"FT01", "%s: no FT01 identifier" % path)
        check(d[8:12] == b"FH01", "%s: no FH01 header" % path)
        (self.header_length, self.fb_offset, self.fb_size, self.segment_base,
         self.segment_data_size) = struct.unpack_from("<IQQQQ", d, 12)
        self.table = flatc_json(os.path.join(schema_dir, "flat_tensor.fbs"), d[:self.fb_offset + self.fb_size],
                                tmpdir, os.path.basename(path).replace(".", "_"))
        self.segments = [(s.get("offset", 0), s.get("size", 0)) for s in self.table.get("segments", [])]
        self.named = {}
        for nd in self.table.get("named_data", []):
            off, size = self.segments[nd.get("segment_index", 0)]
            self.named[nd["key"]] = d[self.segment_base + off:self.segment_base + off + size]


def open_pte(path, ptd=None):
    schema_dir = os.environ.get("XPACK_SCHEMA_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "format")
    tmp = tempfile.mkdtemp(prefix="xpack-gen-check-")
    return Pte(path, schema_dir, tmp, ptd)


def tensor_value(xv):
    u = xv["xvalue_union"]
    return u["tensor_value"] if xv["xvalue_union_type"] == "XNNQuantizedTensorValue" else u
