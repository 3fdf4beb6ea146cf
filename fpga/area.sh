#!/usr/bin/env bash
# `make fpga-area`: where the iCEBreaker design's logic goes. Yosys synth_ice40 of the board top
# with the hierarchy kept (-noflatten), then one row per module instance: SB_LUT4, flip-flops,
# SB_CARRY, SB_RAM40_4K and SB_MAC16, inner instances included in their parent's row as
# "total" columns. Writes build/fpga/area.md and build/fpga/area.json. Then the blocks built for
# the board's MAC array but not instantiated yet (docs/fpga.md "Toward eight DSPs multiplying"),
# each synthesized alone as the board would build it (Primitive = 1): a section of area.md and
# build/fpga/blocks.json. Numbers are cells before
# packing (nextpnr packs a LUT, its flip-flop and a carry into one logic cell, so the design's
# LC count is about max(LUTs, FFs) plus unpacked carries; `make fpga` reports nextpnr's count).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../synth/common.sh"
require_tool yosys
require_tool python3
cd "$NASA_ROOT"
out=build/fpga
mkdir -p "$out"
nasa_board_synth "$out/area_yosys.log" -noflatten "write_json $out/area_netlist.json"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
net = json.load(open(f"{out}/area_netlist.json"))["modules"]
kinds = {"lut": lambda t: t == "SB_LUT4", "ff": lambda t: t.startswith("SB_DFF"),
         "carry": lambda t: t == "SB_CARRY", "ebr": lambda t: t.startswith("SB_RAM40"),
         "dsp": lambda t: t == "SB_MAC16", "spram": lambda t: t == "SB_SPRAM256KA"}

def own(mod):
    c = dict.fromkeys(kinds, 0)
    for cell in net[mod]["cells"].values():
        for k, f in kinds.items():
            if f(cell["type"]):
                c[k] += 1
    return c

def pretty(mod):
    # $paramod$<hash>\nasa_engine or $paramod\nasa_x\P=... -> nasa_engine
    name = mod.split("\\")[1] if "\\" in mod else mod
    return name

rows = []
def walk(mod, path, depth):
    c = own(mod)
    total = dict(c)
    children = []
    for iname, cell in net[mod]["cells"].items():
        t = cell["type"]
        if t in net and not t.startswith("SB_") and \
                not net[t].get("attributes", {}).get("blackbox"):
            children.append((iname, t))
    idx = len(rows)
    rows.append(None)
    for iname, t in sorted(children):
        sub = walk(t, f"{path}.{iname}" if path else iname, depth + 1)
        for k in total:
            total[k] += sub[k]
    rows[idx] = {"instance": path or "(top)", "module": pretty(mod), "depth": depth,
                 "own": c, "total": total}
    return total

top = next(m for m in net if pretty(m) == "nasa_icebreaker")
walk(top, "", 0)
json.dump(rows, open(f"{out}/area.json", "w"), indent=1)
tot = rows[0]["total"]
lines = ["# iCEBreaker design: cells per module instance (`make fpga-area`)", "",
         f"Whole design: {tot['lut']} SB_LUT4, {tot['ff']} flip-flops, {tot['carry']} SB_CARRY, "
         f"{tot['ebr']} SB_RAM40_4K, {tot['dsp']} SB_MAC16, {tot['spram']} SB_SPRAM256KA "
         "(UP5K: 5,280 logic cells, 30 EBR, 8 DSP, 4 SPRAM).", "",
         "Totals include the instances inside; \"own\" is the module's logic outside them.", "",
         "| instance | module | LUT | FF | carry | EBR | DSP | LUT share | own LUT | own FF |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
for r in rows:
    t = r["total"]
    share = 100.0 * t["lut"] / max(tot["lut"], 1)
    lines.append(f"| {'&nbsp;' * 2 * r['depth']}{r['instance']} | {r['module']} | {t['lut']} | "
                 f"{t['ff']} | {t['carry']} | {t['ebr']} | {t['dsp']} | {share:.1f}% | "
                 f"{r['own']['lut']} | {r['own']['ff']} |")
open(f"{out}/area.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY

# A block row's file name: its module and parameters, each run of other characters one "_" (as
# the report below).
block_tag() { printf '%s %s' "$1" "$2" | sed -E 's/[^A-Za-z0-9]+/_/g'; }

# The blocks built for the MAC array's step, alone (one row each: module, its parameters as on
# the board, what it is).
blocks=(
  "nasa_mac8x2|Primitive 1|two signed 8x8 products a cycle (one SB_MAC16, 8x8 mode)"
  "nasa_dot8|Primitive 1|an 8-element dot product a cycle, one row held (four SB_MAC16, adder tree)"
  "nasa_requant_dsp|Primitive 1|requantization through one SB_MAC16 (16x16 mode), an output every other cycle"
  "nasa_requant_dsp|Primitive 1 -set Dual 1|requantization through two SB_MAC16 (16x16 mode), an output every cycle"
  "nasa_dot_lanes|Primitive 1|six output channels' dot products over two input channels a step, output-stationary (six SB_MAC16, 8x8 mode; accumulators, drain chain)"
  "nasa_dot_lanes|Primitive 1 -set Group 2|three output channels' dot products over four input channels a step (six SB_MAC16 in pairs)"
  "nasa_mac_array|Primitive 1|a whole 1x1 convolution, depthwise convolution or one-channel stem, memory to memory: nasa_dot_lanes (in pairs; depthwise eight sums), the two-DSP requantization, weight RAMs, loaders, steppers, output row buffer"
  "nasa_mcu_cpu_serial|RomWords 2048|the bit-serial RV32I controller, not multiplying (its register file in one EBR; the ROM's 11-bit word address)"
)
block_files=(rtl/nasa_pkg.sv rtl/nasa_rv_pkg.sv rtl/nasa_sb_mac16.sv rtl/nasa_mac8x2.sv rtl/nasa_mcu_rf.sv
  rtl/nasa_dot_lanes.sv rtl/nasa_requant_dsp.sv rtl/nasa_mac_window.sv)
for b in "${blocks[@]}"; do block_files+=("rtl/${b%%|*}.sv"); done
block_files=($(printf '%s\n' "${block_files[@]}" | awk '!seen[$0]++'))  # (a module in two rows)
for b in "${blocks[@]}"; do
  mod=${b%%|*}
  rest=${b#*|}
  tag=$(block_tag "$mod" "${rest%%|*}")
  yosys -q -l "$out/block_$tag.log" -p "read_verilog -Irtl -defer -sv ${block_files[*]}; \
    chparam -set ${rest%%|*} $mod; synth_ice40 -dsp -top $mod; \
    tee -q -o $out/block_$tag.json stat -json"
  yosys_serious_warnings "$out/block_$tag.log"
done
python3 - "$out" "${blocks[@]}" <<'PY'
import json, re, sys
out, blocks = sys.argv[1], [b.split("|", 2) for b in sys.argv[2:]]
kinds = {"lut": ["SB_LUT4"], "carry": ["SB_CARRY"], "dsp": ["SB_MAC16"]}
rows = []
for mod, params, what in blocks:
    tag = re.sub(r"[^A-Za-z0-9]+", "_", f"{mod} {params}")  # (block_tag)
    cells = json.load(open(f"{out}/block_{tag}.json"))["modules"][f"\\{mod}"]["num_cells_by_type"]
    r = {"module": mod, "params": params, "what": what,
         "ff": sum(n for t, n in cells.items() if t.startswith("SB_DFF")),
         "ebr": sum(n for t, n in cells.items() if t.startswith("SB_RAM40"))}
    for k, types in kinds.items():
        r[k] = sum(cells.get(t, 0) for t in types)
    rows.append(r)
json.dump(rows, open(f"{out}/blocks.json", "w"), indent=1)
lines = ["", "## Blocks built for the MAC array's step, not instantiated yet", "",
         "Each synthesized alone (`synth_ice40 -dsp`, with the parameters shown), cells before "
         "packing.", "",
         "| module | parameters | what | LUT | FF | carry | EBR | DSP |",
         "|---|---|---|---:|---:|---:|---:|---:|"]
for r in rows:
    lines.append(f"| {r['module']} | {r['params'].replace(' -set ', ', ')} | {r['what']} | {r['lut']} | {r['ff']} | "
                 f"{r['carry']} | {r['ebr']} | {r['dsp']} |")
open(f"{out}/area.md", "a").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
