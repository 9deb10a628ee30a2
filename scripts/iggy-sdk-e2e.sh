#!/usr/bin/env bash
# Runs the official Apache Iggy Go SDK's end-to-end tests (foreign/go/tests) against
# `iggy-kafka store`. The SDK is not vendored here: pass the path of an apache/iggy checkout.
#
#   bash scripts/iggy-sdk-e2e.sh ~/src/iggy            # plain TCP
#   bash scripts/iggy-sdk-e2e.sh ~/src/iggy --tls      # TLS with the checkout's core/certs
#   bash scripts/iggy-sdk-e2e.sh ~/src/iggy --bdd      # also the BDD suites (Ginkgo and godog)
set -euo pipefail
usage() { echo "usage: $0 IGGY_CHECKOUT [--tls] [--bdd]" >&2; exit 2; }
[ $# -ge 1 ] || usage
iggy=$(cd "$1" && pwd); shift
tls=false; bdd=false
for a in "$@"; do
  case "$a" in --tls) tls=true ;; --bdd) bdd=true ;; *) usage ;; esac
done
[ -d "$iggy/foreign/go/tests" ] || { echo "$iggy has no foreign/go/tests" >&2; exit 2; }

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/iggy-kafka" ./cmd/iggy-kafka
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=(store --listen "127.0.0.1:$port" --data "$work/data" --fsync never --log-level warn)
if $tls; then
  certs="$iggy/core/certs"
  if ! openssl x509 -checkend 0 -noout -in "$certs/iggy_cert.pem" >/dev/null; then
    # The checkout's server certificate has expired and its CA key is not published, so run
    # the suite from a copy whose core/certs holds a fresh CA and server certificate.
    echo "note: $certs/iggy_cert.pem has expired; using a fresh CA and certificate in a copy" >&2
    mkdir -p "$work/iggy"
    cp -r "$iggy/foreign" "$iggy/core" "$work/iggy/"
    iggy="$work/iggy"; certs="$iggy/core/certs"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=iggy-kafka test CA" \
      -keyout "$work/ca.key" -out "$certs/iggy_ca_cert.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$certs/iggy_key.pem" \
      -out "$work/srv.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$work/ext"
    openssl x509 -req -in "$work/srv.csr" -CA "$certs/iggy_ca_cert.pem" -CAkey "$work/ca.key" \
      -CAcreateserial -days 2 -extfile "$work/ext" -out "$certs/iggy_cert.pem" 2>/dev/null
  fi
  args+=(--tls-cert "$certs/iggy_cert.pem" --tls-key "$certs/iggy_key.pem")
fi
"$work/iggy-kafka" "${args[@]}" &
pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

export IGGY_TCP_ADDRESS="127.0.0.1:$port"
if $tls; then export IGGY_TCP_TLS_ENABLED=true; fi
(cd "$iggy/foreign/go" && go test -count=1 -v ./tests) | tee "$work/e2e.log" | grep -E '^(=== RUN|--- |ok|FAIL|PASS)' || true
pass=$(grep -c -- '--- PASS' "$work/e2e.log" || true)
skip=$(grep -c -- '--- SKIP' "$work/e2e.log" || true)
fail=$(grep -c -- '--- FAIL' "$work/e2e.log" || true)
echo "sdk-e2e: $pass passed, $fail failed, $skip skipped"
if $bdd && [ -d "$iggy/bdd/go" ]; then
  (cd "$iggy/bdd/go" && go test -count=1 ./tests/tcp_test/... && \
    BDD_FEATURE=basic_messaging go test -count=1 ./tests && BDD_FEATURE=raw_command go test -count=1 ./tests)
fi
[ "$fail" -eq 0 ] && grep -q '^ok' "$work/e2e.log"
