#!/usr/bin/env bash
# reduce_lr_on_plateau through the CLI. An absolute threshold of 1e9 makes
# every evaluation after the first "flat". Evaluations every 2 steps, factor
# 0.5, patience 2: reductions after the evaluations of steps 6 and 10, so the
# learning_rate in log_history is 1e-3 up to step 6, 5e-4 for steps 7-10 and
# 2.5e-4 after. A run resumed from checkpoint-6 (after the first reduction)
# logs the same rates: the factor and the plateau's best/counters are restored.
# usage: cli_reduce_lr_on_plateau.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

ARGS=(--max_steps 12 --logging_steps 1 --eval_strategy steps --eval_steps 2 --save_strategy steps --save_steps 2
  --learning_rate 1e-3 --lr_scheduler_type constant --callbacks reduce_lr_on_plateau
  --plugin_config reduce_lr_on_plateau.factor=0.5 --plugin_config reduce_lr_on_plateau.patience=2
  --plugin_config reduce_lr_on_plateau.threshold_mode=abs --plugin_config reduce_lr_on_plateau.threshold=1e9)
run "$WORK/full" "${ARGS[@]}"
run "$WORK/resumed" "${ARGS[@]}" --resume_from_checkpoint "$WORK/full/checkpoint-6"
py '
def lrs(path):
    return {r["step"]: r["learning_rate"] for r in json.load(open(path))["log_history"] if "learning_rate" in r}
full = lrs(sys.argv[1])
resumed = {s: v for s, v in lrs(sys.argv[2]).items() if s > 6}  # steps 1-6 come from the checkpoint
expect = {s: 1e-3 if s <= 6 else 5e-4 if s <= 10 else 2.5e-4 for s in range(1, 13)}
assert full == expect, f"uninterrupted: {full}"
assert resumed == {s: expect[s] for s in range(7, 13)}, f"resumed: {resumed}"
print("learning rates", full)
' "$WORK/full/trainer_state.json" "$WORK/resumed/trainer_state.json" ||
  fail "the learning rate did not drop by factor after patience flat evaluations (or not across the resume)"
grep -q "learning rate 0.001 -> 0.0005" "$WORK/full.log" || fail "no message for the first reduction"
echo "ok: reduce_lr_on_plateau, also across a resume"
