#!/usr/bin/env python3
"""`make fpga-probe`: the MAC array on the board, as a probe (docs/fpga.md "The floor: the whole
array next to a controller").

The board carries the array (nasa_mcu's parameter Array = 1: the array behind its MMIO page
nasa_mcu_array_page, and the bit-serial core). This script measures how much room the host side
leaves it: it copies the RTL, the board files and the synthesis scripts into a scratch directory
and, for each variant, takes more of the host side away:

  full      the board as built (make fpga's netlist, with the seeds given here)
  ctrl      the bridge as built; the controller sees only CTRL writes (its CSRs and tables as if
            served from the SPRAM)
  nobridge  the bridge replaced by a stub that keeps the controller's host side alive
  floor     neither: the UART's receiver and transmitter only

For each variant and seed: Yosys 0.23 synth_ice40 and nextpnr --up5k placement and routing; the
logic cells used and the Fmax (0 when the design does not place). The netlist is not a working
board (the host side is cut), but its area and timing do not depend on that.
Prints a table and writes <out>/probe.json. Takes about 3 minutes a variant and seed.
--lone-ffs N also counts the flip-flops that take a logic cell of their own (docs/fpga.md "A
flip-flop alone is a logic cell") and lists the N registers with most of them.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def patch(text, old, new, what):
    if text.count(old) != 1:
        sys.exit(f"error: probe_array: {what}: anchor not found once in the source "
                 f"(the file changed: update fpga/probe_array.py)")
    return text.replace(old, new)


BRIDGE_STUB = """  // (probe: the bridge replaced by a stub that keeps its ports alive)
  logic [79:0] sr_q;
  always_ff @(posedge clk) if (rx_valid) sr_q <= {sr_q[71:0], rx_data};
  always_comb begin
    b_csr_req = '0;
    b_csr_req.valid = rx_valid && sr_q[79];
    b_csr_req.we = sr_q[78];
    b_csr_req.addr = sr_q[11:0];
    b_csr_req.wdata = sr_q[43:12];
    b_mreq = '0;
    b_mreq.valid = rx_valid && sr_q[77];
    b_mreq.we = sr_q[76];
    b_mreq.addr = 32'(sr_q[60:44]);
    b_mreq.wdata = sr_q[70:63];
  end
  assign tx_valid = c_csr_rsp.valid || b_mrsp.valid;
  assign tx_data = c_csr_rsp.rdata[7:0] ^ c_csr_rsp.rdata[15:8] ^ c_csr_rsp.rdata[23:16] ^
                   c_csr_rsp.rdata[31:24] ^ b_mrsp.rdata;
  assign link_error = 1'b0;
  assign bridge_busy = 1'b0;
"""

CTRL_ONLY = """  // (probe: the core sees only CTRL writes)
  nasa_pkg::csr_req_t b_csr_ctrl;
  always_comb begin
    b_csr_ctrl       = b_csr_req;
    b_csr_ctrl.we    = 1'b1;
    b_csr_ctrl.addr  = 12'(nasa_pkg::CsrCtrl);
    b_csr_ctrl.wdata = 32'(b_csr_req.wdata[7:0]);
    b_csr_ctrl.valid = b_csr_req.valid && b_csr_req.we &&
                       b_csr_req.addr == 12'(nasa_pkg::CsrCtrl);
  end
"""


def make_tree(out, variant, paths):
    if os.path.exists(out):
        shutil.rmtree(out)
    for d in ("rtl", "fpga", "synth"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(out, d),
                        ignore=shutil.ignore_patterns("model", "fw", "*.py"))
    if paths == "pw":
        page_p = os.path.join(out, "rtl/nasa_mcu_array_page.sv")
        page = open(page_p).read()
        page = patch(page, ".dw_i(dw_q), .st_i(st_q),", ".dw_i(1'b0), .st_i(1'b0),",
                     "pointwise only")
        open(page_p, "w").write(page)

    top_p = os.path.join(out, "fpga/nasa_icebreaker.sv")
    top = open(top_p).read()
    if variant in ("nobridge", "floor"):
        br = re.search(r"  nasa_uart_bridge #\(.*?\n  \);\n", top, re.S)
        if not br:
            sys.exit("error: probe_array: the bridge's instance not found in the board top")
        top = top[:br.start()] + BRIDGE_STUB + top[br.end():]
    if variant in ("ctrl", "floor"):
        top = patch(top, "  // ---- the core\n", "  // ---- the core\n" + CTRL_ONLY, "CTRL only")
        top = patch(top, "    .csr_req_i      (b_csr_req),", "    .csr_req_i      (b_csr_ctrl),",
                    "the core's CSR port")
    open(top_p, "w").write(top)


def nextpnr(out, log, *args):
    """nextpnr-ice40 on the probe's netlist for the board's part and pins, its output in log."""
    with open(log, "w") as f:
        subprocess.run(["nextpnr-ice40", "--up5k", "--package", "sg48", "--pcf",
                        f"{out}/fpga/icebreaker.pcf", "--json", f"{out}/board.json", *args],
                       stdout=f, stderr=subprocess.STDOUT)
    return open(log).read()


def run(out, seeds, hexfile):
    # (synth/common.sh takes the copy's root from its own place)
    env = dict(os.environ, NASA_FW_HEX=hexfile)
    script = (f"source '{out}/synth/common.sh' && cd '{out}' && "
              f"nasa_board_synth '{out}/yosys.log' '-json {out}/board.json' ''")
    if subprocess.run(["bash", "-c", script], env=env).returncode != 0:
        sys.exit(f"error: probe_array: synthesis failed (log {out}/yosys.log)")
    res = []
    for s in seeds:
        text = nextpnr(out, f"{out}/pnr{s}.log", "--freq", "24", "--timing-allow-fail",
                       "--seed", str(s), "--asc", f"{out}/board{s}.asc")
        lc = re.findall(r"ICESTORM_LC:\s+(\d+)/\s*(\d+)", text)
        fmax = re.findall(r"Max frequency for clock 'clk': ([\d.]+) MHz", text)
        placed = "Program finished normally" in text
        res.append({"seed": s, "lc_used": int(lc[0][0]) if lc else None,
                    "lc_total": int(lc[0][1]) if lc else None,
                    "fmax_mhz": float(fmax[-1]) if (fmax and placed) else 0.0, "placed": placed})
    return res


def lone_flip_flops(out, top_n):
    """The flip-flops that take a logic cell of their own: nextpnr's packed netlist, cells whose
    flip-flop is fed through a one-input pass-through LUT (nothing computes its input, or the LUT
    in front of it also feeds other logic). Returns (lone, cells, [(register, count)])."""
    packed = f"{out}/packed.json"
    nextpnr(out, f"{out}/pack.log", "--pack-only", "--write", packed)
    if not os.path.isfile(packed):
        sys.exit(f"error: probe_array: nextpnr wrote no packed netlist (log {out}/pack.log)")
    mod = next(iter(json.load(open(packed))["modules"].values()))
    names = {}
    for name, net in mod["netnames"].items():
        for b in net["bits"]:
            if isinstance(b, int) and (b not in names or len(name) < len(names[b])):
                names[b] = name
    lone, cells, regs = 0, 0, {}
    for cell in mod["cells"].values():
        if cell["type"] != "ICESTORM_LC":
            continue
        cells += 1
        par, con = cell["parameters"], cell["connections"]
        inputs = sum(1 for i in ("I0", "I1", "I2", "I3")
                     if con.get(i) and isinstance(con[i][0], int))
        if par.get("DFF_ENABLE") == "1" and inputs <= 1 and \
                par.get("LUT_INIT") in ("0000000000000010", "0000000000000001"):
            lone += 1
            q = con["O"][0]
            reg = re.sub(r"\[\d+\]$", "", names.get(q, "?"))
            regs[reg] = regs.get(reg, 0) + 1
    return lone, cells, sorted(regs.items(), key=lambda kv: -kv[1])[:top_n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default="full,ctrl,nobridge,floor",
                    help="comma-separated: full, ctrl, nobridge, floor (default: all)")
    ap.add_argument("--paths", choices=("all", "pw"), default="all",
                    help="the array's paths: all three, or the pointwise one only")
    ap.add_argument("--seeds", default="1", help="nextpnr seeds, comma-separated")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/fpga/probe"))
    ap.add_argument("--hex", default=os.path.join(ROOT, "build/fpga/fw/nasa_fw_array.hex"),
                    help="the firmware image (any: the area does not depend on it)")
    ap.add_argument("--lone-ffs", type=int, default=0, metavar="N",
                    help="also count the flip-flops with a logic cell of their own, and list the "
                         "N registers with most of them")
    a = ap.parse_args()
    variants = [v for v in a.variants.split(",") if v]
    for v in variants:
        if v not in ("full", "ctrl", "nobridge", "floor"):
            sys.exit(f"error: probe_array: unknown variant '{v}' (full, ctrl, nobridge, floor)")
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s]
    except ValueError:
        sys.exit(f"error: probe_array: --seeds '{a.seeds}' is not a list of integers")
    if not os.path.isfile(a.hex):
        sys.exit(f"error: probe_array: firmware image {a.hex} missing (make firmware)")
    for tool in ("yosys", "nextpnr-ice40"):
        if shutil.which(tool) is None:
            sys.exit(f"error: probe_array: '{tool}' not found (make deps)")
    results, lone_ffs = {}, {}
    for v in variants:
        out = os.path.join(os.path.abspath(a.out), f"{v}-{a.paths}")
        print(f"probe {v} ({a.paths} paths): {out}", flush=True)
        make_tree(out, v, a.paths)
        results[v] = run(out, seeds, os.path.abspath(a.hex))
        for r in results[v]:
            print(f"  seed {r['seed']}: {r['lc_used']} of {r['lc_total']} logic cells, "
                  f"Fmax {r['fmax_mhz']:.2f} MHz" + ("" if r["placed"] else " (does not place)"),
                  flush=True)
        if a.lone_ffs > 0:
            lone, cells, regs = lone_flip_flops(out, a.lone_ffs)
            print(f"  lone flip-flops: {lone} of {cells} logic cells", flush=True)
            for reg, n in regs:
                print(f"    {n:4d} {reg}")
            lone_ffs[v] = {"lone": lone, "cells": cells, "registers": regs}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "probe.json"), "w") as f:
        json.dump({"paths": a.paths, "variants": results, "lone_ffs": lone_ffs}, f, indent=1)
    print("| variant | seed | logic cells | Fmax MHz |\n|---|---:|---:|---:|")
    for v, rs in results.items():
        for r in rs:
            print(f"| {v} | {r['seed']} | {r['lc_used']} / {r['lc_total']} | "
                  f"{r['fmax_mhz']:.2f} |")


if __name__ == "__main__":
    main()
