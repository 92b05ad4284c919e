"""A run moves between Hugging Face's Trainer (transformers in the HF test venv,
scripts/venv hf) and trainhook at step 100 of 101, both ways, on a TorchScript
MLP scripted from the Python module below (AdamW, linear warm-up and decay,
weight decay, every step on the whole data set so both sides see the same batch).

  direction        trains 101 steps        resumes checkpoint-100
  trainhook -> HF  trainhook               HF's Trainer.train(resume_from_checkpoint=...)
  HF -> trainhook  HF's Trainer            trainhook train --resume_from_checkpoint

The resuming side's step 101 must match the other side's own step 101: after
loading, HF's optimizer state equals trainhook's file tensor for tensor and its
global_step is 100; step 101's learning rate, the optimizer state and the
weights after it agree (weights to 1e-6). HfArgumentParser reads our
training_args.json with its default settings. On torch >= 2.6, whose torch.load
defaults to weights_only=True, torch.load with no arguments loads our
optimizer.pt, scheduler.pt and rng_state.pth (and refuses a pickle that needs a
global outside its allow-list, so the default in force is the weights-only one).
The venv's torch must be the LibTorch version the CLI was built with
(TRAINHOOK_TORCH_VERSION, set by CTest), so each build checks the HF side it
pairs with; the versions seen are printed first. Then hostile and damaged pickles
in an HF checkpoint (GLOBAL os.system, a protocol-0 opcode, a truncated zip, a
storage shorter than it says) are refused naming the file and what is wrong,
and nothing is executed.

usage: hf_resume_check.py <trainhook cli> <work dir>
"""
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile
from typing import Dict, Optional

import platform
import torch
from safetensors.torch import load_file

try:
    import transformers
    from transformers import HfArgumentParser, Trainer, TrainerCallback, TrainingArguments
except ImportError as e:
    sys.exit(f"FAIL: {e}; make the HF venv with scripts/venv hf, or hf2 for LibTorch 2.x (TRAINHOOK_HF_VENV)")


def version_tuple(v):
    return tuple(int(p) for p in v.split("+")[0].split(".")[:2])


def versions():
    from importlib.metadata import PackageNotFoundError, version
    seen = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__}
    for name in ("accelerate", "safetensors"):
        try:
            seen[name] = version(name)
        except PackageNotFoundError:
            seen[name] = "absent"
    return seen


print("versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()))
libtorch = os.environ.get("TRAINHOOK_TORCH_VERSION")
if libtorch and version_tuple(libtorch) != version_tuple(torch.__version__):
    sys.exit(f"FAIL: the CLI links LibTorch {libtorch} but {sys.executable} has torch {torch.__version__}: "
             "give this build the venv of its torch (scripts/venv hf for 1.13, hf2 for LibTorch 2.x)")

cli, work = sys.argv[1:3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

LR, WARMUP, DECAY, STEPS, ROWS = 1e-2, 50, 0.1, 101, 64


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, input: torch.Tensor, labels: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
        logits = self.fc2(torch.relu(self.fc1(input)))
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = torch.nn.functional.cross_entropy(logits, labels)
        return out


torch.manual_seed(0)
X = torch.randn(ROWS, 16)
Y = torch.randint(0, 4, (ROWS,))
torch.save({"input": X, "labels": Y}, os.path.join(work, "train.pt"))
torch.manual_seed(1)
torch.jit.save(torch.jit.script(Net()), os.path.join(work, "net.pt"))


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return ROWS

    def __getitem__(self, i):
        return {"input": X[i], "labels": Y[i]}


def trainhook(out, *extra, expect_ok=True):
    cmd = [cli, "train", "--model_name_or_path", os.path.join(work, "net.pt"), "--train_file",
           os.path.join(work, "train.pt"), "--do_train", "--output_dir", out, "--per_device_train_batch_size",
           str(ROWS), "--max_steps", str(STEPS), "--learning_rate", str(LR), "--warmup_steps", str(WARMUP),
           "--weight_decay", str(DECAY), "--lr_scheduler_type", "linear", "--optim", "adamw_torch",
           "--logging_steps", "1", "--save_steps", "1", "--save_total_limit", "2", "--disable_tqdm",
           "--report_to", "none", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: trainhook exited {p.returncode}:\n{(p.stdout + p.stderr)[-4000:]}")
    return p


def hf_args(out):
    return TrainingArguments(output_dir=out, per_device_train_batch_size=ROWS, max_steps=STEPS, learning_rate=LR,
                             warmup_steps=WARMUP, weight_decay=DECAY, lr_scheduler_type="linear",
                             optim="adamw_torch", logging_steps=1, save_steps=1, save_total_limit=2,
                             report_to=[], disable_tqdm=True, use_cpu=True, seed=42)


class Probe(TrainerCallback):
    """What HF's Trainer holds right after it loaded a checkpoint."""

    def on_train_begin(self, args, state, control, optimizer=None, lr_scheduler=None, **kw):
        self.global_step = state.global_step
        self.optimizer = {k: ({n: (t.clone() if torch.is_tensor(t) else t) for n, t in v.items()})
                          for k, v in optimizer.state_dict()["state"].items()}
        self.lrs = [g["lr"] for g in optimizer.param_groups]
        self.last_lr = lr_scheduler.get_last_lr()


def hf_train(out, resume=None):
    torch.manual_seed(1)
    model = Net()
    probe = Probe()
    trainer = Trainer(model=model, args=hf_args(out), train_dataset=Rows(), callbacks=[probe])
    trainer.train(resume_from_checkpoint=resume)
    return model, probe


def same_tensors(a, b, what, rtol=1e-5, atol=1e-8):
    assert set(a) == set(b), f"{what}: keys {sorted(a)} vs {sorted(b)}"
    for k in a:
        x, y = a[k], b[k]
        if torch.is_tensor(x):
            assert torch.is_tensor(y) and x.shape == y.shape, f"{what}[{k}]: {x} vs {y}"
            assert torch.allclose(x.float(), y.float(), rtol=rtol, atol=atol), \
                f"{what}[{k}]: max difference {(x.float() - y.float()).abs().max().item()}"
        else:
            assert x == y, f"{what}[{k}]: {x} vs {y}"


WEIGHTS_ONLY_GLOBALS = {"collections OrderedDict", "torch._utils _rebuild_tensor_v2"} | {
    f"torch {t}Storage" for t in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")}


WEIGHTS_ONLY_BY_DEFAULT = version_tuple(torch.__version__) >= (2, 6)


def load(path):
    """torch.load as torch 2.6+ does by default (weights_only=True): there with no
    arguments, as HF's Trainer and any user call it. torch 1.13's weights-only
    unpickler lacks BINFLOAT (it refuses HF's own files too): there the file's
    globals are checked against what the 2.x one allows, then it loads plainly."""
    if WEIGHTS_ONLY_BY_DEFAULT:
        return torch.load(path)
    if version_tuple(torch.__version__) >= (2, 0):
        return torch.load(path, weights_only=True)
    import pickletools
    with zipfile.ZipFile(path) as z:
        pkl = z.read([n for n in z.namelist() if n.endswith("/data.pkl")][0])
    used = {arg for op, arg, _ in pickletools.genops(pkl) if op.name == "GLOBAL"}
    assert used <= WEIGHTS_ONLY_GLOBALS, f"{path}: globals torch.load(weights_only=True) refuses: {used}"
    return torch.load(path)


def compare_step_101(resumed, own, who):
    """`resumed`/checkpoint-101 (after resuming at 100) against `own`/checkpoint-101 (101 steps in one run)."""
    a, b = os.path.join(resumed, "checkpoint-101"), os.path.join(own, "checkpoint-101")
    oa, ob = load(os.path.join(a, "optimizer.pt")), load(os.path.join(b, "optimizer.pt"))
    assert sorted(oa["state"]) == sorted(ob["state"]) == [0, 1, 2, 3], (sorted(oa["state"]), sorted(ob["state"]))
    for i in oa["state"]:
        same_tensors(oa["state"][i], ob["state"][i], f"{who}: optimizer state[{i}] at step 101")
        assert float(oa["state"][i]["step"]) == 101
    for ga, gb in zip(oa["param_groups"], ob["param_groups"]):
        assert ga["params"] == gb["params"] and ga["weight_decay"] == gb["weight_decay"], (ga, gb)
        assert abs(ga["lr"] - gb["lr"]) <= 1e-12 and ga["initial_lr"] == gb["initial_lr"], (ga, gb)
    sa, sb = load(os.path.join(a, "scheduler.pt")), load(os.path.join(b, "scheduler.pt"))
    assert sa["last_epoch"] == sb["last_epoch"] == 101, (sa, sb)
    assert all(abs(x - y) <= 1e-12 for x, y in zip(sa["_last_lr"], sb["_last_lr"])), (sa, sb)
    ta = json.load(open(os.path.join(a, "trainer_state.json")))
    tb = json.load(open(os.path.join(b, "trainer_state.json")))
    assert ta["global_step"] == tb["global_step"] == 101
    # The resumed run's history goes on from the other side's: steps 1..100 as saved, then 101.
    steps = [e["step"] for e in ta["log_history"] if "loss" in e]
    assert steps == list(range(1, 102)), steps
    wa, wb = load_file(os.path.join(a, "model.safetensors")), load_file(os.path.join(b, "model.safetensors"))
    assert set(wa) == set(wb), (sorted(wa), sorted(wb))
    worst = max((wa[k] - wb[k]).abs().max().item() for k in wa)
    assert worst <= 1e-6, f"{who}: weights after step 101 differ by {worst}"
    before = load_file(os.path.join(own, "checkpoint-100", "model.safetensors"))
    moved = max((wa[k] - before[k]).abs().max().item() for k in wa)
    assert moved > 100 * 1e-6, f"{who}: step 101 moved the weights only {moved}: the check would not see a bad state"
    print(f"{who}: step 101 after the resume matches the uninterrupted run (weights within {worst:.2e}, "
          f"the step moved them {moved:.2e}); log_history goes on from step 100")


# -- trainhook -> HF ---------------------------------------------------------
th = os.path.join(work, "th")
trainhook(th)
ckpt = os.path.join(th, "checkpoint-100")
for d in (th, ckpt):
    (parsed,) = HfArgumentParser(TrainingArguments).parse_json_file(os.path.join(d, "training_args.json"))
    assert parsed.max_steps == STEPS and parsed.warmup_steps == WARMUP, parsed
if WEIGHTS_ONLY_BY_DEFAULT:
    # The default in force must be the weights-only loader (not lifted by
    # TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD or the like): it refuses a global outside its allow-list.
    probe_file = os.path.join(work, "not_weights_only.pt")
    torch.save({"x": zipfile.ZipInfo("x")}, probe_file)
    try:
        torch.load(probe_file)
        sys.exit("FAIL: torch.load() with default settings loaded a zipfile.ZipInfo: it is not weights_only=True")
    except pickle.UnpicklingError as e:
        assert "weights_only" in str(e).lower().replace(" ", "_"), e
    for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth"):
        loaded = torch.load(os.path.join(ckpt, name))
        assert isinstance(loaded, dict) and loaded, (name, loaded)
    print(f"torch {torch.__version__}: torch.load(path) with default settings (weights_only=True) loads our "
          "optimizer.pt, scheduler.pt and rng_state.pth, and refuses a pickle of another global")
ours = json.load(open(os.path.join(ckpt, "trainhook_args.json")))
assert "plugin_config" in ours and "max_steps" not in ours, sorted(ours)
print("HfArgumentParser(TrainingArguments).parse_json_file reads training_args.json with default settings")

hf_from_th = os.path.join(work, "hf_from_th")
_, probe = hf_train(hf_from_th, resume=ckpt)
assert probe.global_step == 100, probe.global_step
saved = load(os.path.join(ckpt, "optimizer.pt"))
assert sorted(probe.optimizer) == sorted(saved["state"]) == [0, 1, 2, 3]
for i in saved["state"]:
    same_tensors(probe.optimizer[i], saved["state"][i], f"HF's AdamW state[{i}] after loading", rtol=0, atol=0)
    assert float(saved["state"][i]["step"]) == 100 and saved["state"][i]["exp_avg"].abs().sum() > 0
sched = load(os.path.join(ckpt, "scheduler.pt"))
expected_lr = LR * (STEPS - 100) / (STEPS - WARMUP)  # HF's linear lambda at step 100: the rate of step 101
assert all(abs(lr - expected_lr) <= 1e-12 for lr in probe.lrs + probe.last_lr + sched["_last_lr"]), \
    (probe.lrs, probe.last_lr, sched, expected_lr)
print(f"HF resumed trainhook's checkpoint-100: global_step 100, AdamW state equal tensor for tensor, "
      f"lr for step 101 {probe.lrs[0]}")
load(os.path.join(ckpt, "rng_state.pth"))
compare_step_101(hf_from_th, th, "trainhook -> HF")

# -- HF -> trainhook ---------------------------------------------------------
hf = os.path.join(work, "hf")
hf_train(hf)
hf_ckpt = os.path.join(hf, "checkpoint-100")
th_from_hf = os.path.join(work, "th_from_hf")
p = trainhook(th_from_hf, "--resume_from_checkpoint", hf_ckpt)
assert "resuming training from" in p.stdout + p.stderr, (p.stdout + p.stderr)[-2000:]
compare_step_101(th_from_hf, hf, "HF -> trainhook")
# trainhook logs the rate a step used (as the newest transformers does)
logged = [e["learning_rate"] for e in json.load(open(os.path.join(th_from_hf, "checkpoint-101", "trainer_state.json")))
          ["log_history"] if e.get("step") == 101 and "learning_rate" in e]
assert logged and abs(logged[0] - expected_lr) <= 1e-12, (logged, expected_lr)
print(f"trainhook resumed HF's checkpoint-100 and stepped with lr {logged[0]} at step 101")

# -- hostile and damaged pickles in an HF checkpoint --------------------------
marker = os.path.join(work, "executed")


def rewrite(src, dst, records):
    """A zip like torch.save's (stored records) from `src`'s records with some replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            tail = name.split("/", 1)[1]
            zout.writestr(name, records.get(tail, zin.read(name)))


def refused(name, damage, expected):
    bad = os.path.join(work, f"bad_{name}")
    shutil.copytree(hf_ckpt, bad)
    damage(bad)
    p = trainhook(os.path.join(work, f"out_{name}"), "--resume_from_checkpoint", bad, expect_ok=False)
    text = p.stdout + p.stderr
    assert p.returncode != 0, f"{name}: trainhook accepted it:\n{text[-2000:]}"
    for e in expected:
        assert e in text, f"{name}: expected '{e}' in:\n{text[-3000:]}"
    assert not os.path.exists(marker), f"{name}: something was executed"
    print(f"{name}: refused ({[line for line in text.splitlines() if 'error' in line][-1].strip()[:200]})")


def os_system(d):
    pickle = b"\x80\x02cos\nsystem\nX" + len(f"touch {marker}").to_bytes(4, "little") + \
        f"touch {marker}".encode() + b"\x85R."
    rewrite(os.path.join(hf_ckpt, "optimizer.pt"), os.path.join(d, "optimizer.pt"), {"data.pkl": pickle})


def protocol0(d):
    rewrite(os.path.join(hf_ckpt, "scheduler.pt"), os.path.join(d, "scheduler.pt"),
            {"data.pkl": pickle.dumps({"last_epoch": 100}, protocol=0)})


def truncated(d):
    data = open(os.path.join(hf_ckpt, "optimizer.pt"), "rb").read()
    open(os.path.join(d, "optimizer.pt"), "wb").write(data[: len(data) // 2])


def lying(d):
    with zipfile.ZipFile(os.path.join(hf_ckpt, "rng_state.pth")) as z:
        cpu = [n for n in z.namelist() if "/data/" in n]
        records = {n.split("/", 1)[1]: z.read(n)[:100] for n in cpu}
    rewrite(os.path.join(hf_ckpt, "rng_state.pth"), os.path.join(d, "rng_state.pth"), records)


refused("os_system", os_system, ["optimizer.pt", "GLOBAL os.system is not allowed"])
refused("protocol0", protocol0, ["scheduler.pt", "not allowed"])
refused("truncated", truncated, ["optimizer.pt", "truncated"])
refused("lying_size", lying, ["rng_state.pth", "lying size"])
print("PASS")
