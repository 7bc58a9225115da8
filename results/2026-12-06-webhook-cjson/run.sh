#!/bin/sh
# run.sh BUILDDIR OLD_COMMIT [ROUNDS] - the comparison of
# results/2026-12-06-webhook-cjson, interleaved round by round:
#  - one review in-process (tests/bench/webhook-review.c, 20000 reviews of
#    the PyTorchJob body): OLD_COMMIT's webhook/mutate.c (jansson) against
#    BUILDDIR's sources (cJSON, an arena, the body checked first);
#  - the load benchmark (tests/bench/webhook-load.c, 100 keep-alive HTTPS
#    clients, 20000 requests, 2 request threads) against three webhooks:
#    "old" (OLD_COMMIT's main.c and mutate.c), "review" (OLD_COMMIT's
#    main.c with today's mutate.c: the review alone) and "new" (BUILDDIR's
#    autosync-webhook: also a 16 KiB connection pool, one write(2) per log
#    line, the answer handed to libmicrohttpd without a copy);
#  - today's webhook with its default request threads (one per CPU), and
#    with 1 and 4.
# Needs the source tree to be a git checkout (OLD_COMMIT's files come from
# git show).
set -eu
B=$(cd "$1" && pwd) OLD=$2 R=${3:-5}
src=$(cd "$(dirname "$0")/../.." && pwd)
body=$src/tests/fixtures/k8s/pytorchjob.json
t=$(mktemp -d /tmp/autosync-whcjson.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/old/common" "$t/old/webhook"
for f in webhook/main.c webhook/mutate.c webhook/mutate.h common/text.c common/text.h; do
  git -C "$src" show "$OLD:$f" > "$t/old/$f"
done
CF="-O2 -g -DHAVE_CONFIG_H -I$B -I/usr/include/p11-kit-1"
L="$(pkg-config --libs libmicrohttpd gnutls jansson libcjson) -lpthread"
# old: everything from OLD; review: OLD's main.c, today's review
cc $CF -I"$t/old" -I"$t/old/webhook" -o "$t/wh-old" "$t/old/webhook/main.c" \
  "$t/old/webhook/mutate.c" "$t/old/common/text.c" $L
cc $CF -I"$src" -I"$src/webhook" -o "$t/wh-review" "$t/old/webhook/main.c" \
  "$src/webhook/mutate.c" "$src/common/text.c" $L
cc $CF -I"$t/old" -I"$t/old/webhook" -o "$t/rv-old" "$src/tests/bench/webhook-review.c" \
  "$t/old/webhook/mutate.c" "$t/old/common/text.c" $L
cc $CF -I"$src" -I"$src/webhook" -o "$t/rv-new" "$src/tests/bench/webhook-review.c" \
  "$src/webhook/mutate.c" "$src/common/text.c" $L
cc -O2 -o "$t/load" "$src/tests/bench/webhook-load.c" $(pkg-config --cflags --libs gnutls)
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$t/k" -out "$t/c" 2>/dev/null
port=$((30000 + $$ % 20000))
one() { # WEBHOOK THREADS|default LABEL
  th=--threads=$2
  [ "$2" = default ] && th=
  "$1" --cert "$t/c" --key "$t/k" --listen 127.0.0.1 --port $port $th > "$t/log" &
  pid=$!
  sleep 0.5
  echo "$3 threads $2 $("$t/load" 127.0.0.1 $port "$t/c" "$body" 100 20000)"
  kill $pid; wait $pid 2>/dev/null || true
  echo "$3 threads $2 log $(grep -c '"decision":"mutated"' "$t/log") mutated"
  port=$((port + 1))
}
echo "# $(uname -srm), $(nproc) cores; old = $OLD; 100 clients, 20000 requests per run; body $(wc -c < "$body") bytes (PyTorchJob)"
for r in $(seq "$R"); do
  echo "# round $r"
  echo "review old $("$t/rv-old" "$body" 20000)"
  echo "review new $("$t/rv-new" "$body" 20000)"
  one "$t/wh-old" 2 "webhook old"
  one "$t/wh-review" 2 "webhook review"
  one "$B/webhook/autosync-webhook" 2 "webhook new"
  one "$B/webhook/autosync-webhook" default "webhook new"
  one "$B/webhook/autosync-webhook" 1 "webhook new"
  one "$B/webhook/autosync-webhook" 4 "webhook new"
done
