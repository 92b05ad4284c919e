"""A W&B-style HTTP receiver for the wandb plugin's tests (not a W&B server).

Listens on 127.0.0.1 (a free port), checks `Authorization: Basic
base64("api:" + key)` on every request, answers the two GraphQL calls
(RunResumeStatus, UpsertBucket) and stores file_stream lines *by offset*, as
the real service does, so that a resent request changes nothing. Model files
(WANDB_LOG_MODEL) arrive as `PUT /files/<entity>/<project>/<run>/artifacts/
<name>/<relative path>` and are stored per run as {(name, path): bytes}. It records
what would reveal a client bug: a line position written twice with different
text, lines beyond a gap, requests after the run completed.

Faults are scripted per file_stream request number (1-based), and the same
way per artifact PUT number in `put_faults` (status, drop, store_then_drop):
  {"status": 500}                    answer 500 without storing
  {"status": 429, "retry_after": 1}  answer 429 with Retry-After
  {"status": 403}                    a final refusal
  {"drop": True}                     close the connection without an answer
  {"store_then_drop": True}          store the lines, then close without an
                                     answer (the client cannot know it worked)
  {"away": 10}                       close the connection and stop listening
                                     for 10 s, then listen again on the same port

Used in-process by run_scenarios.py; `python wandb_receiver.py --key K` runs
it alone and prints the port.
"""

import base64
import json
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HISTORY = "wandb-history.jsonl"
SUMMARY = "wandb-summary.json"


class RunStore:
    def __init__(self):
        self.history = {}      # offset -> line text
        self.summary = {}      # offset -> line text
        self.conflicts = []    # (offset, old, new)
        self.complete = None   # exitcode once complete
        self.after_complete = 0
        self.last_request = None  # the last file_stream body stored (the end mark's, once complete)
        self.config = None
        self.upserts = 0
        self.display_name = None
        self.artifacts = {}    # (artifact name, relative path) -> bytes
        self.artifact_puts = 0  # PUTs that stored a file (a resent file counts again)

    def history_lines(self):
        """Lines from offset 0 while contiguous."""
        out = []
        while len(out) in self.history:
            out.append(self.history[len(out)])
        return out

    def summary_line(self):
        return self.summary[max(self.summary)] if self.summary else None


class Receiver:
    def __init__(self, api_key, default_entity="test-entity"):
        self.api_key = api_key
        self.default_entity = default_entity
        self.lock = threading.Lock()
        self.runs = {}              # (entity, project, run) -> RunStore
        self.faults = {}            # file_stream request number -> fault
        self.put_faults = {}        # artifact PUT number -> fault
        self.put_requests = 0
        self.graphql_faults = {}    # graphql request number -> fault
        self.file_stream_requests = 0
        self.graphql_requests = 0
        self.auth_failures = 0
        self.bad_requests = []
        self.raw_requests = []      # (path, body bytes) of every request, for leak checks
        self.timeline = []          # (time.monotonic(), kind, number, fault) per file_stream/PUT/graphql
        self.stopped_runs = set()   # answer {"stopped": true} for these run ids
        self.away_events = 0        # how many times the receiver went away
        self.port = None
        self._server = None
        self._thread = None
        self._closing = False

    # ---- lifecycle --------------------------------------------------------
    def start(self, port=0):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            # One request per connection, so "going away" also ends every
            # connection a client would otherwise keep alive.
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def do_POST(self):
                receiver._handle(self)

            def do_PUT(self):
                receiver._handle_put(self)

        class Server(ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        self._server = Server(("127.0.0.1", port), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._closing = True
        server = self._server
        if server is not None:
            server.shutdown()
            server.server_close()
            self._server = None

    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _go_away(self, seconds):
        with self.lock:
            self.away_events += 1

        def run():
            server = self._server
            self._server = None
            if server is not None:
                server.shutdown()
                server.server_close()
            time.sleep(seconds)
            if not self._closing:
                self.start(self.port)
        threading.Thread(target=run, daemon=True).start()

    # ---- helpers ----------------------------------------------------------
    def retry_after_gaps(self):
        """For every request answered with a Retry-After: (kind, number, the
        Retry-After in s, seconds until the client's next request of any kind,
        or None when none came)."""
        with self.lock:
            t = sorted(self.timeline, key=lambda e: e[0])
        out = []
        for i, (when, kind, number, fault) in enumerate(t):
            if fault and "retry_after" in fault:
                gap = t[i + 1][0] - when if i + 1 < len(t) else None
                out.append((kind, number, float(fault["retry_after"]), gap))
        return out

    def is_up(self):
        return self._server is not None

    def run(self, entity, project, run_id):
        with self.lock:
            return self.runs.get((entity, project, run_id))

    def only_run(self):
        with self.lock:
            assert len(self.runs) == 1, "expected one run, got %r" % list(self.runs)
            return next(iter(self.runs.items()))

    def _reply(self, h, status, obj, headers=()):
        body = json.dumps(obj).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _drop(self, h):
        h.close_connection = True
        try:
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _fault_reply(self, h, fault):
        if fault.get("drop"):
            self._drop(h)
            return True
        if "away" in fault:
            self._drop(h)
            self._go_away(fault["away"])
            return True
        if "status" in fault:
            headers = []
            if "retry_after" in fault:
                headers.append(("Retry-After", str(fault["retry_after"])))
            self._reply(h, fault["status"], {"error": "scripted failure %d" % fault["status"]}, headers)
            return True
        return False

    # ---- requests ---------------------------------------------------------
    def _handle(self, h):
        length = int(h.headers.get("Content-Length", "0"))
        raw = h.rfile.read(length) if length else b""
        with self.lock:
            self.raw_requests.append((h.path, raw))
        expected = "Basic " + base64.b64encode(("api:" + self.api_key).encode()).decode()
        if h.headers.get("Authorization") != expected:
            with self.lock:
                self.auth_failures += 1
            self._reply(h, 401, {"error": "invalid api key"})
            return
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError as e:
            with self.lock:
                self.bad_requests.append("not JSON: %s" % e)
            self._reply(h, 400, {"error": "body is not JSON"})
            return
        if h.path == "/graphql":
            self._graphql(h, body)
            return
        parts = h.path.strip("/").split("/")
        if len(parts) == 5 and parts[0] == "files" and parts[4] == "file_stream":
            self._file_stream(h, parts[1], parts[2], parts[3], body)
            return
        self._reply(h, 404, {"error": "no such endpoint " + h.path})

    def _handle_put(self, h):
        length = h.headers.get("Content-Length")
        if length is None:
            with self.lock:
                self.bad_requests.append("PUT without Content-Length: " + h.path)
            self._reply(h, 411, {"error": "Content-Length required"})
            return
        raw = h.rfile.read(int(length))
        with self.lock:
            self.raw_requests.append((h.path, raw))
        expected = "Basic " + base64.b64encode(("api:" + self.api_key).encode()).decode()
        if h.headers.get("Authorization") != expected:
            with self.lock:
                self.auth_failures += 1
            self._reply(h, 401, {"error": "invalid api key"})
            return
        parts = [urllib.parse.unquote(p) for p in h.path.strip("/").split("/")]
        if len(parts) < 7 or parts[0] != "files" or parts[4] != "artifacts":
            self._reply(h, 404, {"error": "no such endpoint " + h.path})
            return
        entity, project, run_id, name, rel = parts[1], parts[2], parts[3], parts[5], "/".join(parts[6:])
        with self.lock:
            self.put_requests += 1
            fault = self.put_faults.get(self.put_requests)
            self.timeline.append((time.monotonic(), "put", self.put_requests, fault))
        if fault and not fault.get("store_then_drop") and self._fault_reply(h, fault):
            return
        with self.lock:
            store = self.runs.get((entity, project, run_id))
            if store is None:
                self._reply(h, 404, {"error": "run %s/%s/%s not found" % (entity, project, run_id)})
                return
            store.artifacts[(name, rel)] = raw
            store.artifact_puts += 1
        if fault and fault.get("store_then_drop"):
            self._drop(h)
            return
        self._reply(h, 200, {"size": len(raw)})

    def _graphql(self, h, body):
        with self.lock:
            self.graphql_requests += 1
            fault = self.graphql_faults.get(self.graphql_requests)
            self.timeline.append((time.monotonic(), "graphql", self.graphql_requests, fault))
        if fault and self._fault_reply(h, fault):
            return
        query = body.get("query", "")
        v = body.get("variables", {})
        entity = v.get("entity") or self.default_entity
        project = v.get("project")
        name = v.get("name")
        if "RunResumeStatus" in query:
            with self.lock:
                store = self.runs.get((entity, project, name))
                if store is None:
                    self._reply(h, 200, {"data": {"model": {"name": project, "bucket": None}}})
                    return
                lines = store.history_lines()
                bucket = {"name": name, "historyLineCount": len(lines),
                          "summaryMetrics": store.summary_line() or "{}",
                          "historyTail": json.dumps(lines[-10:])}
            self._reply(h, 200, {"data": {"model": {"name": project, "bucket": bucket}}})
            return
        if "UpsertBucket" in query:
            if not project or not name:
                self._reply(h, 200, {"errors": [{"message": "project and name are required"}]})
                return
            config = v.get("config")
            if isinstance(config, str):
                config = json.loads(config)
            with self.lock:
                store = self.runs.setdefault((entity, project, name), RunStore())
                store.upserts += 1
                store.complete = None  # running again (a resumed run)
                store.config = config
                store.display_name = v.get("displayName")
                count = len(store.history_lines())
            self._reply(h, 200, {"data": {"upsertBucket": {"bucket": {
                "id": "b-" + name, "name": name, "displayName": v.get("displayName"),
                "historyLineCount": count,
                "project": {"id": "p", "name": project, "entity": {"id": "e", "name": entity}}},
                "inserted": store.upserts == 1}}})
            return
        self._reply(h, 200, {"errors": [{"message": "unknown query"}]})

    def _file_stream(self, h, entity, project, run_id, body):
        with self.lock:
            self.file_stream_requests += 1
            fault = self.faults.get(self.file_stream_requests)
            self.timeline.append((time.monotonic(), "file_stream", self.file_stream_requests, fault))
        if fault and not fault.get("store_then_drop") and self._fault_reply(h, fault):
            return
        with self.lock:
            store = self.runs.get((entity, project, run_id))
            if store is None:
                self._reply(h, 404, {"error": "run %s/%s/%s not found" % (entity, project, run_id)})
                return
            if store.complete is not None:
                store.after_complete += 1
            for fname, target in ((HISTORY, store.history), (SUMMARY, store.summary)):
                chunk = body.get("files", {}).get(fname)
                if chunk is None:
                    continue
                offset = chunk["offset"]
                for i, line in enumerate(chunk["content"]):
                    json.loads(line)  # every line must be JSON (NaN/Infinity allowed, as in W&B)
                    pos = offset + i
                    if fname == HISTORY and pos in target and target[pos] != line:
                        store.conflicts.append((pos, target[pos], line))
                    target[pos] = line
            if body.get("complete"):
                store.complete = body.get("exitcode")
            store.last_request = body
            stopped = run_id in self.stopped_runs
        if fault and fault.get("store_then_drop"):
            self._drop(h)
            return
        reply = {"exitcode": None, "limits": {}}
        if stopped:
            reply["stopped"] = True
        self._reply(h, 200, reply)


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--key", required=True)
    a = p.parse_args()
    r = Receiver(a.key).start()
    print(r.port, flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        r.stop()
