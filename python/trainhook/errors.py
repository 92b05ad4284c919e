"""The exceptions the bridge raises."""


class PluginError(RuntimeError):
    """A plugin that cannot be used: not found, refused (the file and the reason), or its create() failed."""


class PluginCallbackError(RuntimeError):
    """A plugin callback failed during a run and plugin_error_policy (or the callback being critical)
    stops the run."""
