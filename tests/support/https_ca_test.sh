#!/usr/bin/env bash
# The HTTPS clients of the plugins (support::HttpClient) against a server whose
# certificate is signed by a certificate authority made here: refused without
# the CA's bundle (naming the host and the verification failure), accepted with
# it; mutual TLS with a client certificate. (Where each plugin finds the files:
# test_tls_files.cpp and the plugins' option tests.)
# usage: https_ca_test.sh <https_probe>
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_lib.sh"
PROBE=${1:?usage: https_ca_test.sh <https_probe>}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

# A CA, a server certificate for 127.0.0.1 signed by it, a client certificate, and an unrelated CA.
ossl() { openssl "$@" 2>>"$WORK/openssl.log" || { cat "$WORK/openssl.log" >&2; fail "openssl $1"; }; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=Trainhook Test CA"
ossl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 2 -subj "/CN=Another CA"
ossl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
ossl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile san.ext
ossl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=trainhook client"
ossl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.crt -days 2
cat client.crt client.key >client.pem

start_server() {  # start_server <port file> [client CA]
  /usr/bin/python3 "$HERE/tls_server.py" server.pem server.key "$@" &
  pids+=($!)
  wait_for 30 "the HTTPS server to listen ($1)" test -s "$1"
}
start_server tls.port
start_server mtls.port ca.pem
URL="https://127.0.0.1:$(cat tls.port)/ok"
MURL="https://127.0.0.1:$(cat mtls.port)/ok"

# Without the bundle: refused, naming the host and the verification failure.
if out=$("$PROBE" "$URL"); then fail "accepted a certificate of an unknown CA: $out"; fi
grep -qF "127.0.0.1:$(cat tls.port)" <<<"$out" || fail "the error does not name the host: $out"
grep -qiE "certificate" <<<"$out" || fail "the error does not say it is the certificate: $out"
grep -qF "ca_bundle" <<<"$out" || fail "the error does not say how to trust a site's CA: $out"
# Another CA's bundle: still refused, naming the bundle.
if out=$("$PROBE" "$URL" --ca_bundle other.pem); then fail "accepted with another CA's bundle: $out"; fi
grep -qF "other.pem" <<<"$out" || fail "the error does not name the bundle given: $out"
# The right bundle: accepted.
out=$("$PROBE" "$URL" --ca_bundle ca.pem) || fail "refused with the CA's bundle: $out"
[[ $out == "status 200 ok" ]] || fail "unexpected answer: $out"

# Mutual TLS: refused without a client certificate, accepted with one.
if out=$("$PROBE" "$MURL" --ca_bundle ca.pem); then fail "mutual TLS accepted no client certificate: $out"; fi
out=$("$PROBE" "$MURL" --ca_bundle ca.pem --client_cert client.pem) || fail "mutual TLS refused the client: $out"
[[ $out == "status 200 ok" ]] || fail "unexpected answer: $out"
echo "ok: unknown CA refused with a clear error; the CA bundle and the client certificate accepted"
