#!/usr/bin/env bash
# The jsonl and csv loggers through the CLI (check_log_files.py does the comparing):
#  1. a normal run with evaluations: both files equal trainer_state.json's log_history;
#  2. kill -9 mid-run (after a bounded wait for lines and two checkpoints): every
#     complete line parses, the lines up to the last checkpoint equal its
#     log_history, csv rows equal jsonl lines, and the training lines equal an
#     uninterrupted run's with the same seed;
#  3. resuming that run from its last checkpoint: the files equal the final
#     log_history again (lines past the checkpoint were dropped, HF's rule).
# usage: cli_log_files.sh <trainhook> <digits.csv> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/../support/health_common.sh"
CHECK="$HEALTH_HERE/../jsonl/check_log_files.py"
STEPS=3000
LONG=(--max_steps $STEPS --logging_steps 1 --save_steps 40 --save_total_limit 2 --lr_scheduler_type constant
  --report_to jsonl,csv)

# 1. normal run
run "$WORK/normal" --max_steps 30 --logging_steps 5 --eval_strategy steps --eval_steps 10 --report_to jsonl,csv
"$VENV/bin/python" "$CHECK" equal "$WORK/normal" || fail "normal run: files differ from log_history"
grep -q "jsonl: .* log records in" "$WORK/normal.log" || fail "normal run: no jsonl summary line"

# 2. kill -9 mid-run
KILLED="$WORK/killed"
"$TH" train "${BASE[@]}" --output_dir "$KILLED" "${LONG[@]}" >"$KILLED.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 120))
# Two checkpoints (save_total_limit keeps the last two): at least 80 steps, so
# the file has lines before and past the last checkpoint.
until (($(ls -d "$KILLED"/checkpoint-* 2>/dev/null | wc -l) >= 2 &&
  $(cat "$KILLED/log_history.jsonl" 2>/dev/null | wc -l) >= 100)); do
  kill -0 $pid 2>/dev/null || { cat "$KILLED.log" >&2; fail "the run ended before it could be killed"; }
  ((SECONDS < deadline)) || { kill -9 $pid; fail "no 100 lines and two checkpoints within 120 s"; }
  sleep 0.01
done
kill -9 $pid
wait $pid 2>/dev/null || true
[[ -f "$KILLED/checkpoint-$STEPS/trainer_state.json" ]] && fail "the run finished before SIGKILL reached it"
"$VENV/bin/python" "$CHECK" killed "$KILLED" || fail "killed run: files inconsistent"
run "$WORK/reference" --max_steps $STEPS --logging_steps 1 --save_strategy no --lr_scheduler_type constant \
  --report_to jsonl
"$VENV/bin/python" "$CHECK" same "$KILLED" "$WORK/reference" || fail "killed run's lines differ from an uninterrupted run"

# 3. resume from the last checkpoint
last=$(ls -d "$KILLED"/checkpoint-* | sort -t- -k2 -n | tail -1)
run "$KILLED" "${LONG[@]}" --resume_from_checkpoint "$last"
"$VENV/bin/python" "$CHECK" equal "$KILLED" || fail "resumed run: files differ from log_history"
echo "ok: log files"
