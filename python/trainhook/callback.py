"""TrainhookCallback: Trainhook plugins (shared libraries speaking the C ABI of
sdk/include/trainhook/abi.h) as one transformers.TrainerCallback.

HF fires the events; this callback forwards each to the enabled plugins in
HF's order with the ABI's payloads (on_log's logs, on_evaluate's and
on_predict's metrics, on_save's checkpoint folder), maps TrainerState and
TrainerControl both ways, puts the metrics plugins add into HF's logs, and keeps
the plugins' state in trainer_state.json's stateful_callbacks.
"""
import atexit
import ctypes
import json
import logging
import math
import os
import weakref

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState

from . import _abi, _core
from ._plugin import PluginInstance
from ._run import RunContext
from .errors import PluginCallbackError, PluginError

logger = logging.getLogger("trainhook")

_POLICIES = ("disable", "fail")
# Closed at interpreter exit, before Python tears down what the plugins' own
# threads may still call into (logging, ctypes callbacks).
_live = weakref.WeakSet()
_STATE_SIZE = _abi.struct_size(_abi.ThState, "steps_in_epoch")
_CONTROL_SIZE = _abi.struct_size(_abi.ThControl, "should_log")
_EVENT_ARGS_SIZE = _abi.struct_size(_abi.ThEventArgs, "failure")
_VALUES_SIZE = _abi.struct_size(_abi.ThValues, "string_values")


def _names(value, what):
    if value is None:
        return []
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not all(isinstance(v, str) for v in value):
        raise PluginError(f"{what}: expected a list of names (strings), got {value!r}")
    return list(value)


class TrainhookCallback(TrainerCallback, ExportableState):
    """Trainhook plugins inside the HF Trainer.

    callbacks: names of plugin callbacks (any kind), as `--callbacks`.
    report_to: names of plugin integrations, "all" or "none", as `--report_to`.
    plugin_dir: a folder or library file, or a list of them, searched before
        TRAINHOOK_PLUGIN_PATH and the plugins installed with the core.
    plugin_config: {callback name: {key: value}}, each callback's section.
    plugin_error_policy: "disable" (a failing callback is disabled for the rest of
        the run) or "fail" (the run stops with PluginCallbackError).
    """

    def __init__(self, callbacks=None, report_to=None, plugin_dir=None, plugin_config=None,
                 plugin_error_policy="disable", allow_unsafe_plugin_paths=False):
        callbacks = _names(callbacks, "callbacks")
        report_to = _names(report_to, "report_to")
        dirs = [] if plugin_dir is None else [plugin_dir] if isinstance(plugin_dir, (str, os.PathLike)) \
            else list(plugin_dir)
        dirs = [os.fspath(d) for d in dirs]
        plugin_config = dict(plugin_config or {})
        if plugin_error_policy not in _POLICIES:
            raise PluginError(f"plugin_error_policy: expected one of {', '.join(_POLICIES)}, "
                              f"got {plugin_error_policy!r}")
        # What HF's resume passes back to re-create this callback (stateful_callbacks "args").
        self._init_args = {"callbacks": callbacks, "report_to": report_to, "plugin_dir": dirs,
                           "plugin_config": plugin_config, "plugin_error_policy": plugin_error_policy,
                           "allow_unsafe_plugin_paths": bool(allow_unsafe_plugin_paths)}
        self._policy = plugin_error_policy
        self._core = _core.core()
        for section, value in plugin_config.items():
            if not isinstance(value, dict):
                raise PluginError(f"plugin_config['{section}']: expected a dict of settings, got {value!r}")
        # The trainer's resolver and its plugin_config rule (an unknown section is an
        # error, a section of an installed plugin this run does not enable a warning).
        resolved = self._core.resolve(dirs, callbacks, report_to, allow_unsafe_plugin_paths, list(plugin_config))
        for warning in resolved.get("warnings", []):
            logger.warning("trainhook: %s", warning)
        self._specs = []
        for entry in resolved["callbacks"]:
            info = self._core.load_callback(entry["file"], entry["name"])  # PluginError names the file
            self._specs.append((entry["name"], entry["file"], info))
        self._run = RunContext()
        self._plugins = None          # created at the first event (on_init_end, or the first after a resume)
        self._restored_states = None  # from stateful_callbacks, loaded right after creation
        self._init_end_seen = False
        self._batch_index = 0
        self._evaluate_begin_due = False  # HF evaluates after the training log now being made
        self._last_logged_step = 0
        self._args_seen = None
        self._rank = (0, 1)
        self._dl_seen = None
        self._dl_steps = 0
        self._wanting = {}  # event -> the enabled plugins that want it
        self._c_state = _abi.ThState()
        self._c_state.struct_size = _STATE_SIZE
        self._best_checkpoint_text = self._trial_text = None
        self._c_control = _abi.ThControl()
        self._c_control.struct_size = _CONTROL_SIZE
        self._c_args = _abi.ThEventArgs()
        self._c_args.struct_size = _EVENT_ARGS_SIZE
        self._c_args.state = ctypes.pointer(self._c_state)
        self._c_args.control = ctypes.pointer(self._c_control)
        self._c_args_ref = ctypes.byref(self._c_args)
        _live.add(self)

    # ---- stateful_callbacks (HF's ExportableState) -------------------------------
    def state(self):
        states = {}
        if self._plugins is not None:
            for p in self._plugins:
                if not p.enabled:
                    continue
                try:
                    s = p.save_state()
                except RuntimeError as e:
                    self._failed(p, "save_state", str(e))
                    continue
                if s is not None:
                    states[p.name] = s
        elif self._restored_states:
            states = dict(self._restored_states)
        return {"args": dict(self._init_args), "attributes": {"plugin_states": states}}

    @property
    def plugin_states(self):
        return self.state()["attributes"]["plugin_states"]

    @plugin_states.setter
    def plugin_states(self, value):
        # HF's resume re-creates this callback from "args", then sets the
        # "attributes" here; the plugins get them before their first event.
        if not isinstance(value, dict):
            raise PluginError(f"stateful_callbacks TrainhookCallback.plugin_states: expected a dict, got {value!r}")
        self._restored_states = value
        if self._plugins is not None:
            self._load_states()

    def _load_states(self):
        states, self._restored_states = self._restored_states or {}, None
        for name in states:
            if name not in (p.name for p in self._plugins):
                logger.warning("stateful_callbacks: TrainhookCallback holds a state for callback '%s', which is "
                               "not enabled in this run; ignored", name)
        for p in self._plugins:
            if p.name in states and p.enabled:
                try:
                    p.load_state(states[p.name])
                except RuntimeError as e:
                    self._failed(p, "load_state", str(e))

    # ---- lifetime ------------------------------------------------------------------
    def _create(self, state):
        plugins = []
        try:
            for name, file, info in self._specs:
                if info.kind == _abi.TH_KIND_INTEGRATION and not state.is_world_process_zero:
                    continue  # integrations report from world process zero only, as HF's do
                config = json.dumps(self._init_args["plugin_config"].get(name, {}))
                plugins.append(PluginInstance(self._core, self._run, info, file, config))
        except Exception:
            for p in reversed(plugins):
                p.destroy()
            raise
        self._plugins = plugins
        self._wanting = {}
        if self._restored_states:
            self._load_states()

    def close(self):
        """Destroys the plugin instances (also done when the callback is garbage-collected)."""
        for p in reversed(self._plugins or []):
            p.destroy()
        self._plugins = []
        self._wanting = {}

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit modules may be gone
            pass

    def _failed(self, plugin, where, message):
        plugin.enabled = False
        self._wanting = {}
        if plugin.critical:
            logger.error("callback '%s' failed in %s: %s (a critical callback: stopping the run)", plugin.name,
                         where, message)
            raise PluginCallbackError(f"critical callback '{plugin.name}' failed in {where}: {message}")
        if self._policy == "fail":
            logger.error("callback '%s' failed in %s: %s (plugin_error_policy=fail: stopping the run)",
                         plugin.name, where, message)
            raise PluginCallbackError(f"callback '{plugin.name}' failed in {where}: {message}")
        logger.error("callback '%s' failed in %s: %s (disabled for the rest of the run)", plugin.name, where,
                     message)

    # ---- one event -------------------------------------------------------------------
    def _fire(self, hf_event, args, state, control, kwargs, values=None, checkpoint_dir=None, batch=None):
        event = self._core.events[hf_event]
        run = self._run
        run.args, run.state, run.kwargs = args, state, kwargs
        if self._plugins is None:
            self._create(state)
        init_end = self._core.events["on_init_end"]
        if event != init_end and not self._init_end_seen:
            # HF's resume re-creates this callback after on_init_end was delivered
            # to the one it replaces: the new plugin instances still hear it first.
            self._fire("on_init_end", args, state, control, kwargs)
        if event == init_end:
            self._init_end_seen = True

        wanting = self._wanting.get(event)
        if wanting is None:
            wanting = self._wanting[event] = [p for p in self._plugins if p.enabled and p.event_mask & (1 << event)]
        if not wanting:  # the per-step events most plugins skip cost no struct building
            if run.stop_reason is not None:
                control.should_training_stop = True
            return control
        if args is not self._args_seen:  # process_index/world_size are costly properties of HF's arguments
            self._args_seen = args
            self._rank = (int(getattr(args, "process_index", 0)), int(getattr(args, "world_size", 1)))
        # One set of structs per callback, refilled at each event (events never nest).
        self._fill_state(state, self._steps_in_epoch(args, kwargs))
        c = self._c_control
        c.should_training_stop = control.should_training_stop or run.stop_reason is not None  # sticky
        c.should_epoch_stop = control.should_epoch_stop
        c.should_save = control.should_save
        c.should_evaluate = control.should_evaluate
        c.should_log = control.should_log
        ev = self._c_args
        ev.event = event
        keep = []
        ev.values = ctypes.pointer(self._th_values(values, keep)) if values is not None else None
        ev.checkpoint_dir = os.fsencode(checkpoint_dir) if checkpoint_dir is not None else None
        ev.batch_index, ev.batch_count, ev.prediction_kind = batch if batch is not None else (-1, -1, 0)
        # ev.step stays NULL: HF hands its callbacks neither the step's loss nor
        # the grad norm, so th_step_values is absent (plugins read it only after
        # checking it is there); learning_rates() gives the rates.
        run.event = event
        try:
            for p in wanting:
                why = p.on_event(self._c_args_ref)
                if why:
                    self._failed(p, hf_event, why)
        finally:
            run.event = -1
            if run.holders:
                run.holders.clear()
        control.should_training_stop = bool(c.should_training_stop) or run.stop_reason is not None
        control.should_epoch_stop = bool(c.should_epoch_stop)
        control.should_save = bool(c.should_save)
        control.should_evaluate = bool(c.should_evaluate)
        control.should_log = bool(c.should_log)
        return control

    def _fill_state(self, state, steps_in_epoch):
        s = self._c_state
        s.is_local_process_zero = bool(state.is_local_process_zero)
        s.is_world_process_zero = bool(state.is_world_process_zero)
        s.epoch = float(state.epoch or 0.0)
        s.global_step = int(state.global_step)
        s.max_steps = int(state.max_steps or 0)
        s.logging_steps = int(state.logging_steps or 0)
        s.eval_steps = int(state.eval_steps or 0)
        s.save_steps = int(state.save_steps or 0)
        s.train_batch_size = int(state.train_batch_size or 0)
        s.num_train_epochs = float(state.num_train_epochs or 0)
        s.total_flos = float(state.total_flos or 0)
        s.num_input_tokens_seen = int(state.num_input_tokens_seen or 0)
        best = state.best_metric
        s.has_best_metric = best is not None and math.isfinite(float(best))
        s.best_metric = float(best) if s.has_best_metric else 0.0
        s.best_global_step = int(getattr(state, "best_global_step", 0) or 0)  # not in transformers 4.x
        checkpoint = state.best_model_checkpoint
        if checkpoint != self._best_checkpoint_text:  # the same bytes object while it does not change
            self._best_checkpoint_text = checkpoint
            s.best_model_checkpoint = os.fsencode(checkpoint) if checkpoint else None
        trial = state.trial_name
        if trial != self._trial_text:
            self._trial_text = trial
            s.trial_name = trial.encode() if trial else None
        s.process_index, s.world_size = self._rank
        s.steps_in_epoch = steps_in_epoch

    def _steps_in_epoch(self, args, kwargs):
        # HF's num_update_steps_per_epoch; 0 before the dataloader exists (or without a length).
        dl = kwargs.get("train_dataloader")
        if dl is not self._dl_seen:
            self._dl_seen = dl
            try:
                self._dl_steps = max(len(dl) // max(args.gradient_accumulation_steps, 1), 1) if dl is not None else 0
            except TypeError:
                self._dl_steps = 0
        return self._dl_steps

    @staticmethod
    def _th_values(record, keep):
        nums, strs = [], []
        for k, v in record.items():
            if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                if hasattr(v, "item") and getattr(v, "numel", lambda: 0)() == 1:
                    v = v.item()
                else:
                    continue
            (strs if isinstance(v, str) else nums).append((k, v))
        keys = [k.encode() for k, _ in nums]
        skeys = [k.encode() for k, _ in strs]
        svals = [v.encode("utf-8", "replace") for _, v in strs]
        vals = (ctypes.c_double * max(len(nums), 1))(*[float(v) for _, v in nums])
        karr = (ctypes.c_char_p * max(len(keys), 1))(*keys)
        skarr = (ctypes.c_char_p * max(len(skeys), 1))(*skeys)
        svarr = (ctypes.c_char_p * max(len(svals), 1))(*svals)
        keep += [keys, skeys, svals, vals, karr, skarr, svarr]
        tv = _abi.ThValues()
        tv.struct_size = _VALUES_SIZE
        tv.count = len(nums)
        tv.keys = ctypes.cast(karr, ctypes.POINTER(ctypes.c_char_p))
        tv.values = ctypes.cast(vals, ctypes.POINTER(ctypes.c_double))
        tv.string_count = len(strs)
        tv.string_keys = ctypes.cast(skarr, ctypes.POINTER(ctypes.c_char_p))
        tv.string_values = ctypes.cast(svarr, ctypes.POINTER(ctypes.c_char_p))
        keep.append(tv)
        return tv

    # ---- HF's events -------------------------------------------------------------------
    def on_init_end(self, args, state, control, **kwargs):
        return self._fire("on_init_end", args, state, control, kwargs)

    def on_train_begin(self, args, state, control, **kwargs):
        self._last_logged_step = state.global_step  # as HF's _globalstep_last_logged (also on resume)
        return self._fire("on_train_begin", args, state, control, kwargs)

    def on_train_end(self, args, state, control, **kwargs):
        return self._fire("on_train_end", args, state, control, kwargs)

    def on_epoch_begin(self, args, state, control, **kwargs):
        return self._fire("on_epoch_begin", args, state, control, kwargs)

    def on_epoch_end(self, args, state, control, **kwargs):
        control = self._fire("on_epoch_end", args, state, control, kwargs)
        return self._before_evaluation(args, state, control, kwargs)

    def on_step_begin(self, args, state, control, **kwargs):
        return self._fire("on_step_begin", args, state, control, kwargs)

    def on_substep_end(self, args, state, control, **kwargs):
        return self._fire("on_substep_end", args, state, control, kwargs)

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        return self._fire("on_pre_optimizer_step", args, state, control, kwargs)

    def on_optimizer_step(self, args, state, control, **kwargs):
        return self._fire("on_optimizer_step", args, state, control, kwargs)

    def on_step_end(self, args, state, control, **kwargs):
        control = self._fire("on_step_end", args, state, control, kwargs)
        return self._before_evaluation(args, state, control, kwargs)

    # HF has no evaluate-begin event. Its loop evaluates when should_evaluate is
    # set after on_step_end/on_epoch_end (the flow callback set it before this
    # one, a user callback), right after the training log when there is one;
    # EVALUATE_BEGIN is fired there, in the trainer's order (STEP_END, LOG,
    # EVALUATE_BEGIN, PREDICTION_STEP..., LOG, EVALUATE). trainer.evaluate()
    # called by a script has no such point: EVALUATE comes without it there.
    def _before_evaluation(self, args, state, control, kwargs):
        if not control.should_evaluate:
            return control
        # HF logs first only when the step moved since its last training log.
        if control.should_log and state.global_step > self._last_logged_step:
            self._evaluate_begin_due = True
            return control
        return self._evaluate_begin(args, state, control, kwargs)

    def _evaluate_begin(self, args, state, control, kwargs):
        self._evaluate_begin_due = False
        return self._fire("on_evaluate_begin", args, state, control, kwargs)

    def on_prediction_step(self, args, state, control, **kwargs):
        dl = kwargs.get("eval_dataloader")
        try:
            count = len(dl) if dl is not None else -1
        except TypeError:
            count = -1
        if self._evaluate_begin_due:  # HF logged nothing before this evaluation after all
            control = self._evaluate_begin(args, state, control, kwargs)
        index = self._batch_index
        self._batch_index += 1
        # HF does not say whether this pass is evaluate() or predict(): kind 0.
        return self._fire("on_prediction_step", args, state, control, kwargs, batch=(index, count, 0))

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self._batch_index = 0
        if self._evaluate_begin_due:
            control = self._evaluate_begin(args, state, control, kwargs)
        return self._fire("on_evaluate", args, state, control, kwargs, values=metrics or {})

    def on_predict(self, args, state, control, metrics=None, **kwargs):
        self._batch_index = 0
        return self._fire("on_predict", args, state, control, kwargs, values=metrics or {})

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs if logs is not None else {}
        pending = self._run.pending_metrics
        if pending:
            # The values plugins added since the last record belong to this one:
            # into the dict the next callbacks see, and into log_history, whose
            # last entry HF appended from these logs just before on_log.
            logs.update(pending)
            history = state.log_history
            if history and history[-1].get("step") == state.global_step:
                history[-1].update(pending)
            self._run.pending_metrics = {}
        if "loss" in logs:  # the training record of _maybe_log_save_evaluate
            self._last_logged_step = state.global_step
        control = self._fire("on_log", args, state, control, kwargs, values=logs)
        if self._evaluate_begin_due:  # the training log before an evaluation
            control = self._evaluate_begin(args, state, control, kwargs)
        return control

    def on_save(self, args, state, control, **kwargs):
        # HF writes <output_dir>/checkpoint-<global_step> and does not pass it on.
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        return self._fire("on_save", args, state, control, kwargs,
                          checkpoint_dir=folder if os.path.isdir(folder) else None)


@atexit.register
def _close_all():
    for callback in list(_live):
        callback.close()
