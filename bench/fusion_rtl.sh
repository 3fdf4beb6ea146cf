#!/usr/bin/env bash
# Issue 4 acceptance measurement: N random fmnist-mb candidates x IMAGES Fashion-MNIST test images
# on a `nasa init` supernet, on BACKEND (rtl by default), evaluated one by one (unfused) and as one
# fused batch run. Prints cycles, MACs and DRAM bytes of both, the cycle and MAC ratios, checks
# that every candidate's correct count is the same both ways and that the hardware MAC counter
# equals the fused MACs, and prints `nasa fuse`'s modeled DRAM bytes per schedule.
# Usage: bench/fusion_rtl.sh [N=50] [IMAGES=64] [SEED=1] [BACKEND=rtl]
# (rtl: about 3 min fused + 4 min unfused on one core of the reference machine, default space)
set -euo pipefail
n=${1:-50}; images=${2:-64}; seed=${3:-1}; backend=${4:-rtl}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nasa=build/bin/nasa
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$nasa" init --seed "$seed" --out "$dir/net" > /dev/null
common=(--supernet "$dir/net" --random "$n" --seed "$seed" --images "$images" --backend "$backend" --json)
t0=$(date +%s)
"$nasa" eval "${common[@]}" --fused > "$dir/fused.json"
t1=$(date +%s)
"$nasa" eval "${common[@]}" > "$dir/unfused.json"
t2=$(date +%s)
"$nasa" fuse --supernet "$dir/net" --random "$n" --seed "$seed" --images "$images" > "$dir/fuse.txt"
top() { grep -E "^  \"$2\"" "$1" | awk 'NR == 1' | sed 's/.*": *//; s/[",]//g'; }
fc=$(top "$dir/fused.json" cycles); uc=$(top "$dir/unfused.json" cycles)
fm=$(top "$dir/fused.json" macs_executed); um=$(top "$dir/unfused.json" macs_executed)
mf=$(( $(top "$dir/fused.json" macs_fused_per_image) * images ))
mu=$(( $(top "$dir/fused.json" macs_unfused_per_image) * images ))
fd=$(top "$dir/fused.json" dram_bytes); ud=$(top "$dir/unfused.json" dram_bytes)
nodes=$(top "$dir/fused.json" nodes)
echo "backend $backend, $n candidates (seed $seed) x $images images, $nodes nodes"
printf '%-10s %16s %18s %16s %9s\n' run cycles macs_executed dram_bytes wall_s
printf '%-10s %16s %18s %16s %9s\n' unfused "$uc" "$um" "$ud" $((t2 - t1))
printf '%-10s %16s %18s %16s %9s\n' fused "$fc" "$fm" "$fd" $((t1 - t0))
awk -v uc="$uc" -v fc="$fc" -v mu="$mu" -v mf="$mf" 'BEGIN {
  cr = uc / fc; mr = mu / mf;
  printf "cycle ratio unfused/fused %.3f, MAC ratio %.3f, required >= 0.9 x MAC ratio = %.3f: %s\n",
         cr, mr, 0.9 * mr, (cr >= 0.9 * mr ? "PASS" : "FAIL") }'
echo "macs_executed == macs_fused_per_image x images: $([ "$fm" = "$mf" ] && echo yes || echo NO)"
echo "unfused macs_executed == macs_unfused_per_image x images: $([ "$um" = "$mu" ] && echo yes || echo NO)"
a=$(grep '"correct"' "$dir/fused.json"); b=$(grep '"correct"' "$dir/unfused.json")
echo "per-candidate correct counts identical fused vs unfused: $([ "$a" = "$b" ] && echo yes || echo NO)"
echo "modeled DRAM bytes per schedule (nasa fuse):"
sed -n '/^modeled/,$p' "$dir/fuse.txt"
[ "$fm" = "$mf" ] && [ "$a" = "$b" ]
