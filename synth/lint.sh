#!/usr/bin/env bash
# Lints rtl/ with Verilator -Wall, top nasa_top (nasa_mcu for a configuration with a controller),
# once per hardware configuration (its parameters passed with -G), then every module those tops
# do not contain (the UART link's, used by the board top) as its own top with default
# parameters, then the board top. Any warning fails. Waivers go in rtl/lint.vlt only. Last,
# synth/decl_order.py: every signal of every module declared before its first use.
# Usage: synth/lint.sh [config...]   (default: every configuration in hw_spec.h)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_tool verilator python3
nasa_enter_root
mapfile -t files < <(nasa_rtl_files)
configs=("$@")
if [[ ${#configs[@]} -eq 0 ]]; then
  configs=("${NASA_CONFIG_NAMES[@]}")
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for cfg in "${configs[@]}"; do
  nasa_config "$cfg"
  gparams=()
  for i in "${!NASA_TOP_PARAM_NAMES[@]}"; do
    gparams+=("-G${NASA_TOP_PARAM_NAMES[$i]}=${NASA_PARAM_VALUES[$i]}")
  done
  if [[ $CFG_MCU == 1 ]]; then  # (the array's DSPs in fabric: Verilator has no SB_MAC16)
    hex=$(nasa_fw_hex) || { status=1; continue; }
    gparams+=("-GRomFile=\"$hex\"" "-GPrimitive=1'b0")
  fi
  if verilator --lint-only -Wall -Irtl --top-module "$NASA_TOP" "${gparams[@]}" \
      rtl/lint.vlt "${files[@]}" >"$log" 2>&1 && ! grep -q '%Warning' "$log"; then
    echo "lint $cfg: clean ($NASA_TOP, ${#files[@]} files, ${gparams[*]})"
  else
    echo "lint $cfg: FAILED"
    cat "$log"
    status=1
  fi
done
# Modules outside nasa_top's hierarchy: linted on their own (top, or top:Param=value[,...] for
# a variant; the MAC array's blocks in fabric, Primitive = 0), and the controller with the dot
# unit (Array = 0).
for entry in nasa_uart_bridge nasa_uart_rx nasa_uart_tx nasa_mcu_cpu nasa_mcu_cpu_serial \
    nasa_mcu_dot nasa_dot8 nasa_requant_dsp "nasa_requant_dsp:Dual=1'b1" nasa_dot_lanes \
    nasa_dot_lanes:Group=2 nasa_mac_array "nasa_mcu:Array=1'b0"; do
  top=${entry%%:*}
  variant=()
  if [[ $entry == *:* ]]; then
    IFS=, read -ra params <<<"${entry#*:}"
    for v in "${params[@]}"; do variant+=("-G$v"); done
  fi
  [[ -f rtl/$top.sv ]] || continue
  if verilator --lint-only -Wall -Irtl --top-module "$top" "${variant[@]}" rtl/lint.vlt \
      "${files[@]}" >"$log" 2>&1 && ! grep -q '%Warning' "$log"; then
    echo "lint $entry: clean"
  else
    echo "lint $entry: FAILED"
    cat "$log"
    status=1
  fi
done
# The board top (fpga/), with the core in its fpga configuration.
if [[ -f fpga/nasa_icebreaker.sv ]]; then
  mapfile -t board < <(nasa_board_files)
  hex=$(nasa_fw_hex) || exit 1
  if verilator --lint-only -Wall -Irtl --top-module nasa_icebreaker "-GRomFile=\"$hex\"" \
      "-GPrimitive=1'b0" rtl/lint.vlt "${board[@]}" \
      >"$log" 2>&1 && ! grep -q '%Warning' "$log"; then
    echo "lint nasa_icebreaker: clean"
  else
    echo "lint nasa_icebreaker: FAILED"
    cat "$log"
    status=1
  fi
fi
# Every signal declared before it is used (neither tool checks it).
if ! python3 synth/decl_order.py rtl/*.sv fpga/*.sv; then
  status=1
fi
exit $status
