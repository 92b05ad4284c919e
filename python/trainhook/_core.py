"""The core's rules, through the C functions libtrainhook_base exports
(core/include/trainhook/plugin_host/host/bridge_api.h): the plugin search path, the
file checks and refusal reasons, ABI negotiation and the tensor-view rules are
the C++ host's own, not a copy of them.

Where the library is looked for, in order: $TRAINHOOK_LIBRARY (the file),
lib/ and lib64/ beside the folder of a `trainhook` program on PATH (an install
prefix or a build tree), the copy a wheel built into this package
(_native/lib/), then the system's library path.
"""
import ctypes
import ctypes.util
import json
import os
import shutil
import threading

from . import _abi
from .errors import PluginError

_ERR_SIZE = 2048
_LIB_NAME = "libtrainhook_base.so"
_lock = threading.Lock()
_core = None


def _candidates():
    tried = []
    env = os.environ.get("TRAINHOOK_LIBRARY")
    if env:
        tried.append(("TRAINHOOK_LIBRARY", env))
    program = shutil.which("trainhook")
    if program:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(program)))
        for lib in ("lib", "lib64"):
            tried.append(("trainhook on PATH", os.path.join(prefix, lib, _LIB_NAME)))
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "lib", _LIB_NAME)
    if os.path.exists(bundled):
        tried.append(("this package (wheel)", bundled))
    found = ctypes.util.find_library("trainhook_base")
    if found:
        tried.append(("the system library path", found))
    return tried


def _err():
    return ctypes.create_string_buffer(_ERR_SIZE)


class Core:
    """libtrainhook_base, loaded once per process."""

    def __init__(self, path):
        self.path = path
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        self._lib = lib
        lib.trainhook_bridge_abi_version.restype = ctypes.c_uint32
        lib.trainhook_bridge_abi_version.argtypes = []
        lib.trainhook_bridge_struct_sizes.restype = ctypes.c_uint32
        lib.trainhook_bridge_struct_sizes.argtypes = [ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32]
        lib.trainhook_bridge_event_name.restype = ctypes.c_char_p
        lib.trainhook_bridge_event_name.argtypes = [ctypes.c_int32]
        lib.trainhook_bridge_resolve.restype = ctypes.c_int32
        lib.trainhook_bridge_resolve.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                                 ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p, ctypes.c_size_t]
        lib.trainhook_bridge_load_callback.restype = ctypes.c_int32
        lib.trainhook_bridge_load_callback.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                                       ctypes.POINTER(ctypes.POINTER(_abi.ThCallbackInfo)),
                                                       ctypes.c_char_p, ctypes.c_size_t]
        for name, args in (("check_tensors", [ctypes.c_int32, ctypes.c_int32, ctypes.c_int32]),
                           ("check_metric", [ctypes.c_char_p, ctypes.c_double]),
                           ("check_factor", [ctypes.c_double]),
                           ("check_skip", [ctypes.c_int32])):
            fn = getattr(lib, "trainhook_bridge_" + name)
            fn.restype = ctypes.c_int32
            fn.argtypes = args + [ctypes.c_char_p, ctypes.c_size_t]
        self._check_abi()
        self.events = {}  # "on_log" -> TH_EVENT_LOG, from the core's one list of events
        event = 0
        while True:
            name = lib.trainhook_bridge_event_name(event)
            if name is None:
                break
            self.events[name.decode()] = event
            event += 1

    def _check_abi(self):
        version = self._lib.trainhook_bridge_abi_version()
        major, minor = version >> 16, version & 0xFFFF
        if major != _abi.ABI_MAJOR or minor < _abi.ABI_MINOR:
            raise PluginError(f"{self.path} speaks plugin ABI {major}.{minor}; this trainhook Python package "
                              f"needs ABI {_abi.ABI_MAJOR}.{_abi.ABI_MINOR} or a newer 1.x")
        n = self._lib.trainhook_bridge_struct_sizes(None, 0)
        sizes = (ctypes.c_uint32 * n)()
        self._lib.trainhook_bridge_struct_sizes(sizes, n)
        for (name, mine), theirs in zip(_abi.STRUCT_SIZES, list(sizes)):
            # A newer core's structs may be longer (fields appended); ours must be a prefix.
            if mine > theirs or (minor == _abi.ABI_MINOR and mine != theirs):
                raise PluginError(f"{self.path}: {name} is {theirs} bytes in the core and {mine} bytes in the "
                                  f"Python package's mirror (trainhook/_abi.py); they are from different versions")

    def resolve(self, plugin_dirs, callbacks, report_to, allow_unsafe_plugin_paths, plugin_config_sections=()):
        request = json.dumps({"plugin_dirs": [os.fspath(d) for d in plugin_dirs], "callbacks": list(callbacks),
                              "report_to": list(report_to),
                              "allow_unsafe_plugin_paths": bool(allow_unsafe_plugin_paths),
                              "plugin_config_sections": list(plugin_config_sections)}).encode()
        size = 16384
        for _ in range(3):
            out = ctypes.create_string_buffer(size)
            needed = ctypes.c_size_t(0)
            err = _err()
            st = self._lib.trainhook_bridge_resolve(request, out, size, ctypes.byref(needed), err, _ERR_SIZE)
            if st == _abi.TH_BUFFER_TOO_SMALL:
                size = needed.value
                continue
            if st != _abi.TH_OK:
                raise PluginError(err.value.decode("utf-8", "replace"))
            return json.loads(out.value.decode())
        raise PluginError("trainhook_bridge_resolve kept asking for a larger buffer")

    def load_callback(self, file, name):
        out = ctypes.POINTER(_abi.ThCallbackInfo)()
        err = _err()
        st = self._lib.trainhook_bridge_load_callback(os.fsencode(file), name.encode(), ctypes.byref(out), err,
                                                      _ERR_SIZE)
        if st != _abi.TH_OK:
            raise PluginError(err.value.decode("utf-8", "replace"))
        return out.contents

    def _rule(self, fn, *args):
        err = _err()
        return "" if fn(*args, err, _ERR_SIZE) == _abi.TH_OK else err.value.decode("utf-8", "replace")

    def check_tensors(self, event, kind, access):
        return self._rule(self._lib.trainhook_bridge_check_tensors, event, kind, access)

    def check_metric(self, name, value):
        return self._rule(self._lib.trainhook_bridge_check_metric, name.encode("utf-8", "replace"), value)

    def check_factor(self, factor):
        return self._rule(self._lib.trainhook_bridge_check_factor, factor)

    def check_skip(self, event):
        return self._rule(self._lib.trainhook_bridge_check_skip, event)


def core():
    """The loaded core; PluginError naming every place looked at when there is none."""
    global _core
    with _lock:
        if _core is not None:
            return _core
        tried = _candidates()
        problems = []
        for origin, path in tried:
            if os.path.sep in path and not os.path.exists(path):
                problems.append(f"{path} ({origin}): no such file")
            else:
                try:
                    _core = Core(path)
                    return _core
                except OSError as e:
                    problems.append(f"{path} ({origin}): {e}")
            if origin == "TRAINHOOK_LIBRARY":  # what the user named is not silently replaced by another
                raise PluginError(f"TRAINHOOK_LIBRARY: {problems[-1]}")
        raise PluginError(
            f"the trainhook core library ({_LIB_NAME}) was not found: "
            + ("; ".join(problems) if problems else "TRAINHOOK_LIBRARY is not set, no `trainhook` program is on "
               "PATH, and the system library path has none")
            + ". Set TRAINHOOK_LIBRARY to the file (build/lib/" + _LIB_NAME + " in a build tree), or put the "
            "trainhook install's bin/ on PATH")
