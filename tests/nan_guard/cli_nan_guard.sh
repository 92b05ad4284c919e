#!/usr/bin/env bash
# nan_guard through the CLI with --learning_rate 1e6 (the loss and gradients
# blow up within a few steps), under HF's default logging_nan_inf_filter true:
#  1. action stop, patience 2: the run ends 1 step after the first bad step, with
#     a message naming a parameter and the step;
#  2. action skip: the run finishes max_steps, bad steps are skipped, and the
#     weights stay finite (their norms, logged by grad_stats, are finite at
#     every logged step);
#  3. a bad plugin_config value is refused naming the key.
# usage: cli_nan_guard.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"

# SGD without clipping: the weights overflow within a few steps (AdamW's
# bounded updates take too long at this size).
DIVERGE=(--learning_rate 1e6 --optim sgd --max_grad_norm 0)
run "$WORK/stop" "${DIVERGE[@]}" --max_steps 60 --logging_steps 1 --save_strategy no \
  --callbacks nan_guard --plugin_config nan_guard.patience=2
grep -E "step [0-9]+: non-finite gradient in '[a-z0-9_.]+'" "$WORK/stop.log" | grep -q "stopping training" ||
  { cat "$WORK/stop.log" >&2; fail "stop: no message naming the parameter and the step"; }
first=$(grep -oE "step [0-9]+: non-finite" "$WORK/stop.log" | head -1 | grep -oE "[0-9]+")
last=$(py 'print(json.load(open(sys.argv[1]))["global_step"])' "$WORK/stop/trainer_state.json")
[[ $last -eq $((first + 1)) ]] || fail "stop: first bad step $first, patience 2, but training ended at step $last"
[[ $last -lt 60 ]] || fail "stop: the run was not stopped"
echo "ok: stop at step $last (first bad step $first), $(grep -oE "non-finite gradient in '[^']+'" "$WORK/stop.log" | head -1)"

run "$WORK/skip" "${DIVERGE[@]}" --max_steps 40 --logging_steps 1 --save_strategy no \
  --callbacks nan_guard,grad_stats --plugin_config nan_guard.action=skip --plugin_config grad_stats.gradients=false
grep -q "optimizer step skipped" "$WORK/skip.log" || { cat "$WORK/skip.log" >&2; fail "skip: no step was skipped"; }
py '
h = json.load(open(sys.argv[1]))
assert h["global_step"] == 40, h["global_step"]
rows = [r for r in h["log_history"] if "loss" in r]
assert len(rows) == 40, len(rows)
for r in rows:
    w = {k: v for k, v in r.items() if k.startswith("weight_norm/")}
    assert w and all(math.isfinite(v) for v in w.values()), "step %s: weights not finite: %s" % (r["step"], r)
skipped = max(r.get("nan_guard_skipped_steps", 0) for r in h["log_history"])
assert skipped > 0
print("skipped", skipped, "of 40 steps; weights finite at every step")
' "$WORK/skip/trainer_state.json" || fail "skip: non-finite weights or missing logs"
echo "ok: skip"

set +e
"$TH" train "${BASE[@]}" --output_dir "$WORK/bad" --max_steps 2 --callbacks nan_guard \
  --plugin_config nan_guard.action=halt >"$WORK/bad.log" 2>&1
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a bad action was accepted"
grep -qF "plugin_config nan_guard.action: expected one of stop, skip, got \"halt\"" "$WORK/bad.log" ||
  { cat "$WORK/bad.log" >&2; fail "bad action: unclear message"; }
echo "ok: bad config"
