"""An HTTP proxy in front of moto that makes the store fail for a while mid-upload.

  failing_proxy.py LISTEN_PORT UPSTREAM_PORT FAIL_AFTER_PUTS FAIL_SECONDS COUNT_FILE

Forwards every request to 127.0.0.1:UPSTREAM_PORT. After FAIL_AFTER_PUTS PUT
requests have gone through, every request for FAIL_SECONDS seconds fails:
alternately a 503 SlowDown answer and a dropped connection. The number of
failed requests is written to COUNT_FILE."""
import http.client
import http.server
import sys
import threading
import time

LISTEN, UPSTREAM, AFTER, SECONDS, COUNT_FILE = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
lock = threading.Lock()
state = {"puts": 0, "fail_until": None, "failed": 0}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _handle(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        with lock:
            now = time.monotonic()
            failing = state["fail_until"] is not None and now < state["fail_until"]
            if failing:
                state["failed"] += 1
                n = state["failed"]
                with open(COUNT_FILE, "w") as f:
                    f.write(str(n))
            elif self.command == "PUT":
                state["puts"] += 1
                if state["puts"] == AFTER and state["fail_until"] is None:
                    state["fail_until"] = now + SECONDS
        if failing:
            if n % 2 == 0:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            payload = b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>"
            self.send_response(503)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        conn = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=60)
        headers = {k: v for k, v in self.headers.items()}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


http.server.ThreadingHTTPServer(("127.0.0.1", LISTEN), Proxy).serve_forever()
