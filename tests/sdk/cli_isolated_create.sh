#!/usr/bin/env bash
# A callback that needs tensor views, through the real CLI and trainer
# (tensor_reader, tests/sdk/tensor_reader_plugin.cpp):
#  1. --plugin_isolation tensor_reader: the helper process tells it at
#     creation that it runs isolated (th_host.isolated, ABI 1.4); it refuses
#     there with its own message, and the run stops before its first step
#     (no checkpoint, no model written);
#  2. in process: it runs, and its metrics (the parameter tensors it counted)
#     reach log_history at every step.
# usage: cli_isolated_create.sh <trainhook> <plugin folder> <digits.csv> <work dir>
set -euo pipefail
TH="$1" PLUGINS="$2" DIGITS="$3" WORK="$4"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
[[ -s $DIGITS ]] || fail "$DIGITS is missing; scripts/install-deps unpacks it"
export OMP_NUM_THREADS=1
unset TRAINHOOK_PLUGIN_PATH TRAINHOOK_PLUGIN_LOCK
rm -rf "$WORK"
mkdir -p "$WORK"
head -n 256 "$DIGITS" >"$WORK/train.csv"
ARGS=(train --train_file "$WORK/train.csv" --feature_scale 0.0625 --model mlp --do_train --disable_tqdm true
  --max_steps 3 --logging_steps 1 --per_device_train_batch_size 32 --save_strategy no
  --plugin_dir "$PLUGINS" --callbacks tensor_reader)

# 1. Isolated: refused at creation, with the plugin's own words.
set +e
OUT="$("$TH" "${ARGS[@]}" --output_dir "$WORK/isolated" --plugin_isolation tensor_reader 2>&1)"
rc=$?
set -e
echo "$OUT" | tail -5
((rc != 0)) || fail "the isolated run succeeded; tensor_reader should have refused at creation"
grep -qF "tensor_reader reads the model's tensors, which an isolated callback is not given" <<<"$OUT" ||
  fail "the plugin's own refusal is not in the output"
grep -qF "(in its isolated helper process)" <<<"$OUT" || fail "the refusal does not say it came from the helper"
if grep -q "runs in its own process (plugin_isolation): the model's tensors" <<<"$OUT"; then
  fail "the plugin reached tensors() instead of refusing at creation"
fi
[[ ! -e "$WORK/isolated/model.safetensors" ]] || fail "the refused run trained a model"

# 2. In process: its metrics in every step's log.
"$TH" "${ARGS[@]}" --output_dir "$WORK/in_process" >"$WORK/in_process.log" 2>&1 ||
  { cat "$WORK/in_process.log"; fail "the in-process run failed"; }
python3 - "$WORK/in_process/trainer_state.json" <<'PY' || fail "tensor_reader's metrics are not in log_history"
import json, sys
rows = [h for h in json.load(open(sys.argv[1]))["log_history"] if "loss" in h]
assert len(rows) == 3, rows
for h in rows:
    assert h["tensor_reader/tensors"] >= 2 and h["tensor_reader/elements"] > 0, h
print("in process:", {k: v for k, v in rows[-1].items() if k.startswith("tensor_reader/")})
PY
echo "isolated create: ok"
