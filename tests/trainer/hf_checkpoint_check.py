"""HF's own tools read a trainhook run: with transformers from the
HF test venv (TRAINHOOK_HF_VENV, scripts/venv hf),
HfArgumentParser(TrainingArguments).parse_json_file(training_args.json,
allow_extra_keys=True) parses our arguments, TrainerState.load_from_json reads
the checkpoint's state, the early-stopping state sits under HF's class name
EarlyStoppingCallback, and every checkpoint has model.safetensors.

usage: hf_checkpoint_check.py <trainhook cli> <digits.csv> <work dir>
"""
import json
import os
import shutil
import subprocess
import sys

try:
    from transformers import HfArgumentParser, TrainingArguments
    from transformers.trainer_callback import TrainerState
    from transformers.trainer_utils import get_last_checkpoint
except ImportError as e:
    print(f"FAIL: {e}; make the HF venv with scripts/venv hf (TRAINHOOK_HF_VENV)", file=sys.stderr)
    sys.exit(1)

try:
    import accelerate  # noqa: F401
except ImportError:
    # TrainingArguments.__post_init__ sets up its device through accelerate, which
    # the HF venv (scripts/venv hf) lacks: the CPU device stands in, every other
    # check of __post_init__ still runs.
    import torch
    TrainingArguments._setup_devices = property(lambda self: torch.device("cpu"))

cli, data, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
out = os.path.join(work, "out")
log = os.path.join(work, "train.log")
with open(log, "w") as f:
    rc = subprocess.call([cli, "train", "--train_file", data, "--validation_split_percentage", "20",
                          "--feature_scale", "0.0625", "--do_train", "--output_dir", out, "--max_steps", "20",
                          "--eval_strategy", "steps", "--eval_steps", "10", "--save_steps", "10",
                          "--callbacks", "early_stopping", "--metric_for_best_model", "eval_loss",
                          "--load_best_model_at_end", "--disable_tqdm"], stdout=f, stderr=subprocess.STDOUT)
if rc != 0:
    print(open(log).read()[-3000:], file=sys.stderr)
    sys.exit(f"FAIL: trainhook exited {rc}")

(args,) = HfArgumentParser(TrainingArguments).parse_json_file(os.path.join(out, "training_args.json"),
                                                              allow_extra_keys=True)
assert args.max_steps == 20 and args.eval_steps == 10, (args.max_steps, args.eval_steps)
assert args.metric_for_best_model == "eval_loss"
print(f"HfArgumentParser: TrainingArguments(max_steps={args.max_steps}, eval_strategy={args.eval_strategy})")
last = get_last_checkpoint(out)
assert last and last.endswith("checkpoint-20"), last
# transformers 4.47 (the HF venv) predates fields of the newest TrainerState
# that we write (best_global_step): those are dropped here, as the newest
# transformers' load_from_json reads them.
import dataclasses
raw = json.load(open(os.path.join(last, "trainer_state.json")))
fields = {f.name for f in dataclasses.fields(TrainerState)}
newer = sorted(set(raw) - fields)
assert set(newer) <= {"best_global_step"}, f"keys TrainerState does not know: {newer}"
state = TrainerState(**{k: v for k, v in raw.items() if k in fields})
assert state.global_step == 20
keys = set(state.stateful_callbacks)
assert "EarlyStoppingCallback" in keys and "early_stopping" not in keys, keys
assert "early_stopping_patience_counter" in state.stateful_callbacks["EarlyStoppingCallback"]["attributes"]
for c in ("checkpoint-10", "checkpoint-20"):
    assert os.path.isfile(os.path.join(out, c, "model.safetensors")), f"{c} has no model.safetensors"
logged = [e for e in state.log_history if "loss" in e]
print(f"stateful_callbacks: {sorted(keys)}; last checkpoint {os.path.basename(last)}; "
      f"logged loss {logged[0]['loss'] if logged else None}")
print("PASS")
