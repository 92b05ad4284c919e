#!/usr/bin/env bash
# grad_stats through the CLI: every logged step has grad_norm/<name> and
# weight_norm/<name>; per parameter, the gradient norms combine to the trainer's
# grad_norm (no clipping: max_grad_norm 1e9) to 1e-5 relative; per module the
# same; the values reach TensorBoard's scalars (real tensorboard reader).
# usage: cli_grad_stats.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"
unset TENSORBOARD_LOGGING_DIR

for per in parameter module; do
  run "$WORK/$per" --max_steps 8 --logging_steps 2 --max_grad_norm 1e9 --save_strategy no \
    --callbacks grad_stats --plugin_config grad_stats.per=$per --report_to tensorboard
  py '
h = json.load(open(sys.argv[1]))["log_history"]
rows = [r for r in h if "grad_norm" in r]
assert [r["step"] for r in rows] == [2, 4, 6, 8], rows
for r in rows:
    g = {k: v for k, v in r.items() if k.startswith("grad_norm/")}
    w = {k: v for k, v in r.items() if k.startswith("weight_norm/")}
    assert g and w, r
    total = math.sqrt(sum(v * v for v in g.values()))
    assert abs(total - r["grad_norm"]) <= 1e-5 * r["grad_norm"], (total, r["grad_norm"])
print(sys.argv[2], sorted(k for k in rows[0] if "/" in k))
' "$WORK/$per/trainer_state.json" "$per" || fail "$per: grad_stats values missing or wrong"
  "$VENV/bin/python" "$HEALTH_HERE/../tensorboard/check_events.py" "$WORK/$per" --trainer-output 2>"$WORK/$per.check" ||
    { cat "$WORK/$per.check" >&2; fail "$per: TensorBoard scalars do not match log_history"; }
  echo "ok: per $per"
done
