#!/usr/bin/env bash
# Flyte's restore with two ranks: flyte is an integration, so it runs on rank 0
# only and only rank 0's callback picks the checkpoint to resume from. The
# trainer hands rank 0's pick to every rank (DataParallel::rank0_value), so
# both ranks resume the same checkpoint with their own RNG states, and the
# second attempt ends bit-identical to the uninterrupted run. Without that,
# rank 1 would start from step 0 while rank 0 resumed at 15, and the ranks'
# collectives would no longer match.
source "$(dirname "$0")/ddp_common.sh"
RUN=(--do_train --max_steps 30 --save_strategy steps --save_steps 15 --eval_strategy no --logging_steps 5
  --per_device_train_batch_size 16 --ddp_timeout 60 --report_to flyte)

# 1. The uninterrupted run; rank 0's flyte uploads checkpoint-15 and -30.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/full" \
  --plugin_config "flyte.checkpoint_path=file://$WORK/dest1" >"$WORK/full.log" 2>&1 ||
  fail "uninterrupted 2-rank run failed: $(tail -30 "$WORK/full.log")"
[[ -f $WORK/dest1/checkpoint-15/trainhook_manifest.json ]] ||
  fail "checkpoint-15 was not uploaded whole: $(grep -F checkpoint-15 "$WORK/full.log" | tail -3)"

# 2. The pod "died" while uploading checkpoint-30: its manifest never arrived.
rm -f "$WORK/dest1/checkpoint-30/trainhook_manifest.json"

# 3. The second attempt: rank 0's flyte restores checkpoint-15 into output_dir
#    (a disk both ranks share here) and picks it; rank 1 has no flyte.
TRAINHOOK_PREV_CHECKPOINT="$WORK/dest1" TRAINHOOK_CHECKPOINT_DEST="$WORK/dest2" \
  "$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/again" \
  >"$WORK/again.log" 2>&1 || fail "the restored 2-rank attempt failed: $(tail -30 "$WORK/again.log")"
grep -qF "restored checkpoint-15 from $WORK/dest1" "$WORK/again.log" ||
  fail "flyte did not restore checkpoint-15: $(tail -20 "$WORK/again.log")"
grep -qF "resuming training from $WORK/again/checkpoint-15" "$WORK/again.log" ||
  fail "rank 0 did not resume from the restored checkpoint: $(tail -20 "$WORK/again.log")"
same_weights "$WORK/full/model.pt" "$WORK/again/model.pt" 0 "uninterrupted 2-rank run vs its flyte-restored attempt"
step=$(json_get "$WORK/again/trainer_state.json" 'j["global_step"]')
[[ $step == 30 ]] || fail "the restored attempt ended at step $step, expected 30"
echo "PASS"
