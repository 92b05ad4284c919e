"""A JSON-lines log receiver for the out-of-tree pack test (acme_logger).

    log_receiver.py <port file> <lines file>

Listens on 127.0.0.1 at a free port, writes the port to <port file> once it
listens, and appends the body of every POST to <lines file>. The first POST is
answered 503 with Retry-After: 1 (the integration base must wait and retry),
every later one 200. Ends when its parent kills it.
"""
import http.server
import os
import sys

port_file, lines_file = sys.argv[1], sys.argv[2]
state = {"posts": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        state["posts"] += 1
        if state["posts"] == 1:
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            with open(lines_file + ".refused", "ab") as f:
                f.write(body)
            return
        with open(lines_file, "ab") as f:
            f.write(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
tmp = port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, port_file)
server.serve_forever()
