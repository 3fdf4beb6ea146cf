#!/usr/bin/env bash
# The host runtime stands alone: with Verilator, Yosys, nextpnr and the RISC-V toolchain hidden
# from PATH (only a host C++ compiler, CMake and the host libraries left), `cmake -S sw`
# configures and builds the runtime library and the CLI, installs them, and a project outside the
# tree (docs/example) builds against the installed package (find_package(nasa)) and runs.
# The CLI built that way has the backends ref and uart but not rtl. Usage: test_standalone.sh
# WORKDIR (a directory two levels below the repository root, e.g. build/test_standalone, so
# ccache finds the tree build's objects under the same relative paths).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:?usage: test_standalone.sh WORKDIR}
rm -rf "$work"
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)

# PATH: every program of the original PATH except the hardware tools.
hidden='^(verilator.*|verilator_.*|yosys.*|nextpnr.*|icepack|iceprog|icetime|riscv64-.*)$'
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -d $d ]] || continue
  for f in "$d"/*; do
    n=$(basename "$f")
    [[ -x $f && ! -d $f && ! -e $work/bin/$n ]] || continue
    [[ $n =~ $hidden ]] && continue
    ln -s "$f" "$work/bin/$n"
  done
done
export PATH=$work/bin
for t in verilator yosys nextpnr-ice40 riscv64-unknown-elf-gcc; do
  if command -v "$t" >/dev/null 2>&1; then
    echo "error: $t is still on PATH" >&2
    exit 1
  fi
done
echo "standalone: verilator, yosys, nextpnr-ice40 and riscv64-unknown-elf-gcc hidden"

# Without libtorch too: the runtime does not need it (nasa_train is optional).
cmake -S "$root/sw" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON >"$work/configure.log"
cmake --build "$work/build" -j"${JOBS:-2}" >"$work/build.log"
cmake --install "$work/build" --prefix "$work/prefix" >"$work/install.log"
echo "standalone: runtime built and installed ($(ls "$work/prefix/lib"/*.a | wc -l) libraries)"

cmake -S "$root/docs/example" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/example-configure.log"
cmake --build "$work/example" >"$work/example-build.log"
"$work/example/nasa_example"

# The installed CLI: its backends are the runtime's own.
nasa=$work/prefix/bin/nasa
"$nasa" init --seed 1 --out "$work/net" >/dev/null
"$nasa" eval --supernet "$work/net" --arch 0-0-0-0-0-0 --images 2 --calib 2
if out=$("$nasa" eval --supernet "$work/net" --arch 0-0-0-0-0-0 --images 2 --calib 2 \
  --backend rtl 2>&1); then
  echo "error: --backend rtl worked without the RTL" >&2
  exit 1
fi
echo "$out"
grep -q "expected one of ref, uart" <<<"$out"
echo "standalone: OK"
