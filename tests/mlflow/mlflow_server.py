"""Start/stop a real `mlflow server` (test venv) on 127.0.0.1 and read it back over REST.

Shared by the mlflow integration tests and the benchmark. The server uses a
sqlite backend and serves artifacts from --artifacts-destination; stop() always
kills the whole process group.
"""
import json
import os
import select
import threading
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testkit"))
from free_port import free_port  # noqa: E402


class MlflowServer:
    def __init__(self, workdir, port=None):
        self.workdir = workdir
        self.port = port or free_port()
        self.proc = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self, timeout=300):
        os.makedirs(self.workdir, exist_ok=True)
        mlflow = os.path.join(os.path.dirname(sys.executable), "mlflow")
        log = open(os.path.join(self.workdir, f"server-{int(time.time() * 1000)}.log"), "w")
        self.proc = subprocess.Popen(
            [mlflow, "server", "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
             "--backend-store-uri", f"sqlite:///{self.workdir}/mlflow.db",
             "--artifacts-destination", f"{self.workdir}/mlartifacts"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=self._env())
        deadline = time.time() + timeout
        while time.time() < deadline:
            code = self.proc.poll()
            if code is not None:
                self.proc = None
                raise RuntimeError(f"mlflow server exited with status {code} before answering; see {log.name}")
            try:
                self.get("experiments/get-by-name", experiment_name="Default")
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"mlflow server did not answer within {timeout}s; see {log.name}")

    @staticmethod
    def _env():
        # Without its job runner: mlflow 3 otherwise starts a runner and five
        # huey consumers that keep both cores of a small machine busy for
        # ~10 s after the server first answers (tests and benchmarks log
        # metrics and artifacts, never jobs).
        env = dict(os.environ)
        env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        return env

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        self.proc = None

    def get(self, path, **query):
        url = f"{self.url}/api/2.0/mlflow/{path}?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.loads(r.read() or b"{}")

    def post(self, path, body):
        req = urllib.request.Request(f"{self.url}/api/2.0/mlflow/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"{}")

    def runs(self, experiment_name):
        exp = self.get("experiments/get-by-name", experiment_name=experiment_name)["experiment"]
        return self.post("runs/search", {"experiment_ids": [exp["experiment_id"]]}).get("runs", [])

    def history(self, run_id, key):
        return self.get("metrics/get-history", run_id=run_id, metric_key=key).get("metrics", [])

    def artifacts(self, path):
        url = f"{self.url}/api/2.0/mlflow-artifacts/artifacts?{urllib.parse.urlencode({'path': path})}"
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.loads(r.read() or b"{}").get("files", [])

    def download(self, path):
        """The bytes of one artifact file, through the server's artifact proxy."""
        url = f"{self.url}/api/2.0/mlflow-artifacts/artifacts/{urllib.parse.quote(path)}"
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.read()


class TcpProxy:
    """A TCP forwarder on 127.0.0.1 in front of a server.

    delay: seconds added before forwarding each chunk the client sends (one
    chunk per HTTP request on a kept-alive connection), for the benchmark.
    requests: how many HTTP requests went through (chunks that start a request).
    go_down(): closes every connection and refuses new ones; go_up(port):
    accepts again, forwarding to `port` (the restarted server).
    """

    def __init__(self, upstream_port, delay=0.0):
        self.upstream = upstream_port
        self.delay = delay
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.conns = []
        self.lock = threading.Lock()
        self.listener = None
        self.stopped = False
        self.requests = 0
        self.go_up(upstream_port)

    def go_up(self, upstream_port):
        self.upstream = upstream_port
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", self.port))
        ls.listen(64)
        self.listener = ls
        threading.Thread(target=self._accept, args=(ls,), daemon=True).start()

    def go_down(self):
        ls, self.listener = self.listener, None
        if ls:
            try:
                ls.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            except OSError:
                pass
            ls.close()
        with self.lock:
            for c in self.conns:
                try:
                    c.close()
                except OSError:
                    pass
            self.conns.clear()

    def close(self):
        self.stopped = True
        self.go_down()

    def _accept(self, ls):
        while self.listener is ls:
            try:
                client, _ = ls.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, up]
            threading.Thread(target=self._pump, args=(client, up), daemon=True).start()

    def _pump(self, client, up):
        try:
            while True:
                r, _, _ = select.select([client, up], [], [], 1.0)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("closed")
                    if s is client:
                        if data.split(b" ", 1)[0] in (b"GET", b"POST", b"PUT", b"DELETE", b"PATCH", b"HEAD"):
                            with self.lock:
                                self.requests += 1
                        if self.delay:
                            time.sleep(self.delay)
                        up.sendall(data)
                    else:
                        client.sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            for s in (client, up):
                try:
                    s.close()
                except OSError:
                    pass
