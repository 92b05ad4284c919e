"""ctypes mirrors of the structs in sdk/include/trainhook/abi.h (ABI 1.3).

The core reports the TH_*_STRUCT_SIZE constants it was built with
(trainhook_bridge_struct_sizes); _core.py compares them with the sizes below
before any plugin is called, so a mirror that drifts from the header is refused
instead of corrupting memory.
"""
import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_int32, c_int64, c_size_t,
                    c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

ABI_MAJOR = 1
ABI_MINOR = 3

TH_OK = 0
TH_ERROR = 1
TH_ABI_MISMATCH = 2
TH_INVALID_ARGUMENT = 3
TH_BUFFER_TOO_SMALL = 4

STATUS_NAMES = {TH_OK: "TH_OK", TH_ERROR: "TH_ERROR", TH_ABI_MISMATCH: "TH_ABI_MISMATCH",
                TH_INVALID_ARGUMENT: "TH_INVALID_ARGUMENT", TH_BUFFER_TOO_SMALL: "TH_BUFFER_TOO_SMALL"}

TH_LOG_TRACE, TH_LOG_DEBUG, TH_LOG_INFO, TH_LOG_WARN, TH_LOG_ERROR = range(5)

TH_KIND_CALLBACK = 0
TH_KIND_INTEGRATION = 1

TH_TENSORS_PARAMETERS = 0
TH_TENSORS_GRADIENTS = 1
TH_TENSORS_BUFFERS = 2
TH_ACCESS_READ = 0
TH_ACCESS_WRITE = 1


def struct_size(cls, last_field):
    """TH_STRUCT_SIZE: the end of `last_field`, without tail padding."""
    f = getattr(cls, last_field)
    return f.offset + f.size


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class ThState(Structure):
    _fields_ = [("struct_size", c_uint32), ("is_local_process_zero", c_int32), ("epoch", c_double),
                ("global_step", c_int64), ("max_steps", c_int64), ("logging_steps", c_int64),
                ("eval_steps", c_int64), ("save_steps", c_int64), ("train_batch_size", c_int64),
                ("num_train_epochs", c_double), ("total_flos", c_double), ("num_input_tokens_seen", c_int64),
                ("has_best_metric", c_int32), ("is_world_process_zero", c_int32), ("best_metric", c_double),
                ("best_global_step", c_int64), ("best_model_checkpoint", c_char_p), ("trial_name", c_char_p),
                ("process_index", c_int32), ("world_size", c_int32), ("steps_in_epoch", c_int64)]


class ThControl(Structure):
    _fields_ = [("struct_size", c_uint32), ("should_training_stop", c_int32), ("should_epoch_stop", c_int32),
                ("should_save", c_int32), ("should_evaluate", c_int32), ("should_log", c_int32)]


class ThValues(Structure):
    _fields_ = [("struct_size", c_uint32), ("count", c_uint32), ("keys", POINTER(c_char_p)),
                ("values", POINTER(c_double)), ("string_count", c_uint32), ("string_keys", POINTER(c_char_p)),
                ("string_values", POINTER(c_char_p))]


class ThStepValues(Structure):
    _fields_ = [("struct_size", c_uint32), ("loss", c_double), ("grad_norm", c_double),
                ("learning_rate", c_double)]


class ThFailure(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_int32), ("message", c_char_p), ("step", c_int64)]


class ThEventArgs(Structure):
    _fields_ = [("struct_size", c_uint32), ("event", c_int32), ("state", POINTER(ThState)),
                ("control", POINTER(ThControl)), ("values", POINTER(ThValues)), ("checkpoint_dir", c_char_p),
                ("batch_index", c_int64), ("batch_count", c_int64), ("prediction_kind", c_int32),
                ("step", POINTER(ThStepValues)), ("failure", POINTER(ThFailure))]


class ThTensorList(Structure):
    _fields_ = [("struct_size", c_uint32), ("count", c_uint32), ("names", POINTER(c_char_p)),
                ("tensors", POINTER(DLTensor))]


# th_host's functions. Arguments that are strings the plugin passes in are
# c_void_p (read with ctypes.string_at) so that ctypes never converts them.
LOG_FN = CFUNCTYPE(None, c_void_p, c_int32, c_void_p)
STR_FN = CFUNCTYPE(c_void_p, c_void_p)
REQUEST_STOP_FN = CFUNCTYPE(None, c_void_p, c_void_p)
SET_RESUME_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_void_p, c_size_t)
TENSORS_FN = CFUNCTYPE(c_int32, c_void_p, c_int32, c_int32, POINTER(ThTensorList), c_void_p, c_size_t)
LEARNING_RATES_FN = CFUNCTYPE(c_int32, c_void_p, POINTER(c_double), c_uint32, POINTER(c_uint32), c_void_p,
                              c_size_t)
SET_LR_FACTOR_FN = CFUNCTYPE(c_int32, c_void_p, c_double, c_void_p, c_size_t)
LR_FACTOR_FN = CFUNCTYPE(c_double, c_void_p)
ADD_METRIC_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_double, c_void_p, c_size_t)
SKIP_FN = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)
VOID_FN = CFUNCTYPE(None, c_void_p)
INT_FN = CFUNCTYPE(c_int32, c_void_p)


class ThHost(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_major", c_uint32), ("abi_minor", c_uint32), ("ctx", c_void_p),
                ("log", LOG_FN), ("output_dir", STR_FN), ("training_args_json", STR_FN),
                ("request_stop", REQUEST_STOP_FN), ("trainer_state_json", STR_FN),
                ("model_description", STR_FN), ("set_resume_checkpoint", SET_RESUME_FN), ("run_name", STR_FN),
                ("tensors", TENSORS_FN), ("learning_rates", LEARNING_RATES_FN),
                ("set_lr_factor", SET_LR_FACTOR_FN), ("lr_factor", LR_FACTOR_FN), ("add_metric", ADD_METRIC_FN),
                ("skip_optimizer_step", SKIP_FN), ("set_critical", VOID_FN), ("end_requested", INT_FN),
                ("stop_signal", INT_FN)]


ON_EVENT_FN = CFUNCTYPE(c_int32, c_void_p, POINTER(ThEventArgs), POINTER(c_char), c_size_t)
SAVE_STATE_FN = CFUNCTYPE(c_int32, c_void_p, POINTER(c_char), c_size_t, POINTER(c_size_t), POINTER(c_char),
                          c_size_t)
LOAD_STATE_FN = CFUNCTYPE(c_int32, c_void_p, c_char_p, POINTER(c_char), c_size_t)
DESTROY_FN = CFUNCTYPE(None, c_void_p)


class ThCallbackVtable(Structure):
    _fields_ = [("struct_size", c_uint32), ("on_event", ON_EVENT_FN), ("save_state", SAVE_STATE_FN),
                ("load_state", LOAD_STATE_FN), ("destroy", DESTROY_FN)]


CREATE_FN = CFUNCTYPE(c_int32, POINTER(ThHost), c_char_p, POINTER(c_void_p), POINTER(c_char), c_size_t)


class ThCallbackInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("version", c_char_p), ("kind", c_int32),
                ("description", c_char_p), ("event_mask", c_uint64), ("create", CREATE_FN),
                ("vtable", POINTER(ThCallbackVtable))]


# In the order of trainhook_bridge_struct_sizes (bridge_api.h).
STRUCT_SIZES = [
    ("th_state", struct_size(ThState, "steps_in_epoch")),
    ("th_control", struct_size(ThControl, "should_log")),
    ("th_values", struct_size(ThValues, "string_values")),
    ("th_step_values", struct_size(ThStepValues, "learning_rate")),
    ("th_failure", struct_size(ThFailure, "step")),
    ("th_event_args", struct_size(ThEventArgs, "failure")),
    ("th_tensor_list", struct_size(ThTensorList, "tensors")),
    ("th_host", struct_size(ThHost, "stop_signal")),
    ("th_callback_vtable", struct_size(ThCallbackVtable, "destroy")),
    ("th_callback_info", struct_size(ThCallbackInfo, "vtable")),
]


def has_field(struct, cls, field):
    """TH_HAS_FIELD for a struct the other side filled."""
    f = getattr(cls, field)
    return struct.struct_size >= f.offset + f.size


def write_err(err, err_size, message):
    """Writes `message` NUL-terminated (truncated) into a caller-owned buffer."""
    if not err or err_size == 0:
        return
    data = message.encode("utf-8", "replace")[: err_size - 1] + b"\0"
    ctypes.memmove(err, data, len(data))
