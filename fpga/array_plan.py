#!/usr/bin/env python3
"""Cycle bounds of the board's planned MAC array (docs/fpga.md "An output-stationary array").

Over the Conv/DwConv layers of `make bench` section 8's four candidates (their shapes from
`nasa info --space fmnist-mb14 --json`; their MACs are checked against section 8's in
bench/results.json), each layer's cycles are taken as the larger of what its mapping keeps the
DSPs busy for and what its requantizations take, and nothing else: no set-up, no weight loading, no
output writes. So these are upper bounds on MACs a cycle, a plan's arithmetic, not a measurement.

Mappings:
  stream  the plan before: two pixels' input rows held in the DSPs' A registers, weight rows
          streamed (lane groups of 8 + 6 lanes, so channel chunks of 6), partial sums in RAM;
          one requantization DSP (an output every other cycle)
  os      output-stationary (rtl/nasa_dot_lanes.sv with Group = 2): six DSPs in pairs, three
          output channels over four input channels a step, weights from on-chip RAM; two
          requantization DSPs (rtl/nasa_requant_dsp.sv with Dual = 1: an output a cycle);
          DwConv on four of the DSPs: four channels, two taps a step
A folded residual (a projection with the block's input added) takes two requantizations an output.

Usage: fpga/array_plan.py [--nasa build/bin/nasa] [--results bench/results.json]
"""
import argparse
import json
import math
import subprocess
import sys

# Section 8's four candidates (bench/nasa_bench.cpp board_study: the first four of its set).
CANDIDATES = ["3-2-0-1-1-2", "3-3-3-1-0-0", "0-0-3-5-2-2", "1-1-4-3-3-2"]


def layers(space, cand):
    """The candidate's Conv/DwConv layers: (op, k, cin, cout, out_pixels, folded_residual)."""
    first = space["layers"][0]
    fh, fw, fc = first["input"]  # the stem: a 3x3 Conv from the input channels to these
    _, _, cin = space["input"]
    assert space["stem"]["macs_per_image"] == fh * fw * fc * 9 * cin, "the stem is not a 3x3 Conv"
    out = [("stem", 3, cin, fc, fh * fw, False)]
    for layer, choice in zip(space["layers"], (int(c) for c in cand.split("-"))):
        op = layer["choices"][choice]["op"]
        if op == "skip":
            continue
        lh, lw, c = layer["input"]
        co, s = layer["out_channels"], layer["stride"]
        k, e = (int(part[1:]) for part in op.split("_")[1:3])
        ce, pix = c * e, (lh // s) * (lw // s)
        if e > 1:
            out.append(("pw", 1, c, ce, lh * lw, False))
        out.append(("dw", k, ce, ce, pix, False))
        out.append(("pw", 1, ce, co, pix, s == 1 and c == co))
    # the head: a 1x1 Conv to `hc` channels on the last layer's output, average pooling, an FC
    last = space["layers"][-1]
    lh, lw, _ = last["input"]
    pix = (lh // last["stride"]) * (lw // last["stride"])
    lc, classes = last["out_channels"], space["classes"]
    hc, rem = divmod(space["head"]["macs_per_image"], pix * lc + classes)
    assert rem == 0, "the head is not a 1x1 Conv and an FC"
    out.append(("pw", 1, lc, hc, pix, False))
    out.append(("pw", 1, hc, classes, 1, False))  # the FC: counted with the 1x1 Convs, as the bench
    # does
    return out


def macs(layer):
    op, k, cin, cout, pix, _ = layer
    return pix * cout * (k * k if op == "dw" else k * k * cin)


def cycles_stream(layer):
    op, k, cin, cout, pix, res = layer
    requant = 2 * pix * cout * (2 if res else 1)
    if op == "pw":
        array = math.ceil(pix / 2) * cout * math.ceil(cin / 6)
    else:
        taps = k * k * (cin if op == "stem" else 1)
        array = pix * cout * math.ceil(taps / 14)
    return max(array, requant)


def cycles_os(layer):
    op, k, cin, cout, pix, res = layer
    r = 2 if res else 1
    if op == "dw":  # four channels, two taps a step; four outputs to requantize
        return pix * math.ceil(cout / 4) * max(math.ceil(k * k / 2), 4 * r)
    red = k * k * cin  # pw and the stem: three output channels, four reduction elements a step
    return pix * math.ceil(cout / 3) * max(math.ceil(red / 4), 3 * r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nasa", default="build/bin/nasa")
    ap.add_argument("--results", default="bench/results.json")
    a = ap.parse_args()
    space = json.loads(subprocess.check_output(
        [a.nasa, "info", "--space", "fmnist-mb14", "--json"], stderr=subprocess.DEVNULL))
    all_layers = [l for c in CANDIDATES for l in layers(space, c)]
    total = sum(macs(l) for l in all_layers)
    want = json.load(open(a.results))["board"]["macs"]
    if total != want:
        sys.exit(f"array_plan: the layers hold {total} MACs, section 8 ({a.results}) {want}")
    print(f"{len(CANDIDATES)} candidates, {len(all_layers)} Conv/DwConv layers, {total} MACs "
          "(= section 8)")
    for name, fn in (("stream", cycles_stream), ("os", cycles_os)):
        by = {}
        for l in all_layers:
            key = {"pw": "Conv 1x1", "stem": "Conv 3x3"}.get(l[0], f"DwConv {l[1]}x{l[1]}")
            e = by.setdefault(key, [0, 0])
            e[0] += macs(l)
            e[1] += fn(l)
        cyc = sum(e[1] for e in by.values())
        ops = ", ".join(f"{k} {m / c:.2f}" for k, (m, c) in sorted(by.items()))
        print(f"{name:7s} at most {total / cyc:.2f} MACs a cycle ({cyc} cycles); by op: {ops}")


if __name__ == "__main__":
    main()
