#!/usr/bin/env bash
# Sanitizer runs (`make sanitize`, docs/reliability.md). Usage: tb/sanitize.sh asan|tsan
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (leaks included) over every unit test
#         (reference model, cycle model, parsers, runtime, search), the CLI tests and a short
#         cosim (random layers, programs and chains on every configuration, RTL vs reference).
#   tsan: ThreadSanitizer over the thread-parallel paths: parallel_for and `nasa run`'s uses of
#         it (searches and test pieces on runtime copies, Verilated models on several threads)
#         and the UART device against its board emulator thread.
# Builds in build-<kind>/ (the project's code instrumented, Verilated models as in the normal
# build, so ccache serves them), without libtorch (its kernels are not instrumented). Any
# sanitizer report fails the run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
kind=${1:?usage: tb/sanitize.sh asan|tsan}
jobs=${JOBS:-2}
case $kind in
  asan) san=address,undefined ;;
  tsan) san=thread ;;
  *) echo "tb/sanitize.sh: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
esac
dir=build-$kind
t0=$(date +%s)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DNASA_SANITIZE=$san \
    -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON >"$dir/sanitize-configure.log" 2>&1 \
    || { cat "$dir/sanitize-configure.log"; exit 1; }
fi
cmake --build "$dir" -j"$jobs" --target sanitize_targets >"$dir/sanitize-build.log" 2>&1 \
  || { tail -50 "$dir/sanitize-build.log"; exit 1; }
t1=$(date +%s)
echo "sanitize $kind: built in $((t1 - t0)) s"

# Reports are fatal and go to the test's output.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
export NASA_MAKE_TEST=1
status=0
if [ "$kind" = asan ]; then
  # every unit test and CLI test this build has (not the package tests, which rebuild the tree)
  ctest --test-dir "$dir" -L unit -LE package -j"$jobs" --output-on-failure \
    -E '^(xseed|cosim_)' >"$dir/sanitize-ctest.log" 2>&1 || status=1
  grep -E "tests passed|tests failed" "$dir/sanitize-ctest.log" || true
  [ $status = 0 ] || grep -E "\*\*\*|Failed|ERROR|runtime error" "$dir/sanitize-ctest.log" | head -40
  cosim=$dir/bin/nasa-cosim
  seed=${SEED:-$(date +%s)}
  echo "  cosim seed $seed (SEED=$seed reruns it)"
  for mode in "" --programs --chains; do
    n=40; [ -n "$mode" ] && n=10
    if ! out=$("$cosim" --suite all $mode --seed "$seed" --layers $n --table 2>&1); then
      echo "$out" | tail -30; status=1
    fi
    echo "$out" | grep -E "^(fpga|sim|large) " | sed "s/^/  cosim ${mode:---layers} /"
  done
  "$dir/bin/cosim_parallel" --gtest_brief=1 >"$dir/sanitize-cosim_parallel.log" 2>&1 \
    || { cat "$dir/sanitize-cosim_parallel.log"; status=1; }
else
  for t in unit_parallel unit_uart_device cosim_parallel; do
    if "$dir/bin/$t" --gtest_brief=1 >"$dir/sanitize-$t.log" 2>&1; then
      echo "  $t: $(grep -E 'PASSED' "$dir/sanitize-$t.log")"
    else
      tail -60 "$dir/sanitize-$t.log"; status=1
    fi
  done
fi
t2=$(date +%s)
if [ $status = 0 ]; then
  echo "sanitize $kind: OK, no report (build $((t1 - t0)) s, runs $((t2 - t1)) s)"
else
  echo "sanitize $kind: FAILED (logs: $dir/sanitize-*.log)"
fi
exit $status
