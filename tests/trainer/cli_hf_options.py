"""Integration test of HF flags through `trainhook train`:
--include_num_input_tokens_seen and --include_tokens_per_second (counted per micro-batch: rows of tabular data,
block_size tokens per sample of the character LM; logged as HF does and saved in
trainer_state.json), --label_smoothing_factor (changes the evaluation loss),
--lr_scheduler_type/--lr_scheduler_kwargs and --optim/--optim_args through the
CLI (the logged learning rates follow the schedule; bad values fail with a
message naming the key), and --help listing every new flag with its HF default.
usage: cli_hf_options.py <trainhook binary> <work dir>
"""
import json
import math
import os
import shutil
import subprocess
import sys

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def train(name, *args, code=0):
    out = os.path.join(work, name)
    p = subprocess.run([cli, "train", "--output_dir", out, "--disable_tqdm", "--save_strategy", "no", *map(str, args)],
                       capture_output=True, text=True)
    if (p.returncode != code) if code is not None else p.returncode == 0:
        print(p.stdout, p.stderr)
        raise SystemExit(f"FAIL {name}: exit {p.returncode}, expected {code}")
    return out, p.stderr


csv = os.path.join(work, "train.csv")
with open(csv, "w") as f:
    for i in range(20):
        f.write(f"{i % 5},{(i * 7) % 3},{i % 4},{i % 2}\n")
txt = os.path.join(work, "train.txt")
with open(txt, "w") as f:
    f.write("the quick brown fox jumps over the lazy dog. " * 20)

# -- num_input_tokens_seen, tabular: 4 rows a micro-batch, 2 micro-batches a step.
out, _ = train("tokens_csv", "--do_train", "--train_file", csv, "--per_device_train_batch_size", 4,
               "--gradient_accumulation_steps", 2, "--max_steps", 2, "--logging_steps", 1,
               "--include_num_input_tokens_seen")
state = json.load(open(os.path.join(out, "trainer_state.json")))
logs = [e for e in state["log_history"] if "loss" in e]
check([e.get("num_input_tokens_seen") for e in logs] == [8, 16], f"tabular: logged tokens {logs}")
check(state["num_input_tokens_seen"] == 16, f"tabular: trainer_state num_input_tokens_seen {state['num_input_tokens_seen']}")

# -- character LM: block_size tokens per sample.
out, _ = train("tokens_txt", "--do_train", "--train_file", txt, "--model", "char_transformer", "--block_size", 8,
               "--hidden_size", 16, "--num_layers", 1, "--num_heads", 2, "--per_device_train_batch_size", 3,
               "--max_steps", 3, "--logging_steps", 1, "--include_num_input_tokens_seen=all")
state = json.load(open(os.path.join(out, "trainer_state.json")))
logs = [e for e in state["log_history"] if "loss" in e]
check([e.get("num_input_tokens_seen") for e in logs] == [24, 48, 72], f"char LM: logged tokens {logs}")

# -- off (the default): not logged, not counted.
out, _ = train("tokens_off", "--do_train", "--train_file", csv, "--per_device_train_batch_size", 4,
               "--max_steps", 2, "--logging_steps", 1)
state = json.load(open(os.path.join(out, "trainer_state.json")))
check(all("num_input_tokens_seen" not in e for e in state["log_history"]) and state["num_input_tokens_seen"] == 0,
      "without the flag nothing is counted or logged")

# -- include_tokens_per_second (HF's meaning): train_tokens_per_second in the train
# metrics = the input tokens this run trained on (over all ranks) / train_runtime,
# rounded to 3 digits; train_runtime is rounded to 4, so the check allows that much.
def tokens_per_second_ok(record, tokens):
    rt, tps = record["train_runtime"], record.get("train_tokens_per_second")
    if tps is None or rt <= 5e-5:
        return False
    return tokens / (rt + 5e-5) - 5e-4 <= tps <= tokens / (rt - 5e-5) + 5e-4


for name, args, tokens in (
        ("tps_csv", ["--train_file", csv, "--per_device_train_batch_size", 4, "--gradient_accumulation_steps", 2,
                     "--max_steps", 2], 16),
        ("tps_txt", ["--train_file", txt, "--model", "char_transformer", "--block_size", 8, "--hidden_size", 16,
                     "--num_layers", 1, "--num_heads", 2, "--per_device_train_batch_size", 3, "--max_steps", 3], 72)):
    out, _ = train(name, "--do_train", "--include_tokens_per_second", *args)
    state = json.load(open(os.path.join(out, "trainer_state.json")))
    final = state["log_history"][-1]
    check(tokens_per_second_ok(final, tokens), f"{name}: train_tokens_per_second = {tokens} tokens / train_runtime: {final}")
    check(state["num_input_tokens_seen"] == 0 and all("num_input_tokens_seen" not in e for e in state["log_history"]),
          f"{name}: include_tokens_per_second alone leaves num_input_tokens_seen alone")
out, _ = train("tps_both", "--do_train", "--train_file", csv, "--per_device_train_batch_size", 4, "--max_steps", 2,
               "--include_tokens_per_second", "true", "--include_num_input_tokens_seen", "--logging_steps", 1)
state = json.load(open(os.path.join(out, "trainer_state.json")))
check(state["num_input_tokens_seen"] == 8 and tokens_per_second_ok(state["log_history"][-1], 8),
      f"with include_num_input_tokens_seen too: both count the same tokens: {state['log_history'][-1]}")
check(all("train_tokens_per_second" not in e
          for e in json.load(open(os.path.join(work, "tokens_off", "trainer_state.json")))["log_history"]),
      "without the flag there is no train_tokens_per_second")

# -- label smoothing changes the evaluation loss of the same weights: one trained
# model (evaluation alone needs one), evaluated with and without it.
train("smooth", "--do_train", "--train_file", csv, "--max_steps", 1)
losses = {}
for f in (0.0, 0.2):
    out, _ = train("smooth", "--do_eval", "--train_file", csv, "--validation_file", csv,
                   "--label_smoothing_factor", f)
    losses[f] = json.load(open(os.path.join(out, "eval_results.json")))["eval_loss"]
check(abs(losses[0.0] - losses[0.2]) > 1e-4, f"label smoothing changes eval_loss: {losses}")
_, err = train("smooth_bad", "--do_train", "--train_file", csv, "--validation_file", csv,
               "--label_smoothing_factor", 1.5, code=None)
check("label_smoothing_factor" in err and "terminate called" not in err, f"bad label_smoothing_factor: {err.strip()}")

# -- a schedule with kwargs through the CLI: the logged rates follow it.
out, _ = train("poly", "--do_train", "--train_file", csv, "--per_device_train_batch_size", 4, "--max_steps", 4,
               "--logging_steps", 1, "--learning_rate", 0.01, "--lr_scheduler_type", "polynomial",
               "--lr_scheduler_kwargs", '{"lr_end": 0.001, "power": 2.0}', "--optim", "sgd",
               "--optim_args", "momentum=0.9,nesterov=True")
state = json.load(open(os.path.join(out, "trainer_state.json")))
got = [e["learning_rate"] for e in state["log_history"] if "loss" in e]
# The logged rate is the one each step used (the newest transformers' order): steps 1-4 use
# the schedule's values after 0, 1, 2 and 3 scheduler steps.
want = [0.009 * (1 - s / 4) ** 2 + 0.001 for s in (0, 1, 2, 3)]
check(all(math.isclose(g, w, rel_tol=1e-12) for g, w in zip(got, want)) and len(got) == 4,
      f"polynomial through the CLI: {got} vs {want}")
_, err = train("bad_kwargs", "--do_train", "--train_file", csv, "--max_steps", 1, "--lr_scheduler_type", "polynomial",
               "--lr_scheduler_kwargs", '{"pwr": 2}', code=None)
check("'pwr'" in err and "polynomial" in err and "terminate called" not in err, f"bad kwargs: {err.strip()}")
_, err = train("bad_optim_args", "--do_train", "--train_file", csv, "--max_steps", 1, "--optim", "rmsprop",
               "--optim_args", "nesterov=True", code=None)
check("'nesterov'" in err and "rmsprop" in err and "terminate called" not in err, f"bad optim_args: {err.strip()}")

# -- --help lists every new flag with its HF default.
help_text = subprocess.run([cli, "train", "--help"], capture_output=True, text=True).stdout
for flag, default in (("lr_scheduler_kwargs", "{}"), ("optim_args", "unset"), ("label_smoothing_factor", "0"),
                      ("include_num_input_tokens_seen", "false"), ("include_tokens_per_second", "false")):
    line = next((l for l in help_text.splitlines() if f"--{flag} " in l), "")
    check(f"[default: {default}]" in help_text.split(f"--{flag} ", 1)[-1].split("--", 1)[0],
          f"--help: --{flag} with default {default}: {line.strip()}")
for name in ("cosine_with_restarts", "warmup_stable_decay", "adagrad", "rmsprop"):
    check(name in help_text, f"--help names {name}")

if failures:
    sys.exit(f"{len(failures)} failure(s)")
