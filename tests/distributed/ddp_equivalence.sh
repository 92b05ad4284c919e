#!/usr/bin/env bash
# 2 ranks (Gloo, 127.0.0.1, `trainhook launch`) with per-device batch 16 give
# after 30 steps the weights (within 1e-6), logged losses and eval accuracy of
# 1 process with batch 32 on the same data order (also with 2 accumulated
# micro-batches of 8 per rank); only rank 0 writes
# TensorBoard files; checkpoints hold rng_state_<rank>.pth; resuming the
# 2-rank run from its step-15 checkpoint ends bit-identical; resuming it with
# 1 process is refused with a clear message.
source "$(dirname "$0")/ddp_common.sh"
RUN=(--do_train --do_eval --max_steps 30 --logging_steps 10 --save_steps 15 --eval_strategy steps
  --eval_steps 15)

"$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/one" --per_device_train_batch_size 32 \
  >"$WORK/one.log" 2>&1 || fail "1-process run failed: $(tail -20 "$WORK/one.log")"
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/two" \
  --per_device_train_batch_size 16 --report_to tensorboard >"$WORK/two.log" 2>&1 ||
  fail "2-rank run failed: $(tail -30 "$WORK/two.log")"

same_weights "$WORK/one/model.pt" "$WORK/two/model.pt" 1e-6 "1 rank x32 vs 2 ranks x16"
a1=$(json_get "$WORK/one/eval_results.json" 'j["eval_accuracy"]')
a2=$(json_get "$WORK/two/eval_results.json" 'j["eval_accuracy"]')
[[ $a1 == "$a2" ]] || fail "eval_accuracy differs: 1 process $a1, 2 ranks $a2"
echo "eval_accuracy 1 process $a1 = 2 ranks $a2"
s1=$(json_get "$WORK/one/eval_results.json" 'j["eval_samples"]')
s2=$(json_get "$WORK/two/eval_results.json" 'j["eval_samples"]')
[[ $s1 == "$s2" ]] || fail "eval_samples differ: $s1 vs $s2"
l1=$(json_get "$WORK/one/trainer_state.json" '[e["loss"] for e in j["log_history"] if "loss" in e]')
l2=$(json_get "$WORK/two/trainer_state.json" '[e["loss"] for e in j["log_history"] if "loss" in e]')
# The loss is logged in full (newest transformers), so the mean over ranks and
# one process's loss agree to float rounding, not to the last digit.
python3 -c "import sys; a, b = eval(sys.argv[1]), eval(sys.argv[2]); sys.exit(0 if len(a) == len(b) and all(abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a, b)) else 1)" "$l1" "$l2" ||
  fail "logged losses differ: 1 process $l1, 2 ranks $l2 (should be averaged over ranks)"
echo "logged losses $l2"

# Only world rank 0 runs report_to integrations: every event file comes from
# one process (the files are named events.out.tfevents.<time>.<host>.<pid>.<n>).
writers=$(find "$WORK/two" -name 'events.out.tfevents*' | awk -F. '{print $(NF-1)}' | sort -u | wc -l)
[[ $writers == 1 ]] || fail "expected TensorBoard files from 1 process (rank 0), found $writers: $(find "$WORK/two" -name 'events*')"
# Every rank's RNG state, as HF names them; no single-process file.
for f in rng_state_0.pth rng_state_1.pth; do
  [[ -s $WORK/two/checkpoint-15/$f ]] || fail "checkpoint-15 lacks $f"
done
[[ ! -e $WORK/two/checkpoint-15/rng_state.pt ]] || fail "a 2-rank checkpoint has rng_state.pt"
leftovers=$(find "$WORK/two" -maxdepth 1 -name '*tmp*' | wc -l)
[[ $leftovers == 0 ]] || fail "temporary checkpoint folders left: $(ls "$WORK/two")"

# Gradient accumulation: 2 ranks x 2 micro-batches of 8, all-reduced on the
# window's last micro-step only, equal the same combined batch of 32.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/accum" \
  --per_device_train_batch_size 8 --gradient_accumulation_steps 2 >"$WORK/accum.log" 2>&1 ||
  fail "2-rank accumulation run failed: $(tail -30 "$WORK/accum.log")"
same_weights "$WORK/one/model.pt" "$WORK/accum/model.pt" 1e-6 "1 rank x32 vs 2 ranks x8 x2 accumulation"
# The reducer that overlaps with backward (the default) gives exactly what
# all-reducing after backward gives.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --ddp_gradient_reduction after_backward \
  --output_dir "$WORK/after" --per_device_train_batch_size 16 >"$WORK/after.log" 2>&1 ||
  fail "2-rank run without overlap failed: $(tail -30 "$WORK/after.log")"
same_weights "$WORK/two/model.pt" "$WORK/after/model.pt" 0 "overlapped vs after-backward all-reduce"
# The flag takes overlap or after_backward only; anything else is refused before
# training, naming it.
rc=0
"$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/knob" --ddp_gradient_reduction off \
  >"$WORK/knob.log" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "--ddp_gradient_reduction off: exit $rc, expected 2"
grep -q "ddp_gradient_reduction.*expected one of overlap, after_backward, got 'off'" "$WORK/knob.log" ||
  fail "no clear --ddp_gradient_reduction message: $(tail -5 "$WORK/knob.log")"

# Resume the 2-rank run from step 15: bit-identical at step 30.
"$CLI" launch --nproc_per_node 2 -- train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/resumed" \
  --per_device_train_batch_size 16 --resume_from_checkpoint "$WORK/two/checkpoint-15" \
  >"$WORK/resumed.log" 2>&1 || fail "2-rank resume failed: $(tail -30 "$WORK/resumed.log")"
same_weights "$WORK/two/model.pt" "$WORK/resumed/model.pt" 0 "2-rank run vs its resume from step 15"
r2=$(json_get "$WORK/resumed/eval_results.json" 'j["eval_accuracy"]')
[[ $r2 == "$a2" ]] || fail "resumed eval_accuracy $r2 differs from $a2"

# The same checkpoint with another world size is refused, naming both sizes.
rc=0
"$CLI" train "${DATA[@]}" "${RUN[@]}" --output_dir "$WORK/wrong" --per_device_train_batch_size 32 \
  --resume_from_checkpoint "$WORK/two/checkpoint-15" >"$WORK/wrong.log" 2>&1 || rc=$?
[[ $rc != 0 ]] || fail "resuming a 2-rank checkpoint with 1 process succeeded"
grep -q "written by a run of 2 process(es).*world_size 1" "$WORK/wrong.log" ||
  fail "no clear world-size message: $(tail -5 "$WORK/wrong.log")"
echo "PASS"
