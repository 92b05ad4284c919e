#!/usr/bin/env bash
# A run started again after it finished (a scheduler's retry, torchrun's
# restart of every worker) trains no step: it resumes its last checkpoint,
# says once that the run was already complete, writes no new checkpoint and
# leaves the final model, train results and trainer_state.json byte for byte
# (writing one only if it is missing), exit 0. Beside it, the resumes that
# could be off by one: the last step of an epoch with --max_steps, a shorter
# last accumulation window, --save_strategy epoch with --max_steps, and the
# log entries of the resumed step (none twice).
# usage: finished_run.sh <trainhook binary> <work dir>
CASE_ROWS=64 CASE_SEED=11 source "$(dirname "${BASH_SOURCE[0]}")/cli_case_setup.sh"
# 64 rows, batch 16: 4 micro-batches an epoch.
BASE=(train --train_file "$WORK/train.csv" --per_device_train_batch_size 16 --hidden_size 8
  --disable_tqdm true --do_train --report_to none --logging_steps 1 --seed 3)
FINAL_FILES=(model.pt model.safetensors trainer_state.json train_results.json all_results.json)

# train NAME ARGS...: runs into $WORK/NAME, log in $WORK/NAME.<n>.log; fails on a non-zero exit.
declare -A starts
train() {
  local name=$1
  shift
  starts[$name]=$((${starts[$name]:-0} + 1))
  LAST_LOG="$WORK/$name.${starts[$name]}.log"
  "$CLI" "${BASE[@]}" "$@" --output_dir "$WORK/$name" >"$LAST_LOG" 2>&1 || {
    fail "$name (start ${starts[$name]}) exited $?: $(tail -3 "$LAST_LOG")"
    return 1
  }
}
digests() { (cd "$WORK/$1" && sha256sum "${FINAL_FILES[@]}" 2>&1); }
checkpoints() { (cd "$WORK/$1" && ls -d checkpoint-* 2>/dev/null | sort -t- -k2 -n | tr '\n' ' '); }

# expect_complete NAME WANT_CHECKPOINTS ARGS...: a further start of the finished run NAME.
expect_complete() {
  local name=$1 want=$2
  shift 2
  local before
  before="$(digests "$name")"
  train "$name" "$@" || return
  grep -q "the run was already complete: .*checkpoint-.* is at step" "$LAST_LOG" ||
    fail "$name: no 'already complete' line in: $(grep -i 'resum\|complete' "$LAST_LOG" | head -3)"
  [[ "$(checkpoints "$name")" == "$want" ]] || fail "$name: checkpoints '$(checkpoints "$name")', expected '$want'"
  [[ "$(digests "$name")" == "$before" ]] || fail "$name: final files changed:
$(diff <(echo "$before") <(digests "$name"))"
  grep -q "'loss'" "$LAST_LOG" && fail "$name: a training step was logged on a finished run"
  echo "ok $name: started again, trained nothing, kept: $(checkpoints "$name")"
}

# The issue's command: --max_steps 6 --save_steps 3 over 1.5 epochs, started three times.
STEPS=(--max_steps 6 --save_steps 3)
train steps "${STEPS[@]}"
[[ "$(checkpoints steps)" == "checkpoint-3 checkpoint-6 " ]] || fail "steps: checkpoints $(checkpoints steps)"
expect_complete steps "checkpoint-3 checkpoint-6 " "${STEPS[@]}"
expect_complete steps "checkpoint-3 checkpoint-6 " "${STEPS[@]}"
python3 - "$WORK/steps/trainer_state.json" <<'PY' || fail "steps: trainer_state.json"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["global_step"] == 6, s["global_step"]
steps = [e["step"] for e in s["log_history"] if "loss" in e]
assert steps == [1, 2, 3, 4, 5, 6], steps
PY

# A final model the first start did not get to write is written, from the
# last checkpoint, with the same bytes.
cp "$WORK/steps/model.safetensors" "$WORK/steps.safetensors"
rm "$WORK/steps/model.safetensors" "$WORK/steps/model.pt"
train steps "${STEPS[@]}" && grep -q "already complete" "$LAST_LOG" || fail "steps: missing model not a complete run"
cmp -s "$WORK/steps/model.safetensors" "$WORK/steps.safetensors" ||
  fail "steps: the rewritten model.safetensors differs from the first start's"
[[ -f $WORK/steps/model.pt ]] || fail "steps: model.pt not written again"
echo "ok steps: a missing final model is written again, byte-identical"

# Epochs, the last epoch complete.
EPOCHS=(--num_train_epochs 2 --save_strategy epoch)
train epochs "${EPOCHS[@]}"
expect_complete epochs "checkpoint-4 checkpoint-8 " "${EPOCHS[@]}"

# --save_strategy epoch with --max_steps inside an epoch: the epoch's end after
# the stop saves checkpoint-6; a start again is complete.
EPOCH_STEPS=(--max_steps 6 --save_strategy epoch)
train epoch_steps "${EPOCH_STEPS[@]}"
[[ "$(checkpoints epoch_steps)" == "checkpoint-4 checkpoint-6 " ]] ||
  fail "epoch_steps: checkpoints $(checkpoints epoch_steps)"
expect_complete epoch_steps "checkpoint-4 checkpoint-6 " "${EPOCH_STEPS[@]}"

# Resumes inside the run end where the uninterrupted run ends: the same final
# weights and the same log entries, none twice. Accumulation 3 over 4
# micro-batches an epoch gives windows of 3 and 1 (2 steps an epoch); 5 steps
# end inside an epoch; checkpoint-2 is an epoch's last step.
ACCUM=(--gradient_accumulation_steps 3 --max_steps 5 --save_steps 1 --eval_strategy no)
train accum "${ACCUM[@]}"
for ck in 1 2 4 5; do
  run="accum_from_$ck"
  mkdir -p "$WORK/$run"
  cp -r "$WORK/accum/checkpoint-$ck" "$WORK/$run/"
  train "$run" "${ACCUM[@]}" || continue
  cmp -s "$WORK/accum/model.safetensors" "$WORK/$run/model.safetensors" ||
    fail "$run: final weights differ from the uninterrupted run's"
  python3 - "$WORK/accum/trainer_state.json" "$WORK/$run/trainer_state.json" <<'PY' || fail "$run: log_history"
import json, sys
def entries(p):
    return [(e["step"], e.get("loss"), e.get("learning_rate")) for e in json.load(open(p))["log_history"] if "loss" in e]
whole, resumed = entries(sys.argv[1]), entries(sys.argv[2])
steps = [s for s, _, _ in resumed]
assert len(steps) == len(set(steps)), f"a step logged twice: {steps}"
assert resumed == whole, f"log entries differ:\n whole   {whole}\n resumed {resumed}"
PY
  [[ "$(checkpoints "$run")" == "$(checkpoints accum | sed "s/.*\(checkpoint-$ck \)/\1/")" ]] ||
    fail "$run: checkpoints '$(checkpoints "$run")'"
  echo "ok $run: same weights and log entries as the uninterrupted run"
done

# A start killed before its first checkpoint (the scheduler's SIGKILL, here
# mid-save: a tmp-checkpoint folder left behind) leaves only what a start
# writes; the same command again trains from scratch instead of refusing the
# folder as another run's, and ends where an uninterrupted run ends.
KILLED=(--max_steps 6 --save_steps 3)
"$CLI" "${BASE[@]}" --max_steps 100000 --save_steps 100000 --output_dir "$WORK/killed" >"$WORK/killed.0.log" 2>&1 &
pid=$!
if wait_for_text "$WORK/killed.0.log" "'loss'" "$pid"; then
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  mkdir -p "$WORK/killed/tmp-checkpoint-3"
  [[ -z "$(checkpoints killed)" ]] || fail "killed: a checkpoint before the kill: $(checkpoints killed)"
  left="$(cd "$WORK/killed" && ls -A | tr '\n' ' ')"
  if train killed "${KILLED[@]}"; then
    [[ "$(checkpoints killed)" == "checkpoint-3 checkpoint-6 " ]] || fail "killed: checkpoints $(checkpoints killed)"
    train killed_ref "${KILLED[@]}" &&
      { cmp -s "$WORK/killed_ref/model.safetensors" "$WORK/killed/model.safetensors" ||
        fail "killed: the restarted run's weights differ from an uninterrupted run's"; }
    echo "ok killed: a folder holding $left was started over"
  fi
else
  kill -9 "$pid" 2>/dev/null
  fail "killed: the first start logged no step: $(tail -3 "$WORK/killed.0.log")"
fi

if ((failures > 0)); then
  echo "$failures finished-run case(s) failed"
  exit 1
fi
echo "all finished-run cases passed"
