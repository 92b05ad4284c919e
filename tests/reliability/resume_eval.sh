#!/usr/bin/env bash
# Resuming keeps the interrupted epoch's evaluation: with
# --eval_strategy epoch, a run resumed from a checkpoint of epoch 1 evaluates
# at the end of epochs 1 and 2 as the uninterrupted run does; the eval entries
# of log_history (step, epoch, eval_loss) are the same. checkpoint-2 is inside
# epoch 1; checkpoint-4 is its last step, saved at the step's end, before the
# epoch's evaluation (a run killed between the two lost that evaluation).
# The interrupted run is the uninterrupted run's own checkpoint (a run is
# deterministic; its checkpoints are bit-identical to a killed run's), so no
# step depends on timing.
# usage: resume_eval.sh <trainhook binary> <work dir>
set -uo pipefail
CLI="$1"
WORK="$2"
rm -rf "$WORK"
mkdir -p "$WORK"
python3 - "$WORK" <<'PY'
import random, sys
r = random.Random(7)
for name, n in (("train", 64), ("valid", 16)):
    with open(f"{sys.argv[1]}/{name}.csv", "w") as f:
        for _ in range(n):
            a, b = r.uniform(-1, 1), r.uniform(-1, 1)
            f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY
# 64 rows, batch 16: 4 steps an epoch.
ARGS=(train --train_file "$WORK/train.csv" --validation_file "$WORK/valid.csv" --per_device_train_batch_size 16
  --hidden_size 8 --disable_tqdm true --do_train --num_train_epochs 2 --eval_strategy epoch
  --save_strategy steps --save_steps 2 --logging_steps 1 --seed 3)
"$CLI" "${ARGS[@]}" --output_dir "$WORK/whole" >"$WORK/whole.log" 2>&1 || {
  echo "FAIL the uninterrupted run: $(tail -3 "$WORK/whole.log")"
  exit 1
}
failures=0
for ckpt in 2 4; do
  run="resumed-$ckpt"
  mkdir -p "$WORK/$run"
  cp -r "$WORK/whole/checkpoint-$ckpt" "$WORK/$run/"
  "$CLI" "${ARGS[@]}" --output_dir "$WORK/$run" --resume_from_checkpoint true >"$WORK/$run.log" 2>&1 || {
    echo "FAIL the run resumed from checkpoint-$ckpt: $(tail -3 "$WORK/$run.log")"
    failures=$((failures + 1))
    continue
  }
  python3 - "$WORK" "$run" <<'PY' || failures=$((failures + 1))
import json, sys
w, run = sys.argv[1], sys.argv[2]
def evals(run):
    with open(f"{w}/{run}/trainer_state.json") as f:
        history = json.load(f)["log_history"]
    return [(e["step"], e["epoch"], round(e["eval_loss"], 6)) for e in history if "eval_loss" in e]
whole, resumed = evals("whole"), evals(run)
print("uninterrupted:", whole)
print(f"{run}:  ", resumed)
if len(whole) != 2:
    sys.exit(f"FAIL the uninterrupted run has {len(whole)} evaluations, expected 2")
if resumed != whole:
    sys.exit(f"FAIL {run}: the resumed run's evaluations differ from the uninterrupted run's")
print(f"ok {run}: evaluated at the same steps with the same eval_loss")
PY
done
if ((failures > 0)); then
  echo "$failures resume case(s) failed"
  exit 1
fi
echo "all resume cases passed"
