#!/usr/bin/env python3
"""ExecuTorch's packed-weights file (XPWC version 2), read independently of xpack's writer.

Layout (backends/xnnpack/runtime/XNNWeightsCache.cpp, save_packed_index/load_packed_cache):
  packed data ... | index: per record [name_len:u32][name][file_offset:u64][data_size:u64][seed:u32]
  | footer (20 bytes): [index_start:u64][entry_count:u32][magic:u32][version:u32]

  xpwc.py info FILE            records=N regions=N data_bytes=N (regions: distinct (offset, size))
  xpwc.py perturb IN OUT       OUT = IN with bytes flipped in every region: the byte at 3 (mod 4: the high
                               byte of a little-endian fp32/int32) of every 256-byte block; packed layouts pad
                               channels to the tile size, so a single byte could fall in padding nothing reads
  xpwc.py reseed IN OUT        OUT = IN with every record's seed changed (what a file packed by another
                               XNNPACK looks like to ExecuTorch's seed check)
"""
import struct
import sys

MAGIC_VERSION = 2


def read(path):
    data = open(path, "rb").read()
    if len(data) < 20:
        raise SystemExit(f"{path}: shorter than the 20-byte footer")
    index_start, count, magic, version = struct.unpack_from("<QIII", data, len(data) - 20)
    if version != MAGIC_VERSION or index_start >= len(data) - 20:
        raise SystemExit(f"{path}: not an XPWC v2 file (version {version}, index at {index_start})")
    records, p = [], index_start
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, p)
        name = data[p + 4:p + 4 + n].decode("utf-8", "replace")
        off, size, seed = struct.unpack_from("<QQI", data, p + 4 + n)
        if off + size > index_start:
            raise SystemExit(f"{path}: record {name} out of bounds")
        records.append((name, off, size, seed))
        p += 4 + n + 20
    return data, records


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "info":
        _, records = read(sys.argv[2])
        regions = {(o, s) for _, o, s, _ in records}
        print(f"records={len(records)} regions={len(regions)} data_bytes={sum(s for _, s in regions)}")
    elif len(sys.argv) == 4 and sys.argv[1] == "perturb":
        data, records = read(sys.argv[2])
        buf = bytearray(data)
        regions = sorted({(o, s) for _, o, s, _ in records if s > 0})
        flipped = 0
        for o, s in regions:
            for p in range(o + min(3, s - 1), o + s, 256):
                buf[p] ^= 0x55
                flipped += 1
        open(sys.argv[3], "wb").write(bytes(buf))
        print(f"regions={len(regions)} bytes_flipped={flipped}")
    elif len(sys.argv) == 4 and sys.argv[1] == "reseed":
        data, _ = read(sys.argv[2])
        buf = bytearray(data)
        index_start, count = struct.unpack_from("<QI", data, len(data) - 20)
        p = index_start
        for _ in range(count):
            (n,) = struct.unpack_from("<I", buf, p)
            seed_at = p + 4 + n + 16
            (seed,) = struct.unpack_from("<I", buf, seed_at)
            struct.pack_into("<I", buf, seed_at, seed ^ 0x5EED)
            p += 4 + n + 20
        open(sys.argv[3], "wb").write(bytes(buf))
        print(f"reseeded={count}")
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
