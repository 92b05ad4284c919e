"""kill -9 loops over a two-rank job: every start is the same command, and the
job's final weights must be byte-identical to an uninterrupted run's.

A TorchScript model with BatchNorm (running statistics are buffers, saved and
restored with the weights) and Dropout (the RNG state of every rank is part of
what a resume must restore), on .pt data and on a memory-mapped .npy folder,
under `trainhook launch --nproc_per_node 2`. The kills land deliberately:
at start-up (both ranks exist, nothing trained), mid-step (after a logged
step), mid-save (a tmp-checkpoint folder seen, or right after the save), and
between the final checkpoint and the end of the process; then the same
command runs to its end, and once more after that (a finished job restarted).

Run with the HF test venv's python (Debian python3-torch 1.13).
usage: kill_loop.py <trainhook cli> <digits.csv> <work dir> [pt|npy ...]
"""
import os
import shutil
import signal
import subprocess
import sys
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # the venv is made by scripts/venv hf
    print(f"FAIL: {e}; make the test venv with scripts/venv hf (TRAINHOOK_HF_VENV)", file=sys.stderr)
    sys.exit(1)

CLI, DIGITS, WORK = sys.argv[1:4]
KINDS = sys.argv[4:] or ["pt", "npy"]
MAX_STEPS, SAVE_STEPS = 24, 6
DEADLINE = 120  # seconds any one start may take before the test gives up on it


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 48)
        self.bn = torch.nn.BatchNorm1d(48)
        self.drop = torch.nn.Dropout(0.3)
        self.fc2 = torch.nn.Linear(48, 10)

    def forward(self, input: torch.Tensor, labels: torch.Tensor):
        logits = self.fc2(self.drop(torch.relu(self.bn(self.fc1(input)))))
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


def make_fixtures(d):
    rows = [list(map(float, line.split(","))) for line in open(DIGITS) if line.strip()]
    t = torch.tensor(rows)
    x, y = (t[:, :-1] / 16.0)[:448].contiguous(), t[:448, -1].long().contiguous()
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(Net()), os.path.join(d, "model.pt"))
    torch.save({"input": x, "labels": y}, os.path.join(d, "train.pt"))
    os.makedirs(os.path.join(d, "train_npy"))
    np.save(os.path.join(d, "train_npy", "input.npy"), x.numpy())
    np.save(os.path.join(d, "train_npy", "labels.npy"), y.numpy())


def command(d, kind, out):
    data = os.path.join(d, "train.pt" if kind == "pt" else "train_npy")
    # 448 samples, 2 ranks x 16: 14 steps an epoch, so the run crosses an epoch.
    return [CLI, "launch", "--nproc_per_node", "2", "--", "train", "--model_name_or_path",
            os.path.join(d, "model.pt"), "--train_file", data, "--do_train", "--max_steps", str(MAX_STEPS),
            "--save_steps", str(SAVE_STEPS), "--logging_steps", "2", "--per_device_train_batch_size", "16",
            "--learning_rate", "2e-3", "--warmup_steps", "3", "--max_grad_norm", "1.0", "--disable_tqdm",
            "true", "--output_dir", out]


def checkpoints(out):
    try:
        names = os.listdir(out)
    except FileNotFoundError:
        return []
    return sorted(int(n.split("-")[1]) for n in names if n.startswith("checkpoint-"))


def start(cmd, log):
    f = open(log, "w")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    f.close()
    return p


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def wait_until(p, what, predicate, period=0.02):
    """Polls predicate until true; False when the process ended first."""
    end = time.monotonic() + DEADLINE
    while not predicate():
        if p.poll() is not None:
            return False
        if time.monotonic() > end:
            kill_group(p)
            fail(f"waited {DEADLINE} s for {what}")
        time.sleep(period)
    return True


def children(pid):
    try:
        return open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return []


def logged_steps(log):
    return open(log).read().count("'loss'")


def run_to_end(cmd, log):
    p = start(cmd, log)
    try:
        rc = p.wait(timeout=DEADLINE * 2)
    except subprocess.TimeoutExpired:
        kill_group(p)
        fail(f"{' '.join(cmd)} did not end within {DEADLINE * 2} s")
    if rc != 0:
        fail(f"{' '.join(cmd)} exited {rc}:\n{open(log).read()[-3000:]}")


def loop(d, kind):
    ref = os.path.join(d, f"{kind}_ref")
    run_to_end(command(d, kind, ref), ref + ".log")
    out = os.path.join(d, f"{kind}_killed")
    cmd = command(d, kind, out)
    landed = []

    # Each plan waits for its moment in a fresh start of the same command,
    # then kills the whole job (launcher and both ranks) with SIGKILL at once.
    def at_startup(p, log):
        wait_until(p, "two ranks", lambda: len(children(p.pid)) == 2, 0.005)
        return "start-up (both ranks started)"

    def mid_step(p, log):
        base = logged_steps(log)
        if not wait_until(p, "a logged step", lambda: logged_steps(log) > base + 1):
            return None
        return f"mid-training (after {logged_steps(log)} logged steps)"

    def mid_save(p, log):
        have = set(checkpoints(out))
        seen = {}

        def saving():
            names = os.listdir(out) if os.path.isdir(out) else []
            if any(n.startswith("tmp-checkpoint-") for n in names):
                seen["tmp"] = True
                return True
            return bool(set(checkpoints(out)) - have)

        if not wait_until(p, "a save", saving, 0.0005):
            return None
        return "mid-save (tmp-checkpoint folder present)" if seen else "right after a save"

    def after_final_checkpoint(p, log):
        if not wait_until(p, f"checkpoint-{MAX_STEPS}", lambda: MAX_STEPS in checkpoints(out), 0.002):
            return None
        return f"between checkpoint-{MAX_STEPS} and the end of the process"

    for i, plan in enumerate([at_startup, mid_step, mid_save, mid_step, mid_save, after_final_checkpoint]):
        log = os.path.join(d, f"{kind}_start{i}.log")
        p = start(cmd, log)
        where = plan(p, log)
        if where is None:  # the start ended by itself before its moment
            rc = p.wait()
            if rc != 0:
                fail(f"start {i} exited {rc} before its kill:\n{open(log).read()[-3000:]}")
            landed.append(f"start {i}: ended by itself (exit 0)")
            continue
        kill_group(p)
        landed.append(f"start {i}: killed {where}; checkpoints then {checkpoints(out)}")

    for i in range(2):  # to its end, then once more: a finished job restarted
        log = os.path.join(d, f"{kind}_final{i}.log")
        run_to_end(cmd, log)
    if "the run was already complete" not in open(log).read():
        fail(f"the restart of the finished job did not say it was complete:\n{open(log).read()[-2000:]}")
    for line in landed:
        print(f"  {kind} {line}")
    if checkpoints(out)[-1] != MAX_STEPS:
        fail(f"{kind}: checkpoints went past max_steps {MAX_STEPS}: {checkpoints(out)}")
    if not any("between" in line for line in landed):
        fail(f"{kind}: no kill landed between the final checkpoint and the end of the process")
    a = open(os.path.join(ref, "model.safetensors"), "rb").read()
    b = open(os.path.join(out, "model.safetensors"), "rb").read()
    if a != b:
        fail(f"{kind}: model.safetensors after the kill loop differs from the uninterrupted run's")
    print(f"ok {kind}: {len(landed)} kills, final checkpoint-{checkpoints(out)[-1]}, "
          f"model.safetensors byte-identical to the uninterrupted run ({len(a)} bytes)")


def main():
    d = os.path.join(WORK, "kill_loop")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    make_fixtures(d)
    for kind in KINDS:
        loop(d, kind)
    print("PASS")


main()
