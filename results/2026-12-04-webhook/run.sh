#!/bin/sh
# run.sh BUILDDIR OLD_WEBHOOK OLD_LOADGEN_SOURCE [ROUNDS] - the comparison
# of results/2026-12-04-webhook: the webhook as it was (OLD_WEBHOOK, built
# from df93031's webhook/ sources) against BUILDDIR's, each driven by the
# load generator as it was (a thread per client, OLD_LOADGEN_SOURCE =
# df93031's tests/bench/webhook-load.c) and by today's (one epoll thread,
# handshakes before the first request), interleaved round by round; then
# today's webhook with 1 and 2 request threads at 10 and 100 clients.
set -eu
B=$(cd "$1" && pwd) OLD=$2 OLDSRC=$3 R=${4:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
body=$src/tests/fixtures/k8s/pytorchjob.json
t=$(mktemp -d /tmp/autosync-whcmp.XXXXXX)
trap 'rm -rf "$t"' EXIT
cc -O2 -o "$t/load-new" "$src/tests/bench/webhook-load.c" $(pkg-config --cflags --libs gnutls)
cc -O2 -o "$t/load-old" "$OLDSRC" $(pkg-config --cflags --libs gnutls) -lpthread
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$t/k" -out "$t/c" 2>/dev/null
port=$((30000 + $$ % 20000))
one() { # WEBHOOK THREADS LOADGEN CLIENTS LABEL
  "$1" --cert "$t/c" --key "$t/k" --listen 127.0.0.1 --port $port \
    --threads "$2" > "$t/log" &
  pid=$!
  sleep 0.5
  echo "$5 threads $2 $("$t/load-$3" 127.0.0.1 $port "$t/c" "$body" "$4" 20000)"
  kill $pid; wait $pid 2>/dev/null || true
  port=$((port + 1))
}
echo "# $(uname -srm), $(nproc) cores; 20000 requests per run; body $(wc -c < "$body") bytes (PyTorchJob)"
for r in $(seq "$R"); do
  echo "# round $r"
  for lg in old new; do
    one "$OLD" 2 $lg 100 "webhook old loadgen $lg"
    one "$B/webhook/autosync-webhook" 2 $lg 100 "webhook new loadgen $lg"
  done
  for th in 1 2; do
    for c in 10 100; do
      one "$B/webhook/autosync-webhook" $th new $c "webhook new loadgen new clients $c"
    done
  done
done
