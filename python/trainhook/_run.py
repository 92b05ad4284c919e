"""What the th_host functions of every plugin instance reach of the HF run:
HF's TrainingArguments, TrainerState and the kwargs of the current event
(model, optimizer, lr_scheduler, dataloaders), the metrics plugins add, and the
stop requests. One per TrainhookCallback; training thread only, except
request_stop (any thread: it only sets a field under a lock).
"""
import ctypes
import dataclasses
import json
import logging
import threading

from . import _abi

logger = logging.getLogger("trainhook")


def _dtype_codes():
    import torch
    return {torch.float32: (2, 32), torch.float64: (2, 64), torch.float16: (2, 16), torch.bfloat16: (4, 16),
            torch.int64: (0, 64), torch.int32: (0, 32), torch.int16: (0, 16), torch.int8: (0, 8),
            torch.uint8: (1, 8), torch.bool: (1, 8)}


class RunContext:
    def __init__(self):
        self.args = None
        self.state = None
        self.kwargs = {}
        self.event = -1              # the TH_EVENT_* being delivered; -1 between events
        self.pending_metrics = {}    # add_metric values for the next log record, in call order
        self._stop_lock = threading.Lock()
        self.stop_reason = None
        self.holders = []            # DLTensor arrays and shapes alive until the event returns
        self._dtypes = None

    # ---- plain values ----------------------------------------------------------
    def args_value(self, name, default):
        return getattr(self.args, name, default) if self.args is not None else default

    def training_args_json(self):
        return self.args.to_json_string() if self.args is not None else "{}"

    def trainer_state_json(self):
        if self.state is None:
            return "{}"
        return json.dumps(dataclasses.asdict(self.state), indent=2, sort_keys=True) + "\n"

    def model_description(self):
        model = self.kwargs.get("model")
        if model is None:
            return ""
        params = sum(p.numel() for p in model.parameters())
        return f"{type(model).__name__} ({params} parameters)"

    def request_stop(self, who, reason):
        with self._stop_lock:
            if self.stop_reason is None:
                self.stop_reason = f"{who}: {reason}" if reason else who
                logger.info("trainhook: stop requested by %s", self.stop_reason)

    # ---- the model (ABI 1.1) ------------------------------------------------------
    def tensors(self, kind, out):
        model = self.kwargs.get("model")
        if model is None:
            return "tensors: the Trainer passed no model to this event"
        if kind == _abi.TH_TENSORS_PARAMETERS:
            items = [(n, p.detach()) for n, p in model.named_parameters()]
        elif kind == _abi.TH_TENSORS_GRADIENTS:
            items = [(n, p.grad) for n, p in model.named_parameters()]
        else:
            items = [(n, b) for n, b in model.named_buffers()]
        if self._dtypes is None:
            self._dtypes = _dtype_codes()
        n = len(items)
        names = (ctypes.c_char_p * max(n, 1))()
        views = (_abi.DLTensor * max(n, 1))()
        keep = [names, views]
        for i, (name, t) in enumerate(items):
            b = name.encode()
            keep.append(b)
            names[i] = b
            if t is None:
                continue  # a parameter without a gradient: data stays NULL
            code = self._dtypes.get(t.dtype)
            if code is None:
                return f"tensors: '{name}' has dtype {t.dtype}, which has no DLPack code here"
            v = views[i]
            # The tensor's own memory, shape and strides: no copy, contiguous or not.
            v.data = t.data_ptr() or None  # data_ptr() already includes the storage offset
            v.device.device_type = 2 if t.device.type == "cuda" else 1
            v.device.device_id = t.device.index or 0
            v.ndim = t.dim()
            v.dtype.code, v.dtype.bits = code
            v.dtype.lanes = 1
            shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
            strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
            keep += [shape, strides, t]
            v.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            v.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
            v.byte_offset = 0
        self.holders.append(keep)
        out.count = n
        out.names = ctypes.cast(names, ctypes.POINTER(ctypes.c_char_p))
        out.tensors = ctypes.cast(views, ctypes.POINTER(_abi.DLTensor))
        return ""

    def _optimizer(self):
        return self.kwargs.get("optimizer")

    def learning_rates(self):
        opt = self._optimizer()
        if opt is None:
            return [], "learning_rates: no optimizer yet (before on_train_begin)"
        return [float(g["lr"]) for g in opt.param_groups], ""

    def _scheduler(self):
        s = self.kwargs.get("lr_scheduler")
        return getattr(s, "scheduler", s)  # accelerate wraps it

    def lr_factor(self):
        # The factor is kept where HF already saves and restores it: the
        # scheduler's base_lrs over each group's initial_lr (both in the checkpoint).
        s, opt = self._scheduler(), self._optimizer()
        if s is None or opt is None or not hasattr(s, "base_lrs"):
            return 1.0
        initial = opt.param_groups[0].get("initial_lr")
        return float(s.base_lrs[0]) / float(initial) if initial else 1.0

    def set_lr_factor(self, factor):
        s, opt = self._scheduler(), self._optimizer()
        if opt is None or s is None:
            return "set_lr_factor: no optimizer or scheduler yet (before on_train_begin)"
        if not hasattr(s, "base_lrs") or any("initial_lr" not in g for g in opt.param_groups):
            return (f"set_lr_factor: the scheduler {type(s).__name__} has no base_lrs/initial_lr "
                    "(not a torch.optim.lr_scheduler scheduler), so the factor cannot be applied")
        old = self.lr_factor()
        s.base_lrs = [float(g["initial_lr"]) * factor for g in opt.param_groups]
        for g in opt.param_groups:  # this step's rate too, as the next scheduler step would set it
            g["lr"] = float(g["lr"]) * factor / old
        return ""

    def add_metric(self, name, value):
        self.pending_metrics[name] = float(value)
        return ""

    def skip_optimizer_step(self):
        model = self.kwargs.get("model")
        if model is None:
            return "skip_optimizer_step: the Trainer passed no model to this event"
        # torch optimizers leave a parameter without a gradient untouched
        # (no update, no moment update): the step is skipped, the scheduler still advances.
        for p in model.parameters():
            p.grad = None
        return ""
