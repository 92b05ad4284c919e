#!/usr/bin/env bash
# make_data.sh DIR: a small, learnable binary classification task as CSV
# (two features, label last: x1 + x2 > 0), deterministic, for CLI tests.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
gen() {  # seed rows file
  awk -v seed="$1" -v rows="$2" 'BEGIN { srand(seed); for (i = 0; i < rows; i++) {
    a = rand() * 2 - 1; b = rand() * 2 - 1; printf "%.4f,%.4f,%d\n", a, b, (a + b > 0) } }' > "$3"
}
gen 7 256 "$dir/train.csv"
gen 8 64 "$dir/valid.csv"
