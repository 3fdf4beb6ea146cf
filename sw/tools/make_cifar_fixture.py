#!/usr/bin/env python3
"""Writes a small CIFAR-10-format directory (docs/data.md) for the CLI tests: data_batch_1.bin and
test_batch.bin of N records each (a label byte 0..9, then 3 x 32 x 32 channel-major bytes),
deterministic from the seed, and batches.meta.txt. Usage: make_cifar_fixture.py DIR N [SEED]"""
import os
import random
import sys


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(out, exist_ok=True)
    for name in ("data_batch_1.bin", "test_batch.bin"):
        with open(os.path.join(out, name), "wb") as f:
            for _ in range(n):
                f.write(bytes([rng.randrange(10)]) + bytes(rng.randrange(256) for _ in range(3072)))
    with open(os.path.join(out, "batches.meta.txt"), "w") as f:
        f.write("".join(f"class{k}\n" for k in range(10)))


if __name__ == "__main__":
    main()
