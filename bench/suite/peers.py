"""The peers the benchmarks log to, on 127.0.0.1 free ports, always stopped.

- mlflow: a real `mlflow server` (test venv), no delay: "a local real server".
- wandb: the tests' W&B-style receiver (tests/wandb/wandb_receiver.py)
  behind the mlflow tests' TCP proxy (tests/mlflow/mlflow_server.py), which
  holds every request >= `wandb_delay` seconds (0.1 by default), so the wandb
  plugin's uploads are slow as over a real network.
- flyte: no server; each benchmark run uploads its checkpoints to a local
  folder of its own (the plugin's file:// destination).

Both helpers are reused as they are from the tests, not copied.
"""
import os
import sys

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(_ROOT, "tests", "mlflow"))
sys.path.insert(0, os.path.join(_ROOT, "tests", "wandb"))
from mlflow_server import MlflowServer, TcpProxy  # noqa: E402
from wandb_receiver import Receiver  # noqa: E402

API_KEY = "bench-key-0123456789"
# Environment variables of the integrations that must not leak in from the
# caller's shell (a resume, another server, a disabled integration...).
_CLEARED_PREFIXES = ("MLFLOW_", "WANDB_", "HF_MLFLOW_", "DISABLE_MLFLOW")
_CLEARED = ("TRAINHOOK_CHECKPOINT_DEST", "TRAINHOOK_PREV_CHECKPOINT", "TRAINHOOK_PLUGIN_PATH")


class Peers:
    def __init__(self, workdir, wandb_delay=0.1, log=print):
        self.workdir = workdir
        self.wandb_delay = wandb_delay
        self.log = log
        self.mlflow = None
        self.receiver = None
        self.proxy = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        self.log("starting a local mlflow server (test venv) ...")
        self.mlflow = MlflowServer(os.path.join(self.workdir, "mlflow")).start(timeout=240)
        self.receiver = Receiver(API_KEY).start()
        # A plugin that gives up at its finish_timeout closes its connection
        # mid-request; the receiver's HTTP server would print a traceback for
        # each. Expected here, so keep the table's output clean.
        self.receiver._server.handle_error = lambda request, client_address: None
        self.proxy = TcpProxy(self.receiver.port, delay=self.wandb_delay)
        self.log(f"peers: mlflow {self.mlflow.url}; W&B-style receiver {self.proxy.url} "
                 f"(>= {self.wandb_delay * 1000:.0f} ms per request)")

    def stop(self):
        if self.proxy:
            self.proxy.close()
            self.proxy = None
        if self.receiver:
            self.receiver.stop()
            self.receiver = None
        if self.mlflow:
            self.mlflow.stop()
            self.mlflow = None

    def env(self, base=None):
        """The environment for a benchmark process: the caller's, minus the
        integrations' own variables, plus where our peers are."""
        env = {k: v for k, v in (base or os.environ).items()
               if not k.startswith(_CLEARED_PREFIXES) and k not in _CLEARED}
        env.update(MLFLOW_TRACKING_URI=self.mlflow.url, MLFLOW_EXPERIMENT_NAME="trainhook-bench",
                   WANDB_BASE_URL=self.proxy.url, WANDB_API_KEY=API_KEY, WANDB_PROJECT="trainhook-bench",
                   WANDB_MODE="online")
        return env
