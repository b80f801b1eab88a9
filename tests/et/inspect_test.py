#!/usr/bin/env python3
"""`xpack inspect` on every real file (facts from MANIFEST.md), usage errors, and generated .pte/.ptd pairs.

usage: inspect_test.py XPACK REAL_TESTDATA_DIR [XPACK_GENMODEL]
Exit 77 (skipped) when the real folder is absent. The generator is optional (empty argument = skip those).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77

# file: (delegates, xnnpack delegates, {node type: count over the program, 0 = at least one},
#        constants over all XNNPACK delegates or None, source of every constant or None)
EXPECTED = {
    "add.pte": (1, 1, {"Add": 1}, 0, None),
    "clamp.pte": (1, 1, {"Clamp": 1}, 0, None),
    "conv.pte": (1, 1, {"Conv2d": 1, "StaticTranspose": 2}, 2, "pte named_data"),
    "dwconv_inblob_2024.pte": (1, 1, {"DepthwiseConv2d": 5}, 5, "blob"),
    "dynamic_mul.pte": (1, 1, {"Multiply": 1}, None, None),
    "img_dec_small_q8.pte": (12, 12, {"Convert": 0}, None, "pte named_data"),
    "img_enc_fp32.pte": (7, 7, {"ReciprocalSquareRoot": 0, "Div": 0, "Square": 0, "Maximum": 0, "StaticSlice": 0},
                         None, "pte named_data"),
    "legacy_constant_buffer.pte": (0, 0, {}, 0, None),
    "linear129.pte": (1, 1, {"FullyConnected": 1}, 2, "pte named_data"),
    "openvino_tiny.pte": (1, 0, {}, 0, None),
    "person_detect_fp32.pte": (4, 4, {"FullyConnected": 4}, 8, "pte named_data"),
    "person_detect_int8.pte": (7, 7, {"FullyConnected": 4}, None, "pte named_data"),
    "portable_linear.pte": (0, 0, {}, 0, None),
    "portable_multi_method.pte": (0, 0, {}, 0, None),
    "portable_xor.pte": (0, 0, {}, 0, None),
    "qint8_linear.pte": (1, 1, {"FullyConnected": 1, "Convert": 2}, 2, "pte named_data"),
    "small_cnn.pte": (2, 2, {"DepthwiseConv2d": 1}, 6, "pte named_data"),
    "stress_mlp.pte": (2, 2, {"FullyConnected": 8}, 16, "pte named_data"),
}
METHODS = {"portable_multi_method.pte": 2, "portable_xor.pte": 4}

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL " + msg)
    return cond


def run(xpack, *args):
    p = subprocess.run([xpack, "inspect", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def load_json(name, out):
    try:
        return json.loads(out)
    except ValueError as e:
        check(False, f"{name}: --json output does not parse: {e}")
        return None


def all_delegates(prog):
    return [d for m in prog["methods"] for d in m["delegates"]]


def check_good(xpack, real, name):
    delegates, xnn, nodes, constants, source = EXPECTED[name]
    path = os.path.join(real, name)
    rc, out, err = run(xpack, path)
    check(rc == 0, f"{name}: text exit {rc}, stderr: {err}")
    check(("nothing xpack can pack" in out) == (xnn == 0), f"{name}: 'nothing xpack can pack' iff no XNNPACK delegate")
    check(out.count("skipped: not XNNPACK") == delegates - xnn, f"{name}: one 'skipped: not XNNPACK' per other delegate")
    check(out.count("replay: replayable") == xnn, f"{name}: {out.count('replay: replayable')} replayable lines, want {xnn}")
    rc, out, err = run(xpack, path, "--json")
    check(rc == 0, f"{name}: --json exit {rc}, stderr: {err}")
    doc = load_json(name, out)
    if doc is None:
        return
    check(len(doc["programs"]) == 1, f"{name}: one program")
    prog = doc["programs"][0]
    check(prog["file"] == path, f"{name}: file")
    if name in METHODS:
        check(len(prog["methods"]) == METHODS[name], f"{name}: {len(prog['methods'])} methods")
    ds = all_delegates(prog)
    check(len(ds) == delegates == prog["delegates"], f"{name}: {len(ds)} delegates, want {delegates}")
    xs = [d for d in ds if d["xnnpack"]]
    check(len(xs) == xnn == prog["xnnpack_delegates"], f"{name}: {len(xs)} XNNPACK delegates, want {xnn}")
    check(prog["nothing_to_pack"] == (xnn == 0), f"{name}: nothing_to_pack")
    check(prog["replayable_delegates"] == xnn, f"{name}: replayable_delegates {prog['replayable_delegates']}")
    for d in ds:
        where = f"{name}: delegate {d['index']}"
        for key in ("index", "backend", "location", "size", "xnnpack", "replayable", "replay_error", "node_counts",
                    "datatypes", "constants"):
            check(key in d, f"{where}: key {key} missing")
        check(d["location"] in ("segment", "inline"), f"{where}: location {d['location']}")
        check(d["size"] > 0, f"{where}: size")
        if not d["xnnpack"]:
            check(d["note"] == "skipped: not XNNPACK", f"{where}: note")
            check(not d["replayable"] and d["replay_error"] is None and not d["constants"], f"{where}: non-XNNPACK")
            continue
        check(d["backend"] == "XnnpackBackend", f"{where}: backend {d['backend']}")
        check(d["error"] is None, f"{where}: error {d['error']}")
        check(d["replayable"] is True and d["replay_error"] is None, f"{where}: not replayable: {d['replay_error']}")
        check(sum(d["node_counts"].values()) == d["nodes"], f"{where}: node_counts sum to nodes")
        check(sum(d["datatypes"].values()) == d["values"], f"{where}: datatypes sum to values")
        check(sum(c["size"] for c in d["constants"]) == d["constant_bytes"], f"{where}: constant_bytes")
        for c in d["constants"]:
            check(c["size"] > 0 and c["identity"], f"{where}: constant {c}")
            if source:
                check(c["source"] == source, f"{where}: constant source {c['source']}, want {source}")
            if c["source"] != "ptd":
                check(c["file"] == path and c["offset"] is not None and c["offset"] + c["size"] <= prog["size"],
                      f"{where}: constant location {c['file']}+{c['offset']}")
            if c["source"] == "blob":
                bytes_name = re.sub(r"\|xnn:[0-9a-f]{32}$", "", c["identity"])  # the packing suffix (FORMAT.md 6)
                check(bytes_name.startswith("xpack:xxh3-128:") and bytes_name.endswith(f":{c['size']}"),
                      f"{where}: unnamed identity {c['identity']}")
    counts = {}
    for d in xs:
        for t, n in d["node_counts"].items():
            counts[t] = counts.get(t, 0) + n
    for t, n in nodes.items():
        check(counts.get(t, 0) == n if n else counts.get(t, 0) > 0, f"{name}: {counts.get(t, 0)} {t} nodes, want {n or '>0'}")
    if constants is not None:
        got = sum(len(d["constants"]) for d in xs)
        check(got == constants, f"{name}: {got} constants, want {constants}")
    print(f"ok {name}: {len(ds)} delegates, {len(xs)} XNNPACK, all replayable")


def check_bad(xpack, real, name):
    path = os.path.join(real, name)
    for extra in ([], ["--json"]):
        rc, out, err = run(xpack, path, *extra)
        check(rc == 3, f"{name}: exit {rc}, want 3")
        check(name in err and "ET12" in err, f"{name}: stderr does not name the file and what was expected: {err!r}")
        check(out == "", f"{name}: printed a report for a bad file: {out[:200]!r}")
    print(f"ok {name} rejected: {err.strip()}")


def check_cli(xpack, real):
    add = os.path.join(real, "add.pte")
    cases = [
        ([], 2, "no program"),
        ([add, "--frobnicate"], 2, "unknown option"),
        ([add, "--data"], 2, "--data needs"),
        ([os.path.join(real, "does_not_exist.pte")], 3, "does_not_exist.pte"),
        ([add, "--data", os.path.join(real, "clamp.pte")], 3, "clamp.pte"),  # a .pte given as .ptd
        ([add, "--data", add], 2, "given twice"),  # the same file twice
    ]
    for args, want, text in cases:
        rc, out, err = run(xpack, *args)
        check(rc == want and text in err, f"inspect {args}: exit {rc} (want {want}), stderr {err!r} (want {text!r})")
    # Weight files with programs that do not need them, and two programs at once.
    rc, out, err = run(xpack, os.path.join(real, "portable_xor.pte"), "--data", os.path.join(real, "portable_xor.ptd"),
                       "--json")
    doc = load_json("portable_xor + ptd", out)
    check(rc == 0 and doc and doc["programs"][0]["nothing_to_pack"] and doc["data_files"][0]["entries"] == 4,
          f"portable_xor.pte --data portable_xor.ptd: exit {rc} {err}")
    rc, out, err = run(xpack, os.path.join(real, "portable_linear.pte"), "--data",
                       os.path.join(real, "portable_linear_oldlayout.ptd"))
    check(rc == 0 and "nothing xpack can pack" in out, f"portable_linear + old-layout ptd: exit {rc} {err}")
    rc, out, err = run(xpack, add, os.path.join(real, "linear129.pte"), "--data",
                       os.path.join(real, "orphan_xnnpack_weights.ptd"), "--json")
    doc = load_json("two programs", out)
    check(rc == 0 and doc and len(doc["programs"]) == 2 and doc["programs"][1]["replayable_delegates"] == 1,
          f"two programs and an unrelated .ptd: exit {rc} {err}")
    print("ok usage errors, .ptd files, several programs")


def check_generated(xpack, gen):
    with tempfile.TemporaryDirectory() as tmp:
        pte, ptd = os.path.join(tmp, "m.pte"), os.path.join(tmp, "m.ptd")
        subprocess.run([gen, "ptd", "-o", pte, "--ptd", ptd], check=True, stdout=subprocess.DEVNULL)
        # Without its .ptd: exit 3, the unresolved key named on stderr, and (as for every failure) no report.
        for extra in ([], ["--json"]):
            rc, out, err = run(xpack, pte, *extra)
            check(rc == 3 and "named_key" in err and "missing .ptd" in err and out == "",
                  f"m.pte without its .ptd {extra}: exit {rc}, stdout {out[:200]!r}, stderr {err!r}")
        rc, out, err = run(xpack, pte, "--data", ptd, "--json")
        doc = load_json("m.pte with .ptd", out)
        check(rc == 0, f"m.pte --data m.ptd: exit {rc} {err}")
        if doc:
            d = all_delegates(doc["programs"][0])[0]
            check(d["replayable"] and len(d["constants"]) == 6 and all(c["source"] == "ptd" and c["file"] == ptd
                                                                       and c["offset"] is None
                                                                       for c in d["constants"]),
                  f"m.pte --data m.ptd: {d['constants']}")
        # The spring-2025 FlatTensor (ExecuTorch 0.6): tensors and segments at fields 2 and 3 as in the early
        # layout, the delegate weights in named_data appended as field 4.
        ptd_0425 = os.path.join(tmp, "m0425.ptd")
        subprocess.run([gen, "ptd", "-o", os.path.join(tmp, "m0425.pte"), "--ptd", ptd_0425, "--ptd-layout",
                        "2025-04"], check=True, stdout=subprocess.DEVNULL)
        rc, out, err = run(xpack, pte, "--data", ptd_0425, "--json")
        doc = load_json("m.pte with a 2025-04 .ptd", out)
        check(rc == 0, f"m.pte --data m0425.ptd: exit {rc} {err}")
        if doc:
            d = all_delegates(doc["programs"][0])[0]
            check(d["replayable"] and len(d["constants"]) == 6 and all(c["source"] == "ptd" and c["file"] == ptd_0425
                                                                       for c in d["constants"]),
                  f"m.pte --data m0425.ptd: {d['constants']}")
            check(doc["data_files"][0]["entries"] == 6, f"m0425.ptd entries: {doc['data_files'][0]}")
        for kind in ("llm-q4", "qd8-qc8w", "fp16", "deconv", "bmm", "conv"):
            out_pte = os.path.join(tmp, kind + ".pte")
            args = [gen, kind, "-o", out_pte] + (["--size", "64K"] if kind.startswith("llm") else [])
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            rc, out, err = run(xpack, out_pte, "--json")
            doc = load_json(kind, out)
            ok = rc == 0 and doc and all(d["replayable"] for d in all_delegates(doc["programs"][0]))
            check(ok, f"generated {kind}: exit {rc}, {err} "
                      f"{[d['replay_error'] for d in all_delegates(doc['programs'][0])] if doc else ''}")
    print("ok generated fixtures (.ptd pair in both FlatTensor layouts, qd8, 4-bit, fp16, deconv, bmm, conv) "
          "all replayable")


def check_early_scalar_types(xpack, real):
    """Every ExecuTorch scalar type has a size in an early-2025 .ptd: one tensor of a complex or bits type once made
    the whole file unreadable ("not a scalar type this xpack knows"; found by a review). The real early-layout
    file's first tensor (float, 4 bytes an element) is made ComplexHalf (4 bytes) and Bits1x8 (1 byte)."""
    source = os.path.join(real, "portable_linear_oldlayout.ptd")
    data = open(source, "rb").read()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gen"))
    import fb_tables
    schema = fb_tables.Schema(os.path.join(os.path.dirname(os.path.abspath(__file__)), "flat_tensor_2025early.fbs"))
    tensors = [t for t in fb_tables.tables(schema, data) if t.type_name == "TensorMetadata"]
    fields = {name: off for name, off, _ in tensors[0].fields} if tensors else {}
    if not check("scalar_type" in fields and data[tensors[0].pos + fields["scalar_type"]] == 6,
                 f"{source}: no float tensor first"):
        return
    with tempfile.TemporaryDirectory() as tmp:
        for scalar_type in (8, 18):
            changed = bytearray(data)
            changed[tensors[0].pos + fields["scalar_type"]] = scalar_type
            path = os.path.join(tmp, f"type{scalar_type}.ptd")
            open(path, "wb").write(changed)
            rc, out, err = run(xpack, os.path.join(real, "portable_linear.pte"), "--data", path)
            check(rc == 0, f"portable_linear.pte with a tensor of scalar type {scalar_type}: exit {rc}, {err.strip()}")
    print("ok an early .ptd holding complex and bits tensors is read")


def main():
    xpack, real = sys.argv[1], sys.argv[2]
    gen = sys.argv[3] if len(sys.argv) > 3 else ""
    if not os.path.isdir(real):
        print(f"skipped: real test data folder {real} is absent")
        return SKIP
    names = sorted(os.listdir(real))
    for name in names:
        if name.startswith("bad_"):
            check_bad(xpack, real, name)
        elif name.endswith(".pte"):
            if check(name in EXPECTED, f"{name}: not in this test's table (add its MANIFEST facts)"):
                check_good(xpack, real, name)
        elif name.endswith(".ptd"):
            # A weight file where a program was expected: a note, then nothing to pack.
            rc, out, err = run(xpack, os.path.join(real, name))
            check(rc == 0 and "use --data" in err and "nothing xpack can pack" in out,
                  f"{name} given as a program: exit {rc}, stderr {err!r}")
            rc, out, err = run(xpack, os.path.join(real, name), "--json")
            doc = load_json(name, out)
            check(rc == 0 and doc is not None and doc["programs"] == [] and len(doc["data_files"]) == 1,
                  f"{name} given as a program, --json: exit {rc}")
    for name in EXPECTED:
        check(name in names, f"{name}: listed in MANIFEST facts but absent from {real}")
    check_cli(xpack, real)
    check_early_scalar_types(xpack, real)
    if gen:
        check_generated(xpack, gen)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all inspect checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
