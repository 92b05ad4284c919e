#!/usr/bin/env bash
# The reliability suite: malformed inputs, damaged checkpoints and
# hostile values through the real CLI. For every case: the exit code is 1-123
# (2 for argument errors), stderr names the file/key/line/flag at fault, there
# is no backtrace and no "terminate called", and nothing written earlier was
# damaged (checked with the checkpoint's own checkpoint.sha256).
# usage: reliability_suite.sh <trainhook binary> <work dir> <folder of the evil test plugin>
set -uo pipefail
CLI="$1"
WORK="$2"
EVIL_DIR="${3:-}"
rm -rf "$WORK"
mkdir -p "$WORK"
KEEP_GOING=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

python3 - "$WORK" <<'PY'
import random, sys
w = sys.argv[1]
r = random.Random(3)
with open(f"{w}/train.csv", "w") as f:
    for _ in range(64):
        a, b = r.uniform(-1, 1), r.uniform(-1, 1)
        f.write(f"{a:.4f},{b:.4f},{int(a + b > 0)}\n")
PY
TRAIN="$WORK/train.csv"
BASE=(--train_file "$TRAIN" --per_device_train_batch_size 16 --hidden_size 16 --disable_tqdm true --seed 1
  --logging_steps 2)

# No backtrace, no terminate, no raw library message in what a user sees.
clean_output() {
  local name="$1" file="$2"
  if grep -qE "terminate called|Exception raised from|frame #[0-9]|c10::Error|\[json\.exception|what\(\): *stoll|^error: stoll" "$file"; then
    fail "$name: raw library output: $(grep -m3 -E "terminate|Exception raised|frame #|c10::|json.exception|stoll" "$file")"
    return 1
  fi
}

# expect <name> <rc: "error" = 1..123, or a number> <text in stderr> -- trainhook train args...
expect() {
  local name="$1" want="$2" text="$3"
  shift 4
  "$CLI" train "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  cat "$WORK/$name.out" >>"$WORK/$name.err"
  if [[ $want == error ]]; then
    if ((rc < 1 || rc > 123)); then
      fail "$name: exit $rc, expected an error exit code 1-123"
      tail -5 "$WORK/$name.err"
      return
    fi
  elif ((rc != want)); then
    fail "$name: exit $rc, expected $want"
    tail -5 "$WORK/$name.err"
    return
  fi
  if [[ -n $text ]] && ! grep -qF -- "$text" "$WORK/$name.err"; then
    fail "$name: the output lacks '$text':"
    tail -5 "$WORK/$name.err"
    return
  fi
  clean_output "$name" "$WORK/$name.err" || return
  echo "ok $name"
}

# ---- data ----
printf '1,2,0\n3,1e39,1\n' >"$WORK/overflow.csv"
expect csv_float_overflow error "$WORK/overflow.csv:2: field 2 '1e39' does not fit a 32-bit float" -- \
  --do_train --max_steps 1 --output_dir "$WORK/o1" --train_file "$WORK/overflow.csv"
printf '1,2,0\n3,4,1e300\n' >"$WORK/label300.csv"
expect label_1e300 error "$WORK/label300.csv:2: label '1e300' is far too large for a class id" -- \
  --do_train --max_steps 1 --output_dir "$WORK/o2" --train_file "$WORK/label300.csv"
printf '1,2,0\n3,4,1e12\n' >"$WORK/label12.csv"
expect label_1e12 error "$WORK/label12.csv:2: label 1000000000000 is too large a class id" -- \
  --do_train --max_steps 1 --output_dir "$WORK/o3" --train_file "$WORK/label12.csv"
printf '\xEF\xBB\xBF0,1,1\n1,0,0\n0.5,0.5,1\n' >"$WORK/bom.csv"
expect csv_bom 0 "" -- --do_train --max_steps 1 --output_dir "$WORK/o4" --train_file "$WORK/bom.csv" \
  --disable_tqdm true --hidden_size 16
mkdir -p "$WORK/folder.csv"
expect train_file_folder error "$WORK/folder.csv: is a folder, not a CSV file" -- \
  --do_train --max_steps 1 --output_dir "$WORK/o5" --train_file "$WORK/folder.csv"

# ---- arguments and config files ----
expect epochs_overflow 2 "--num_train_epochs: 1e+30 is too large" -- "${BASE[@]}" --do_train \
  --num_train_epochs 1e30 --output_dir "$WORK/o6"
printf '{\n "seed": 1,\n "seed": 2\n}\n' >"$WORK/dup.json"
expect json_duplicate_key 2 "$WORK/dup.json:3: duplicate key 'seed'" -- "${BASE[@]}" --do_train \
  --config "$WORK/dup.json" --output_dir "$WORK/o7"
python3 -c "import sys; open(sys.argv[1], 'w').write('{\"x\": ' + '[' * 200000)" "$WORK/deep.json"
expect json_deep_nesting 2 "$WORK/deep.json:1: nested deeper than 100 levels" -- "${BASE[@]}" --do_train \
  --config "$WORK/deep.json" --output_dir "$WORK/o8"
python3 -c "import sys; open(sys.argv[1], 'w').write('max_steps: ' + '9' * 50000 + '\n')" "$WORK/int.yaml"
expect yaml_long_int 2 "$WORK/int.yaml:1: a number of 50000 characters" -- "${BASE[@]}" --do_train \
  --config "$WORK/int.yaml" --output_dir "$WORK/o9"
python3 -c "import sys; open(sys.argv[1], 'w').write('learning_rate: 0.' + '1' * 200000 + '\n')" "$WORK/float.yaml"
expect yaml_long_float 2 "$WORK/float.yaml:1: a number of 200002 characters" -- "${BASE[@]}" --do_train \
  --config "$WORK/float.yaml" --output_dir "$WORK/o10"
expect run_name_latin1 2 "--run_name: not valid UTF-8 text (byte 0xE9" -- "${BASE[@]}" --do_train \
  --run_name "$(printf 'caf\xe9')" --output_dir "$WORK/o11"
expect output_dir_latin1 2 "--output_dir: not valid UTF-8 text (byte 0xFF" -- "${BASE[@]}" --do_train \
  --output_dir "$WORK/$(printf 'out\xff')"
expect early_stopping_no_metric 2 "--callbacks early_stopping requires --metric_for_best_model" -- \
  "${BASE[@]}" --do_train --callbacks early_stopping --eval_strategy steps --validation_file "$TRAIN" \
  --output_dir "$WORK/o12"
expect plugin_config_typo error "the section 'early_stoping' is read by no callback of this run (did you mean 'early_stopping'?)" -- \
  "${BASE[@]}" --do_train --max_steps 2 --callbacks early_stopping --metric_for_best_model eval_loss \
  --eval_strategy steps --eval_steps 1 --validation_file "$TRAIN" \
  --plugin_config early_stoping.early_stopping_patience=5 --output_dir "$WORK/o13"
[[ -e "$WORK/o13/model.pt" ]] && fail "plugin_config_typo: the run trained anyway"

# ---- a finished run, then damaged checkpoints ----
RUN="$WORK/run"
expect good_run 0 "" -- "${BASE[@]}" --do_train --do_eval --validation_file "$TRAIN" --max_steps 4 \
  --save_steps 2 --output_dir "$RUN"
[[ -f "$RUN/checkpoint-4/checkpoint.sha256" ]] || fail "good_run: checkpoint-4 has no checkpoint.sha256"
(cd "$RUN/checkpoint-4" && sha256sum --quiet -c checkpoint.sha256) || fail "good_run: checkpoint.sha256 does not verify"
eval_loss() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['eval_loss'])" "$1"; }
trained_loss="$(eval_loss "$RUN/eval_results.json")"

# Evaluate-only loads the trained model (it evaluated a fresh one before).
expect eval_only_trained 0 "" -- "${BASE[@]}" --do_eval --validation_file "$TRAIN" --output_dir "$RUN"
[[ "$(eval_loss "$RUN/eval_results.json")" == "$trained_loss" ]] ||
  fail "eval_only_trained: eval_loss $(eval_loss "$RUN/eval_results.json") != the trained model's $trained_loss"
expect eval_only_nothing error "has no model.pt; train first" -- "${BASE[@]}" --do_eval \
  --validation_file "$TRAIN" --output_dir "$WORK/empty_out"
expect eval_only_resume_true error "--resume_from_checkpoint true continues training from the latest checkpoint" -- \
  "${BASE[@]}" --do_eval --validation_file "$TRAIN" --output_dir "$RUN" --resume_from_checkpoint true

damaged() {  # a copy of checkpoint-4 to spoil
  rm -rf "$WORK/$1"
  cp -r "$RUN/checkpoint-4" "$WORK/$1"
  echo "$WORK/$1"
}
D="$(damaged flipped)"
python3 - "$D/model.pt" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
mid = len(b) // 2
for i in range(mid, min(mid + 256, len(b))):
    b[i] ^= 0xFF
open(p, "wb").write(bytes(b))
PY
expect checkpoint_flipped_bytes error "$D/model.pt: damaged: its SHA-256 differs" -- "${BASE[@]}" --do_train \
  --max_steps 6 --resume_from_checkpoint "$D" --output_dir "$WORK/o14"
D="$(damaged negative_step)"
python3 - "$D/trainer_state.json" <<'PY'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["global_step"] = -5
open(p, "w").write(json.dumps(s))
PY
rm -f "$D/checkpoint.sha256"  # as an older checkpoint: the value itself must be refused
expect state_negative_step error "$D/trainer_state.json: key 'global_step': expected a count" -- "${BASE[@]}" \
  --do_train --max_steps 6 --resume_from_checkpoint "$D" --output_dir "$WORK/o15"
mkdir -p "$WORK/o16/checkpoint-99999999999999999999"
echo '{}' >"$WORK/o16/checkpoint-99999999999999999999/trainer_state.json"
expect checkpoint_huge_step error "checkpoint-99999999999999999999: the step number" -- "${BASE[@]}" --do_train \
  --max_steps 2 --output_dir "$WORK/o16"
# A checkpoint that does not fit the run: its config.json names the model arguments
# before any tensor is read; one written before config.json existed still names
# the parameter shapes.
expect checkpoint_other_model error "checkpoint-4 holds a model built with other arguments (hidden_size: 16 saved, 32 now (--hidden_size))" -- \
  "${BASE[@]}" --hidden_size 32 --do_train --max_steps 6 --resume_from_checkpoint "$RUN/checkpoint-4" \
  --output_dir "$WORK/o19"
cp -r "$RUN/checkpoint-4" "$WORK/old_checkpoint"
rm "$WORK/old_checkpoint/config.json" "$WORK/old_checkpoint/checkpoint.sha256"
expect checkpoint_other_model_no_config error "the checkpoint's model differs from the one asked for (" -- \
  "${BASE[@]}" --hidden_size 32 --do_train --max_steps 6 --resume_from_checkpoint "$WORK/old_checkpoint" \
  --output_dir "$WORK/o19b"
grep -qF "is [16, 2] in the checkpoint but [32, 2] in the model asked for" \
  "$WORK/checkpoint_other_model_no_config.err" ||
  fail "checkpoint_other_model_no_config: the shapes are not named: $(tail -2 "$WORK/checkpoint_other_model_no_config.err")"
expect eval_only_other_model error "holds a model built with other arguments (hidden_size: 16 saved, 32 now (--hidden_size))" -- \
  "${BASE[@]}" --hidden_size 32 --do_eval --validation_file "$TRAIN" --output_dir "$RUN"
expect checkpoint_other_run error "max_steps: 4 in the checkpoint, 8 now; seed: 1 in the checkpoint, 2 now" -- \
  "${BASE[@]}" --do_train --max_steps 8 --save_steps 2 --seed 2 --output_dir "$RUN"
grep -qF -- "--resume_from_checkpoint $RUN/checkpoint-4, or to train from scratch pass --overwrite_output_dir" \
  "$WORK/checkpoint_other_run.err" || fail "checkpoint_other_run: the two ways on are not named"
[[ -d "$RUN/checkpoint-6" ]] && fail "checkpoint_other_run: the other run's checkpoint was resumed"
expect checkpoint_by_path_other_lr 0 "learning_rate: 5e-05 in the checkpoint, 0.001 now" -- "${BASE[@]}" \
  --do_train --max_steps 4 --save_steps 2 --learning_rate 0.001 \
  --resume_from_checkpoint "$RUN/checkpoint-4" --output_dir "$WORK/o20"
(cd "$RUN/checkpoint-4" && sha256sum --quiet -c checkpoint.sha256) || fail "the damaged copies touched the original"

# ---- credentials inside values ----
expect url_password 0 "" -- "${BASE[@]}" --do_train --max_steps 2 --output_dir "$WORK/o17" \
  --run_name "http://alice:S3CRETPW@host.example/x"
if grep -rqF S3CRETPW "$WORK/o17" "$WORK/url_password.err"; then
  fail "url_password: the password is in $(grep -rlF S3CRETPW "$WORK/o17" "$WORK/url_password.err" | head -3)"
else
  grep -qF 'http://alice:<PASSWORD>@host.example/x' "$WORK/o17/training_args.json" &&
    echo "ok url_password masked" || fail "url_password: training_args.json lacks the masked URL"
fi

# ---- a plugin that segfaults: named, then the process dies of the signal as before ----
if [[ -n $EVIL_DIR ]]; then
  "$CLI" train "${BASE[@]}" --do_train --max_steps 2 --output_dir "$WORK/o18" --plugin_dir "$EVIL_DIR" \
    --callbacks evil_segv >"$WORK/segv.out" 2>"$WORK/segv.err"
  rc=$?
  want="in plugin code: callback 'evil_segv' from $EVIL_DIR/libtrainhook_evil.so, while running on_log"
  if ((rc != 139)); then
    fail "plugin_segfault: exit $rc, expected 139 (128 + SIGSEGV)"
  elif ! grep -qF "trainhook: fatal: SIGSEGV (invalid memory access) $want" "$WORK/segv.err"; then
    fail "plugin_segfault: stderr lacks '$want': $(tail -3 "$WORK/segv.err")"
  else
    echo "ok plugin_segfault"
  fi
fi

# ---- signals: the first finishes the step, saves a checkpoint, stops with 128 + signal ----
wait_for_training() {  # wait_for_training <output_dir> <pid>: until the first checkpoint (step 50) exists
  for _ in $(seq 1 1200); do
    [[ -f "$1/checkpoint-50/trainer_state.json" ]] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
SIG="$WORK/sig"
"$CLI" train "${BASE[@]}" --do_train --max_steps 10000000 --save_steps 50 --output_dir "$SIG" \
  >"$WORK/sigterm.err" 2>&1 &
pid=$!
if wait_for_training "$SIG" $pid; then
  kill -TERM $pid
  wait $pid
  rc=$?
  step="$(sed -n 's/.*stopped by SIGTERM at step \([0-9]*\).*/\1/p' "$WORK/sigterm.err")"
  if ((rc != 143)); then
    fail "sigterm: exit $rc, expected 143 (128 + SIGTERM): $(tail -3 "$WORK/sigterm.err")"
  elif [[ -z $step || ! -f "$SIG/checkpoint-$step/checkpoint.sha256" || ! -f "$SIG/model.pt" ]]; then
    fail "sigterm: no checkpoint-$step and model.pt after the signal: $(ls "$SIG") $(tail -3 "$WORK/sigterm.err")"
  else
    (cd "$SIG/checkpoint-$step" && sha256sum --quiet -c checkpoint.sha256) && clean_output sigterm "$WORK/sigterm.err" &&
      echo "ok sigterm (checkpoint-$step)"
  fi
else
  kill -KILL $pid 2>/dev/null
  fail "sigterm: the run did not reach its first checkpoint: $(tail -3 "$WORK/sigterm.err")"
fi
"$CLI" train "${BASE[@]}" --do_train --max_steps 10000000 --save_steps 50 --output_dir "$WORK/sig2" \
  >"$WORK/sigint2.err" 2>&1 &
pid=$!
if wait_for_training "$WORK/sig2" $pid; then
  kill -INT $pid
  kill -INT $pid
  wait $pid
  rc=$?
  ((rc == 130)) && echo "ok second signal stops at once" || fail "sigint twice: exit $rc, expected 130"
else
  kill -KILL $pid 2>/dev/null
  fail "sigint2: the run did not reach its first checkpoint"
fi

# ---- the requeue signal (Slurm's --signal=USR1@90): checkpoint, scontrol requeue, exit 75 ----
FAKE_BIN="$WORK/fake_bin"
mkdir -p "$FAKE_BIN"
printf '#!/bin/sh\necho "$@" > "%s/scontrol.args"\n' "$WORK" >"$FAKE_BIN/scontrol"
chmod +x "$FAKE_BIN/scontrol"
requeue_run() {  # requeue_run <name> <signal> <extra env...> -- cli args...
  local name="$1" sig="$2"
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  rm -f "$WORK/scontrol.args"
  env PATH="$FAKE_BIN:$PATH" SLURM_JOB_ID=4242 "${envs[@]}" "$CLI" train "${BASE[@]}" --do_train \
    --max_steps 10000000 --save_steps 50 --output_dir "$WORK/$name" "$@" >"$WORK/$name.err" 2>&1 &
  pid=$!
  if wait_for_training "$WORK/$name" $pid; then
    kill -"$sig" $pid
    wait $pid
    rc=$?
  else
    kill -KILL $pid 2>/dev/null
    rc=-1
  fi
}
requeue_run requeue USR1 --
step="$(sed -n 's/.*stopped by SIGUSR1 at step \([0-9]*\).*/\1/p' "$WORK/requeue.err")"
if ((rc != 75)); then
  fail "requeue: exit $rc, expected 75: $(tail -3 "$WORK/requeue.err")"
elif [[ "$(cat "$WORK/scontrol.args" 2>/dev/null)" != "requeue 4242" ]]; then
  fail "requeue: scontrol was not run as 'scontrol requeue 4242'"
elif [[ -z $step || ! -f "$WORK/requeue/checkpoint-$step/checkpoint.sha256" ]]; then
  fail "requeue: no checkpoint-$step after SIGUSR1: $(tail -3 "$WORK/requeue.err")"
elif ! grep -qF "requeued Slurm job 4242" "$WORK/requeue.err"; then
  fail "requeue: the output does not say the job was requeued: $(tail -3 "$WORK/requeue.err")"
else
  echo "ok requeue (checkpoint-$step, scontrol requeue 4242, exit 75)"
fi
printf '#!/bin/sh\necho "slurm_load_jobs error: Access denied" >&2\nexit 1\n' >"$FAKE_BIN/scontrol"
requeue_run requeue_fails USR2 TRAINHOOK_REQUEUE_SIGNAL=USR2 --
if ((rc != 128 + 12)); then
  fail "requeue_fails: exit $rc, expected 140 (128 + SIGUSR2: not requeued): $(tail -3 "$WORK/requeue_fails.err")"
elif ! grep -qF '`scontrol requeue 4242` failed (exit status 1' "$WORK/requeue_fails.err"; then
  fail "requeue_fails: the failure is not reported: $(tail -3 "$WORK/requeue_fails.err")"
else
  echo "ok requeue failure reported (exit 140)"
fi
expect requeue_signal_bad 2 "--requeue_signal: 'KILL' is not a signal it accepts; expected USR1, USR2" -- \
  "${BASE[@]}" --do_train --max_steps 1 --output_dir "$WORK/rq_bad" --requeue_signal KILL
TRAINHOOK_REQUEUE_SIGNAL=BOGUS expect requeue_env_bad 2 "TRAINHOOK_REQUEUE_SIGNAL: 'BOGUS' is not a signal" -- \
  "${BASE[@]}" --do_train --max_steps 1 --output_dir "$WORK/rq_bad2"

# ---- torchrun's error file, read back by torch's own reader (Debian's python3-torch) ----
printf '0.1,0.2,1\n0.3,zero,0\n' >"$WORK/bad_value.csv"
TORCHELASTIC_ERROR_FILE="$WORK/error.json" expect error_file error "bad_value.csv" -- \
  --train_file "$WORK/bad_value.csv" --do_train --max_steps 1 --output_dir "$WORK/ef" --disable_tqdm true
if [[ ! -s "$WORK/error.json" ]]; then
  fail "error_file: TORCHELASTIC_ERROR_FILE was not written"
elif /usr/bin/python3 -c 'import torch.distributed.elastic.multiprocessing.errors' 2>/dev/null; then
  if /usr/bin/python3 - "$WORK/error.json" <<'PY'
import sys
from torch.distributed.elastic.multiprocessing.errors import ProcessFailure
f = ProcessFailure(local_rank=0, pid=1, exitcode=1, error_file=sys.argv[1])
assert isinstance(f.message, dict), f.message
assert "bad_value.csv" in f.message["message"], f.message
assert "bad_value.csv" in f.message["extraInfo"]["py_callstack"], f.message
assert f.timestamp > 1600000000, f.timestamp
PY
  then echo "ok error_file (read by torch's ProcessFailure)"; else fail "error_file: torch's reader refused $(cat "$WORK/error.json")"; fi
else
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "bad_value.csv" in d["message"]["message"]; int(d["message"]["extraInfo"]["timestamp"])' "$WORK/error.json" &&
    echo "ok error_file (JSON; torch not installed: its reader not run)" || fail "error_file: $(cat "$WORK/error.json")"
fi
# A worker that stops before training (here: output_dir not empty, refused before
# any data is read) writes it too, or torchrun's summary would show no cause.
mkdir -p "$WORK/ef_full" && echo x >"$WORK/ef_full/notes.txt"
TORCHELASTIC_ERROR_FILE="$WORK/early.json" expect error_file_early 2 "already exists and is not empty" -- \
  "${BASE[@]}" --do_train --max_steps 1 --output_dir "$WORK/ef_full"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["message"]; assert "ef_full" in m["message"] and "not empty" in m["message"], m; assert "trainhook train" in m["extraInfo"]["py_callstack"], m; int(m["extraInfo"]["timestamp"])' \
  "$WORK/early.json" 2>"$WORK/early.check" && echo "ok error_file_early (output_dir refused)" ||
  fail "error_file_early: TORCHELASTIC_ERROR_FILE $(cat "$WORK/early.json" 2>&1) $(cat "$WORK/early.check")"

# ---- a full disk (root only: a 3 MB tmpfs) ----
if [[ $(id -u) -eq 0 ]] && mkdir -p "$WORK/tmpfs" && mount -t tmpfs -o size=3m tmpfs "$WORK/tmpfs" 2>/dev/null; then
  trap 'umount "$WORK/tmpfs" 2>/dev/null' EXIT
  FULL="$WORK/tmpfs/out"
  expect disk_first_run 0 "" -- "${BASE[@]}" --do_train --max_steps 4 --save_steps 2 --output_dir "$FULL"
  before="$(sha256sum "$FULL/model.pt" | cut -d' ' -f1)"
  dd if=/dev/zero of="$WORK/tmpfs/filler" bs=4k >/dev/null 2>&1 || true
  expect disk_full_checkpoint error "MB free on" -- "${BASE[@]}" --do_train --max_steps 8 --save_steps 2 \
    --resume_from_checkpoint "$FULL/checkpoint-4" --output_dir "$FULL"
  expect disk_full_final_save error "$FULL/model.pt" -- "${BASE[@]}" --do_train --max_steps 8 \
    --save_strategy no --resume_from_checkpoint "$FULL/checkpoint-4" --output_dir "$FULL"
  [[ "$(sha256sum "$FULL/model.pt" | cut -d' ' -f1)" == "$before" ]] || fail "disk full: the earlier model.pt changed"
  (cd "$FULL/checkpoint-4" && sha256sum --quiet -c checkpoint.sha256) || fail "disk full: checkpoint-4 was damaged"
  ls "$FULL" | grep -q '\.tmp\.' && fail "disk full: temporary files left in $FULL: $(ls "$FULL")"
  umount "$WORK/tmpfs"
  trap - EXIT
else
  echo "skipped: the full-disk cases need root and a tmpfs mount (mount -t tmpfs)"
fi

echo "reliability suite: $failures failure(s)"
exit $((failures > 0))
