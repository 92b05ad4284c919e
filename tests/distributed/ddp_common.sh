# Shared by the ddp_*.sh tests: arguments, data, helpers (free_port and fail are test_lib.sh's).
# usage (sourced): ddp_common.sh <bin/trainhook> <ddp_weights_diff> <digits.csv> <work dir>
set -euo pipefail
CLI=${1:?bin/trainhook}
DIFF=${2:?ddp_weights_diff}
DIGITS=${3:?digits.csv}
WORK=${4:?work dir}
export OMP_NUM_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
[[ -s $DIGITS ]] || fail "$DIGITS is missing; scripts/install-deps unpacks it"
rm -rf "$WORK"
mkdir -p "$WORK"
# 1024 training rows (divisible by every batch used, so no rank pads its
# shard) and 256 validation rows of the digits.
head -n 1024 "$DIGITS" >"$WORK/train.csv"
sed -n 1025,1280p "$DIGITS" >"$WORK/val.csv"
DATA=(--train_file "$WORK/train.csv" --validation_file "$WORK/val.csv" --feature_scale 0.0625 --model mlp
  --disable_tqdm --seed 7 --learning_rate 1e-3)

# json_get <file> <python expression on j>
json_get() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# same_weights <a/model.pt> <b/model.pt> <tolerance> <what>
same_weights() {
  local out
  out=$("$DIFF" "$1" "$2" "$3") || fail "$4: weights differ: $out"
  echo "$4: $out"
}
