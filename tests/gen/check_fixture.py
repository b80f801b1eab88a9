#!/usr/bin/env python3
"""Checks xpack-genmodel output against the ExecuTorch wire facts and the intended model contents.

  check_fixture.py wire KIND FILE.pte [FILE.ptd]   generic invariants + what KIND must contain
  check_fixture.py keys FILE.pte [FILE.ptd]        named keys == sha256sum of the extracted bytes
  check_fixture.py compare FILE.pte [FILE.ptd] REAL.pte  same header layout / field presence as a real export
  check_fixture.py compare-ptd FILE.ptd REAL.ptd   same FH01 layout / field presence as a real .ptd
  check_fixture.py share A.pte B.pte               two programs share all llm layer keys, not the head
Exit 0 = pass, 1 = fail, 77 = skipped (a needed real file is absent)."""

import hashlib
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_reader import UINT64_MAX, FixtureError, Ptd, check, open_pte, tensor_value  # noqa: E402

SKIP = 77
DT_BYTES = {"xnn_datatype_fp32": 4, "xnn_datatype_fp16": 2, "xnn_datatype_bf16": 2, "xnn_datatype_qcint8": 1, "xnn_datatype_qint8": 1,
            "xnn_datatype_qint32": 4, "xnn_datatype_qcint32": 4}


def prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def align(v, a):
    return (v + a - 1) // a * a


def check_container(p):
    d = p.data
    check(p.header_length == 32, "eh00 length %d, want 32" % p.header_length)
    check(p.root_offset >= 40, "root offset %d does not skip the 32-byte header" % p.root_offset)
    check(p.segment_base == align(p.program_size, 128), "segment base not program size aligned to 128")
    check(d[p.program_size:p.segment_base] == b"\0" * (p.segment_base - p.program_size), "non-zero padding")
    check(p.segment_base + p.segment_data_size == len(d), "file size != segment base + segment data size")
    prog = p.program
    check("version" not in prog, "Program.version present (exporter writes 0)")
    for k in ("constant_buffer", "backend_delegate_data"):
        check(prog.get(k) == [], "%s should be an empty vector" % k)
    check(prog.get("constant_segment") == {"offsets": [0]}, "constant_segment should be {offsets:[0]}")
    check(p.segments and p.segments[0] == (0, 0), "segment 0 must be the empty constant segment")
    end = 0
    for i, (off, size) in enumerate(p.segments):
        check(off % 128 == 0, "segment %d offset %d not 128-aligned" % (i, off))
        check(off >= end and off - end < 128, "segment %d not packed in order" % i)
        end = off + size
    check(end == p.segment_data_size, "segment data size mismatch")
    keys = [nd["key"] for nd in prog.get("named_data", [])]
    check(len(keys) == len(set(keys)), "duplicate named keys")
    segs = [nd.get("segment_index", 0) for nd in prog.get("named_data", [])]
    check(len(segs) == len(set(segs)), "named keys share a segment although their bytes differ")
    for key, data in p.named.items():
        digest = key[6:] if key.startswith("scale_") else key
        check(len(digest) == 64 and digest == digest.lower(), "key %s is not lower-case sha256 hex" % key)
        check(hashlib.sha256(data).hexdigest() == digest, "key %s does not match its bytes" % key)


def check_blob(p, b):
    check(b.header_length == 30 and b.fb_offset == 32, "XH00 header length/offset")
    check(b.data[30:32] == b"\0\0", "XH00 header padding")
    check(b.flatbuffer[4:8] == b"XN01", "XNNGraph identifier")
    check(b.const_offset == 32 + align(b.fb_size, 16), "constant data offset")
    check(b.const_size == 0 and len(b.data) == b.const_offset, "weights must be named data, not in the blob")
    g = b.graph
    check(g.get("version") == "0", "XNNGraph.version")
    check("constant_buffer" not in g and "mem_buffer_sizes" not in g, "legacy constant fields present")
    consts = g["constant_data"]
    check(consts[0] == {"named_key": ""}, "constant_data[0] must be the reserved empty entry")
    sizes = {}
    for i, c in enumerate(consts[1:], 1):
        check(c.get("offset") == UINT64_MAX, "constant %d offset should be UINT64_MAX" % i)
        data = p.resolve(c["named_key"])
        check(len(data) == c["size"], "constant %d size %d != stored %d" % (i, c["size"], len(data)))
        sizes[i] = len(data)
    values = g["xvalues"]
    nin = len(g.get("input_ids", []))
    nout = len(g.get("output_ids", []))
    check(g["num_externs"] == nin + nout, "num_externs")
    used_consts = set()
    for i, xv in enumerate(values):
        tv = tensor_value(xv)
        check(tv.get("id_out", 0) == i, "value %d id_out" % i)
        check(tv.get("num_dims", 0) == len(tv.get("dims", [])), "value %d num_dims" % i)
        flags = tv.get("flags", 0)
        ext = tv.get("external_id", 0)
        if flags == 1:
            check(i in g["input_ids"] and ext == g["input_ids"].index(i), "input %d external id" % i)
        elif flags == 2:
            check(i in g["output_ids"] and ext == nin + g["output_ids"].index(i), "output %d external id" % i)
        else:
            check(flags == 0 and ext == 0xFFFFFFFF, "internal value %d external id/flags" % i)
        cidx = tv.get("constant_buffer_idx", 0)
        dims = tv.get("dims", [])
        dt = tv["datatype"]
        if cidx:
            check(flags == 0, "constant %d is external" % i)
            used_consts.add(cidx)
            if dt in DT_BYTES:
                check(sizes[cidx] == prod(dims) * DT_BYTES[dt], "value %d bytes for %s %s" % (i, dt, dims))
            elif dt in ("xnn_datatype_qcint4", "xnn_datatype_qbint4"):
                check(sizes[cidx] == dims[0] * ((dims[1] + 1) // 2), "value %d packed int4 bytes" % i)
        if xv["xvalue_union_type"] == "XNNQuantizedTensorValue":
            qt, q = xv["xvalue_union"]["quant_params_type"], xv["xvalue_union"]["quant_params"]
            if qt == "PerTokenDynamicQuant":
                check(dt == "xnn_datatype_qdint8" and not cidx and q.get("num_nonbatch_dims") == 1, "qdint8 value")
            elif qt in ("PerChannelQuant", "PerChannelGroupQuant"):
                s = q.get("scale_buffer_idx", 0)
                check(s and q.get("scale") == [], "scales must be a named buffer")
                used_consts.add(s)
                scale = p.resolve(consts[s]["named_key"])
                if qt == "PerChannelQuant":
                    check(q["num_scales"] == dims[q.get("channel_dim", 0)], "num_scales")
                    vals = struct.unpack("<%df" % q["num_scales"], scale)
                else:
                    check(dt == "xnn_datatype_qbint4", "group quantization is qbint4 only")
                    check(q["num_scales"] == dims[0] * dims[1] // q["group_size"], "group num_scales")
                    raw = struct.unpack("<%dH" % q["num_scales"], scale)
                    vals = [struct.unpack("<f", struct.pack("<I", r << 16))[0] for r in raw]
                check(len(scale) == q["num_scales"] * (4 if qt == "PerChannelQuant" else 2), "scale bytes")
                check(all(0 < v < 1 for v in vals), "scales must be positive and small")
    check(used_consts == set(range(1, len(consts))), "unused or dangling constant_data entries")
    for n in g["xnodes"]:
        for k, v in n["xnode_union"].items():
            if k.endswith("_id") and v != 0xFFFFFFFF:
                check(v < len(values), "node refers to missing value %d" % v)
    return g


def node_types(g):
    return [n["xnode_union_type"] for n in g["xnodes"]]


def value(g, i):
    return g["xvalues"][i]


def fc_filters(g):
    out = []
    for n in g["xnodes"]:
        if n["xnode_union_type"] == "XNNFullyConnected":
            out.append((n, value(g, n["xnode_union"]["filter_id"])))
    return out


def expect_llm(p, quantized):
    names = [e["name"] for e in p.program["execution_plan"]]
    check(names[:2] == ["prefill", "decode"], "methods %s" % names)
    pre, dec = p.plan("prefill"), p.plan("decode")
    check(pre["delegates"][0]["processed"]["index"] != dec["delegates"][0]["processed"]["index"],
          "prefill and decode blobs differ and must not share a segment")
    tp = pre["values"][0]["val"]["sizes"]
    td = dec["values"][0]["val"]["sizes"]
    check(tp[0] > 1 and td[0] == 1 and tp[1] == td[1], "prefill T>1, decode T=1")
    kp, kd = p.method_keys("prefill"), p.method_keys("decode")
    check(kp == kd, "prefill and decode must use the same named keys in the same order")
    check(set(kp) == set(p.named), "named_data holds exactly the keys the graphs use")
    for name in ("prefill", "decode"):
        g = p.method_graphs(name)[0]
        fcs = fc_filters(g)
        check(len(fcs) >= 2 * 7 + 1, "at least 2 layers of 7 projections + head")
        for n, f in fcs:
            check(n["xnode_union"]["bias_id"] == 0xFFFFFFFF, "LLM projections have no bias")
        dts = {tensor_value(f)["datatype"] for _, f in fcs}
        if not quantized:
            check(dts == {"xnn_datatype_fp32"}, "llm filters are fp32: %s" % dts)
            check("XNNConvert" not in node_types(g), "no Convert in fp32 llm")
        else:
            check(dts == {"xnn_datatype_qcint4", "xnn_datatype_qbint4"}, "llm-q4 filters: %s" % dts)
            for n, f in fcs:
                src = value(g, n["xnode_union"]["input1_id"])
                check(tensor_value(src)["datatype"] == "xnn_datatype_qdint8", "FC input must be qdint8")
                conv = [c for c in g["xnodes"] if c["xnode_union_type"] == "XNNConvert"
                        and c["xnode_union"]["output_id"] == n["xnode_union"]["input1_id"]]
                check(len(conv) == 1, "each qdint8 input comes from one Convert")
                fp = value(g, conv[0]["xnode_union"].get("input_id", 0))
                check(tensor_value(fp)["datatype"] == "xnn_datatype_fp32", "Convert input is fp32")
                out = value(g, n["xnode_union"]["output_id"])
                check(tensor_value(out)["datatype"] == "xnn_datatype_fp32", "FC output is fp32")
                q = f["xvalue_union"]
                if q["tensor_value"]["datatype"] == "xnn_datatype_qbint4":
                    check(q["quant_params_type"] == "PerChannelGroupQuant" and q["quant_params"]["group_size"] == 32,
                          "qbint4 blockwise with group 32")
                else:
                    check(q["quant_params_type"] == "PerChannelQuant", "qcint4 per channel")
        out = g["output_ids"][0]
        check(tensor_value(value(g, out))["dims"] == pre["values"][1]["val"]["sizes"] if name == "prefill"
              else True, "graph output dims match the program output")


def expect_kind(kind, p):
    graphs = [b.graph for b in p.blobs.values()]
    if kind in ("llm", "llm-q4"):
        expect_llm(p, kind == "llm-q4")
        return
    check(len(graphs) == 1, "one delegate")
    g = graphs[0]
    types = node_types(g)
    if kind == "qd8-qc8w":
        check(types == ["XNNConvert", "XNNFullyConnected"] * 2, "nodes %s" % types)
        for n, f in fc_filters(g):
            check(tensor_value(f)["datatype"] == "xnn_datatype_qcint8", "qcint8 filter")
            check(f["xvalue_union"]["quant_params_type"] == "PerChannelQuant", "per-channel scales")
            bias = tensor_value(value(g, n["xnode_union"]["bias_id"]))
            check(bias["datatype"] == "xnn_datatype_fp32", "fp32 bias")
    elif kind == "fp16":
        check(types == ["XNNFullyConnected"] * 2, "nodes %s" % types)
        check({tensor_value(v)["datatype"] for v in g["xvalues"]} == {"xnn_datatype_fp16"}, "all values fp16")
        check(all(v["val"]["scalar_type"] == "HALF" for v in p.plan("forward")["values"]), "program tensors HALF")
    elif kind == "bf16":
        check(types == ["XNNFullyConnected"] * 2, "nodes %s" % types)
        for n, f in fc_filters(g):
            u = n["xnode_union"]
            for role in ("input1_id", "filter_id", "output_id"):
                check(tensor_value(value(g, u.get(role, 0)))["datatype"] == "xnn_datatype_bf16", "%s bf16" % role)
            check(tensor_value(value(g, u["bias_id"]))["datatype"] == "xnn_datatype_fp32",
                  "fp32 bias (XNNPACK's bf16 fully-connected takes no other)")
        check(all(v["val"]["scalar_type"] == "BFLOAT16" for v in p.plan("forward")["values"]), "program tensors BFLOAT16")
    elif kind == "deconv":
        check(types == ["XNNStaticTranspose", "XNNConvTranspose2d", "XNNConvTranspose2d", "XNNStaticTranspose"],
              "nodes %s" % types)
        for n in g["xnodes"][1:3]:
            u = n["xnode_union"]
            check(u["subsampling_height"] == 2 and u["adjustment_height"] == 1 and u["groups"] == 1, "deconv params")
            w = tensor_value(value(g, u["filter_id"]))["dims"]
            check(w == [u["group_output_channels"], 3, 3, u["group_input_channels"]], "OHWI deconv filter %s" % w)
    elif kind == "bmm":
        check(types == ["XNNBatchMatrixMultiply", "XNNBatchMatrixMultiply", "XNNAdd"], "nodes %s" % types)
        a, b = g["xnodes"][0]["xnode_union"], g["xnodes"][1]["xnode_union"]
        check(tensor_value(value(g, a["input2_id"])).get("constant_buffer_idx", 0) == 1, "first bmm: constant B")
        check(tensor_value(value(g, b["input2_id"])).get("flags") == 1, "second bmm: dynamic B")
        check(g["num_externs"] == 3, "two inputs, one output")
    elif kind == "ptd":
        check(p.ptd is not None and not p.named, "weights only in the .ptd")
        check("named_data" not in p.program, "no named_data in the .pte")
        check(types == ["XNNFullyConnected"] * 3, "nodes %s" % types)
        t = p.ptd
        check(t.header_length == 40 and t.fb_offset == 48, "FH01 header")
        check(t.segment_base == align(align(t.fb_size, 16) + 48, 16), "ptd segment base")
        check(t.segment_base + t.segment_data_size == len(t.data), "ptd size")
        check(all(off % 16 == 0 for off, _ in t.segments), "ptd segments aligned to 16")
        check(all("tensor_layout" not in nd for nd in t.table["named_data"]), "XNNPACK keys carry no layout")
        for key, data in t.named.items():
            check(hashlib.sha256(data).hexdigest() == key, "ptd key %s" % key)
    elif kind == "conv":
        check(types == ["XNNStaticTranspose", "XNNConv2d", "XNNDepthwiseConv2d", "XNNGlobalAvgPooling2d",
                        "XNNStaticReshape", "XNNFullyConnected"], "nodes %s" % types)
        dw = g["xnodes"][2]["xnode_union"]
        check(dw["groups"] == dw["group_output_channels"] * 0 + tensor_value(value(g, dw["filter_id"]))["dims"][3],
              "depthwise groups == channels")
        check(g["xnodes"][0]["debug_handle"] == 65535, "synthetic transpose debug handle")
    else:
        raise FixtureError("unknown kind %s" % kind)


def cmd_wire(kind, pte, ptd=None):
    p = open_pte(pte, ptd)
    check_container(p)
    check(p.blobs, "no XNNPACK delegates")
    for b in p.blobs.values():
        check_blob(p, b)
    expect_kind(kind, p)
    print("ok: %s (%s): %d method(s), %d delegate segment(s), %d named key(s)%s" % (
        pte, kind, len(p.program["execution_plan"]), len(p.blobs), len(p.named),
        ", %d in .ptd" % len(p.ptd.named) if p.ptd else ""))


def cmd_keys(pte, ptd=None):
    """Extracts every named blob to a file and compares the keys with the system's sha256sum."""
    p = open_pte(pte, ptd)
    entries = list(p.named.items()) + (list(p.ptd.named.items()) if p.ptd else [])
    check(entries, "no named data")
    tmp = tempfile.mkdtemp(prefix="xpack-gen-keys-")
    files = []
    for i, (key, data) in enumerate(entries):
        path = os.path.join(tmp, "%d.bin" % i)
        with open(path, "wb") as f:
            f.write(data)
        files.append((key, path))
    out = subprocess.run(["sha256sum"] + [f for _, f in files], capture_output=True, text=True, check=True).stdout
    sums = {line.split()[1]: line.split()[0] for line in out.splitlines()}
    for key, path in files:
        want = key[6:] if key.startswith("scale_") else key
        check(sums[path] == want, "sha256sum %s != key %s" % (sums[path], key))
    print("ok: %d named keys equal sha256sum of their bytes" % len(files))


def shape(obj):
    """Field presence of a decoded table: nested tables by their own shape, vectors by element shape."""
    if isinstance(obj, dict):
        return {k: shape(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [shape(obj[0])] if obj and isinstance(obj[0], dict) else "[]"
    return "scalar"


def value_role(tv):
    if tv.get("flags") == 1:
        return "input"
    if tv.get("flags") == 2:
        return "output"
    return "constant" if tv.get("constant_buffer_idx") else "internal"


def cmd_compare(pte, real, ptd=None):
    if not os.path.exists(real):
        print("SKIP: real file %s absent" % real)
        return SKIP
    a, b = open_pte(pte, ptd), open_pte(real)
    check_container(a)
    check(a.header_length == b.header_length == 32, "eh00 lengths %d vs %d" % (a.header_length, b.header_length))
    check(b.segment_base % 128 == 0 and all(o % 128 == 0 for o, _ in b.segments), "real file alignment")
    check(a.root_offset - 32 > 0 and (b.root_offset - 32) > 0, "both roots shifted past the header")
    ext = {"named_data"} if a.ptd is not None else set()  # weights in a .ptd: the .pte has no named_data
    check(set(a.program) | ext == set(b.program), "Program fields %s vs %s" % (sorted(a.program), sorted(b.program)))
    pa, pb = a.program["execution_plan"][0], b.program["execution_plan"][0]
    check(set(pa) == set(pb), "ExecutionPlan fields %s vs %s" % (sorted(pa), sorted(pb)))
    check(shape(pa["delegates"][0]) == shape(pb["delegates"][0]), "BackendDelegate shape")
    check(shape(pa["chains"][0]) == shape(pb["chains"][0]), "Chain shape")
    # requires_grad depends on whether the model was exported in training mode, not on the format.
    oa = set(pa["values"][pa["outputs"][0]]["val"]) - {"requires_grad"}
    ob = set(pb["values"][pb["outputs"][0]]["val"]) - {"requires_grad"}
    check(oa == ob, "output Tensor fields %s vs %s" % (sorted(oa), sorted(ob)))
    if "named_data" in a.program:
        check(shape(a.program["named_data"][0]) == shape(b.program["named_data"][0]), "NamedData shape")
    with_consts = [[x for x in p.blobs.values() if len(x.graph.get("constant_data", [])) > 1] for p in (a, b)]
    check(with_consts[0] and with_consts[1], "both files need a delegate with constants")
    ga, gb = with_consts[0][0], with_consts[1][0]
    check((ga.header_length, ga.fb_offset) == (gb.header_length, gb.fb_offset), "XH00 layout")
    check(ga.const_offset == 32 + align(ga.fb_size, 16) and gb.const_offset == 32 + align(gb.fb_size, 16),
          "flatbuffer padding")
    check(set(ga.graph) == set(gb.graph), "XNNGraph fields %s vs %s" % (sorted(ga.graph), sorted(gb.graph)))
    check(ga.graph["constant_data"][0] == gb.graph["constant_data"][0], "reserved constant entry")
    check(shape(ga.graph["constant_data"][1]) == shape(gb.graph["constant_data"][1]), "ConstantDataOffset shape")
    # Each value role (input, constant, internal, output) must carry the same fields in both files.
    roles_b = {}
    for v in gb.graph["xvalues"]:
        tv = tensor_value(v)
        roles_b.setdefault((v["xvalue_union_type"], value_role(tv)), set(tv))
    compared = 0
    for v in ga.graph["xvalues"]:
        tv = tensor_value(v)
        key = (v["xvalue_union_type"], value_role(tv))
        if key in roles_b:
            fields = set(tv) - {"id_out", "external_id"}  # id 0 / external id 0 are omitted defaults
            want = roles_b[key] - {"id_out", "external_id"}
            check(fields == want, "%s fields %s vs real %s" % (key, sorted(fields), sorted(want)))
            compared += 1
    qb = {}
    for v in gb.graph["xvalues"]:
        if v["xvalue_union_type"] == "XNNQuantizedTensorValue":
            qb.setdefault(v["xvalue_union"]["quant_params_type"], set(v["xvalue_union"]["quant_params"]))
    for v in ga.graph["xvalues"]:
        if v["xvalue_union_type"] == "XNNQuantizedTensorValue":
            qt = v["xvalue_union"]["quant_params_type"]
            if qt in qb:
                got = set(v["xvalue_union"]["quant_params"]) - {"channel_dim"}  # 0 is an omitted default
                check(got == qb[qt] - {"channel_dim"}, "%s fields %s vs real %s" % (qt, sorted(got), sorted(qb[qt])))
                compared += 1
    fa = [n for n in ga.graph["xnodes"] if n["xnode_union_type"] == "XNNFullyConnected"]
    fb = [n for n in gb.graph["xnodes"] if n["xnode_union_type"] == "XNNFullyConnected"]
    if fa and fb:
        check(set(fa[-1]) - {"output_min_max"} == set(fb[-1]) - {"output_min_max"}, "XNode fields")
    print("ok: %s matches the structure of %s (%d values compared by role)" % (pte, real, compared))
    return 0


def cmd_compare_ptd(ptd, real):
    """The .ptd against a real XNNPACK .ptd: header, alignment and NamedData field presence."""
    if not os.path.exists(real):
        print("SKIP: real file %s absent" % real)
        return SKIP
    tmp = tempfile.mkdtemp(prefix="xpack-gen-ptd-")
    schema_dir = os.environ.get("XPACK_SCHEMA_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "format")
    a, b = Ptd(ptd, schema_dir, tmp), Ptd(real, schema_dir, tmp)
    for t in (a, b):
        check(t.header_length == 40 and t.fb_offset == 48, "%s: FH01 header" % t.path)
        check(t.segment_base == align(align(t.fb_size, 16) + 48, 16), "%s: segment base" % t.path)
        check(all(off % 16 == 0 for off, _ in t.segments), "%s: 16-aligned segments" % t.path)
    check(set(a.table) == set(b.table), "FlatTensor fields %s vs %s" % (sorted(a.table), sorted(b.table)))
    check(shape(a.table["named_data"][1]) == shape(b.table["named_data"][1]), "NamedData shape")
    check(shape(a.table["segments"][1]) == shape(b.table["segments"][1]), "DataSegment shape")
    print("ok: %s matches the structure of %s" % (ptd, real))
    return 0


def cmd_share(pa, pb):
    a, b = open_pte(pa), open_pte(pb)
    ka, kb = a.method_keys("decode"), b.method_keys("decode")
    check(len(ka) == len(kb), "same architecture")
    head = 1 if not any(k.startswith("scale_") for k in ka) else 2
    check(ka[:-head] == kb[:-head], "layer keys must be shared")
    check(all(x != y for x, y in zip(ka[-head:], kb[-head:])), "head keys must differ")
    print("ok: %d shared keys, %d differing head key(s)" % (len(ka) - head, head))


def main(argv):
    try:
        if len(argv) >= 3 and argv[0] == "wire":
            cmd_wire(argv[1], argv[2], argv[3] if len(argv) > 3 else None)
        elif len(argv) >= 2 and argv[0] == "keys":
            cmd_keys(argv[1], argv[2] if len(argv) > 2 else None)
        elif len(argv) in (3, 4) and argv[0] == "compare":
            return cmd_compare(argv[1], argv[-1], argv[2] if len(argv) == 4 else None)
        elif len(argv) == 3 and argv[0] == "compare-ptd":
            return cmd_compare_ptd(argv[1], argv[2])
        elif len(argv) == 3 and argv[0] == "share":
            cmd_share(argv[1], argv[2])
        else:
            print(__doc__)
            return 2
    except FixtureError as e:
        print("FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
