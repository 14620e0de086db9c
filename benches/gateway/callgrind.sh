#!/usr/bin/env bash
# Instructions per gate-refused request of `aelc serve` under callgrind: a count that does not
# move with the host's load, unlike the req/s of bench.sh (the book's traces chapter, "Cost").
#   benches/gateway/callgrind.sh AELC LABEL on|off [N]
# KIND=full counts a full run instead: a valid input, a funded payer, the model answered by
# `fake_model.py` (its process is not counted), the run's receipt and money stored.
# (PYTHON: a Python with uvicorn and starlette, e.g. the bench venv of bench.sh.)
# A release build (`cargo build --release --bin aelc`); `on` exports traces to `otlp_sink.py
# fast` (not counted). 300 requests to warm up, 7 s for the batch thread, counters zeroed, N
# requests (1000) on one kept-alive connection (CONCURRENCY=C: on C at once, so the store's
# groups are as under load), 7 s for their export, a dump: its totals are N
# requests' work on every thread, export included. Prints instructions per request; the dump
# stays in the work folder for `callgrind_annotate --inclusive=yes`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AELC="$(realpath "$1")"; LABEL="$2"; MODE="$3"; N="${4:-1000}"
W="${TMPDIR:-/tmp}/aelc-callgrind-$LABEL"; rm -rf "$W"; mkdir -p "$W"
cat > "$W/client.py" <<'PY'
"""Sends N runs on C kept-alive connections at once (C threads, N/C each in turn)."""
import http.client, sys, threading
port, key, n, kind, c = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
body = '{"text": "hello", "locale": "en-GB"' + (', "unknown": 1}' if kind == "gate" else '}')
expected = 422 if kind == "gate" else 200
headers = {"authorization": "Bearer " + key, "content-type": "application/json"}
failed = []
def send(count):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        for _ in range(count):
            conn.request("POST", "/v1/agents/acme/echo/runs", body, headers)
            r = conn.getresponse()
            r.read()
            assert r.status == expected, r.status
    except Exception as e:
        failed.append(e)
threads = [threading.Thread(target=send, args=(n // c + (i < n % c),)) for i in range(c)]
for t in threads: t.start()
for t in threads: t.join()
assert not failed, failed[0]
PY
source "$here/../processes.sh"
source "$here/echo_project.sh"
KIND="${KIND:-gate}"
CONCURRENCY="${CONCURRENCY:-1}"
store="sqlite:$W/store.db"
if [ "$KIND" = full ]; then
  model="$(free_port)"
  "${PYTHON:-python3}" "$here/fake_model.py" "$model" 2>"$W/model.log" & pids+=($!)
  wait_port "$model"
  echo_project "$W/echo" "$model" "$AELC"
  account="$("$AELC" account add bench --store "$store")"
  "$AELC" fund bench "1000000 EUR" --store "$store" >/dev/null
  key="$(echo "$account" | sed -n 's/API key (shown once): //p')"
else
  # The model is never called: every request is refused at the gate.
  echo_project "$W/echo" 9 "$AELC"
  key="$("$AELC" account add bench --store "$store" | sed -n 's/API key (shown once): //p')"
fi
otel=()
if [ "$MODE" = on ]; then
  sink="$(free_port)"
  python3 "$here/otlp_sink.py" "$sink" fast 2>"$W/sink.log" & pids+=($!)
  wait_port "$sink"
  otel=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink")
fi
port="$(free_port)"
(cd "$W/echo" && exec env "${otel[@]}" AELC_FAKE_KEY=x AELC_LOG=error valgrind --tool=callgrind \
   --callgrind-out-file="$W/cg.out" "$AELC" serve --built "$W/echo/target/ael" \
   --addr "127.0.0.1:$port" --store "$store" >/dev/null 2>"$W/vg.log") & pids+=($!)
vg=$!
wait_port "$port"
python3 "$W/client.py" "$port" "$key" 300 "$KIND" "$CONCURRENCY"
sleep 7
callgrind_control -z "$vg" >/dev/null 2>&1 || callgrind_control -z >/dev/null
python3 "$W/client.py" "$port" "$key" "$N" "$KIND" "$CONCURRENCY"
sleep 7
callgrind_control -d "$vg" >/dev/null 2>&1 || callgrind_control -d >/dev/null
sleep 1
kill -TERM "$vg" 2>/dev/null || true; sleep 3
f="$(ls -t "$W"/cg.out.* 2>/dev/null | grep -v '\.0$' | head -1 || true)"
[ -n "$f" ] || f="$(ls -t "$W"/cg.out* | head -1)"
total="$(grep -m1 '^summary:\|^totals:' "$f" | awk '{print $2}')"
echo "$LABEL $KIND $MODE N=$N C=$CONCURRENCY file=$f instructions=$total per_request=$(( total / N ))"
