#!/usr/bin/env bash
# Integration test: the main job's configuration through the CLI on the 8x8
# digits (1797 rows, 64 features 0..16, label 0..9) must reach 95% eval
# accuracy, keep the best checkpoint and write the metrics files.
# usage: cli_main_job.sh <trainhook binary> <digits.csv> <work dir>
set -euo pipefail
cli="$1"; data="$2"; work="$3"
if [[ ! -s "$data" ]]; then
  echo "FAIL: $data is missing; scripts/install-deps unpacks it" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
"$cli" train --train_file "$data" --validation_split_percentage 20 --feature_scale 0.0625 \
  --model cnn --hidden_size 128 \
  --do_train --do_eval --output_dir "$work/out" \
  --num_train_epochs 15 --per_device_train_batch_size 32 --learning_rate 3e-3 --warmup_ratio 0.05 \
  --eval_strategy epoch --save_strategy epoch --save_total_limit 2 --logging_steps 100 \
  --load_best_model_at_end --metric_for_best_model accuracy --disable_tqdm \
  >"$work/stdout.txt" 2>"$work/stderr.txt" || {
  echo "FAIL: trainhook train exited with $?" >&2
  cat "$work/stderr.txt" >&2
  exit 1
}
python3 - "$work/out" <<'PY'
import json, os, sys
out = sys.argv[1]
ev = json.load(open(os.path.join(out, "eval_results.json")))
acc = ev["eval_accuracy"]
print(f"eval_accuracy = {acc:.4f}")
assert acc >= 0.95, f"eval accuracy {acc} below 0.95"
allr = json.load(open(os.path.join(out, "all_results.json")))
for k in ("train_loss", "train_runtime", "eval_accuracy", "eval_loss", "train_samples", "eval_samples"):
    assert k in allr, f"all_results.json lacks {k}"
assert allr["train_samples"] == 1438 and allr["eval_samples"] == 359, allr
state = json.load(open(os.path.join(out, "trainer_state.json")))
assert state["global_step"] == 15 * 45, state["global_step"]
ckpts = sorted(d for d in os.listdir(out) if d.startswith("checkpoint-"))
assert 1 <= len(ckpts) <= 2, ckpts
best = state["best_model_checkpoint"]
assert os.path.basename(best) in ckpts, (best, ckpts)
for f in ("model.pt", "optimizer.pt", "scheduler.json", "rng_state.pt", "trainer_state.json", "training_args.json"):
    assert os.path.exists(os.path.join(best, f)), f
evals = [e for e in state["log_history"] if "eval_accuracy" in e]
assert len(evals) == 15, len(evals)
assert os.path.exists(os.path.join(out, "model.pt"))
print("OK")
PY
grep -q "eval metrics" "$work/stdout.txt" || { echo "FAIL: no eval metrics printed" >&2; exit 1; }
