#!/usr/bin/env bash
# --lr_scheduler_type reduce_lr_on_plateau through the CLI (HF's
# ReduceLROnPlateau, stepped with eval_<metric_for_best_model> after each
# evaluation). An absolute threshold of 1e9 makes every evaluation after the
# first "bad". Evaluations every 2 steps, factor 0.5, patience 1 (torch: reduce
# when more than 1 evaluation in a row was bad): reductions after the
# evaluations of steps 6 and 10, so the logged learning_rate is 1e-3 up to step
# 6, 5e-4 for steps 7-10 and 2.5e-4 after. A run resumed from checkpoint-6 logs
# the same rates (the plateau's rate, best and counters are in scheduler.pt).
# Also HF's errors: no eval strategy; a metric_for_best_model the evaluation lacks.
# usage: cli_lr_plateau.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

KWARGS='{"factor": 0.5, "patience": 1, "threshold_mode": "abs", "threshold": 1e9}'
ARGS=(--max_steps 12 --logging_steps 1 --eval_strategy steps --eval_steps 2 --save_strategy steps --save_steps 2
  --learning_rate 1e-3 --warmup_steps 3 --lr_scheduler_type reduce_lr_on_plateau --lr_scheduler_kwargs "$KWARGS")
run "$WORK/full" "${ARGS[@]}"
run "$WORK/resumed" "${ARGS[@]}" --resume_from_checkpoint "$WORK/full/checkpoint-6"
py '
runs = [{r["step"]: r["learning_rate"] for r in json.load(open(p))["log_history"] if "learning_rate" in r}
        for p in sys.argv[1:]]
# Halved after the evaluations of steps 6 and 10; --warmup_steps 3 changes nothing (HF: no warmup).
want = {s: 1e-3 * 0.5 ** ((s > 6) + (s > 10)) for s in range(1, 13)}
got_full, got_resumed = runs
assert got_full == want, f"uninterrupted: {got_full}"
assert {s: got_resumed[s] for s in range(7, 13)} == {s: want[s] for s in range(7, 13)}, f"resumed: {got_resumed}"
print("learning rates", got_full)
' "$WORK/full/trainer_state.json" "$WORK/resumed/trainer_state.json" ||
  fail "the logged learning_rate did not drop as torch's ReduceLROnPlateau would (or not across the resume)"

# expect_error <log> <fragment> args...: trainhook train fails naming <fragment>.
expect_error() {
  local log="$1" fragment="$2"
  shift 2
  if "$TH" train "${BASE[@]}" --output_dir "$WORK/err" "$@" >"$log" 2>&1; then
    fail "trainhook train $* succeeded; expected an error naming $fragment"
  fi
  grep -qF -- "$fragment" "$log" || { cat "$log" >&2; fail "the error does not name $fragment"; }
  if grep -q "terminate called" "$log"; then fail "an uncaught exception for $*"; fi
}
expect_error "$WORK/no_eval.log" "requires an eval strategy" --max_steps 2 --lr_scheduler_type reduce_lr_on_plateau
expect_error "$WORK/no_metric.log" "eval_nonexistent" --max_steps 2 --eval_strategy steps --eval_steps 1 \
  --lr_scheduler_type reduce_lr_on_plateau --metric_for_best_model nonexistent
echo "ok: lr_scheduler_type reduce_lr_on_plateau, also across a resume; its errors"
