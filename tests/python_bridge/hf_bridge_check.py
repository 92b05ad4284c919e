"""TrainhookCallback on the real HF Trainer (transformers in the HF venv), a
small MLP on the digits data, CPU, fixed seed.

usage: hf_bridge_check.py <case> --digits digits.csv --work DIR [--c_plugin_dir DIR]
cases:
  early_stopping  our early_stopping through the bridge stops at the same step
                  as HF's EarlyStoppingCallback (and before max_steps)
  c_plugin        examples/c_plugin's loss_guard, unchanged: its stop request
                  ends HF's run at the first logged loss over max_loss; its
                  message reaches Python's logging; a high max_loss changes nothing
  grad_stats      per-parameter grad/weight norms in HF's log_history equal those
                  computed in Python at on_pre_optimizer_step (1e-5)
  resume          early_stopping's counter comes back through stateful_callbacks:
                  a resumed run stops where the uninterrupted one does, a resume
                  without restoring the state does not
  views           the DLPack views are the tensors' own memory (pointer, shape,
                  strides, dtype, also a non-contiguous buffer), NULL data for a
                  missing gradient, and the core's rules refuse gradients at on_log
  ema             ema writes through the views: the model HF evaluates holds the EMA
                  weights (EVALUATE_BEGIN, which the bridge fires before HF's
                  evaluation) and ends with them (on_train_end), equal to an EMA
                  computed in Python
  lr_factor       reduce_lr_on_plateau through set_lr_factor: the learning rate HF logs
                  after each evaluation is torch's ReduceLROnPlateau's on the same eval
                  losses, and a resumed run keeps the reduced rate
  probe           tests/sdk's c_grad_norm in probe mode: every bad input to the host
                  functions is refused with TH_INVALID_ARGUMENT and the core's message
                  naming the callback (as tests/sdk/cli_model_access.sh checks in the
                  C++ trainer); learning_rates answers; the absent step values are a
                  failure the plugin names, and the run goes on
  refused         a missing or refused plugin is a PluginError naming the file and why;
                  a failing callback follows plugin_error_policy
  tensorboard_run one run with --report_to tensorboard and grad_stats; writes the
                  output folder's trainer_state.json and training_args.json for
                  tests/tensorboard/check_events.py (TensorBoard's own readers)
  wheel           the package as installed from its wheel (tests/packaging/package_wheel.sh):
                  the core library and the plugins are the wheel's own copies;
                  early_stopping stops the run where HF's own callback does and
                  jsonl writes the log_history HF keeps
  mlflow_run      one run with --report_to mlflow (MLFLOW_TRACKING_URI from the
                  caller); writes log_history to DIR/log_history.json
Exits 0 when every check holds, 1 with FAIL lines otherwise.
"""
import argparse
import json
import logging
import math
import os
import shutil
import sys

try:
    import torch
    import transformers
    from transformers import EarlyStoppingCallback, Trainer, TrainerCallback, TrainingArguments
except ImportError as e:
    print(f"FAIL: {e}; make the HF venv with scripts/venv hf (TRAINHOOK_HF_VENV)", file=sys.stderr)
    sys.exit(1)

import trainhook

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from hf_digits import Digits, Mlp, digits_rows  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def data(path):
    rows = digits_rows(path)
    return Digits(rows[:1400]), Digits(rows[1400:])


def trainer(opts, out, callbacks, resume_states=False, **kw):
    base = dict(output_dir=out, per_device_train_batch_size=32, per_device_eval_batch_size=128,
                learning_rate=0.05, max_steps=60, logging_steps=5, eval_strategy="no", save_strategy="no",
                report_to=[], use_cpu=True, seed=7, disable_tqdm=True, optim="sgd",
                lr_scheduler_type="constant", dataloader_num_workers=0,
                restore_callback_states_from_checkpoint=resume_states)
    base.update(kw)
    args = TrainingArguments(**base)
    train, evals = data(opts.digits)
    torch.manual_seed(7)
    model = Mlp()
    return Trainer(model=model, args=args, train_dataset=train, eval_dataset=evals, callbacks=callbacks)


def fresh(opts, name):
    out = os.path.join(opts.work, name)
    shutil.rmtree(out, ignore_errors=True)
    return out


def early_stopping_args(max_steps=800):
    # learning_rate 0.5: the eval loss falls, gets worse once, improves again
    # (the counter resets), then stalls: HF's EarlyStoppingCallback stops at step 120 (patience 2).
    return dict(eval_strategy="steps", eval_steps=10, save_strategy="steps", save_steps=10,
                load_best_model_at_end=True, metric_for_best_model="eval_loss", max_steps=max_steps,
                learning_rate=0.5)


def case_early_stopping(opts):
    hf = trainer(opts, fresh(opts, "es_hf"), [EarlyStoppingCallback(early_stopping_patience=2)],
                 **early_stopping_args())
    hf.train()
    ours = trainer(opts, fresh(opts, "es_bridge"),
                   [trainhook.TrainhookCallback(callbacks=["early_stopping"], plugin_config={
                       "early_stopping": {"early_stopping_patience": 2}})],
                   **early_stopping_args())
    ours.train()
    a, b = hf.state.global_step, ours.state.global_step
    print(f"HF EarlyStoppingCallback stopped at step {a}, the bridge's early_stopping at step {b}")
    check(a < 800, f"HF's own callback stopped the run early (step {a} < max_steps 800)")
    check(a == b, f"early_stopping through the bridge stops at HF's step ({b} == {a})")
    evals_hf = [e["eval_loss"] for e in hf.state.log_history if "eval_loss" in e]
    evals_ours = [e["eval_loss"] for e in ours.state.log_history if "eval_loss" in e]
    check(evals_hf == evals_ours, f"the same evaluations ({len(evals_ours)})")


def case_wheel(opts):
    from trainhook import _core
    package = os.path.dirname(os.path.abspath(trainhook.__file__))
    hf = trainer(opts, fresh(opts, "wheel_hf"), [EarlyStoppingCallback(early_stopping_patience=2)],
                 **early_stopping_args())
    hf.train()
    out = fresh(opts, "wheel_bridge")
    bridge = trainhook.TrainhookCallback(callbacks=["early_stopping"], report_to=["jsonl"],
                                         plugin_config={"early_stopping": {"early_stopping_patience": 2}})
    core = _core.core().path
    check(core.startswith(os.path.join(package, "_native") + os.sep), f"the core is the wheel's own ({core})")
    for name, file, _ in bridge._specs:
        file = os.path.realpath(file)
        check(file.startswith(os.path.join(package, "_native") + os.sep), f"{name} is the wheel's own ({file})")
    ours = trainer(opts, out, [bridge], **early_stopping_args())
    ours.train()
    a, b = hf.state.global_step, ours.state.global_step
    check(b < 800 and a == b, f"early_stopping from the wheel stops at HF's step ({b} == {a} < 800)")
    path = os.path.join(out, "log_history.jsonl")
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    check([r.get("eval_loss") for r in lines if "eval_loss" in r] ==
          [e["eval_loss"] for e in ours.state.log_history if "eval_loss" in e],
          f"jsonl wrote each evaluation HF logged ({len(lines)} records in {path})")


class LogCapture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def case_c_plugin(opts):
    cap = LogCapture()
    logging.getLogger("trainhook").addHandler(cap)
    logging.getLogger("trainhook").setLevel(logging.INFO)
    t = trainer(opts, fresh(opts, "c_stop"), [trainhook.TrainhookCallback(
        callbacks=["loss_guard"], plugin_dir=opts.c_plugin_dir, plugin_config={"loss_guard": {"max_loss": 0.5}})])
    t.train()
    first = next(e for e in t.state.log_history if "loss" in e)
    check(first["loss"] > 0.5, f"the first logged loss ({first['loss']}) is over max_loss 0.5")
    check(t.state.global_step == first["step"],
          f"loss_guard stopped HF's run at the first log (step {t.state.global_step} == {first['step']})")
    said = [m for m in cap.records if m.startswith("[loss_guard]")]
    check(len(said) > 0 and "above max_loss" in said[0], f"its message reached Python's logging: {said[:1]}")
    t = trainer(opts, fresh(opts, "c_run"), [trainhook.TrainhookCallback(
        callbacks=["loss_guard"], plugin_dir=opts.c_plugin_dir, plugin_config={"loss_guard": {"max_loss": 1e6}})])
    t.train()
    check(t.state.global_step == 60, f"with max_loss 1e6 the run reaches max_steps ({t.state.global_step})")


class PythonNorms(TrainerCallback):
    """What grad_stats should log, computed in Python at the same event."""

    def __init__(self):
        self.norms = {}

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        if (state.global_step + 1) % args.logging_steps != 0:
            return
        step = state.global_step + 1
        for n, p in model.named_parameters():
            self.norms[(step, "grad_norm/" + n)] = p.grad.double().norm().item()
            self.norms[(step, "weight_norm/" + n)] = p.detach().double().norm().item()


def case_grad_stats(opts):
    for per in ("parameter", "module"):
        ref = PythonNorms()
        t = trainer(opts, fresh(opts, "grad_stats_" + per), [trainhook.TrainhookCallback(
            callbacks=["grad_stats"], plugin_config={"grad_stats": {"per": per}}), ref], max_steps=20)
        t.train()
        logged = {}
        for e in t.state.log_history:
            for k, v in e.items():
                if k.startswith(("grad_norm/", "weight_norm/")):
                    logged[(e["step"], k)] = v
        want = ref.norms
        if per == "module":  # per layer: the norm of the layer's parameters together
            squares = {}
            for (step, name), v in ref.norms.items():
                key = (step, name.rsplit(".", 1)[0])  # grad_norm/hidden.weight -> grad_norm/hidden
                squares[key] = squares.get(key, 0.0) + v * v
            want = {k: math.sqrt(v) for k, v in squares.items()}
        n = 4 * (4 if per == "parameter" else 2) * 2
        check(len(want) == n, f"per {per}: Python computed {len(want)} norms (4 logs x {n // 8} names x 2)")
        check(set(logged) == set(want), f"per {per}: grad_stats logged the same (step, name) pairs ({len(logged)})")
        worst = max((abs(logged[k] - want[k]) for k in want if k in logged), default=math.inf)
        check(worst <= 1e-5, f"per {per}: every norm equals Python's to 1e-5 (largest difference {worst:.3g})")


def resume_args(max_steps):
    return early_stopping_args(max_steps)


def es_bridge():
    return trainhook.TrainhookCallback(callbacks=["early_stopping"], plugin_config={
        "early_stopping": {"early_stopping_patience": 3}})


def case_resume(opts):
    whole = trainer(opts, fresh(opts, "resume_whole"), [es_bridge()], **resume_args(800))
    whole.train()
    stop = whole.state.global_step
    check(stop < 800, f"the uninterrupted run early-stopped (step {stop})")
    # The counter just before the stop is > 0: cut there, at the last checkpoint before it.
    cut = stop - 10
    out = fresh(opts, "resume_cut")
    first = trainer(opts, out, [es_bridge()], **resume_args(cut))
    first.train()
    ckpt = os.path.join(out, f"checkpoint-{cut}")
    with open(os.path.join(ckpt, "trainer_state.json")) as f:
        saved = json.load(f)["stateful_callbacks"]
    entry = saved.get("TrainhookCallback")
    check(isinstance(entry, dict), f"trainer_state.json's stateful_callbacks has one TrainhookCallback ({entry!r:.80})")
    states = (entry or {}).get("attributes", {}).get("plugin_states", {})
    check("early_stopping" in states, f"with early_stopping's state: {states}")
    check((entry or {}).get("args", {}).get("callbacks") == ["early_stopping"], "and the args that re-create it")
    shutil.rmtree(out + "_norestore", ignore_errors=True)
    shutil.copytree(out, out + "_norestore")
    resumed = trainer(opts, out, [es_bridge()], resume_states=True, **resume_args(800))
    resumed.train(resume_from_checkpoint=ckpt)
    check(resumed.state.global_step == stop,
          f"the resumed run stops where the uninterrupted one did ({resumed.state.global_step} == {stop})")
    plain = trainer(opts, out + "_norestore", [es_bridge()], resume_states=False, **resume_args(800))
    plain.train(resume_from_checkpoint=os.path.join(out + "_norestore", f"checkpoint-{cut}"))
    check(plain.state.global_step != stop,
          f"without restoring the state it does not ({plain.state.global_step} != {stop}): the test can fail")


def case_views(opts):
    import ctypes
    from trainhook import _abi, _core
    from trainhook._run import RunContext
    core = _core.core()
    model = Mlp()
    model.register_buffer("transposed", torch.arange(6, dtype=torch.float64).reshape(2, 3).t())
    run = RunContext()
    run.kwargs = {"model": model}
    out = _abi.ThTensorList()
    out.struct_size = _abi.struct_size(_abi.ThTensorList, "tensors")
    check(run.tensors(_abi.TH_TENSORS_PARAMETERS, out) == "", "parameters: views built")
    params = list(model.named_parameters())
    check(out.count == len(params), f"one view per parameter ({out.count})")
    for i, (n, p) in enumerate(params):
        v = out.tensors[i]
        same = (out.names[i].decode() == n and v.data == p.data_ptr() and v.ndim == p.dim()
                and [v.shape[k] for k in range(v.ndim)] == list(p.shape)
                and [v.strides[k] for k in range(v.ndim)] == list(p.stride())
                and (v.dtype.code, v.dtype.bits) == (2, 32)
                and v.device.device_type == 1)
        check(same, f"view {n}: the parameter's own memory, shape and strides (no copy)")
    check(run.tensors(_abi.TH_TENSORS_GRADIENTS, out) == "" and all(out.tensors[i].data is None
                                                                    for i in range(out.count)),
          "gradients before any backward: NULL data")
    check(run.tensors(_abi.TH_TENSORS_BUFFERS, out) == "", "buffers: views built")
    b = model.transposed
    v = out.tensors[0]
    check(out.names[0] == b"transposed" and not b.is_contiguous() and v.data == b.data_ptr()
          and [v.strides[0], v.strides[1]] == [1, 3] and (v.dtype.code, v.dtype.bits) == (2, 64),
          "a non-contiguous buffer: its own memory with its strides (1, 3)")
    # Write through the view: the tensor changes (zero-copy both ways).
    ctypes.cast(v.data, ctypes.POINTER(ctypes.c_double))[1] = 42.0
    check(b[1, 0].item() == 42.0, "a write through the view is the tensor's")
    why = core.check_tensors(core.events["on_log"], _abi.TH_TENSORS_GRADIENTS, _abi.TH_ACCESS_READ)
    check("not readable in on_log" in why, f"the core's rule refuses gradients at on_log: {why}")
    # skip_optimizer_step: the gradients are dropped, so torch's optimizer leaves the weights as they are.
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.ones(2, 64), torch.tensor([1, 2]))["loss"].backward()
    before = [p.detach().clone() for p in model.parameters()]
    check(run.skip_optimizer_step() == "" and all(p.grad is None for p in model.parameters()),
          "skip_optimizer_step drops the gradients")
    opt.step()
    check(all(torch.equal(a, p) for a, p in zip(before, model.parameters())), "and the optimizer step changes nothing")


class PythonEma(TrainerCallback):
    """ema's arithmetic in Python (decay 0.9, from the initial weights, updated after every step)."""

    def __init__(self):
        self.ema = None
        self.checked_evals = 0
        self.eval_diff = 0.0

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.ema = [p.detach().double().clone() for p in model.parameters()]

    def on_step_end(self, args, state, control, model=None, **kwargs):
        self.ema = [0.9 * e + 0.1 * p.detach().double() for e, p in zip(self.ema, model.parameters())]

    def _diff(self, model):
        self.eval_diff = max([self.eval_diff] + [(p.detach().double() - e).abs().max().item()
                                                 for p, e in zip(model.parameters(), self.ema)])

    def on_prediction_step(self, args, state, control, model=None, **kwargs):
        # After each batch HF predicted: the weights it used (the first batch's too).
        self._diff(model)

    def on_evaluate(self, args, state, control, model=None, **kwargs):
        # Placed before the bridge: its on_evaluate (ema swaps back) has not run yet.
        self.checked_evals += 1
        self._diff(model)


def case_ema(opts):
    ref = PythonEma()
    t = trainer(opts, fresh(opts, "ema"), [ref, trainhook.TrainhookCallback(
        callbacks=["ema"], plugin_config={"ema": {"decay": 0.9}})], max_steps=30, eval_strategy="steps",
        eval_steps=10, logging_steps=10)
    t.train()
    check(ref.checked_evals == 3, f"three evaluations ({ref.checked_evals})")
    check(ref.eval_diff <= 1e-6, f"HF evaluated the EMA weights (largest difference {ref.eval_diff:.3g})")
    final = max((p.detach().double() - e).abs().max().item() for p, e in zip(t.model.parameters(), ref.ema))
    check(final <= 1e-6, f"the run ends with the EMA weights (largest difference {final:.3g})")
    # And the training weights were put back after each evaluation: without ema the run is the same.
    plain = trainer(opts, fresh(opts, "ema_plain"), [], max_steps=30, eval_strategy="steps", eval_steps=10,
                    logging_steps=10)
    plain.train()
    loss = lambda tr: [e["loss"] for e in tr.state.log_history if "loss" in e]  # noqa: E731
    check(loss(t) == loss(plain), f"training losses unchanged by the swaps ({loss(t)})")
    # Evaluations at epoch ends (44 steps an epoch), logged per epoch too, and per steps.
    for log_strategy in ("epoch", "steps"):
        ref = PythonEma()
        t = trainer(opts, fresh(opts, "ema_epoch"), [ref, trainhook.TrainhookCallback(
            callbacks=["ema"], plugin_config={"ema": {"decay": 0.9}})], max_steps=50, eval_strategy="epoch",
            logging_strategy=log_strategy, logging_steps=10)
        t.train()
        check(ref.checked_evals == 2 and ref.eval_diff <= 1e-6,
              f"eval_strategy epoch, logging_strategy {log_strategy}: {ref.checked_evals} evaluations of the EMA "
              f"weights (largest difference {ref.eval_diff:.3g})")


def lr_run(opts, out, max_steps, resume_states=False):
    return trainer(opts, out, [trainhook.TrainhookCallback(callbacks=["reduce_lr_on_plateau"], plugin_config={
        "reduce_lr_on_plateau": {"factor": 0.5, "patience": 1}})], resume_states=resume_states,
        **dict(early_stopping_args(max_steps), load_best_model_at_end=False, logging_steps=10))


def case_lr_factor(opts):
    t = lr_run(opts, fresh(opts, "lr_factor"), 200)
    t.train()
    hist = t.state.log_history
    evals = [(e["step"], e["eval_loss"]) for e in hist if "eval_loss" in e]
    logged = {e["step"]: e["learning_rate"] for e in hist if "learning_rate" in e}
    # torch's own ReduceLROnPlateau on the same losses (mode min, threshold 1e-4 relative; the
    # plugin's patience is Keras's, a reduction after `patience` bad evaluations: torch's patience - 1).
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.5)
    ref = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0, threshold=1e-4)
    expected = {}
    for step, loss in evals:
        ref.step(loss)
        expected[step + 10] = opt.param_groups[0]["lr"]  # the rate of the next logged steps
    pairs = [(s, logged[s], expected[s]) for s in sorted(expected) if s in logged]
    print("  (step, HF logged lr, torch ReduceLROnPlateau):", pairs)
    check(any(e < 0.5 for _, _, e in pairs), "the rate was reduced at least once (the test can fail)")
    check(len(pairs) >= 15 and all(abs(l - e) <= 1e-12 for _, l, e in pairs),
          f"the logged learning rate follows torch's ReduceLROnPlateau ({len(pairs)} logs)")
    # Resume from the checkpoint written right after the first reduction (its evaluation's
    # step): the factor comes back with the scheduler's state, the plugin's counters with its own.
    cut = next(s for s, l, e in pairs if e < 0.5) - 10
    out = fresh(opts, "lr_factor_resume")
    lr_run(opts, out, cut).train()
    resumed = lr_run(opts, out, 200, resume_states=True)
    resumed.train(resume_from_checkpoint=os.path.join(out, f"checkpoint-{cut}"))
    again = {e["step"]: e["learning_rate"] for e in resumed.state.log_history if "learning_rate" in e}
    check(all(abs(again[s] - logged[s]) <= 1e-12 for s in logged if s > cut and s in again)
          and any(s > cut for s in again),
          f"a run resumed at step {cut} logs the same rates as the whole run")


def case_probe(opts):
    cap = LogCapture()
    logging.getLogger("trainhook").addHandler(cap)
    logging.getLogger("trainhook").setLevel(logging.INFO)
    t = trainer(opts, fresh(opts, "probe"), [trainhook.TrainhookCallback(
        callbacks=["c_grad_norm"], plugin_dir=opts.model_access_dir, plugin_config={"c_grad_norm": {"probe": True}})],
        max_steps=2, logging_steps=1)
    t.train()
    lines = [m for m in cap.records if m.startswith("[c_grad_norm] probe ")]
    expected = [
        ("grad_view_at_step_begin", 3, "callback 'c_grad_norm': tensors: gradients are not readable in on_step_begin"),
        ("param_write_at_step_begin", 3,
         "callback 'c_grad_norm': tensors: parameters may not be written in on_step_begin"),
        ("factor_zero", 3, "callback 'c_grad_norm': set_lr_factor: the factor must be a finite number > 0, got 0"),
        ("factor_negative", 3, "callback 'c_grad_norm': set_lr_factor: the factor must be a finite number > 0"),
        ("metric_empty_name", 3, "callback 'c_grad_norm': add_metric: the metric name is empty"),
        ("metric_nan", 3, "callback 'c_grad_norm': add_metric: the value of 'c_nan' is NaN"),
        ("metric_null_name", 3, "callback 'c_grad_norm': add_metric: the metric name is NULL"),
        ("skip_at_step_begin", 3, "callback 'c_grad_norm': skip_optimizer_step: only in on_pre_optimizer_step"),
        ("null_list", 3, "callback 'c_grad_norm': tensors: `out` is NULL"),
        ("learning_rates", 0, ""),
    ]
    for case, status, text in expected:
        hit = [m for m in lines if m.startswith(f"[c_grad_norm] probe {case} status={status}") and text in m]
        check(len(hit) == 1, f"probe {case}: status {status} {text!r}" + ("" if hit else f" (got {lines})"))
    failed = [m for m in cap.records if "c_grad_norm: no step values at on_pre_optimizer_step" in m]
    check(len(failed) == 1 and "disabled for the rest of the run" in failed[0],
          f"the absent step values: the plugin's own failure, then disabled ({failed})")
    check(t.state.global_step == 2, "the run goes on")
    # The gradient norm it added before failing is in that step's log record (step 1's).
    first = t.state.log_history[0]
    check(first.get("step") == 1 and "loss" in first and "c_grad_norm" in first,
          f"its metric reached the step's log record ({first})")


def case_refused(opts):
    folder = fresh(opts, "refused_plugins")
    os.makedirs(folder, mode=0o700)
    bogus = os.path.join(folder, "libtrainhook_bogus.so")
    with open(bogus, "w") as f:
        f.write("not a library\n")
    os.chmod(bogus, 0o755)
    try:
        trainhook.TrainhookCallback(callbacks=["bogus"], plugin_dir=folder)
        check(False, "a refused plugin raises PluginError")
    except trainhook.PluginError as e:
        msg = str(e)
        print(f"  message: {msg}")
        check(bogus in msg and "not an ELF file" in msg, "the PluginError names the file and the reason")
    try:
        trainhook.TrainhookCallback(callbacks=["no_such_plugin"])
        check(False, "a missing plugin raises PluginError")
    except trainhook.PluginError as e:
        check("unknown callback 'no_such_plugin'" in str(e) and "Searched:" in str(e),
              f"a missing plugin names the folders searched: {str(e)[:120]}...")
    try:
        trainhook.TrainhookCallback(callbacks=["loss_guard"], plugin_dir=opts.c_plugin_dir,
                                    plugin_config={"loss_gaurd": {}})
        check(False, "a plugin_config section named after no installed plugin raises PluginError")
    except trainhook.PluginError as e:
        check("the section 'loss_gaurd' is read by no callback of this run" in str(e)
              and "did you mean 'loss_guard'" in str(e), f"a misnamed plugin_config section, as the CLI says: {e}")
    # A section of an installed plugin the run does not enable: a warning, as the CLI gives.
    cap = LogCapture()
    logging.getLogger("trainhook").addHandler(cap)
    trainhook.TrainhookCallback(callbacks=["loss_guard"], plugin_dir=opts.c_plugin_dir, plugin_config={"jsonl": {}})
    logging.getLogger("trainhook").removeHandler(cap)
    check(any("the section 'jsonl' is read by no callback of this run" in m and "installed but not enabled" in m
              for m in cap.records), f"a section of an installed, not enabled plugin is warned: {cap.records}")
    # A create() failure (max_loss must be > 0) is the plugin's message, at the first event.
    try:
        trainer(opts, fresh(opts, "bad_config"), [trainhook.TrainhookCallback(
            callbacks=["loss_guard"], plugin_dir=opts.c_plugin_dir, plugin_config={"loss_guard": {"max_loss": -1}})])
        check(False, "a create() failure raises PluginError")
    except trainhook.PluginError as e:
        check("cannot create callback 'loss_guard'" in str(e) and "max_loss" in str(e), f"create() failure: {e}")
    # No core library where TRAINHOOK_LIBRARY says: the exception names the file (a fresh interpreter,
    # since this one has loaded the core already).
    import subprocess
    missing = os.path.join(opts.work, "no_such", "libtrainhook_base.so")
    r = subprocess.run([sys.executable, "-c", "import trainhook\ntry:\n trainhook.TrainhookCallback()\n"
                        "except trainhook.PluginError as e:\n print(e)"],
                       env=dict(os.environ, TRAINHOOK_LIBRARY=missing), stdout=subprocess.PIPE, text=True,
                       timeout=120)
    check(r.stdout.strip() == f"TRAINHOOK_LIBRARY: {missing} (TRAINHOOK_LIBRARY): no such file",
          f"a missing core library: {r.stdout.strip()}")
    # plugin_error_policy: early_stopping fails at on_train_begin without eval_strategy.
    for policy in ("disable", "fail"):
        t = trainer(opts, fresh(opts, "policy_" + policy), [trainhook.TrainhookCallback(
            callbacks=["early_stopping"], plugin_error_policy=policy)], max_steps=10)
        try:
            t.train()
            check(policy == "disable" and t.state.global_step == 10,
                  f"plugin_error_policy={policy}: the failing callback is disabled and the run goes on")
        except trainhook.PluginCallbackError as e:
            check(policy == "fail" and "early_stopping" in str(e) and "on_train_begin" in str(e),
                  f"plugin_error_policy={policy}: PluginCallbackError stops the run: {e}")


def case_tensorboard_run(opts):
    out = fresh(opts, "tensorboard")
    t = trainer(opts, out, [trainhook.TrainhookCallback(report_to=["tensorboard"], callbacks=["grad_stats"])],
                max_steps=20, eval_strategy="steps", eval_steps=10)
    t.train()
    t.save_state()  # <output_dir>/trainer_state.json
    # What the plugin got from training_args_json, with keys sorted at every level as
    # the C++ trainer writes the file (nested values become JSON text params that way).
    with open(os.path.join(out, "training_args.json"), "w") as f:
        json.dump(json.loads(t.args.to_json_string()), f, indent=2, sort_keys=True)
    check(any(k.startswith("grad_norm/") for e in t.state.log_history for k in e), "grad_stats values logged")


def case_mlflow_run(opts):
    t = trainer(opts, fresh(opts, "mlflow"), [trainhook.TrainhookCallback(
        report_to=["mlflow"], callbacks=["grad_stats"], plugin_config={
            "mlflow": {"experiment_name": "bridge"}})], max_steps=20, eval_strategy="steps", eval_steps=10)
    t.train()
    with open(os.path.join(opts.work, "log_history.json"), "w") as f:
        json.dump(t.state.log_history, f)
    check(len(t.state.log_history) > 0, "the run logged")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--digits", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--c_plugin_dir")
    p.add_argument("--model_access_dir")
    opts = p.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    transformers.logging.set_verbosity_error()
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    globals()["case_" + opts.case](opts)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
