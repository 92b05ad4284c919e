#!/usr/bin/env bash
# Early stopping triggered on one rank stops both at the same step: rank 1
# runs the early_stopping callback (threshold 10: no evaluation after the
# first counts as an improvement, so with patience 1 it stops at the second
# evaluation, step 10); rank 0 runs no callback. TrainerControl flags are
# OR-reduced at step end, so rank 0 stops at step 10 too and both exit 0
# (without the agreement rank 0 would train on alone and fail or hang).
source "$(dirname "$0")/ddp_common.sh"
RUN=(--do_train --max_steps 200 --eval_strategy steps --eval_steps 5 --save_strategy no --logging_steps 5
  --metric_for_best_model eval_loss --per_device_train_batch_size 16 --ddp_timeout 60)
port=$(free_port)
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  "$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/out" >"$WORK/rank0.log" 2>&1 &
p0=$!
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  "$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/out" --callbacks early_stopping \
  --plugin_config early_stopping.patience=1 --plugin_config early_stopping.threshold=10 >"$WORK/rank1.log" 2>&1 &
p1=$!
rc0=0 rc1=0
wait $p0 || rc0=$?
wait $p1 || rc1=$?
[[ $rc0 == 0 && $rc1 == 0 ]] || fail "exit codes rank 0: $rc0, rank 1: $rc1
rank 0: $(tail -5 "$WORK/rank0.log")
rank 1: $(tail -5 "$WORK/rank1.log")"
# Rank 1 logs warnings only (HF's log_level_replica): its callback's warning
# shows it ran there; the stop at step 10 of 200 can only come from it.
grep -qF "[early_stopping] using early stopping without load_best_model_at_end" "$WORK/rank1.log" ||
  fail "rank 1 did not run the early_stopping callback: $(tail -5 "$WORK/rank1.log")"
grep -qF "[early_stopping]" "$WORK/rank0.log" && fail "rank 0 ran the early_stopping callback"
step=$(json_get "$WORK/out/trainer_state.json" 'j["global_step"]')
[[ $step == 10 ]] || fail "rank 0 stopped at step $step, expected 10 (rank 1's early stop)"
echo "early stop on rank 1 stopped rank 0 at step $step (max_steps 200)"
echo "PASS"
