"""One plugin callback instance inside the HF Trainer: its th_host table (each
function implemented over what HF hands its callbacks), create/destroy, event
calls and the save_state/load_state protocol of abi.h.

Owned by a TrainhookCallback, which gives every instance the same RunContext
(HF's args, state and kwargs of the current event). No exception crosses into
plugin code: every host function catches everything and answers with the ABI's
status codes, as ctypes would otherwise print and swallow it.
"""
import ctypes
import json
import logging

from . import _abi
from .errors import PluginError

_ERR_SIZE = 1024
_LEVELS = {_abi.TH_LOG_TRACE: logging.DEBUG, _abi.TH_LOG_DEBUG: logging.DEBUG, _abi.TH_LOG_INFO: logging.INFO,
           _abi.TH_LOG_WARN: logging.WARNING, _abi.TH_LOG_ERROR: logging.ERROR}
logger = logging.getLogger("trainhook")


def _text(ptr):
    return "" if not ptr else ctypes.string_at(ptr).decode("utf-8", "replace")


def describe_failure(status, err):
    msg = err.value.decode("utf-8", "replace") if err.value else "no message"
    return f"{msg} [{_abi.STATUS_NAMES.get(status, 'unknown status')}]"


class PluginInstance:
    """A created plugin callback; `run` is the RunContext shared with its siblings."""

    def __init__(self, core, run, info, file, config_json):
        self.core = core
        self.run = run
        self.file = file
        self.name = info.name.decode()
        self.kind = info.kind
        self.event_mask = info.event_mask
        self.critical = False
        self.enabled = True
        vt = info.vtable.contents
        self._on_event = vt.on_event
        self._destroy = vt.destroy
        has = _abi.has_field
        self._save_state = vt.save_state if has(vt, _abi.ThCallbackVtable, "save_state") and vt.save_state else None
        self._load_state = vt.load_state if has(vt, _abi.ThCallbackVtable, "load_state") and vt.load_state else None
        self._strings = {}           # host-owned strings handed to the plugin (valid until destroy)
        self._state_json = None      # trainer_state_json's buffer (valid until the next call)
        self._functions = []         # the CFUNCTYPE objects: alive as long as the table
        self._event_err = ctypes.create_string_buffer(_ERR_SIZE)  # on_event's message buffer, reused
        self.host = self._make_host()
        self.self_ptr = None
        err = ctypes.create_string_buffer(_ERR_SIZE)
        out = ctypes.c_void_p()
        st = info.create(ctypes.byref(self.host), config_json.encode(), ctypes.byref(out), err, _ERR_SIZE)
        if st != _abi.TH_OK or not out.value:
            raise PluginError(f"cannot create callback '{self.name}' from {file}: "
                              + ("create() returned TH_OK but no instance" if st == _abi.TH_OK
                                 else describe_failure(st, err)))
        self.self_ptr = out.value

    def destroy(self):
        if self.self_ptr is not None:
            ptr, self.self_ptr = self.self_ptr, None
            self._destroy(ptr)

    # ---- calls into the plugin ------------------------------------------------
    def on_event(self, args_ref):
        """"" or the failure's description; args_ref: ctypes.byref of a ThEventArgs."""
        err = self._event_err
        err[0] = b"\0"
        st = self._on_event(self.self_ptr, args_ref, err, _ERR_SIZE)
        return "" if st == _abi.TH_OK else describe_failure(st, err)

    def save_state(self):
        """The plugin's state as a JSON value, or None (stateless or nothing to save). Raises RuntimeError."""
        if self._save_state is None:
            return None
        size = 4096
        for _ in range(4):
            buf = ctypes.create_string_buffer(size)
            needed = ctypes.c_size_t(0)
            err = ctypes.create_string_buffer(_ERR_SIZE)
            st = self._save_state(self.self_ptr, buf, size, ctypes.byref(needed), err, _ERR_SIZE)
            if st == _abi.TH_BUFFER_TOO_SMALL:
                if needed.value <= size:
                    raise RuntimeError(f"save_state returned TH_BUFFER_TOO_SMALL but asked for {needed.value} "
                                       f"bytes, not more than the {size} given")
                size = needed.value
                continue
            if st != _abi.TH_OK:
                raise RuntimeError(describe_failure(st, err))
            text = buf.value.decode("utf-8", "replace")
            if not text:
                return None
            try:
                return json.loads(text)
            except ValueError as e:
                raise RuntimeError(f"save_state wrote text that is not JSON: {e}") from None
        raise RuntimeError("save_state kept asking for a larger buffer")

    def load_state(self, state):
        if self._load_state is None:
            return
        err = ctypes.create_string_buffer(_ERR_SIZE)
        st = self._load_state(self.self_ptr, json.dumps(state).encode(), err, _ERR_SIZE)
        if st != _abi.TH_OK:
            raise RuntimeError(describe_failure(st, err))

    # ---- the th_host table ----------------------------------------------------
    def _keep(self, value):
        buf = self._strings.get(value)
        if buf is None:
            buf = self._strings[value] = ctypes.create_string_buffer(value.encode("utf-8", "replace"))
        return ctypes.addressof(buf)

    def _refuse(self, why, err, err_size):
        _abi.write_err(err, err_size, f"callback '{self.name}': {why}")
        return _abi.TH_INVALID_ARGUMENT

    def _checked(self, err, err_size, f):
        try:
            why = f()
        except Exception as e:  # noqa: BLE001 - nothing may cross into plugin code
            why = f"{type(e).__name__}: {e}"
        return _abi.TH_OK if not why else self._refuse(why, err, err_size)

    def _string_fn(self, f, fallback):
        def call(_ctx):
            try:
                return self._keep(f())
            except Exception:  # noqa: BLE001
                logger.exception("trainhook: host function failed for callback '%s'", self.name)
                return self._keep(fallback)
        return call

    def _make_host(self):
        run = self.run
        h = _abi.ThHost()
        h.struct_size = _abi.struct_size(_abi.ThHost, "stop_signal")
        h.abi_major, h.abi_minor = _abi.ABI_MAJOR, _abi.ABI_MINOR
        h.ctx = None  # every function is a closure over this instance

        def log(_ctx, level, message):
            try:
                logger.log(_LEVELS.get(level, logging.INFO), "[%s] %s", self.name, _text(message))
            except Exception:  # noqa: BLE001
                pass

        def request_stop(_ctx, reason):
            try:
                run.request_stop(self.name, _text(reason))
            except Exception:  # noqa: BLE001
                pass

        def trainer_state_json(_ctx):
            try:
                text = run.trainer_state_json()
            except Exception:  # noqa: BLE001
                text = "{}"
            self._state_json = ctypes.create_string_buffer(text.encode("utf-8", "replace"))
            return ctypes.addressof(self._state_json)

        def set_resume_checkpoint(_ctx, path, err, err_size):
            return self._refuse(
                "set_resume_checkpoint: the Hugging Face Trainer takes the checkpoint as "
                "trainer.train(resume_from_checkpoint=...), which a callback cannot change", err, err_size)

        def tensors(_ctx, kind, access, out, err, err_size):
            def f():
                if not out or not _abi.has_field(out.contents, _abi.ThTensorList, "tensors"):
                    return "tensors: `out` is NULL or its struct_size is not set to TH_TENSOR_LIST_STRUCT_SIZE"
                why = self.core.check_tensors(run.event, kind, access)
                return why or run.tensors(kind, out.contents)
            return self._checked(err, err_size, f)

        def learning_rates(_ctx, out, capacity, count, err, err_size):
            def f():
                if not count:
                    return "learning_rates: `count` is NULL"
                if not out and capacity > 0:
                    return "learning_rates: `out` is NULL"
                lrs, why = run.learning_rates()
                if why:
                    return why
                for i, lr in enumerate(lrs[:capacity]):
                    out[i] = lr
                count[0] = len(lrs)
                return ""
            return self._checked(err, err_size, f)

        def set_lr_factor(_ctx, factor, err, err_size):
            return self._checked(err, err_size,
                                 lambda: self.core.check_factor(factor) or run.set_lr_factor(factor))

        def lr_factor(_ctx):
            try:
                return run.lr_factor()
            except Exception:  # noqa: BLE001
                return 1.0

        def add_metric(_ctx, name, value, err, err_size):
            def f():
                if not name:
                    return "add_metric: the metric name is NULL"
                text = _text(name)
                return self.core.check_metric(text, value) or run.add_metric(text, value)
            return self._checked(err, err_size, f)

        def skip_optimizer_step(_ctx, err, err_size):
            return self._checked(err, err_size, lambda: self.core.check_skip(run.event) or run.skip_optimizer_step())

        def set_critical(_ctx):
            self.critical = True

        def no_signal(_ctx):
            # The HF Trainer installs no signal handling: no run ends by a signal through the bridge.
            return 0

        table = [
            ("log", _abi.LOG_FN(log)),
            ("output_dir", _abi.STR_FN(self._string_fn(lambda: run.args_value("output_dir", ""), ""))),
            ("training_args_json", _abi.STR_FN(self._string_fn(run.training_args_json, "{}"))),
            ("request_stop", _abi.REQUEST_STOP_FN(request_stop)),
            ("trainer_state_json", _abi.STR_FN(trainer_state_json)),
            ("model_description", _abi.STR_FN(self._string_fn(run.model_description, ""))),
            ("set_resume_checkpoint", _abi.SET_RESUME_FN(set_resume_checkpoint)),
            ("run_name", _abi.STR_FN(self._string_fn(lambda: run.args_value("run_name", "") or "", ""))),
            ("tensors", _abi.TENSORS_FN(tensors)),
            ("learning_rates", _abi.LEARNING_RATES_FN(learning_rates)),
            ("set_lr_factor", _abi.SET_LR_FACTOR_FN(set_lr_factor)),
            ("lr_factor", _abi.LR_FACTOR_FN(lr_factor)),
            ("add_metric", _abi.ADD_METRIC_FN(add_metric)),
            ("skip_optimizer_step", _abi.SKIP_FN(skip_optimizer_step)),
            ("set_critical", _abi.VOID_FN(set_critical)),
            ("end_requested", _abi.INT_FN(no_signal)),
            ("stop_signal", _abi.INT_FN(no_signal)),
        ]
        for field, fn in table:
            setattr(h, field, fn)
            self._functions.append(fn)
        return h

