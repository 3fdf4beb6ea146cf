#!/usr/bin/env python3
"""Writes a small dataset directory (docs/data.md) for the CLI tests, deterministic from the seed:
  make_data_fixture.py cifar10 DIR N [SEED]   data_batch_1.bin and test_batch.bin of N records each
                                              (a label byte 0..9, 3 x 32 x 32 channel-major bytes)
                                              and batches.meta.txt
  make_data_fixture.py folder DIR N [SEED]    train/<class>/<i>.png (N images) and test/<class>/
                                              <i>.png (N / 4), RGB 32 x 32, classes c0..c3
  make_data_fixture.py spec32 SPEC OUT         the supernet spec SPEC with a 32 x 32 x 3 input
The PNGs are written with zlib (no imaging library needed)."""
import json
import os
import random
import struct
import sys
import zlib


def png_rgb(width, height, pixels):
    """PNG bytes of an 8-bit RGB image; pixels: bytes, row-major, 3 per pixel."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    rows = b"".join(b"\x00" + pixels[y * width * 3:(y + 1) * width * 3] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main():
    if sys.argv[1] == "spec32":
        spec = json.load(open(sys.argv[2]))
        spec["input"] = {"h": 32, "w": 32, "c": 3}
        with open(sys.argv[3], "w") as f:
            json.dump(spec, f, indent=2)
        return
    kind, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    os.makedirs(out, exist_ok=True)
    if kind == "cifar10":
        for name in ("data_batch_1.bin", "test_batch.bin"):
            with open(os.path.join(out, name), "wb") as f:
                for _ in range(n):
                    f.write(bytes([rng.randrange(10)]) + bytes(rng.randrange(256) for _ in range(3072)))
        with open(os.path.join(out, "batches.meta.txt"), "w") as f:
            f.write("".join(f"class{k}\n" for k in range(10)))
    elif kind == "folder":
        for split, count in (("train", n), ("test", max(4, n // 4))):
            for i in range(count):
                cls = f"c{i % 4}"
                os.makedirs(os.path.join(out, split, cls), exist_ok=True)
                px = bytes(rng.randrange(256) for _ in range(32 * 32 * 3))
                with open(os.path.join(out, split, cls, f"{i:05d}.png"), "wb") as f:
                    f.write(png_rgb(32, 32, px))
    else:
        sys.exit(f"make_data_fixture.py: unknown kind '{kind}' (cifar10, folder or spec32)")


if __name__ == "__main__":
    main()
