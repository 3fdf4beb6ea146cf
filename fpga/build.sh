#!/usr/bin/env bash
# `make fpga`: Yosys synth_ice40 of the board top (fpga/nasa_icebreaker.sv + rtl/), nextpnr-ice40
# for the UP5K (sg48, fpga/icebreaker.pcf: pins, and the 12 MHz oscillator's frequency, from which
# nextpnr derives the constraint of the PLL's core clock), icepack. TARGET_MHZ is the core clock
# the PLL makes (24) and the Fmax the core must reach.
# Writes build/fpga/nasa_icebreaker.bin and build/fpga/report.json (lc_used, lc_total, dsp_used,
# ebr_used, spram_used, fmax_mhz, target_mhz, fits, meets_timing, seed: nextpnr's placement
# seed; macs_per_cycle: the MACs a cycle of the board's core on the Conv/DwConv layers of the
# default supernet's candidates, measured on its cycle-exact model with the firmware the ROM
# holds (nasa-bench's board study, NASA_BENCH; macs_per_cycle_by_op per op)). Exits non-zero when
# the design does not fit or misses its clock. `make prog` flashes the board with iceprog.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../synth/common.sh"
require_tool yosys
require_tool nextpnr-ice40
require_tool icepack
cd "$NASA_ROOT"
TARGET_MHZ=${TARGET_MHZ:-24}
out=${NASA_FPGA_OUT:-build/fpga}  # (ctest: the build tree's fpga/)
bench=${NASA_BENCH:-build/bin/nasa-bench}
if [[ ! -x $bench ]]; then
  echo "fpga: $bench not found: report.json's macs_per_cycle is measured on the board's" \
       "cycle-exact model by nasa-bench (make build, or NASA_BENCH=path)" >&2
  exit 1
fi
mkdir -p "$out"
nasa_board_synth "$out/yosys.log" "-json $out/nasa_icebreaker.json" "tee -o $out/stat.txt stat"

cells() { awk -v c="$1" '$1 == c {s += $2} END {print s + 0}' "$out/stat.txt"; }
lut=$(cells SB_LUT4)
dsp=$(cells SB_MAC16)
ebr=$(cells SB_RAM40_4K)
spram=$(cells SB_SPRAM256KA)

fits=true
meets=false
fmax=null
status=0
# Placement is seeded and the 24 MHz margin is thin (the board with the MAC array, 50ee6d5:
# seeds 1-6 reached 23.89-23.97 MHz, seed 7 24.17): seeds are tried in turn until one meets the
# clock (NASA_FPGA_SEEDS; the one that met it on the last netlist first).
seed=0
for seed in ${NASA_FPGA_SEEDS:-7 1 2 3 4 5}; do
  if ! nextpnr-ice40 --up5k --package sg48 --pcf fpga/icebreaker.pcf --freq "$TARGET_MHZ" \
      --timing-allow-fail --seed "$seed" \
      --json "$out/nasa_icebreaker.json" --asc "$out/nasa_icebreaker.asc" \
      --report "$out/nextpnr_report.json" >"$out/nextpnr.log" 2>&1; then
    status=1
    break
  fi
  # the core clock: the PLL's output net (the oscillator itself only feeds the PLL); its
  # constraint is the one nextpnr derived from the PLL, which must be the target
  read -r fmax derived < <(python3 -c "import json; f=json.load(open('$out/nextpnr_report.json'))['fmax']; \
c=[v for k, v in f.items() if k != 'clk_i'] or list(f.values()); \
print(min(v['achieved'] for v in c), min(v['constraint'] for v in c))")
  if ! python3 -c "import sys; sys.exit(0 if abs($derived - $TARGET_MHZ) < 0.1 else 1)"; then
    echo "fpga: the core clock is constrained to $derived MHz, not TARGET_MHZ=$TARGET_MHZ:" \
         "the PLL settings (fpga/nasa_pll.sv) and the target disagree" >&2
    status=1
    break
  fi
  lut=$(python3 -c "import json; r=json.load(open('$out/nextpnr_report.json')); \
print(r['utilization']['ICESTORM_LC']['used'])")
  if python3 -c "import sys; sys.exit(0 if $fmax >= $TARGET_MHZ else 1)"; then
    meets=true
    break
  fi
  echo "fpga: seed $seed reaches $fmax MHz, below $TARGET_MHZ: next seed" >&2
done
[[ $status == 0 ]] && icepack "$out/nasa_icebreaker.asc" "$out/nasa_icebreaker.bin"
# nextpnr's own utilization (packed logic cells, not LUTs), also when placement failed
util() { sed -nE "s/.*$1: *([0-9]+)\/.*/\1/p" "$out/nextpnr.log" | awk 'NR == 1'; }
[[ -n $(util ICESTORM_LC) ]] && lut=$(util ICESTORM_LC)
[[ -n $(util ICESTORM_DSP) ]] && dsp=$(util ICESTORM_DSP)
[[ -n $(util ICESTORM_RAM) ]] && ebr=$(util ICESTORM_RAM)
[[ -n $(util ICESTORM_SPRAM) ]] && spram=$(util ICESTORM_SPRAM)
# does not fit: more cells than the part has, or nextpnr gave up placing ("Failed to expand
# region", "Unable to place", "not enough")
if (( lut > 5280 || dsp > 8 || ebr > 30 || spram > 4 )) ||
    grep -qiE "unable to place|failed to expand region|too many|exceeds|not enough" \
      "$out/nextpnr.log"; then
  fits=false
fi
[[ $fits == true && $meets == true ]] || status=1
# the board's MACs a cycle: nasa-bench section 8 on the board's cycle-exact model, written here
rm -f "$out/board_model.json"
if ! "$bench" --only board --out "$out/board_model.json" --md "$out/board_model.md" \
    >"$out/board_model.log" 2>&1; then
  echo "fpga: the board's cycle model run failed (see $out/board_model.log)" >&2
  tail -3 "$out/board_model.log" >&2
  exit 1
fi
mpc= by_op=
read -r mpc by_op < <(python3 -c "import json; b=json.load(open('$out/board_model.json'))['board']; \
print(b['conv_dwconv_macs_per_cycle'], json.dumps({o['op']: o['macs_per_cycle'] for o in b['by_op']}, \
separators=(',', ': ')))") || true
if [[ -z $mpc || -z $by_op ]]; then
  echo "fpga: $out/board_model.json has no board study (conv_dwconv_macs_per_cycle, by_op)" >&2
  exit 1
fi
cat >"$out/report.json" <<JSON
{
  "lc_used": $lut,
  "lc_total": 5280,
  "dsp_used": $dsp,
  "dsp_total": 8,
  "ebr_used": $ebr,
  "ebr_total": 30,
  "spram_used": $spram,
  "spram_total": 4,
  "fmax_mhz": $fmax,
  "target_mhz": $TARGET_MHZ,
  "fits": $fits,
  "meets_timing": $meets,
  "seed": $seed,
  "macs_per_cycle": $mpc,
  "macs_per_cycle_by_op": $by_op
}
JSON
cat "$out/report.json"
if [[ $status != 0 ]]; then
  echo "fpga: FAILED (see $out/nextpnr.log): the design does not fit the UP5K or misses ${TARGET_MHZ} MHz" >&2
  tail -5 "$out/nextpnr.log" >&2
fi
exit $status
