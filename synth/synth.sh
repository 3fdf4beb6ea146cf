#!/usr/bin/env bash
# Synthesises the core (nasa_top, or nasa_mcu for a configuration with a controller) with Yosys
# for hardware configurations: `fpga` and the controller's (`up5k`) with synth_ice40
# (synth/ice40.ys), any other with the generic flow to a word-level netlist (synth/generic.ys).
# Prints a resource summary and writes it to $NASA_SYNTH_OUT/<config>.json (default build/synth/),
# beside the full log.
# Usage: synth/synth.sh [config...]   (default: fpga sim up5k)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_tool yosys
nasa_enter_root
out=${NASA_SYNTH_OUT:-$NASA_ROOT/build/synth}
mkdir -p "$out"
mapfile -t files < <(nasa_rtl_files)
configs=("$@")
[[ ${#configs[@]} -gt 0 ]] || configs=(fpga sim up5k)

# Count of cells of one type (regex on the cell name) in a `stat` report; 0 when absent.
cells() { awk -v re="^($2)\$" '$1 ~ re && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$1"; }
# Value of a "Number of ...:" line of a `stat` report.
number() { awk -v k="Number of $2:" 'index($0, k) { print $NF; exit }' "$1" | grep . || echo 0; }

status=0
for cfg in "${configs[@]}"; do
  nasa_config "$cfg"
  chparam="chparam"
  for i in "${!NASA_TOP_PARAM_NAMES[@]}"; do
    chparam+=" -set ${NASA_TOP_PARAM_NAMES[$i]} ${NASA_PARAM_VALUES[$i]}"
  done
  if [[ $CFG_MCU == 1 ]]; then
    hex=$(nasa_fw_hex) || { status=1; continue; }
    chparam+=" -set RomFile \"$hex\""
  fi
  if [[ $cfg == fpga || $CFG_MCU == 1 ]]; then flow=ice40; else flow=generic; fi
  log=$out/$cfg.log
  stat_txt=$out/$cfg.stat.txt
  rm -f "$stat_txt" "$out/$cfg.json"
  start=$SECONDS
  echo "synth $cfg: yosys $flow flow, top $NASA_TOP (${chparam#chparam }), log in $log"
  cmds="read_verilog -defer -sv ${files[*]}; $chparam $NASA_TOP; hierarchy -top $NASA_TOP"
  cmds+="; script synth/$flow.ys"
  cmds+="; tee -q -o $stat_txt stat"
  if ! yosys -q -l "$log" -p "$cmds" >/dev/null 2>&1; then
    echo "synth $cfg: FAILED (yosys error), see $log:"
    if grep -q 'ERROR' "$log"; then grep -B3 -A3 'ERROR' "$log" | tail -n 40; else tail -n 30 "$log"; fi
    status=1
    continue
  fi
  secs=$((SECONDS - start))
  warnings=$(grep -c '^Warning:' "$log" || true)
  if [[ $flow == ice40 ]]; then
    lut4=$(cells "$stat_txt" SB_LUT4)
    dff=$(cells "$stat_txt" 'SB_DFF[A-Z]*')
    carry=$(cells "$stat_txt" SB_CARRY)
    mac16=$(cells "$stat_txt" SB_MAC16)
    ram=$(cells "$stat_txt" SB_RAM40_4K)
    spram=$(cells "$stat_txt" SB_SPRAM256KA)
    # iCE40 UP5K: 5280 logic cells (one LUT4 + one DFF each), 8 MAC16, 30 RAM40_4K, 4 SPRAM.
    lc=$((lut4 > dff ? lut4 : dff))
    fits=false
    if ((lc <= 5280 && mac16 <= 8 && ram <= 30 && spram <= 4)); then fits=true; fi
    printf 'synth %s: SB_LUT4 %d, SB_DFF* %d, SB_CARRY %d, SB_MAC16 %d/8, SB_RAM40_4K %d/30, ' \
      "$cfg" "$lut4" "$dff" "$carry" "$mac16" "$ram"
    printf 'SB_SPRAM256KA %d/4, LCs >= %d/5280, fits UP5K: %s (%ds, %d warnings)\n' \
      "$spram" "$lc" "$fits" "$secs" "$warnings"
    cat >"$out/$cfg.json" <<JSON
{"config": "$cfg", "flow": "synth_ice40", "lut4": $lut4, "dff": $dff, "carry": $carry,
 "mac16": $mac16, "ram40_4k": $ram, "spram": $spram, "lc_estimate": $lc,
 "fits_up5k": $fits, "seconds": $secs, "warnings": $warnings}
JSON
  else
    ncells=$(number "$stat_txt" cells)
    mems=$(number "$stat_txt" memories)
    mem_bits=$(number "$stat_txt" 'memory bits')
    dff=$(cells "$stat_txt" '[$]_[A-Z]*(DFF|DLATCH)[A-Z0-9_]*')
    printf 'synth %s: %d word-level cells (%d flip-flop bits), %d memories, %d memory bits (%ds, %d warnings)\n' \
      "$cfg" "$ncells" "$dff" "$mems" "$mem_bits" "$secs" "$warnings"
    cat >"$out/$cfg.json" <<JSON
{"config": "$cfg", "flow": "generic", "level": "word", "cells": $ncells, "dff": $dff, "memories": $mems,
 "mem_bits": $mem_bits, "seconds": $secs, "warnings": $warnings}
JSON
  fi
  if ((warnings > 0)); then
    echo "synth $cfg: yosys warnings:"
    # awk, not head: head exiting early would SIGPIPE the pipeline under pipefail
    grep '^Warning:' "$log" | sort | uniq -c | sort -rn | awk 'NR <= 20'
  fi
  yosys_serious_warnings "$log" || status=1
done
exit $status
