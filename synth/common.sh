# Shared by lint.sh and synth.sh (sourced, not run): repository paths, the hardware
# configurations (synth/nasa_configs.sh, generated from the NASA_CONFIGS table of hw_spec.h by
# `make gen`), and the RTL file list.
NASA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=nasa_configs.sh
source "$NASA_ROOT/synth/nasa_configs.sh"

# Sets CFG_<FIELD> for every column (CFG_ROWS ... CFG_MCU), NASA_TOP_PARAM_NAMES and
# NASA_PARAM_VALUES (the RTL parameters of the configuration's top module and their values) and NASA_TOP (the core's top module: nasa_mcu for
# the configurations with a controller, Mcu = 1, else nasa_top) for configuration $1.
nasa_config() {
  local row="NASA_CFG_$1[@]" i
  if [[ ! " ${NASA_CONFIG_NAMES[*]} " == *" $1 "* ]]; then
    echo "error: unknown configuration '$1' (known: ${NASA_CONFIG_NAMES[*]})" >&2
    return 1
  fi
  local -a values=("${!row}")
  NASA_TOP_PARAM_NAMES=()
  NASA_PARAM_VALUES=()
  for i in "${!NASA_CONFIG_FIELDS[@]}"; do
    printf -v "CFG_${NASA_CONFIG_FIELDS[$i]}" '%s' "${values[$i]}"
  done
  if [[ $CFG_MCU == 1 ]]; then NASA_TOP=nasa_mcu; else NASA_TOP=nasa_top; fi
  # (the board controller takes the parameters but the engine-only ones)
  for i in "${!NASA_PARAM_NAMES[@]}"; do
    if [[ $CFG_MCU == 1 && " ${NASA_ENGINE_ONLY_PARAMS[*]} " == *" ${NASA_PARAM_NAMES[$i]} "* ]]
    then
      continue
    fi
    NASA_TOP_PARAM_NAMES+=("${NASA_PARAM_NAMES[$i]}")
    NASA_PARAM_VALUES+=("${values[$i]}")
  done
}

# Changes to the repository root; fails when the RTL is not there.
nasa_enter_root() {
  cd "$NASA_ROOT" || exit 1
  if [[ ! -f rtl/nasa_engine.sv ]]; then
    echo "error: rtl/nasa_engine.sv not found" >&2
    exit 1
  fi
}

# Prints the firmware ROM image of the controller (fpga/fw/, built by CMake: target nasa_fw) for
# $readmemh: $NASA_FW_HEX, else build/fpga/fw/nasa_fw_array.hex (the board's: nasa_mcu's
# Array = 1). Fails with a hint when it is missing.
nasa_fw_hex() {
  local hex=${NASA_FW_HEX:-$NASA_ROOT/build/fpga/fw/nasa_fw_array.hex}
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

# The iCEBreaker board design: the packages, then the files of the modules the board
# instantiates (from fpga/nasa_icebreaker.sv down, by name: module X lives in rtl/X.sv or
# fpga/X.sv; both branches of a generate count), the board top last. A block added to rtl/ and
# not used by the board leaves the board's netlist as it was (Yosys's mapping moves by tens of
# cells with whatever else it reads).
nasa_board_files() {
  (
    cd "$NASA_ROOT" || exit 1
    local -A seen=()
    local -a todo=(nasa_icebreaker) mods=()
    local m f used
    while ((${#todo[@]})); do
      m=${todo[0]}
      todo=("${todo[@]:1}")
      [[ -n ${seen[$m]:-} ]] && continue
      seen[$m]=1
      if [[ -f fpga/$m.sv ]]; then f=fpga/$m.sv; elif [[ -f rtl/$m.sv ]]; then f=rtl/$m.sv; else
        echo "error: module $m (instantiated on the board) has no file rtl/$m.sv or fpga/$m.sv" >&2
        exit 1
      fi
      mods+=("$f")
      # instantiations: a nasa_ module name, optional #(...), then an instance name and "("
      used=$(sed -E 's://.*$::' "$f" | tr '\n' ' ' |
        grep -oE '\bnasa_[a-z0-9_]+[[:space:]]+(#[[:space:]]*\(|[a-zA-Z_][a-zA-Z0-9_]*[[:space:]]*\()' |
        grep -oE '^nasa_[a-z0-9_]+' | sort -u || true)
      for m in $used; do [[ $m == *_pkg ]] || todo+=("$m"); done
    done
    nasa_rtl_files | grep '_pkg\.sv$' || true
    printf '%s\n' "${mods[@]}" | grep '^rtl/' | LC_ALL=C sort || true
    printf '%s\n' "${mods[@]}" | grep '^fpga/' | grep -v '^fpga/nasa_icebreaker\.sv$' |
      LC_ALL=C sort || true
    echo fpga/nasa_icebreaker.sv
  )
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
