#!/usr/bin/env bash
# Early stopping through the real CLI and trainer:
#  1. a plateau (learning_rate 0: eval_loss never changes) stops after exactly
#     `patience` non-improving evaluations;
#  2. greater_is_better both ways and the threshold, on a run that learns;
#  3. a run resumed in the middle of a patience window stops at the same step
#     as the uninterrupted run (the counter travels in the checkpoint).
# usage: cli_early_stopping.sh TRAINHOOK_BINARY WORK_DIR [extra trainhook args...]
set -euo pipefail
TH="$1"
WORK="$2"
shift 2
EXTRA=("$@")
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$WORK"
mkdir -p "$WORK"
"$HERE/make_data.sh" "$WORK/data"

source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

# 16 steps per epoch; evaluate and save every 5 steps.
run() {  # out_dir args...
  local out="$1"
  shift
  "$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" \
    --do_train --output_dir "$out" --per_device_train_batch_size 16 --per_device_eval_batch_size 16 \
    --eval_strategy steps --eval_steps 5 --save_strategy steps --save_steps 5 --logging_steps 5 \
    --metric_for_best_model eval_loss --load_best_model_at_end true --callbacks early_stopping \
    --disable_tqdm true --seed 1 --hidden_size 16 "${EXTRA[@]}" "$@" > "$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}

# The step training ended at: global_step of the newest checkpoint's trainer_state.json.
final_step() {  # out_dir
  local last
  last="$(ls -d "$1"/checkpoint-* | sed 's/.*checkpoint-//' | sort -n | tail -1)"
  [[ -n "$last" ]] || fail "no checkpoint in $1"
  sed -n 's/^ *"global_step": *\([0-9]*\).*/\1/p' "$1/checkpoint-$last/trainer_state.json" | head -1
}

expect_step() {  # what out_dir expected
  local got
  got="$(final_step "$2")"
  [[ "$got" == "$3" ]] || { cat "$2.log" >&2; fail "$1: training ended at step $got, expected $3"; }
  echo "ok: $1 (step $got)"
}

# 1. Plateau: the first evaluation sets the best, each later one is equal (not better).
for patience in 1 2 3; do
  run "$WORK/plateau$patience" --max_steps 60 --learning_rate 0 --plugin_config "early_stopping.patience=$patience"
  expect_step "plateau, patience $patience" "$WORK/plateau$patience" $((5 * (patience + 1)))
  grep -q "stopping training at step $((5 * (patience + 1)))" "$WORK/plateau$patience.log" ||
    fail "plateau: the early stopping message is missing from the log"
done
# The long option names work too.
run "$WORK/plateau_long" --max_steps 60 --learning_rate 0 \
  --plugin_config 'early_stopping={"early_stopping_patience": 2, "early_stopping_threshold": 0}'
expect_step "plateau, early_stopping_patience 2" "$WORK/plateau_long" 15

# 2. A run that learns: eval_loss falls between the first two evaluations.
run "$WORK/learn" --max_steps 20 --learning_rate 0.05
grep -c "'eval_loss'" "$WORK/learn.log" > /dev/null || fail "no evaluation logged"
step="$(final_step "$WORK/learn")"
((step > 10)) || { cat "$WORK/learn.log" >&2; fail "falling eval_loss, greater_is_better false: stopped at step $step"; }
echo "ok: falling eval_loss, greater_is_better false: not stopped at the 2nd evaluation (step $step)"
run "$WORK/learn_greater" --max_steps 20 --learning_rate 0.05 --greater_is_better true
expect_step "falling eval_loss, greater_is_better true: stops at the 2nd evaluation" "$WORK/learn_greater" 10
run "$WORK/learn_threshold" --max_steps 20 --learning_rate 0.05 --plugin_config early_stopping.threshold=1000
expect_step "falling eval_loss within the threshold: stops at the 2nd evaluation" "$WORK/learn_threshold" 10

# 3. Resume in the middle of a patience window (patience 3: uninterrupted stops at step 20).
run "$WORK/whole" --max_steps 60 --learning_rate 0 --plugin_config early_stopping.patience=3
expect_step "uninterrupted, patience 3" "$WORK/whole" 20
run "$WORK/part" --max_steps 10 --learning_rate 0 --plugin_config early_stopping.patience=3
expect_step "first part" "$WORK/part" 10
grep -q '"early_stopping_patience_counter": 1' "$WORK/part/checkpoint-10/trainer_state.json" ||
  fail "checkpoint-10 does not hold the early stopping counter (1)"
run "$WORK/part" --max_steps 60 --learning_rate 0 --plugin_config early_stopping.patience=3 \
  --resume_from_checkpoint "$WORK/part/checkpoint-10"
expect_step "resumed at step 10, patience 3" "$WORK/part" 20
echo "all early stopping CLI checks passed"
