#!/bin/sh
# webhook-load.sh BUILDDIR [CLIENTS] [REQUESTS] [ROUNDS] - the webhook's
# latency benchmark (not a CI test): autosync-webhook on loopback with a
# fresh self-signed certificate, and tests/bench/webhook-load.c sending a
# PyTorchJob AdmissionReview from CLIENTS keep-alive HTTPS connections, a
# fixed REQUESTS in all, ROUNDS times (default 100 clients, 20000 requests,
# 3 rounds). Prints what one review costs without network and TLS
# (tests/bench/webhook-review.c), then one line per round: p50/p90/p99/max
# latency, requests per second, HTTP 200s, answers that allow, denials,
# dropped requests. THREADS=N gives the webhook N request threads (default
# its own: one per CPU).
set -eu
B=$(cd "${1:?usage: webhook-load.sh BUILDDIR [CLIENTS] [REQUESTS] [ROUNDS]}" && pwd)
C=${2:-100} N=${3:-20000} R=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
t=$(mktemp -d /tmp/autosync-whload.XXXXXX)
trap 'kill $pid 2>/dev/null; rm -rf "$t"' EXIT
cc -O2 -o "$t/load" "$here/webhook-load.c" $(pkg-config --cflags --libs gnutls)
cc -O2 -I"$src/webhook" -o "$t/review" "$here/webhook-review.c" \
  "$B/webhook/.libs/libmutate.a" $(pkg-config --libs jansson gnutls libcjson)
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$t/k" -out "$t/c" 2>/dev/null
port=$((30000 + $$ % 20000))
"$B/webhook/autosync-webhook" --cert "$t/c" --key "$t/k" --listen 127.0.0.1 \
  --port $port ${THREADS:+--threads "$THREADS"} > "$t/log" &
pid=$!
sleep 0.5
echo "# $(uname -srm), $(nproc) cores; webhook threads ${THREADS:-its default, one per CPU}; $C clients, $N requests per round; body $(wc -c < "$src/tests/fixtures/k8s/pytorchjob.json") bytes (PyTorchJob)"
"$t/review" "$src/tests/fixtures/k8s/pytorchjob.json" 20000
for r in $(seq "$R"); do
  "$t/load" 127.0.0.1 $port "$t/c" "$src/tests/fixtures/k8s/pytorchjob.json" "$C" "$N"
done
echo "# webhook log lines: $(grep -c '"decision":"mutated"' "$t/log") mutated, $(grep -c '"decision":"' "$t/log") decisions"
