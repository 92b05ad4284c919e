#!/usr/bin/env bash
# Memory-mapped data through the CLI, proven on weights:
# - a char_transformer on a uint16 token file (the bytes of Debian's licence
#   texts): 2 dataloader workers give bit-identical weights and logged losses to
#   0 workers; resuming from step 10 ends bit-identical; 2 ranks × batch 8 equal
#   1 rank × 16 (within 1e-6); no --max_steps is refused for the epoch-less
#   stream; a token id above --vocab_size names the file and token.
# - a folder of .npy arrays written by NumPy itself (mlp): 2 ranks equal 1,
#   resume is bit-identical.
# usage: mapped_data_cli.sh <bin/trainhook> <ddp_weights_diff> <work dir> [python with numpy]
set -euo pipefail
CLI=${1:?bin/trainhook}
DIFF=${2:?ddp_weights_diff}
WORK=${3:?work dir}
NUMPY_PY=${4:-}
export OMP_NUM_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
rm -rf "$WORK"
mkdir -p "$WORK"

json_get() {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
same_weights() {
  local out
  out=$("$DIFF" "$1" "$2" "$3") || fail "$4: weights differ: $out"
  echo "$4: $out"
}
losses() { json_get "$1/trainer_state.json" '[e["loss"] for e in j["log_history"] if "loss" in e]'; }

# Byte-level tokens as uint16 (the nanoGPT layout): 90% train, 10% validation.
python3 - "$WORK" <<'PY'
import array, glob, sys
data = b"".join(open(f, "rb").read() for f in sorted(glob.glob("/usr/share/common-licenses/*")) if "GPL" in f)[:400000]
cut = len(data) * 9 // 10
array.array("H", list(data[:cut])).tofile(open(sys.argv[1] + "/train.bin", "wb"))
array.array("H", list(data[cut:])).tofile(open(sys.argv[1] + "/val.bin", "wb"))
PY
LM=(--train_file "$WORK/train.bin" --validation_file "$WORK/val.bin" --model char_transformer --block_size 16
  --hidden_size 32 --num_layers 1 --num_heads 2 --vocab_size 256 --disable_tqdm --seed 7 --learning_rate 1e-3
  --do_train --max_steps 20 --logging_steps 5 --save_steps 10)

"$CLI" train "${LM[@]}" --output_dir "$WORK/lm0" --per_device_train_batch_size 16 >"$WORK/lm0.log" 2>&1 ||
  fail "token-file run failed: $(tail -20 "$WORK/lm0.log")"
"$CLI" train "${LM[@]}" --output_dir "$WORK/lm2w" --per_device_train_batch_size 16 --dataloader_num_workers 2 \
  --dataloader_prefetch_factor 3 >"$WORK/lm2w.log" 2>&1 || fail "2-worker run failed: $(tail -20 "$WORK/lm2w.log")"
same_weights "$WORK/lm0/model.pt" "$WORK/lm2w/model.pt" 0 "0 workers vs 2 workers"
[[ $(losses "$WORK/lm0") == "$(losses "$WORK/lm2w")" ]] ||
  fail "logged losses differ: 0 workers $(losses "$WORK/lm0"), 2 workers $(losses "$WORK/lm2w")"
echo "losses (0 and 2 workers): $(losses "$WORK/lm0")"
grep -q "batches are not pinned" "$WORK/lm2w.log" || fail "no pin_memory warning on the CPU with workers"

"$CLI" train "${LM[@]}" --output_dir "$WORK/lm_resumed" --per_device_train_batch_size 16 \
  --resume_from_checkpoint "$WORK/lm0/checkpoint-10" >"$WORK/lm_resumed.log" 2>&1 ||
  fail "token-file resume failed: $(tail -20 "$WORK/lm_resumed.log")"
same_weights "$WORK/lm0/model.pt" "$WORK/lm_resumed/model.pt" 0 "token file: run vs its resume from step 10"

# 2 ranks: SGD, as AdamW's normalisation turns the float rounding of two
# half-batches into 1e-5 weight differences on this transformer (the windows are
# the same: the logged losses agree to 1e-6 with AdamW too).
"$CLI" train "${LM[@]}" --optim sgd --output_dir "$WORK/lm_sgd" --per_device_train_batch_size 16 \
  >"$WORK/lm_sgd.log" 2>&1 || fail "token-file SGD run failed: $(tail -20 "$WORK/lm_sgd.log")"
"$CLI" launch --nproc_per_node 2 -- train "${LM[@]}" --optim sgd --output_dir "$WORK/lm_two" \
  --per_device_train_batch_size 8 >"$WORK/lm_two.log" 2>&1 ||
  fail "2-rank token-file run failed: $(tail -30 "$WORK/lm_two.log")"
same_weights "$WORK/lm_sgd/model.pt" "$WORK/lm_two/model.pt" 1e-6 "token file: 1 rank x16 vs 2 ranks x8"
"$CLI" launch --nproc_per_node 2 -- train "${LM[@]}" --output_dir "$WORK/lm_two_adamw" \
  --per_device_train_batch_size 8 >"$WORK/lm_two_adamw.log" 2>&1 ||
  fail "2-rank token-file AdamW run failed: $(tail -30 "$WORK/lm_two_adamw.log")"
python3 -c "import sys; a, b = eval(sys.argv[1]), eval(sys.argv[2]); sys.exit(0 if len(a) == len(b) and all(abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a, b)) else 1)" \
  "$(losses "$WORK/lm0")" "$(losses "$WORK/lm_two_adamw")" ||
  fail "logged losses differ: 1 rank $(losses "$WORK/lm0"), 2 ranks $(losses "$WORK/lm_two_adamw")"

rc=0
"$CLI" train "${LM[@]/--max_steps/--num_train_epochs}" --output_dir "$WORK/epochs" >"$WORK/epochs.log" 2>&1 || rc=$?
[[ $rc != 0 ]] || fail "an epoch count on a token stream was accepted"
grep -q "is a token stream (random windows, no epochs): set --max_steps" "$WORK/epochs.log" ||
  fail "no clear message for epochs on a token stream: $(tail -5 "$WORK/epochs.log")"
rc=0
"$CLI" train "${LM[@]}" --vocab_size 50 --output_dir "$WORK/vocab" >"$WORK/vocab.log" 2>&1 || rc=$?
[[ $rc != 0 ]] || fail "token ids above --vocab_size were accepted"
grep -q "$WORK/train.bin: token [0-9]* has id [0-9]*, outside the model's vocabulary 0..49" "$WORK/vocab.log" ||
  fail "no clear message for an id above the vocabulary: $(tail -5 "$WORK/vocab.log")"

# A token file cut short while the run reads it (a sync job rewriting the
# shard): the run stops naming the file and what happened, not with a bare
# "Bus error" (rc 135). The run is long enough that it is still reading when
# the file is cut (cut once a checkpoint is complete: any, since with
# --save_total_limit 1 checkpoint-10 is rotated away ten steps later, sooner than
# a poll may look); `timeout` bounds it.
cp "$WORK/train.bin" "$WORK/shrinks.bin"
SHRINK=()
for a in "${LM[@]}"; do [[ $a == "$WORK/train.bin" ]] && a="$WORK/shrinks.bin"; SHRINK+=("$a"); done
timeout 300 "$CLI" train "${SHRINK[@]}" --max_steps 100000 \
  --save_total_limit 1 --output_dir "$WORK/shrinks" --per_device_train_batch_size 16 >"$WORK/shrinks.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
has_checkpoint() {
  kill -0 "$pid" 2>/dev/null || fail "the run on shrinks.bin ended before it saved: $(tail -5 "$WORK/shrinks.log")"
  compgen -G "$WORK/shrinks/checkpoint-*/trainer_state.json" >/dev/null
}
wait_for 120 "a checkpoint of the run on shrinks.bin" has_checkpoint
truncate -s 4096 "$WORK/shrinks.bin"
rc=0
wait "$pid" || rc=$?
trap - EXIT
((rc != 0 && rc != 124 && rc != 135)) || fail "truncated token file: exit $rc (124: still running; 135: bare SIGBUS)"
grep -q "data file $WORK/shrinks.bin changed while the run had it mapped: it was [0-9]* bytes when opened and is 4096 bytes now" \
  "$WORK/shrinks.log" || fail "truncated token file: no message naming it: $(tail -5 "$WORK/shrinks.log")"
grep -qi "bus error" "$WORK/shrinks.log" && fail "truncated token file: a bare bus error: $(tail -5 "$WORK/shrinks.log")"
echo "token file truncated under the run: exit $rc, $(grep -o 'data file .*(SIGBUS)' "$WORK/shrinks.log" | head -1)"

if [[ -z $NUMPY_PY || ! -x $NUMPY_PY ]]; then
  echo "no python with numpy: the .npy part is skipped"
  exit 0
fi
# .npy arrays as NumPy writes them: 2 shards of training folders, one validation folder.
"$NUMPY_PY" - "$WORK" <<'PY'
import os, sys, numpy as np
rng = np.random.default_rng(3)
w = rng.normal(size=(12, 4))
for name, n in (("train_a", 192), ("train_b", 64), ("val", 64)):
    os.makedirs(f"{sys.argv[1]}/{name}")
    x = rng.normal(size=(n, 12)).astype(np.float32)
    np.save(f"{sys.argv[1]}/{name}/input.npy", x)
    np.save(f"{sys.argv[1]}/{name}/labels.npy", (x @ w).argmax(1).astype(np.uint8))
PY
NPY=(--train_file "$WORK/train_*" --validation_file "$WORK/val" --model mlp --disable_tqdm --seed 7
  --learning_rate 1e-2 --do_train --do_eval --max_steps 16 --logging_steps 4 --save_steps 8)
"$CLI" train "${NPY[@]}" --output_dir "$WORK/npy1" --per_device_train_batch_size 32 >"$WORK/npy1.log" 2>&1 ||
  fail ".npy run failed: $(tail -20 "$WORK/npy1.log")"
"$CLI" launch --nproc_per_node 2 -- train "${NPY[@]}" --output_dir "$WORK/npy2" --per_device_train_batch_size 16 \
  >"$WORK/npy2.log" 2>&1 || fail "2-rank .npy run failed: $(tail -30 "$WORK/npy2.log")"
same_weights "$WORK/npy1/model.pt" "$WORK/npy2/model.pt" 1e-6 ".npy: 1 rank x32 vs 2 ranks x16"
"$CLI" train "${NPY[@]}" --output_dir "$WORK/npy_resumed" --per_device_train_batch_size 32 \
  --resume_from_checkpoint "$WORK/npy1/checkpoint-8" >"$WORK/npy_resumed.log" 2>&1 ||
  fail ".npy resume failed: $(tail -20 "$WORK/npy_resumed.log")"
same_weights "$WORK/npy1/model.pt" "$WORK/npy_resumed/model.pt" 0 ".npy: run vs its resume from step 8"
echo "eval_accuracy $(json_get "$WORK/npy1/eval_results.json" 'j["eval_accuracy"]')"
