"""--debug underflow_overflow through the trainhook CLI.

With SGD at a huge learning rate and no clipping the weights overflow within a
few steps. With --debug underflow_overflow the run stops at the first inf/nan
with an error naming the step and the tensor, after printing the abs min/max
of the loss, every parameter and every gradient of the last steps (at most 21
frames, HF's max_frames_to_save); the printed numbers of a finite step are those
of the checkpoint saved at that step. Without the flag the same run goes on to
max_steps. Both for the built-in MLP and a TorchScript model (made here with
Debian's python3-torch 1.13 of the HF test venv). Bad --debug values are refused.

usage: cli_debug_underflow_overflow.py <trainhook cli> <digits.csv> <work dir>
"""
import os
import re
import shutil
import subprocess
import sys

try:
    import torch
    from safetensors.torch import load_file
except ImportError as e:  # the venv is made by scripts/venv hf
    print(f"FAIL: {e}; make the test venv with scripts/venv hf (TRAINHOOK_HF_VENV)", file=sys.stderr)
    sys.exit(1)

CLI, DIGITS, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
with open(DIGITS) as f:
    lines = f.readlines()
with open(f"{WORK}/train.csv", "w") as f:
    f.writelines(lines[:512])


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(args, name):
    with open(f"{WORK}/{name}.log", "w") as f:
        rc = subprocess.call([CLI, "train"] + args, stdout=f, stderr=subprocess.STDOUT)
    return rc, open(f"{WORK}/{name}.log").read()


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, input: torch.Tensor, labels: torch.Tensor):
        logits = self.fc2(torch.relu(self.fc1(input)))
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


torch.manual_seed(0)
torch.jit.save(torch.jit.script(Classifier()), f"{WORK}/model.pt")

COMMON = ["--train_file", f"{WORK}/train.csv", "--feature_scale", "0.0625", "--do_train", "--disable_tqdm", "true",
          "--seed", "5", "--per_device_train_batch_size", "32", "--optim", "sgd",
          "--max_grad_norm", "0", "--max_steps", "60", "--logging_steps", "1", "--report_to", "none"]
# Learning rates at which the plain runs overflow within a few steps (the
# smaller TorchScript net needs more: at 1e6 its ReLUs die and it stays finite).
MODELS = {"mlp": ["--model", "mlp", "--learning_rate", "1e6"],
          "torchscript": ["--model_name_or_path", f"{WORK}/model.pt", "--learning_rate", "1e10"]}

for name, model in MODELS.items():
    out = f"{WORK}/{name}"
    rc, text = run(COMMON + model + ["--output_dir", out, "--save_strategy", "steps", "--save_steps", "1",
                                     "--debug", "underflow_overflow"], name)
    m = re.search(r"--debug underflow_overflow: inf/nan detected at step (\d+) in (the loss \(\S+\)|"
                  r"the parameter \S+|the gradient of \S+);", text)
    if rc == 0 or not m:
        fail(f"{name}: expected a stop naming the step and tensor (rc {rc}):\n{text[-3000:]}")
    step = int(m.group(1))
    if "terminate called" in text or "Traceback" in text:
        fail(f"{name}: not a clean error:\n{text[-2000:]}")
    frames = re.findall(r"^ +step (\d+)$", text, re.M)
    want = list(range(max(1, step - 20), step + 1))
    if [int(s) for s in frames] != want:
        fail(f"{name}: expected frames for steps {want}, got {frames}")
    names = [k for k in load_file(f"{out}/checkpoint-1/model.safetensors")]
    # The frame of step s holds the weights before step s's update = the
    # checkpoint of step s - 1; check the last finite frame's numbers.
    s = step - 1
    if s >= 2:
        block = text.split(f"  step {s}\n", 1)[1].split("  step ", 1)[0]
        weights = load_file(f"{out}/checkpoint-{s - 1}/model.safetensors")
        for k in names:
            row = re.search(r"^(\S+) (\S+) " + re.escape(k) + "$", block, re.M)
            if not row:
                fail(f"{name}: frame of step {s} lacks {k}:\n{block}")
            a = weights[k].abs()
            for got, exp in ((float(row.group(1)), a.min().item()), (float(row.group(2)), a.max().item())):
                if abs(got - exp) > 0.006 * abs(exp) + 1e-30:
                    fail(f"{name}: step {s} {k}: printed {got}, checkpoint {exp}")
    print(f"ok: {name}: stopped at step {step} in {m.group(2)}, {len(frames)} frames, numbers match the checkpoints")

    rc, text = run(COMMON + model + ["--output_dir", f"{out}_plain", "--save_strategy", "no"], name + "_plain")
    if rc != 0:
        fail(f"{name}: without --debug the run should reach max_steps (rc {rc}):\n{text[-2000:]}")
    print(f"ok: {name}: without --debug the run goes on to max_steps")

for value, needle in (("tpu_metrics_debug", "'tpu_metrics_debug' is not applicable"),
                      ("underflow_overflow bogus", "unknown debug option 'bogus'")):
    rc, text = run(COMMON + MODELS["mlp"] + ["--output_dir", f"{WORK}/bad", "--debug", value], "bad")
    if rc == 0 or needle not in text or "debug" not in text or "terminate called" in text:
        fail(f"--debug {value}: expected an error with \"{needle}\" (rc {rc}):\n{text[-2000:]}")
    print(f"ok: --debug {value} refused: {text.strip().splitlines()[-1]}")
