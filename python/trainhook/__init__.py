"""Trainhook plugins inside the Hugging Face Trainer (docs/python.md)."""
from .errors import PluginCallbackError, PluginError

__all__ = ["TrainhookCallback", "PluginError", "PluginCallbackError"]
__version__ = "0.3.0"


def __getattr__(name):
    # transformers is imported only when the callback is used.
    if name == "TrainhookCallback":
        from .callback import TrainhookCallback
        return TrainhookCallback
    raise AttributeError(name)
