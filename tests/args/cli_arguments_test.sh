#!/usr/bin/env bash
# Integration test of the arguments through the real CLI: --help, error exits
# with the closest name / file:line, unsupported HF arguments, <program>.args
# next to the program, and a short run whose checkpoint's training_args.json
# carries the values from a YAML --config merged with flags.
# usage: cli_arguments_test.sh <path to bin/trainhook>
set -euo pipefail

TRAINHOOK=${1:?usage: cli_arguments_test.sh <bin/trainhook>}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"

# expect_error <exit code> <text expected on stderr> <args...>
expect_error() {
  local code=$1 text=$2
  shift 2
  local rc=0
  "$TRAINHOOK" train "$@" >"$WORK/stdout" 2>"$WORK/err" || rc=$?
  [[ $rc == "$code" ]] || fail "trainhook train $* exited $rc, expected $code; stderr: $(cat "$WORK/err")"
  grep -qF -- "$text" "$WORK/err" || fail "trainhook train $*: stderr lacks '$text': $(cat "$WORK/err")"
}

# --help: every group, with defaults.
"$TRAINHOOK" train --help >"$WORK/help"
for group in "Output:" "Training:" "Logging, evaluation and saving:" "Reproducibility and data loading:" \
  "Integrations and plugins:" "Model:" "Data:"; do
  grep -qxF "$group" "$WORK/help" || fail "--help lacks the group '$group'"
done
grep -qF -- "--learning_rate FLOAT" "$WORK/help" || fail "--help lacks --learning_rate"
grep -qF "[default: 5e-05]" "$WORK/help" || fail "--help lacks the learning_rate default"

# --version and `version`: package, ABI, LibTorch, the search path with its origins.
"$TRAINHOOK" --version >"$WORK/version"
grep -qE '^trainhook [0-9]+\.[0-9]+\.[0-9]+$' "$WORK/version" || fail "--version: no version line: $(cat "$WORK/version")"
grep -qE '^plugin ABI 1\.[0-9]+$' "$WORK/version" || fail "--version: no ABI line: $(cat "$WORK/version")"
grep -qE '^LibTorch [0-9]+\.[0-9]+' "$WORK/version" || fail "--version: no LibTorch line: $(cat "$WORK/version")"
TRAINHOOK_PLUGIN_PATH="$WORK/nowhere" "$TRAINHOOK" version >"$WORK/version2"
grep -qF "  $WORK/nowhere (TRAINHOOK_PLUGIN_PATH, absent)" "$WORK/version2" ||
  fail "version: the search path lacks TRAINHOOK_PLUGIN_PATH's folder: $(cat "$WORK/version2")"
grep -qE '^  .*/lib/trainhook/plugins \(default' "$WORK/version2" || fail "version: no default folder: $(cat "$WORK/version2")"
rc=0
"$TRAINHOOK" version --bogus 2>"$WORK/err" >/dev/null || rc=$?
[[ $rc == 1 ]] && grep -qF "takes no arguments (got '--bogus')" "$WORK/err" || fail "version --bogus: rc $rc, $(cat "$WORK/err")"

# Errors: exit code 2, the flag named, the closest name.
expect_error 2 "did you mean 'learning_rate'" --lerning_rate 0.1
expect_error 2 "--eval_strategy: expected one of no, steps, epoch, got 'step'" --eval_strategy step
expect_error 2 "evaluating in half precision throughout is not supported" --bf16_full_eval
printf 'seed: 1\nlerning_rate: 0.1\n' >"$WORK/typo.yaml"
expect_error 2 "typo.yaml:2: unknown key 'lerning_rate' (did you mean 'learning_rate'?)" --config "$WORK/typo.yaml"

# <program>.args next to the program (reached through a symlink named trainhook).
mkdir -p "$WORK/bin"
ln -s "$(readlink -f "$TRAINHOOK")" "$WORK/bin/trainhook"
printf '# site defaults\n--sed 3\n' >"$WORK/bin/trainhook.args"
rc=0
"$WORK/bin/trainhook" train --do_train >"$WORK/stdout" 2>"$WORK/err" || rc=$?
[[ $rc == 2 ]] || fail "a bad <program>.args should exit 2, got $rc"
grep -qF "trainhook.args:2" "$WORK/err" || fail "the error should name trainhook.args:2: $(cat "$WORK/err")"
rm "$WORK/bin/trainhook.args"

# A short run: YAML config + flags -> the checkpoint's training_args.json.
python3 - "$WORK/train.csv" <<'EOF'
import random, sys
random.seed(0)
with open(sys.argv[1], "w") as f:
    for _ in range(64):
        x, y = random.random(), random.random()
        f.write(f"{x:.4f},{y:.4f},{int(x + y > 1)}\n")
EOF
cat >"$WORK/train.yaml" <<EOF
# a YAML config
output_dir: $WORK/out
learning_rate: 0.01
per_device_train_batch_size: 16
max_steps: 2
save_strategy: steps
save_steps: 2
logging_steps: 1
report_to: none
seed: 5
plugin_config:
  progress:
    min_interval: 2
    plain_interval: 0.5
EOF
"$TRAINHOOK" train --config "$WORK/train.yaml" --do_train --train_file "$WORK/train.csv" --seed 9 \
  --plugin_config progress.min_interval=4 >"$WORK/run.out" 2>&1 ||
  fail "the short run failed: $(cat "$WORK/run.out")"
ARGS_JSON="$WORK/out/checkpoint-2/training_args.json"
[[ -f $ARGS_JSON ]] || fail "no $ARGS_JSON; output_dir has: $(ls -R "$WORK/out")"
python3 - "$ARGS_JSON" <<'EOF'
import json, os, sys
a = json.load(open(sys.argv[1]))
ours = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), "trainhook_args.json")))
assert not set(a) & set(ours), set(a) & set(ours)  # HF's fields in one file, ours in the other
a.update(ours)
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: training_args.json: {what}: {json.dumps(a, indent=1)}")
check(a["learning_rate"] == 0.01, "learning_rate from the YAML file")
check(a["per_device_train_batch_size"] == 16, "per_device_train_batch_size from the YAML file")
check(a["seed"] == 9, "seed: the flag wins over the file")
check(a["plugin_config"]["progress"] == {"min_interval": 4, "plain_interval": 0.5}, "plugin_config merged, flag wins")
check(a["run_name"] == a["output_dir"], "run_name defaults to output_dir")
check(a["eval_steps"] is None and a["save_total_limit"] is None, "unset optionals are null")
for key in ("output_dir", "num_train_epochs", "lr_scheduler_type", "warmup_steps", "eval_strategy",
            "save_strategy", "load_best_model_at_end", "metric_for_best_model", "greater_is_better",
            "report_to", "callbacks", "plugin_error_policy"):
    check(key in a, f"the HF key {key}")
EOF
echo "cli arguments: all checks passed"
