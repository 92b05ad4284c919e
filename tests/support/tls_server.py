"""An HTTPS server on 127.0.0.1 for https_ca_test.sh: answers GET with 200 "ok".
usage: tls_server.py CERT KEY PORT_FILE [CLIENT_CA]
Writes its port to PORT_FILE once listening; with CLIENT_CA it requires a client
certificate signed by that CA (mutual TLS). Ends when its parent kills it."""
import http.server
import ssl
import sys


class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


cert, key, port_file = sys.argv[1:4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
if len(sys.argv) > 4:
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(sys.argv[4])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402  (after the socket exists: the rename says "listening")
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
