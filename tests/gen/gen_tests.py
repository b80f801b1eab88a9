#!/usr/bin/env python3
"""Drives xpack-genmodel for the ctest suite (see tests/gen/tests.cmake).

  gen_tests.py GEN wire KIND                 generate KIND, check wire facts + contents + sha256sum keys
  gen_tests.py GEN real KIND REAL [REALPTD]  generated structure == real export's (77 if REAL absent)
  gen_tests.py GEN determinism KIND          same args -> same bytes; other seed -> other weights/keys
  gen_tests.py GEN share KIND                --variant B shares every layer key with A, not the head
  gen_tests.py GEN alias                     --alias-decode: identical blobs share one segment
  gen_tests.py GEN large SIZE MAXRSS_MB      streams SIZE bytes of weights within MAXRSS_MB of memory
  gen_tests.py GEN usage                     bad usage exits 2, failures leave no partial files
  gen_tests.py GEN xnnrun KIND CHECKER       XNNPACK defines and runs every delegate of KIND
  gen_tests.py GEN short-vtables KIND        --short-vtables: every flatbuffer's vtables declare the
                                             training export's inline sizes; contents unchanged
  gen_tests.py SHATOOL sha256                generator SHA-256 == sha256sum on edge-case sizes"""

import atexit
import filecmp
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_fixture  # noqa: E402
import fb_tables  # noqa: E402
from fixture_reader import open_pte  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, want=0):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != want:
        fail("%s -> exit %d (want %d)\n%s%s" % (" ".join(cmd), r.returncode, want, r.stdout, r.stderr))
    return r


def generate(gen, kind, out_dir, name, *extra):
    pte = os.path.join(out_dir, name + ".pte")
    args = [gen, kind, "-o", pte] + list(extra)
    ptd = None
    if kind == "ptd":
        ptd = os.path.join(out_dir, name + ".ptd")
        args += ["--ptd", ptd]
    run(args)
    return pte, ptd


def checked(rc):
    if rc not in (0, None):
        sys.exit(rc)


def t_wire(gen, kind):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    pte, ptd = generate(gen, kind, d, "m")
    checked(check_fixture.main(["wire", kind, pte] + ([ptd] if ptd else [])))
    checked(check_fixture.main(["keys", pte] + ([ptd] if ptd else [])))


def t_real(gen, kind, real, real_ptd=None):
    if not os.path.exists(real) or (real_ptd and not os.path.exists(real_ptd)):
        print("SKIP: real test data %s absent" % os.path.dirname(real))
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    pte, ptd = generate(gen, kind, d, "m")
    checked(check_fixture.main(["compare", pte] + ([ptd] if ptd else []) + [real]))
    if real_ptd:
        checked(check_fixture.main(["compare-ptd", ptd, real_ptd]))


def t_determinism(gen, kind):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    a, ap = generate(gen, kind, d, "a", "--seed", "42")
    b, bp = generate(gen, kind, d, "b", "--seed", "42")
    c, cp = generate(gen, kind, d, "c", "--seed", "43")
    if not filecmp.cmp(a, b, shallow=False) or (ap and not filecmp.cmp(ap, bp, shallow=False)):
        fail("same arguments gave different bytes")
    if filecmp.cmp(a, c, shallow=False):
        fail("a different seed gave identical bytes")
    ka, kc = open_pte(a, ap), open_pte(c, cp)
    keys_a = set(ka.named) | set(ka.ptd.named if ka.ptd else {})
    keys_c = set(kc.named) | set(kc.ptd.named if kc.ptd else {})
    if keys_a & keys_c:
        fail("%d named keys survive a seed change" % len(keys_a & keys_c))
    if len(keys_a) != len(keys_c):
        fail("the seed changed the architecture")
    print("ok: deterministic; seed changes all %d weights" % len(keys_a))


def t_share(gen, kind):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    a, _ = generate(gen, kind, d, "a", "--seed", "7")
    b, _ = generate(gen, kind, d, "b", "--seed", "7", "--variant", "B")
    checked(check_fixture.main(["share", a, b]))


def t_alias(gen):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    a, _ = generate(gen, "llm", d, "a", "--alias-decode")
    b, _ = generate(gen, "llm", d, "b")
    p, q = open_pte(a), open_pte(b)
    idx = {e["name"]: e["delegates"][0]["processed"]["index"] for e in p.program["execution_plan"]}
    if idx.get("decode_alias") != idx["decode"]:
        fail("decode_alias does not share decode's segment: %s" % idx)
    if len(p.segments) != len(q.segments) or set(p.named) != set(q.named):
        fail("an aliased method must add no segment and no key")
    checked(check_fixture.main(["wire", "llm", a]))
    print("ok: identical delegate blobs share segment %d" % idx["decode"])


def t_large(gen, size, max_rss_mb):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    pte = os.path.join(d, "big.pte")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run([gen, "llm", "--size", size, "-o", pte])
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    try:
        total = os.path.getsize(pte)
        if rss_mb > float(max_rss_mb):
            fail("peak RSS %.1f MB > %s MB for a %d-byte file" % (rss_mb, max_rss_mb, total))
        p = open_pte(pte)
        weight_bytes = sum(len(v) for v in p.named.values())
        print("ok: %d weight bytes in %d keys, peak RSS %.1f MB (before %d KB)" % (
            weight_bytes, len(p.named), rss_mb, before))
        check_fixture.check_container(p)
    finally:
        os.unlink(pte)


def t_usage(gen):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    out = os.path.join(d, "x.pte")
    bad = [[], ["nosuchkind", "-o", out], ["llm"], ["llm", "-o"], ["llm", "-o", out, "--size", "12Q"],
           ["llm", "-o", out, "--size", "1M", "--scale", "2"], ["conv", "-o", out, "--size", "1M"],
           ["conv", "-o", out, "--variant", "B"], ["llm", "-o", out, "--frobnicate"],
           ["llm-q4", "-o", out, "--group-size", "33"], ["llm", "-o", out, "--seed", "-1"]]
    for args in bad:
        r = run([gen] + args, want=2)
        if "usage:" not in r.stderr:
            fail("no usage message for %s" % args)
    r = run([gen, "--list"])
    for kind in ("llm", "llm-q4", "qd8-qc8w", "fp16", "bf16", "deconv", "bmm", "ptd", "conv"):
        if not any(line.split()[0] == kind for line in r.stdout.splitlines()):
            fail("--list lacks %s" % kind)
    run([gen, "llm", "-o", os.path.join(d, "missing-dir", "x.pte")], want=1)
    run([gen, "conv", "-o", out])
    leftovers = [f for f in os.listdir(d) if ".tmp." in f]
    if os.listdir(d) != ["x.pte"] or leftovers:
        fail("unexpected files after runs: %s" % os.listdir(d))
    print("ok: usage errors exit 2, failures leave no files")


def t_xnnrun(gen, kind, checker):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    pte, ptd = generate(gen, kind, d, "m")
    print(run([checker, pte] + ([ptd] if ptd else [])).stdout.strip())


def flatbuffers_of(p):
    """(name, schema file, bytes) of every flatbuffer of a program: the Program, each distinct XNNGraph,
    the .ptd's FlatTensor."""
    out = [("Program", "executorch_program.fbs", p.data[:p.program_size])]
    out += [("XNNGraph of segment %d" % i, "xnnpack_graph.fbs", b.flatbuffer) for i, b in sorted(p.blobs.items())]
    if p.ptd:
        out.append(("FlatTensor", "flat_tensor.fbs", p.ptd.data[:p.ptd.fb_offset + p.ptd.fb_size]))
    return out


def without_segments(doc):
    """A flatbuffer's JSON without its segment table, whose offsets move when a buffer before them shrinks."""
    return {k: v for k, v in doc.items() if k != "segments"}


def t_short_vtables(gen, kind):
    d = tempfile.mkdtemp(prefix="xpack-gen-")
    normal = open_pte(*generate(gen, kind, d, "normal"))
    short = open_pte(*generate(gen, kind, d, "short", "--short-vtables"))
    schema_dir = os.environ.get("XPACK_SCHEMA_DIR") or os.path.join(HERE, "..", "..", "format")
    # The same contents: what flatc decodes, and every named weight.
    if without_segments(normal.program) != without_segments(short.program):
        fail("--short-vtables changed the Program's contents")
    if [b.graph for _, b in sorted(normal.blobs.items())] != [b.graph for _, b in sorted(short.blobs.items())]:
        fail("--short-vtables changed an XNNGraph's contents")
    if normal.ptd and without_segments(normal.ptd.table) != without_segments(short.ptd.table):
        fail("--short-vtables changed the .ptd's contents")
    if normal.named != short.named or (normal.ptd and normal.ptd.named != short.ptd.named):
        fail("--short-vtables changed the named weights")
    for (name, schema_file, nbuf), (_, _, sbuf) in zip(flatbuffers_of(normal), flatbuffers_of(short)):
        schema = fb_tables.Schema(os.path.join(schema_dir, schema_file))
        ntables, stables = fb_tables.tables(schema, nbuf), fb_tables.tables(schema, sbuf)
        if [t.type_name for t in ntables] != [t.type_name for t in stables]:
            fail("%s: the two programs hold other tables" % name)
        for t in ntables:
            if t.declared < t.needed():
                fail("%s: without the option, table %s declares %d inline bytes, its fields need %d" % (
                    name, t.type_name, t.declared, t.needed()))
        # The training export's inline size: 4 bytes past the start of the last field, never below 4;
        # where that covers the fields, the builder may declare less (its true size, without padding).
        short_ones = 0
        for t in stables:
            rule = max(4, t.last_start() + 4)
            if rule < t.needed():
                ok = t.declared == rule
                short_ones += 1
            else:
                ok = t.needed() <= t.declared <= rule
            if not ok:
                fail("%s: table %s at byte %d declares %d inline bytes; its last field starts at %d and its fields "
                     "need %d" % (name, t.type_name, t.pos, t.declared, t.last_start(), t.needed()))
        if short_ones == 0:
            fail("%s: no table declares fewer inline bytes than its fields need" % name)
        print("ok: %s: %d of %d tables declare fewer inline bytes than their fields need" % (
            name, short_ones, len(stables)))


def t_sha256(tool):
    d = tempfile.mkdtemp(prefix="xpack-gen-sha-")
    rnd = random.Random(5)
    files = []
    for n in (0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4095, 4096, 65537, (1 << 20) + 7):
        path = os.path.join(d, "f%d" % n)
        with open(path, "wb") as f:
            f.write(bytes(rnd.getrandbits(8) for _ in range(n)))
        files.append(path)
    mine = run([tool] + files).stdout
    ref = run(["sha256sum"] + files).stdout
    if mine != ref:
        fail("SHA-256 differs from sha256sum:\n%s\nvs\n%s" % (mine, ref))
    print("ok: %d files hash like sha256sum" % len(files))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    tool, cmd, rest = argv[0], argv[1], argv[2:]
    table = {"wire": t_wire, "real": t_real, "determinism": t_determinism, "share": t_share, "alias": t_alias,
             "large": t_large, "usage": t_usage, "sha256": t_sha256, "xnnrun": t_xnnrun,
             "short-vtables": t_short_vtables}
    if cmd not in table:
        print(__doc__)
        return 2
    table[cmd](tool, *rest)
    return 0


if __name__ == "__main__":
    # Every temporary folder of this run (here and in check_fixture/fixture_reader) goes under one
    # folder that is removed however the run ends.
    tempfile.tempdir = tempfile.mkdtemp(prefix="xpack-gen-run-")
    atexit.register(shutil.rmtree, tempfile.tempdir, True)
    sys.exit(main(sys.argv[1:]))
