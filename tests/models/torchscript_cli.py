"""TorchScript models and .pt data through the trainhook CLI.

Run with the HF test venv's python (Debian python3-torch 1.13, the same
version as libtorch-dev, plus safetensors): the fixtures (scripted and traced
models, torch.save data files) are made here at test time, and Python's own
torch.jit.load / safetensors.torch.load_file read back what the trainer wrote.

usage: torchscript_cli.py <case> <trainhook cli> <digits.csv> <work dir>
cases: digits, regression, resume, ddp, errors
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile

try:
    import torch
    from safetensors.torch import load_file
except ImportError as e:  # the venv is made by scripts/venv hf
    print(f"FAIL: {e}; make the test venv with scripts/venv hf (TRAINHOOK_HF_VENV)", file=sys.stderr)
    sys.exit(1)

CASE, CLI, DIGITS, WORK = sys.argv[1:5]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(args, log, expect_ok=True, env=None):
    with open(log, "w") as f:
        rc = subprocess.call([CLI] + args, stdout=f, stderr=subprocess.STDOUT, env=env)
    text = open(log).read()
    if expect_ok and rc != 0:
        fail(f"trainhook {' '.join(args)} exited {rc}:\n{text[-3000:]}")
    return rc, text


class Classifier(torch.nn.Module):
    """HF-style: forward(input, labels) returns {"loss", "logits"}."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, input: torch.Tensor, labels: torch.Tensor):
        logits = self.fc2(torch.relu(self.fc1(input)))
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


class Plain(torch.nn.Module):
    """forward(input) -> logits; the loss comes from --loss."""

    def __init__(self, inputs=64, outputs=10):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(inputs, 32), torch.nn.Tanh(), torch.nn.Linear(32, outputs))

    def forward(self, input):
        return self.net(input)


def digits():
    rows = [list(map(float, l.split(","))) for l in open(DIGITS) if l.strip()]
    t = torch.tensor(rows)
    x = t[:, :-1] / 16.0
    y = t[:, -1].long()
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(x), generator=g)
    return x[perm], y[perm]


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write_digits_pt(d):
    x, y = digits()
    n = 1437
    torch.save({"input": x[:n].clone(), "labels": y[:n].clone()}, os.path.join(d, "train.pt"))
    torch.save({"input": x[n:].clone(), "labels": y[n:].clone()}, os.path.join(d, "val.pt"))
    return x[n:], y[n:]


def case_digits():
    d = fresh("digits")
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(Classifier()), os.path.join(d, "model.pt"))
    xv, yv = write_digits_pt(d)
    out = os.path.join(d, "out")
    run(["train", "--model_name_or_path", f"{d}/model.pt", "--train_file", f"{d}/train.pt",
         "--validation_file", f"{d}/val.pt", "--test_file", f"{d}/val.pt", "--do_train", "--do_eval",
         "--do_predict", "--output_dir", out, "--num_train_epochs", "12", "--per_device_train_batch_size", "32",
         "--learning_rate", "3e-3", "--eval_strategy", "epoch", "--save_strategy", "epoch",
         "--logging_steps", "50", "--disable_tqdm", "--report_to", "none"], f"{d}/train.log")
    ev = json.load(open(f"{out}/eval_results.json"))
    acc = ev["eval_accuracy"]
    print(f"eval_accuracy = {acc:.4f} (target >= 0.95)")
    if acc < 0.95:
        fail(f"eval accuracy {acc} below 0.95")
    ckpts = sorted((int(p.split("-")[1]), p) for p in os.listdir(out) if p.startswith("checkpoint-"))
    if not ckpts:
        fail("no checkpoint written")
    for where in [os.path.join(out, ckpts[-1][1]), out]:
        for f in ("model.pt", "model.safetensors"):
            if not os.path.isfile(os.path.join(where, f)):
                fail(f"{where} lacks {f}")
    # The final model: TorchScript from model.pt, eager from model.safetensors.
    scripted = torch.jit.load(f"{out}/model.pt").eval()
    eager = Classifier()
    eager.load_state_dict(load_file(f"{out}/model.safetensors"), strict=True)
    eager.eval()
    with torch.no_grad():
        a = scripted(xv, yv)
        b = eager(xv, yv)
    diff = (a["logits"] - b["logits"]).abs().max().item()
    print(f"max |logit(TorchScript) - logit(safetensors)| = {diff:.3g} (target <= 1e-5)")
    if diff > 1e-5:
        fail(f"TorchScript and safetensors logits differ by {diff}")
    # The trainer's predictions and eval loss on the same set.
    preds = [int(l.split("\t")[1]) for l in open(f"{out}/predict_results.txt").read().splitlines()[1:]]
    mine = a["logits"].argmax(-1).tolist()
    if preds != mine:
        bad = sum(p != q for p, q in zip(preds, mine))
        fail(f"{bad} of {len(preds)} predictions of the trainer differ from Python's on its model")
    loss = a["loss"].item()
    ours = ev["eval_loss"]
    print(f"eval_loss trainer {ours:.8f}, Python {loss:.8f}")
    if abs(loss - ours) > 1e-5 * max(1.0, abs(loss)):
        fail(f"eval_loss {ours} vs Python's {loss}")
    # A checkpoint's TorchScript also opens in Python and matches its safetensors.
    c = os.path.join(out, ckpts[0][1])
    m1 = torch.jit.load(f"{c}/model.pt").eval()
    m2 = Classifier()
    m2.load_state_dict(load_file(f"{c}/model.safetensors"), strict=True)
    with torch.no_grad():
        d2 = (m1(xv, yv)["logits"] - m2.eval()(xv, yv)["logits"]).abs().max().item()
    if d2 > 1e-5:
        fail(f"{c}: TorchScript and safetensors logits differ by {d2}")
    # --save_safetensors false keeps the .pt only.
    out2 = os.path.join(d, "nost")
    run(["train", "--model_name_or_path", f"{d}/model.pt", "--train_file", f"{d}/train.pt", "--do_train",
         "--output_dir", out2, "--max_steps", "4", "--save_steps", "2", "--save_safetensors", "false",
         "--disable_tqdm"], f"{d}/nost.log")
    found = [os.path.join(r, f) for r, _, fs in os.walk(out2) for f in fs if f.endswith(".safetensors")]
    if found:
        fail(f"--save_safetensors false still wrote {found}")
    # A built-in model's safetensors loads into the same PyTorch architecture.
    out3 = os.path.join(d, "mlp")
    run(["train", "--model", "mlp", "--hidden_size", "16", "--num_layers", "1", "--train_file", f"{d}/train.pt",
         "--do_train", "--output_dir", out3, "--max_steps", "3", "--disable_tqdm"], f"{d}/mlp.log")
    mlp = torch.nn.Module()
    mlp.layers = torch.nn.Sequential(torch.nn.Linear(64, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
    mlp.load_state_dict(load_file(f"{out3}/model.safetensors"), strict=True)
    print("PASS")


def case_regression():
    d = fresh("regression")
    g = torch.Generator().manual_seed(1)
    x = torch.rand(1200, 4, generator=g) * 2 - 1
    y = 2.0 * x[:, 0] - 3.0 * x[:, 1] * x[:, 2] + 0.5 * torch.sin(3 * x[:, 3]) + 1.0
    # A header, the label column "target" in the middle, named by --label_column_name.
    for name, sl in (("train.csv", slice(0, 1000)), ("val.csv", slice(1000, 1200))):
        with open(os.path.join(d, name), "w") as f:
            f.write("a,b,target,c,d\n")
            for xi, yi in zip(x[sl].tolist(), y[sl].tolist()):
                f.write(f"{xi[0]:.6f},{xi[1]:.6f},{yi:.6f},{xi[2]:.6f},{xi[3]:.6f}\n")
    torch.manual_seed(0)
    traced = torch.jit.trace(Plain(4, 1), torch.zeros(2, 4))
    traced.save(os.path.join(d, "model.pt"))
    out = os.path.join(d, "out")
    run(["train", "--model_name_or_path", f"{d}/model.pt", "--loss", "mse", "--train_file", f"{d}/train.csv",
         "--validation_file", f"{d}/val.csv", "--test_file", f"{d}/val.csv", "--label_column_name", "target",
         "--do_train", "--do_eval", "--do_predict",
         "--output_dir", out, "--num_train_epochs", "30", "--per_device_train_batch_size", "32",
         "--learning_rate", "1e-2", "--logging_steps", "200", "--save_strategy", "no", "--disable_tqdm"],
        f"{d}/train.log")
    ev = json.load(open(f"{out}/eval_results.json"))
    yv = y[1000:]
    baseline = ((yv - y[:1000].mean()) ** 2).mean().item()
    mse = ev["eval_mse"]
    print(f"eval_mse {mse:.5f}, predicting the mean {baseline:.5f}: ratio {baseline / mse:.1f} (target >= 10)")
    if not mse * 10 <= baseline:
        fail(f"eval_mse {mse} not 10x below the mean predictor's {baseline}")
    if abs(ev["eval_loss"] - mse) > 1e-4 * max(mse, 1e-3):
        fail(f"eval_loss {ev['eval_loss']} should be the mse {mse}")
    if "eval_mae" not in ev:
        fail("eval_mae missing")
    # predict_results.txt holds the predicted values (not class ids) for real-valued labels.
    preds = torch.tensor([float(l.split("\t")[1]) for l in open(f"{out}/predict_results.txt").read().splitlines()[1:]])
    pmse = ((preds - yv) ** 2).mean().item()
    if abs(pmse - mse) > 1e-3 * max(mse, 1e-3) + 1e-6:
        fail(f"predict_results.txt values give MSE {pmse}, the evaluation {mse}")
    print("PASS")


def case_resume():
    d = fresh("resume")
    torch.manual_seed(0)
    # Dropout makes the RNG state part of what resume must restore.
    class Drop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(64, 64)
            self.drop = torch.nn.Dropout(0.2)
            self.fc2 = torch.nn.Linear(64, 10)

        def forward(self, input):
            return self.fc2(self.drop(torch.relu(self.fc1(input))))

    torch.jit.save(torch.jit.script(Drop()), os.path.join(d, "model.pt"))
    write_digits_pt(d)
    common = ["train", "--model_name_or_path", f"{d}/model.pt", "--loss", "cross_entropy", "--train_file",
              f"{d}/train.pt", "--do_train", "--max_steps", "40", "--save_steps", "15",
              "--per_device_train_batch_size", "16", "--learning_rate", "1e-3", "--gradient_accumulation_steps",
              "2", "--max_grad_norm", "0.5", "--warmup_steps", "5", "--disable_tqdm"]
    run(common + ["--output_dir", f"{d}/full"], f"{d}/full.log")
    shutil.copytree(f"{d}/full/checkpoint-15", f"{d}/part/checkpoint-15")
    run(common + ["--output_dir", f"{d}/part", "--resume_from_checkpoint", f"{d}/part/checkpoint-15"],
        f"{d}/part.log")
    a = load_file(f"{d}/full/model.safetensors")
    b = load_file(f"{d}/part/model.safetensors")
    if a.keys() != b.keys():
        fail(f"different tensors: {sorted(a)} vs {sorted(b)}")
    for k in a:
        if not torch.equal(a[k], b[k]):
            fail(f"{k} differs after resume: max {(a[k] - b[k]).abs().max().item()}")
    ja = torch.jit.load(f"{d}/full/model.pt")
    jb = torch.jit.load(f"{d}/part/model.pt")
    for (n, p), (_, q) in zip(ja.named_parameters(), jb.named_parameters()):
        if not torch.equal(p, q):
            fail(f"model.pt {n} differs after resume")
    print(f"resumed at step 15 of 40: {len(a)} tensors bit-identical")
    print("PASS")


def case_ddp():
    d = fresh("ddp")
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(Classifier()), os.path.join(d, "model.pt"))
    write_digits_pt(d)
    common = ["--model_name_or_path", f"{d}/model.pt", "--train_file", f"{d}/train.pt", "--validation_file",
              f"{d}/val.pt", "--do_train", "--do_eval", "--max_steps", "30", "--logging_steps", "10",
              "--save_steps", "15", "--learning_rate", "1e-3", "--disable_tqdm"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    run(["train"] + common + ["--output_dir", f"{d}/one", "--per_device_train_batch_size", "32"], f"{d}/one.log",
        env=env)
    run(["launch", "--nproc_per_node", "2", "--", "train"] + common +
        ["--output_dir", f"{d}/two", "--per_device_train_batch_size", "16"], f"{d}/two.log", env=env)
    a = load_file(f"{d}/one/model.safetensors")
    b = load_file(f"{d}/two/model.safetensors")
    worst = max((a[k] - b[k]).abs().max().item() for k in a)
    print(f"1 rank x32 vs 2 ranks x16 (TorchScript): max |weight diff| = {worst:.3g} (target <= 1e-6)")
    if worst > 1e-6:
        fail(f"weights differ by {worst}")
    e1 = json.load(open(f"{d}/one/eval_results.json"))
    e2 = json.load(open(f"{d}/two/eval_results.json"))
    if abs(e1["eval_loss"] - e2["eval_loss"]) > 1e-6:
        fail(f"eval_loss 1 rank {e1['eval_loss']} vs 2 ranks {e2['eval_loss']}")
    print("PASS")


def expect_error(d, name, args, needle, file):
    rc, text = run(args + ["--output_dir", f"{d}/out_{name}", "--do_train", "--max_steps", "2",
                           "--disable_tqdm"], f"{d}/{name}.log", expect_ok=False)
    if rc != 1:
        fail(f"{name}: exit {rc}, expected 1:\n{text[-2000:]}")
    if file not in text:
        fail(f"{name}: the message does not name {file}:\n{text[-2000:]}")
    for n in needle if isinstance(needle, list) else [needle]:
        if n not in text:
            fail(f"{name}: the message lacks '{n}':\n{text[-2000:]}")
    for bad in ("Exception raised from", "frame #", "terminate called", "Traceback"):
        if bad in text:
            fail(f"{name}: a backtrace in the output:\n{text[-2000:]}")
    print(f"{name}: {text.strip().splitlines()[-1]}")


def case_errors():
    d = fresh("errors")
    torch.manual_seed(0)
    write_digits_pt(d)
    train = ["--train_file", f"{d}/train.pt"]
    # An eager torch.save pickle of the module, and of a state dict.
    torch.save(Classifier(), f"{d}/eager.pt")
    torch.save(Classifier().state_dict(), f"{d}/state.pt")
    expect_error(d, "eager", ["train", "--model_name_or_path", f"{d}/eager.pt"] + train,
                 "not a TorchScript archive", f"{d}/eager.pt")
    expect_error(d, "state_dict", ["train", "--model_name_or_path", f"{d}/state.pt"] + train,
                 "not a TorchScript archive", f"{d}/state.pt")
    open(f"{d}/text.pt", "w").write("hello")
    expect_error(d, "not_zip", ["train", "--model_name_or_path", f"{d}/text.pt"] + train,
                 "not a TorchScript archive", f"{d}/text.pt")

    class Odd(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(64, 10)

        def forward(self, pixels, mask):
            return self.fc(pixels * mask)

    torch.jit.save(torch.jit.script(Odd()), f"{d}/odd.pt")
    expect_error(d, "arguments", ["train", "--model_name_or_path", f"{d}/odd.pt", "--loss", "cross_entropy"] + train,
                 ["pixels, mask", "input, labels"], f"{d}/odd.pt")
    torch.jit.save(torch.jit.script(Plain()), f"{d}/plain.pt")
    expect_error(d, "no_loss", ["train", "--model_name_or_path", f"{d}/plain.pt"] + train, "--loss",
                 f"{d}/plain.pt")

    class DictNoLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(64, 10)

        def forward(self, input):
            return {"logits": self.fc(input)}

    torch.jit.save(torch.jit.script(DictNoLoss()), f"{d}/dict.pt")
    expect_error(d, "dict_no_loss", ["train", "--model_name_or_path", f"{d}/dict.pt"] + train, "no loss",
                 f"{d}/dict.pt")
    expect_error(d, "dtype_mse", ["train", "--model_name_or_path", f"{d}/plain.pt", "--loss", "mse"] + train,
                 ["int64", "--loss mse"], f"{d}/train.pt")
    x, y = digits()
    torch.save({"input": x[:100].clone(), "labels": y[:100].float()}, f"{d}/float.pt")
    expect_error(d, "dtype_ce", ["train", "--model_name_or_path", f"{d}/plain.pt", "--loss", "cross_entropy",
                                 "--train_file", f"{d}/float.pt"], ["Float", "cross_entropy"], f"{d}/float.pt")
    # A newer PyTorch's archive: the same zip with a file format version above ours.
    with zipfile.ZipFile(f"{d}/plain.pt") as src, zipfile.ZipFile(f"{d}/newer.pt", "w", zipfile.ZIP_STORED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("/version"):
                data = b"99\n"
            dst.writestr(item.filename, data)
    expect_error(d, "newer", ["train", "--model_name_or_path", f"{d}/newer.pt", "--loss", "cross_entropy"] + train,
                 ["99", "1.13"], f"{d}/newer.pt")
    # Data files: not a dict, no labels, unequal lengths.
    torch.save(x[:10].clone(), f"{d}/tensor.pt")
    expect_error(d, "data_not_dict", ["train", "--train_file", f"{d}/tensor.pt"], "dict", f"{d}/tensor.pt")
    torch.save({"input": x[:10].clone()}, f"{d}/nolabels.pt")
    expect_error(d, "data_no_labels", ["train", "--train_file", f"{d}/nolabels.pt"], "labels", f"{d}/nolabels.pt")
    torch.save({"input": x[:10].clone(), "labels": y[:9].clone()}, f"{d}/ragged.pt")
    expect_error(d, "data_ragged", ["train", "--train_file", f"{d}/ragged.pt"], "9", f"{d}/ragged.pt")
    expect_error(d, "missing_model", ["train", "--model_name_or_path", f"{d}/nope.pt"] + train, "no such file",
                 f"{d}/nope.pt")
    print("PASS")


os.makedirs(WORK, exist_ok=True)
{"digits": case_digits, "regression": case_regression, "resume": case_resume, "ddp": case_ddp,
 "errors": case_errors}[CASE]()
