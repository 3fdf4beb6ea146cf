#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, two at a time (the machine's two
# cores; FUZZ_JOBS=n for another count), and prints one table: executions, speed, coverage, corpus
# and result per target. Used by `make fuzz` (long), `make fuzz-smoke` (seconds) and CI.
#
#   fuzz/run.sh SECONDS [TARGET...]      targets: spec safetensors idx dataset arch supernet_dir uart
#                                        uart_bridge desc (default: all)
#
# FUZZ_MIN_EXECS=n: a target still below n executions after SECONDS goes on (same corpus) until it
# has them, for at most 3 x SECONDS more (`make fuzz`: 1,000,000).
#
# Configures and builds build-fuzz/ with clang first (NASA_FUZZ_BUILD=dir for another place) and
# runs the crash regression tests (tb/unit_fuzz_regressions.cpp) under the same sanitizers. Each
# target starts from a copy of its checked-in seeds (fuzz/corpus/<target>/, never modified) in
# <build>/fuzz-work/<target>/. Results: <build>/fuzz-results/fuzz.{md,json}. Exit status 1 when a
# target crashed, leaked, ran out of memory or timed out (the message gives the saved input, which
# `build-fuzz/bin/fuzz_<target> <input>` replays; docs/reliability.md: turning it into a test).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
all_targets=(spec safetensors idx dataset arch supernet_dir uart uart_bridge desc)

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ || $1 -lt 1 ]]; then
  echo "usage: fuzz/run.sh SECONDS [TARGET...]   (targets: ${all_targets[*]})" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  if [[ ! " ${all_targets[*]} " =~ " $t " ]]; then
    echo "fuzz/run.sh: unknown target '$t' (expected one of: ${all_targets[*]})" >&2
    exit 2
  fi
done

# Longest input per target: a little above the largest seed, small enough to stay fast.
declare -A max_len=([spec]=8192 [safetensors]=12288 [idx]=8192 [dataset]=8192 [arch]=1024
                    [supernet_dir]=16384 [uart]=2048 [uart_bridge]=2048 [desc]=16392)

build=${NASA_FUZZ_BUILD:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-2}
min_execs=${FUZZ_MIN_EXECS:-0}

# clang and its libFuzzer runtime (`make deps` installs both).
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  >"$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
  >"$probe/log" 2>&1; then
  cat "$probe/log" >&2
  echo "fuzz/run.sh: clang++ cannot build a libFuzzer target; install clang and" \
    "libclang-rt-14-dev (make deps)" >&2
  exit 2
fi
t0=$(date +%s)
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S "$here" -B "$build" >/dev/null
fi
cmake --build "$build" -j"${NASA_FUZZ_BUILD_JOBS:-2}"
t1=$(date +%s)
echo "fuzz: build $((t1 - t0)) s"
"$build/bin/unit_fuzz_regressions" --gtest_brief=1

work=$build/fuzz-work
results=$build/fuzz-results
rm -rf "$results"
mkdir -p "$work" "$results"

# Memory leaks are findings too; UBSan aborts on the first report (as compiled) with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Executions in the libFuzzer logs given (one per session).
execs_in() {
  sed -n 's/^stat::number_of_executed_units: *//p' "$@" | awk '{n += $1} END {print n + 0}'
}

# A target for $seconds; then, while below $min_execs executions, more sessions on the corpus it
# grew (at most 3 x $seconds more), so a loaded machine still gets the executions asked for.
run_one() {
  local t=$1 dir=$work/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$here/corpus/$t"/* "$dir/corpus/"
  local status=0 start session=1 execs
  start=$(date +%s)
  local args=(-timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$t]}" -detect_leaks=1
              -print_final_stats=1 -artifact_prefix="$dir/artifacts/")
  "$build/bin/fuzz_$t" -max_total_time="$seconds" "${args[@]}" "$dir/corpus" \
    >"$dir/log.1" 2>&1 || status=$?
  while [[ $status == 0 ]]; do
    execs=$(execs_in "$dir"/log.*)
    local left=$((start + 4 * seconds - $(date +%s)))
    ((execs < min_execs && left > 0)) || break
    session=$((session + 1))
    "$build/bin/fuzz_$t" -runs=$((min_execs - execs)) -max_total_time="$left" "${args[@]}" \
      "$dir/corpus" >"$dir/log.$session" 2>&1 || status=$?
  done
  echo "$status" >"$dir/status"
  echo $(($(date +%s) - start)) >"$dir/seconds"
}

# Up to $jobs targets at a time.
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  echo "fuzz: $t for $seconds s"
  run_one "$t" &
  running=$((running + 1))
done
wait

# One row per target from libFuzzer's final statistics.
failed=()
short=()
{
  echo "| target | seconds | execs | execs/s | cov (edges) | ft (features) | corpus | result |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
} >"$results/fuzz.md"
json="["
for t in "${targets[@]}"; do
  dir=$work/$t
  logs=("$dir"/log.*)
  log=${logs[-1]}  # the last session: its coverage counts the whole corpus
  status=$(cat "$dir/status")
  secs=$(cat "$dir/seconds")
  execs=$(execs_in "${logs[@]}")
  speed=$((execs / (secs > 0 ? secs : 1)))
  last=$(grep -hE '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(find "$dir/corpus" -type f | wc -l)
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "${logs[@]}" | tail -1)
  result=ok
  if grep -q 'ERROR: libFuzzer: timeout' "${logs[@]}"; then result=TIMEOUT
  elif grep -q 'ERROR: libFuzzer: out-of-memory' "${logs[@]}"; then result=OOM
  elif grep -q 'ERROR: LeakSanitizer' "${logs[@]}"; then result=LEAK
  elif grep -qE 'ERROR: (AddressSanitizer|libFuzzer)|runtime error:|FUZZ FINDING' "${logs[@]}"; then
    result=CRASH
  elif [[ $status != 0 ]]; then result="FAILED (exit $status)"
  fi
  if [[ $result != ok ]]; then
    failed+=("$t: $result, input ${artifact:-(none saved)}, log $log")
  elif ((execs < min_execs)); then
    short+=("$t: $execs executions, below FUZZ_MIN_EXECS=$min_execs within $secs s")
  fi
  printf '| %s | %d | %d | %d | %s | %s | %d | %s |\n' "$t" "$secs" "$execs" "$speed" \
    "${cov:-?}" "${ft:-?}" "$corpus" "$result" >>"$results/fuzz.md"
  [[ $json == "[" ]] || json+=","
  fmt='\n  {"target": "%s", "seconds": %d, "execs": %d, "execs_per_s": %d, "cov": %s, "ft": %s,'
  fmt+=' "corpus": %d, "result": "%s"}'
  json+=$(printf "$fmt" "$t" "$secs" "$execs" "$speed" "${cov:-null}" "${ft:-null}" "$corpus" \
    "$result")
done
json+=$'\n]'
echo "$json" >"$results/fuzz.json"

echo
cat "$results/fuzz.md"
echo
echo "fuzz: $(($(date +%s) - t1)) s of fuzzing on $(nproc) cores; tables in $results/fuzz.{md,json}"
if ((${#short[@]})); then
  printf 'fuzz: warning: %s (a loaded machine?)\n' "${short[@]}" >&2
fi
if ((${#failed[@]})); then
  printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
