"""Compares trainhook with the real thing, in the HF venv (python3-torch 1.13,
transformers 4.47.1):
  lr      every step's learning rate of each schedule and option set equals
          transformers.get_scheduler(...) to 1e-12; bad lr_scheduler_kwargs fail
          with a message naming the key and the schedule; reduce_lr_on_plateau:
          the rate after each metric fed to transformers.get_scheduler(
          "reduce_lr_on_plateau", ...) (torch's ReduceLROnPlateau) equals ours
          to 1e-12 for several kwargs sets and metric sequences
  optim   each optimizer (with optim_args) matches torch.optim on the same
          Linear(4, 3), initial weights and batches over 10 steps to 1e-6
  smooth  the label-smoothed loss equals F.cross_entropy(label_smoothing=f)
usage: hf_reference_check.py <hf_reference_tool> lr|optim|smooth
"""
import json
import os
import subprocess
import tempfile
import sys

import torch

tool, part = sys.argv[1], sys.argv[2]
failures = []


def run(*args):
    p = subprocess.run([tool, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def ours(*args):
    code, out, err = run(*args)
    if code != 0:
        raise SystemExit(f"FAIL: hf_reference_tool {' '.join(map(str, args))} exited {code}: {err}")
    return json.loads(out)


def expect_error(args, *fragments):
    code, out, err = run(*args)
    if code == 0:
        failures.append(f"{args}: expected an error, got {out[:200]}")
    for f in fragments:
        if f not in err:
            failures.append(f"{args}: the error {err.strip()!r} does not name {f!r}")


def tensor(j, dtype=torch.float32):
    return torch.tensor(j["values"], dtype=dtype).reshape(j["shape"])


def check_lr():
    from transformers import get_scheduler

    base, warmup, total, steps = 0.01, 10, 100, 112
    cases = [
        ("linear", {}), ("cosine", {}), ("cosine", {"num_cycles": 1.5}),
        ("constant", {}), ("constant_with_warmup", {}),
        ("cosine_with_restarts", {}), ("cosine_with_restarts", {"num_cycles": 3}),
        ("cosine_with_restarts", {"num_cycles": 2.5}),
        ("polynomial", {}), ("polynomial", {"lr_end": 1e-4, "power": 2.0}),
        ("polynomial", {"lr_end": 0.0, "power": 0.5}),
        ("inverse_sqrt", {}),
        ("cosine_with_min_lr", {"min_lr": 1e-4}), ("cosine_with_min_lr", {"min_lr_rate": 0.1, "num_cycles": 0.75}),
        ("warmup_stable_decay", {"num_stable_steps": 30, "num_decay_steps": 40}),
        ("warmup_stable_decay", {"num_stable_steps": 10, "num_decay_steps": 20, "min_lr_ratio": 0.1,
                                 "num_cycles": 1.0}),
    ]
    compared = 0
    runs, wants = [], []
    for warm in (warmup, 0, 7):
        for name, kwargs in cases:
            p = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.SGD([p], lr=base)
            sched = get_scheduler(name, opt, num_warmup_steps=warm, num_training_steps=total,
                                  scheduler_specific_kwargs=dict(kwargs))
            want = [opt.param_groups[0]["lr"]]
            for _ in range(steps):
                opt.step()
                sched.step()
                want.append(opt.param_groups[0]["lr"])
            runs.append([name, base, warm, total, kwargs, steps])
            wants.append(want)
    cases_file = os.path.join(tempfile.mkdtemp(), "lr_cases.json")
    with open(cases_file, "w") as f:
        json.dump(runs, f)
    for (name, _, warm, _, kwargs, _), got, want in zip(runs, ours("lr-cases", cases_file), wants):
        assert len(got) == len(want), (len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            if abs(g - w) > 1e-12:
                failures.append(f"{name} {kwargs} warmup {warm}: step {i}: ours {g!r}, HF {w!r}")
                break
        compared += len(want)
    # decay_type cosine is 4.47.1's only decay shape.
    a = ours("lr", "warmup_stable_decay", base, warmup, total,
             json.dumps({"num_stable_steps": 30, "num_decay_steps": 40, "decay_type": "cosine"}), steps)
    b = ours("lr", "warmup_stable_decay", base, warmup, total,
             json.dumps({"num_stable_steps": 30, "num_decay_steps": 40}), steps)
    if a != b:
        failures.append("warmup_stable_decay: decay_type cosine differs from the default")
    print(f"lr: {len(cases) * 3} schedule/option sets, {compared} learning rates compared with transformers "
          f"{__import__('transformers').__version__}")
    check_plateau(get_scheduler)
    expect_error(("lr", "linear", base, warmup, total, '{"num_cycles": 2}', 3), "'num_cycles'", "linear",
                 "takes no lr_scheduler_kwargs")
    expect_error(("lr", "cosine_with_restarts", base, warmup, total, '{"num_cycle": 2}', 3), "'num_cycle'",
                 "cosine_with_restarts", "num_cycles")
    expect_error(("lr", "polynomial", base, warmup, total, '{"lr_end": 0.1}', 3), "'lr_end'", "polynomial")
    expect_error(("lr", "cosine_with_min_lr", base, warmup, total, "{}", 3), "cosine_with_min_lr", "min_lr")
    expect_error(("lr", "cosine_with_min_lr", base, warmup, total, '{"min_lr": 1e-4, "min_lr_rate": 0.1}', 3),
                 "only one of min_lr or min_lr_rate")
    expect_error(("lr", "warmup_stable_decay", base, warmup, total, '{"num_decay_steps": "x"}', 3),
                 "'num_decay_steps'", "warmup_stable_decay", "expected a number")
    expect_error(("lr", "warmup_stable_decay", base, warmup, total, '{"num_stable_steps": 5}', 3),
                 "warmup_stable_decay", "num_decay_steps")
    expect_error(("lr", "warmup_stable_decay", base, warmup, total, '{"num_decay_steps": 20, "decay_type": "x"}', 3),
                 "'decay_type'", "1-sqrt")


def plateau_metrics():
    """Metric sequences: losses falling onto plateaus, accuracies rising, a flat
    noisy one, negative values (torch's relative threshold is best * (1 - t)),
    and NaN/inf (torch compares them like any value)."""
    import math
    import random
    rng = random.Random(24)
    n = 60
    falling = [2 * math.exp(-i / 8) + 0.3 + rng.gauss(0, 0.01) for i in range(n)]
    steps = [1.0 - 0.1 * (i // 12) + rng.uniform(-2e-4, 2e-4) for i in range(n)]
    rising = [0.95 - 0.5 * math.exp(-i / 6) + rng.gauss(0, 0.005) for i in range(n)]
    flat = [0.5 + rng.uniform(-1e-5, 1e-5) for _ in range(n)]
    negative = [-1 - 0.5 * (1 - math.exp(-i / 10)) + rng.gauss(0, 0.02) for i in range(n)]
    odd = list(falling[:20]) + [float("nan")] * 3 + falling[20:40] + [float("inf"), float("-inf")] + falling[40:]
    return {"falling": falling, "steps": steps, "rising": rising, "flat": flat, "negative": negative, "nan/inf": odd}


def encode(v):
    return v if v == v and abs(v) != float("inf") else str(v)


def check_plateau(get_scheduler):
    base = 0.01
    kwarg_sets = [
        {},
        {"patience": 2, "factor": 0.5},
        {"patience": 0, "factor": 0.5, "cooldown": 2},
        {"patience": 1, "factor": 0.3, "min_lr": 1e-3},
        {"patience": 2, "threshold_mode": "abs", "threshold": 0.05},
        {"patience": 3, "threshold": 0.01, "cooldown": 1},
        {"mode": "max", "patience": 1, "factor": 0.5, "threshold": 0.01},
        {"mode": "max", "threshold_mode": "abs", "threshold": 0.0, "patience": 3, "cooldown": 1, "min_lr": 1e-4},
        {"patience": 1, "factor": 0.5, "eps": 1e-3},
        {"patience": 1, "factor": 0.5, "min_lr": 0.0099999999, "eps": 0.0},
    ]
    runs, wants, names = [], [], []
    reductions = 0
    for kwargs in kwarg_sets:
        for seq_name, seq in plateau_metrics().items():
            p = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.SGD([p], lr=base)
            sched = get_scheduler("reduce_lr_on_plateau", opt, scheduler_specific_kwargs=dict(kwargs))
            assert isinstance(sched, torch.optim.lr_scheduler.ReduceLROnPlateau), type(sched)
            want = []
            for v in seq:
                sched.step(v)
                want.append(opt.param_groups[0]["lr"])
            reductions += sum(1 for a, b in zip([base] + want, want) if b < a)
            runs.append([base, kwargs, [encode(v) for v in seq]])
            wants.append(want)
            names.append(f"reduce_lr_on_plateau {kwargs} on {seq_name}")
    cases_file = os.path.join(tempfile.mkdtemp(), "plateau_cases.json")
    with open(cases_file, "w") as f:
        json.dump(runs, f)
    compared = 0
    for name, got, want in zip(names, ours("plateau-cases", cases_file), wants):
        assert len(got) == len(want), (len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            if abs(g - w) > 1e-12:
                failures.append(f"{name}: after metric {i}: ours {g!r}, torch {w!r}")
                break
        compared += len(want)
    if reductions < 50:
        failures.append(f"reduce_lr_on_plateau: torch reduced only {reductions} times; the comparison proves little")
    print(f"lr: reduce_lr_on_plateau: {len(kwarg_sets)} kwargs sets x {len(plateau_metrics())} metric sequences, "
          f"{compared} learning rates ({reductions} reductions) compared with torch {torch.__version__}'s "
          f"ReduceLROnPlateau from transformers.get_scheduler")
    expect_error(("lr", "reduce_lr_on_plateau", base, 0, 10, '{"mode": "maximum"}', 1), "'mode'",
                 "reduce_lr_on_plateau", '"min" or "max"')
    expect_error(("lr", "reduce_lr_on_plateau", base, 0, 10, '{"threshold_mode": "x"}', 1), "'threshold_mode'")
    expect_error(("lr", "reduce_lr_on_plateau", base, 0, 10, '{"factor": 1.5}', 1), "'factor'", "(0, 1)")
    expect_error(("lr", "reduce_lr_on_plateau", base, 0, 10, '{"patience": -1}', 1), "'patience'")
    expect_error(("lr", "reduce_lr_on_plateau", base, 0, 10, '{"num_cycles": 1}', 1), "'num_cycles'", "eps")


def reference_optimizer(name, args, lr, wd, weight, bias):
    kw = {}
    for piece in (args.replace(" ", "").split(",") if args != "-" else []):
        k, v = piece.split("=")
        kw[k] = v in ("True", "true") if v in ("True", "true", "False", "false") else float(v)
    groups_wd = kw.pop("weight_decay", wd)
    groups = [{"params": [weight], "weight_decay": groups_wd}, {"params": [bias], "weight_decay": 0.0}]
    if name == "adamw_torch":
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8, **kw)
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, **kw)
    if name == "adagrad":
        return torch.optim.Adagrad(groups, lr=lr, **kw)
    if name == "rmsprop":
        return torch.optim.RMSprop(groups, lr=lr, **kw)
    raise ValueError(name)


def check_optim():
    cases = [
        ("adamw_torch", "-", 1e-2, 0.1), ("adamw_torch", "amsgrad=True", 1e-2, 0.1),
        ("sgd", "-", 0.1, 0.01), ("sgd", "momentum=0.9, nesterov=True", 0.1, 0.0),
        ("sgd", "momentum=0.9,dampening=0.1,weight_decay=0.05", 0.1, 0.0),
        ("adagrad", "-", 0.1, 0.01), ("adagrad", "lr_decay=0.01,initial_accumulator_value=0.1,eps=1e-8", 0.1, 0.0),
        ("rmsprop", "-", 1e-2, 0.01), ("rmsprop", "momentum=0.5,centered=True,alpha=0.9,eps=1e-6", 1e-2, 0.0),
    ]
    worst = 0.0
    for name, args, lr, wd in cases:
        got = ours("optim", name, args, lr, wd, 10)
        weight = torch.nn.Parameter(tensor(got["initial"]["weight"]))
        bias = torch.nn.Parameter(tensor(got["initial"]["bias"]))
        opt = reference_optimizer(name, args, lr, wd, weight, bias)
        for b in got["batches"]:
            opt.zero_grad()
            x, y = tensor(b["x"]), tensor(b["y"], torch.long)
            torch.nn.functional.cross_entropy(torch.nn.functional.linear(x, weight, bias), y).backward()
            opt.step()
        moved = (weight.detach() - tensor(got["initial"]["weight"])).abs().max().item()
        for key, ref in (("weight", weight), ("bias", bias)):
            diff = (tensor(got["final"][key]) - ref.detach()).abs().max().item()
            worst = max(worst, diff)
            if diff > 1e-6:
                failures.append(f"{name} {args}: {key} differs from torch.optim by {diff:g} after 10 steps")
        if moved < 1e-4:
            failures.append(f"{name} {args}: the weights hardly moved ({moved:g}); the comparison proves nothing")
    print(f"optim: {len(cases)} optimizer/option sets match torch {torch.__version__} over 10 steps "
          f"(largest difference {worst:.2g})")
    expect_error(("optim", "sgd", "momentum=abc", 0.1, 0, 1), "'momentum'", "sgd", "expected a number")
    expect_error(("optim", "sgd", "nesterov=True", 0.1, 0, 1), "'nesterov'", "momentum > 0")
    expect_error(("optim", "adagrad", "momentum=0.9", 0.1, 0, 1), "'momentum'", "adagrad", "lr_decay")
    expect_error(("optim", "rmsprop", "centered=maybe", 0.1, 0, 1), "'centered'", "True or False")
    expect_error(("optim", "sgd", "momentum", 0.1, 0, 1), "optim_args", "key=value")


def check_smooth():
    for f in (0.0, 0.1, 0.35):
        for case in ours("smooth", f):
            logits, labels = tensor(case["logits"]), tensor(case["labels"], torch.long)
            want = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                     label_smoothing=f).item()
            if abs(case["loss"] - want) > 1e-6:
                failures.append(f"label smoothing {f} {list(logits.shape)}: ours {case['loss']}, torch {want}")
    print("smooth: label-smoothed losses equal torch.nn.functional.cross_entropy(label_smoothing=f)")


{"lr": check_lr, "optim": check_optim, "smooth": check_smooth}[part]()
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("OK")
