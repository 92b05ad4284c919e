#!/usr/bin/env bash
# The flyte integration through the real CLI and trainer (local-folder store):
#  1. an uninterrupted run (--report_to flyte) uploads every checkpoint and the deck;
#  2. its newest upload is made partial (as if the pod died while uploading it);
#  3. a second attempt given the first one's prefix as previous checkpoint skips
#     the partial one, resumes from the one before, and ends with the same
#     weights as the uninterrupted run.
# usage: cli_flyte.sh TRAINHOOK_BINARY WORK_DIR
set -euo pipefail
TH="$1"
WORK="$2"
rm -rf "$WORK"
mkdir -p "$WORK/data"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

# A small learnable task: two features, label = (x1 + x2 > 0), deterministic.
gen() {  # seed rows file
  awk -v seed="$1" -v rows="$2" 'BEGIN { srand(seed); for (i = 0; i < rows; i++) {
    a = rand() * 2 - 1; b = rand() * 2 - 1; printf "%.4f,%.4f,%d\n", a, b, (a + b > 0) } }' > "$3"
}
gen 11 256 "$WORK/data/train.csv"
gen 12 64 "$WORK/data/valid.csv"

run() {  # out_dir args...
  local out="$1"
  shift
  "$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" \
    --do_train --output_dir "$out" --per_device_train_batch_size 16 --max_steps 12 \
    --save_strategy steps --save_steps 4 --logging_steps 2 --eval_strategy steps --eval_steps 4 \
    --disable_tqdm true --seed 3 --hidden_size 16 --report_to flyte "$@" > "$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}

# 1. The uninterrupted run.
run "$WORK/run1" --plugin_config "flyte.checkpoint_path=file://$WORK/dest1" \
  --plugin_config 'flyte.prev_checkpoint={{ .prevCheckpointPrefix }}'
for step in 4 8 12; do
  [[ -f "$WORK/dest1/checkpoint-$step/trainhook_manifest.json" ]] ||
    grep -q "checkpoint-$step (superseded" "$WORK/run1.log" || { cat "$WORK/run1.log"; fail "checkpoint-$step missing"; }
done
for f in "$WORK/run1/checkpoint-12"/*; do
  cmp "$f" "$WORK/dest1/checkpoint-12/$(basename "$f")" || fail "uploaded $(basename "$f") differs"
done
[[ -f "$WORK/dest1/log_history.html" ]] || fail "the log-history deck was not uploaded"
grep -q "<svg" "$WORK/dest1/log_history.html" || fail "the deck has no chart"
echo "ok: uninterrupted run uploaded its checkpoints and the deck"

# 2. The pod "died" while uploading checkpoint-12: its manifest never arrived.
rm "$WORK/dest1/checkpoint-12/trainhook_manifest.json"
truncate -s 10 "$WORK/dest1/checkpoint-12/model.pt"
RESUME_FROM=8
[[ -f "$WORK/dest1/checkpoint-8/trainhook_manifest.json" ]] || RESUME_FROM=4

# 3. The second attempt, locations from the environment (as a Flyte task's args would set them).
TRAINHOOK_PREV_CHECKPOINT="$WORK/dest1" TRAINHOOK_CHECKPOINT_DEST="$WORK/dest2" run "$WORK/run2"
grep -q "skipping checkpoint-12 from $WORK/dest1: no manifest (partial upload)" "$WORK/run2.log" ||
  { cat "$WORK/run2.log"; fail "the partial checkpoint was not reported as skipped"; }
grep -q "restored checkpoint-$RESUME_FROM from $WORK/dest1" "$WORK/run2.log" ||
  { cat "$WORK/run2.log"; fail "checkpoint-$RESUME_FROM was not restored"; }
# A run started over with the same seed would also end with equal weights:
# make sure this one really resumed and trained only the remaining steps.
grep -q "resuming training from $WORK/run2/checkpoint-$RESUME_FROM" "$WORK/run2.log" ||
  { cat "$WORK/run2.log"; fail "the trainer did not resume from the restored checkpoint"; }
[[ "$RESUME_FROM" != 8 || ! -d "$WORK/run2/checkpoint-4" ]] || fail "the second attempt trained from scratch (it saved checkpoint-4)"
cmp "$WORK/run1/checkpoint-12/model.pt" "$WORK/run2/checkpoint-12/model.pt" ||
  fail "the resumed run ended with other weights than the uninterrupted run"
# (optimizer.pt is not compared byte for byte: the order of the optimizer's
# state entries in the archive may differ after a load, with equal values.)
[[ -f "$WORK/dest2/checkpoint-12/trainhook_manifest.json" ]] || fail "the second attempt did not upload checkpoint-12"
echo "ok: resumed from checkpoint-$RESUME_FROM and ended with the same weights as the uninterrupted run"
