#!/usr/bin/env bash
# Issue 3 acceptance measurement: N random fmnist-mb candidates x IMAGES Fashion-MNIST test images
# on a `nasa init` supernet, evaluated on the reference model and on the Verilator RTL; prints per
# candidate the cycles of both, the correct count and whether the logits SHA-256 are identical.
# Usage: bench/runtime_parity.sh [N=20] [IMAGES=64] [SEED=9]   (about 1 min per candidate)
set -euo pipefail
n=${1:-20}; images=${2:-64}; seed=${3:-9}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nasa=build/bin/nasa
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$nasa" init --seed "$seed" --out "$dir/net" > /dev/null
ks=$("$nasa" info --supernet "$dir/net" --json | tr -d ' \n' | sed 's/.*"choices_per_layer":\[\([0-9,]*\)\].*/\1/')
same=0
for ((i = 0; i < n; i++)); do
  arch=$(awk -v ks="$ks" -v s=$((seed * 1000 + i)) 'BEGIN { srand(s); m = split(ks, k, ",");
    for (j = 1; j <= m; j++) printf "%s%d", (j > 1 ? "-" : ""), int(rand() * k[j]) }')
  a=$("$nasa" eval --supernet "$dir/net" --arch "$arch" --images "$images" --json)
  b=$("$nasa" eval --supernet "$dir/net" --arch "$arch" --images "$images" --json --backend rtl)
  field() { echo "$1" | grep "\"$2\"" | sed 's/.*": *//; s/[",]//g'; }
  eq=no
  if [ "$(field "$a" logits_sha256)" = "$(field "$b" logits_sha256)" ] &&
     [ "$(field "$a" correct)" = "$(field "$b" correct)" ]; then eq=yes; same=$((same + 1)); fi
  echo "$arch ref_cycles=$(field "$a" cycles) rtl_cycles=$(field "$b" cycles)" \
       "correct=$(field "$a" correct)/$images identical=$eq"
done
echo "identical logits and correct counts: $same / $n"
[ "$same" = "$n" ]
