#!/usr/bin/env bash
# TensorBoard through the real CLI and trainer, read back by the `tensorboard`
# package: `trainhook train ... --report_to tensorboard`, then every number of
# trainer_state.json's log_history must be a scalar at its step in the event
# file, with the args text and the hparams session; TENSORBOARD_LOGGING_DIR
# and plugin_config tensorboard.logging_dir move the files; report_to none
# writes none; isolated in its own process it writes the same; a post-training evaluation (--do_eval) more than a second
# after train begin lands in the same run folder as the training.
# usage: cli_tensorboard.sh TRAINHOOK_BINARY WORK_DIR
set -euo pipefail
TH="$1"
WORK="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../lib/test_lib.sh"
VENV="$(test_venv)" || exit 1
rm -rf "$WORK"
mkdir -p "$WORK/data"
unset TENSORBOARD_LOGGING_DIR


# A small learnable task (label = x1 > x2), deterministic.
awk 'BEGIN { srand(11); for (i = 0; i < 192; i++) { a = rand(); b = rand(); printf "%.5f,%.5f,%d\n", a, b, (a > b) } }' \
  > "$WORK/data/train.csv"
awk 'BEGIN { srand(12); for (i = 0; i < 48; i++) { a = rand(); b = rand(); printf "%.5f,%.5f,%d\n", a, b, (a > b) } }' \
  > "$WORK/data/valid.csv"

run() {  # out_dir args...
  local out="$1"
  shift
  "$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" --do_train \
    --output_dir "$out" --per_device_train_batch_size 16 --per_device_eval_batch_size 16 --max_steps 30 \
    --logging_steps 2 --eval_strategy steps --eval_steps 5 --save_strategy no --disable_tqdm true --seed 3 \
    "$@" > "$out.log" 2>&1 || { cat "$out.log" >&2; fail "trainhook train $* exited with an error"; }
}
check() {  # out_dir [checker args...]
  "$VENV/bin/python" "$HERE/check_events.py" "$@" --trainer-output 2> "$1.check" ||
    { cat "$1.log" "$1.check" >&2; fail "event files of $1 do not match its log_history"; }
  grep -v -i warn "$1.check" >&2 || true
}

# 1. Default folder: output_dir/runs/<Mon><DD>_<HH>-<MM>-<SS>_<host>/.
run "$WORK/default" --report_to tensorboard
check "$WORK/default"
echo "ok: default folder"

# 1b. Isolated (--plugin_isolation tensorboard: its on_log reaches the helper
#     through the event ring, without a round trip): the same check holds.
run "$WORK/isolated" --report_to tensorboard --plugin_isolation tensorboard
check "$WORK/isolated"
! grep -q "dropped" "$WORK/isolated.log" || fail "the isolated run dropped observe-only events: $(grep dropped "$WORK/isolated.log")"
echo "ok: tensorboard isolated"

# 2. TENSORBOARD_LOGGING_DIR.
TENSORBOARD_LOGGING_DIR="$WORK/tb_env" run "$WORK/env" --report_to tensorboard
[[ ! -d "$WORK/env/runs" ]] || fail "TENSORBOARD_LOGGING_DIR set, but events went to output_dir/runs"
check "$WORK/env" --logdir "$WORK/tb_env"
echo "ok: TENSORBOARD_LOGGING_DIR"

# 3. plugin_config tensorboard.logging_dir wins over the environment.
TENSORBOARD_LOGGING_DIR="$WORK/tb_env2" run "$WORK/cfg" --report_to tensorboard \
  --plugin_config "tensorboard.logging_dir=$WORK/tb_cfg" --plugin_config tensorboard.flush_secs=0.2
[[ ! -d "$WORK/tb_env2" ]] || fail "plugin_config logging_dir did not override TENSORBOARD_LOGGING_DIR"
check "$WORK/cfg" --logdir "$WORK/tb_cfg"
echo "ok: plugin_config tensorboard.logging_dir"

# 4. report_to none: no event files.
run "$WORK/none" --report_to none
[[ ! -d "$WORK/none/runs" ]] || fail "report_to none wrote $WORK/none/runs"
echo "ok: report_to none"

# 5. A bad plugin_config key is refused, naming it.
if "$TH" train --train_file "$WORK/data/train.csv" --do_train --output_dir "$WORK/bad" --max_steps 2 \
     --report_to tensorboard --plugin_config tensorboard.logdir=x > "$WORK/bad.log" 2>&1; then
  fail "an unknown plugin_config key was accepted"
fi
grep -q "plugin_config tensorboard: unknown key 'logdir'" "$WORK/bad.log" || { cat "$WORK/bad.log" >&2; fail "the error does not name the key"; }
echo "ok: bad plugin_config key"

# 6. One run, one folder: --do_eval's evaluation after training (which reopens
#    the writer) goes into the training's run folder even when the clock has
#    moved on, so TensorBoard shows one run with the training and the eval
#    scalars (HF: one logging_dir per run). The run is made long enough (400
#    steps of a 1024-wide MLP: several seconds even with OpenBLAS) that train
#    begin and the final evaluation fall in different seconds; the check below
#    proves they did, or the case would prove nothing.
"$TH" train --train_file "$WORK/data/train.csv" --validation_file "$WORK/data/valid.csv" --do_train --do_eval \
  --output_dir "$WORK/long" --per_device_train_batch_size 64 --max_steps 400 --hidden_size 1024 \
  --logging_steps 50 --eval_strategy no --save_strategy no --disable_tqdm true --seed 3 \
  --report_to tensorboard > "$WORK/long.log" 2>&1 || { cat "$WORK/long.log" >&2; fail "the long run exited with an error"; }
"$VENV/bin/python" - "$WORK/long/runs" <<'PY' || { cat "$WORK/long.log" >&2; fail "the post-training eval is not in the training's run"; }
import glob, os, re, sys
from tensorboard.backend.event_processing import plugin_event_multiplexer
root = sys.argv[1]
folders = sorted(os.listdir(root))
files = sorted(glob.glob(os.path.join(root, "*", "events.out.tfevents.*")))
times = {int(re.search(r"tfevents\.(\d{10})\.", f).group(1)) for f in files}
if len(times) < 2:
    sys.exit("the run did not outlast a second (event files %s): the case proves nothing; raise --max_steps" % files)
mux = plugin_event_multiplexer.EventMultiplexer()
mux.AddRunsFromDirectory(root)
mux.Reload()
runs = sorted(mux.Runs())
if len(runs) != 1 or len(folders) != 1:
    sys.exit("TensorBoard sees %d runs %s in %d folders %s, expected one" % (len(runs), runs, len(folders), folders))
acc = mux.GetAccumulator(runs[0])
def steps(tag):
    try:
        return [e.step for e in acc.Tensors(tag)]
    except KeyError:
        return [e.step for e in acc.Scalars(tag)]
train = steps("train/loss")
evals = steps("eval/loss")
if not train or evals != [400]:
    sys.exit("run %s: train/loss at %s, eval/loss at %s (expected the final eval at 400)" % (runs[0], train, evals))
print("one run %s: train/loss at %d steps, eval/loss at %s, %d event files" % (runs[0], len(train), evals, len(files)))
PY
echo "ok: post-training evaluation in the training's run folder"
