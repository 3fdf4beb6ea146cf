# Shared by lint.sh and synth.sh (sourced, not run): repository paths, the hardware
# configurations parsed from the NASA_CONFIGS table of hw_spec.h, and the RTL file list.
NASA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NASA_SPEC=$NASA_ROOT/sw/include/nasa/hw_spec.h

# Prints one line "name rows cols mem_bytes ... dma_inflight wtiles mcu" per configuration.
nasa_configs() {
  local n=' *([0-9]+) *'
  sed -n '/#define NASA_CONFIGS(X)/,/[^\\]$/p' "$NASA_SPEC" |
    sed -nE "s/.*X\( *([A-Za-z_][A-Za-z0-9_]*) *((,$n){15})\).*/\1\2/p" | tr -s ', ' '  '
}

# Sets CFG_ROWS ... CFG_MCU, NASA_PARAM_NAMES/NASA_PARAM_VALUES and NASA_TOP (the core's top
# module: nasa_mcu for the configurations with a controller, Mcu = 1, else nasa_top) for
# configuration $1.
nasa_config() {
  local row
  row=$(nasa_configs | awk -v c="$1" '$1 == c')
  if [[ -z $row ]]; then
    echo "error: unknown configuration '$1' (known: $(nasa_configs | cut -d' ' -f1 | xargs))" >&2
    return 1
  fi
  read -r _ CFG_ROWS CFG_COLS CFG_MEM_BYTES CFG_IN_BUF_BYTES CFG_KRED_MAX CFG_BURST_MAX \
    CFG_NODE_CAP CFG_MAX_LAYERS CFG_MAX_CHOICES CFG_MAX_CANDS CFG_RQ_LANES CFG_ADDR_BITS \
    CFG_DMA_INFLIGHT CFG_WTILES CFG_MCU <<<"$row"
  NASA_PARAM_NAMES=(Rows Cols MemBytes InBufBytes KredMax BurstMax NodeCap MaxLayers MaxChoices
                    MaxCands RqLanes AddrBits DmaInflight WTiles)
  NASA_PARAM_VALUES=("$CFG_ROWS" "$CFG_COLS" "$CFG_MEM_BYTES" "$CFG_IN_BUF_BYTES"
                     "$CFG_KRED_MAX" "$CFG_BURST_MAX" "$CFG_NODE_CAP" "$CFG_MAX_LAYERS"
                     "$CFG_MAX_CHOICES" "$CFG_MAX_CANDS" "$CFG_RQ_LANES" "$CFG_ADDR_BITS"
                     "$CFG_DMA_INFLIGHT" "$CFG_WTILES")
  if [[ $CFG_MCU == 1 ]]; then NASA_TOP=nasa_mcu; else NASA_TOP=nasa_top; fi
}

# Prints the firmware ROM image of the controller (fpga/fw/, built by CMake: target nasa_fw) for
# $readmemh: $NASA_FW_HEX, else build/fpga/fw/nasa_fw.hex. Fails with a hint when it is missing.
nasa_fw_hex() {
  local hex=${NASA_FW_HEX:-$NASA_ROOT/build/fpga/fw/nasa_fw.hex}
  if [[ ! -f $hex ]]; then
    echo "error: the controller's firmware image $hex is missing: build it with" \
         "'cmake --build build --target nasa_fw' (make lint/synth/fpga do)" >&2
    return 1
  fi
  echo "$hex"
}

# Prints the RTL sources relative to the repository root: rtl/nasa_pkg.sv, then any other
# package (*_pkg.sv), then every other module, each group sorted. Both tools need packages first.
nasa_rtl_files() {
  (
    cd "$NASA_ROOT" || exit 1
    echo rtl/nasa_pkg.sv
    LC_ALL=C ls rtl/*_pkg.sv | grep -v '^rtl/nasa_pkg\.sv$' || true
    LC_ALL=C ls rtl/*.sv | grep -v '_pkg\.sv$' || true
  )
}

# The iCEBreaker board design: rtl/ as above, then fpga/ (the board top last).
nasa_board_files() {
  nasa_rtl_files
  printf '%s\n' fpga/nasa_pll.sv fpga/nasa_spram.sv fpga/nasa_icebreaker.sv
}

# Yosys synth_ice40 of the board top (run from the repository root): $1 the log file, $2 more
# synth_ice40 options, $3 commands to run after it.
nasa_board_synth() {
  local files hex
  mapfile -t files < <(nasa_board_files)
  hex=$(nasa_fw_hex) || return 1
  echo "yosys synth_ice40 -top nasa_icebreaker $2 (${#files[@]} files, firmware $hex) -> $1"
  yosys -q -l "$1" -p "read_verilog -defer -sv ${files[*]}; \
    chparam -set RomFile \"$hex\" nasa_icebreaker; synth_ice40 -top nasa_icebreaker -dsp $2; $3" &&
    yosys_serious_warnings "$1"
}

# Yosys warnings that mean the netlist is not the RTL: undriven or multiply driven nets, latches,
# implicit wires. Prints them and returns 1 when log $1 has any (other warnings are listed only).
yosys_serious_warnings() {
  local re='no driver|conflicting driver|Driver-driver conflict|[Ll]atch|implicitly declared'
  if grep -E '^Warning:' "$1" | grep -E "$re" >"$1.serious"; then
    echo "error: $(wc -l <"$1.serious") Yosys warning(s) in $1 mean the netlist differs from the RTL:" >&2
    awk 'NR <= 20' "$1.serious" >&2
    return 1
  fi
  rm -f "$1.serious"
}

# A missing tool fails the run under `make test` (NASA_MAKE_TEST=1: `make deps` should have
# installed it) and skips it loudly elsewhere (exit 77 = ctest SKIP_RETURN_CODE).
require_tool() {
  local t
  for t in "$@"; do
    if ! command -v "$t" >/dev/null 2>&1; then
      if [[ -n ${NASA_MAKE_TEST:-} ]]; then
        echo "error: '$t' not found; run 'make deps'" >&2
        exit 1
      fi
      echo "********************************************************************" >&2
      echo "SKIPPED: '$t' not found. Run 'make deps' (or 'make test', which does)." >&2
      echo "********************************************************************" >&2
      exit 77
    fi
  done
}
