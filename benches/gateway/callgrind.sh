#!/usr/bin/env bash
# Instructions per gate-refused request of `aelc serve` under callgrind: a count that does not
# move with the host's load, unlike the req/s of bench.sh (the book's traces chapter, "Cost").
#   benches/gateway/callgrind.sh AELC LABEL on|off [N]
# A release build (`cargo build --release --bin aelc`); `on` exports traces to `otlp_sink.py
# fast` (not counted). 300 requests to warm up, 7 s for the batch thread, counters zeroed, N
# requests (1000) on one kept-alive connection, 7 s for their export, a dump: its totals are N
# requests' work on every thread, export included. Prints instructions per request; the dump
# stays in the work folder for `callgrind_annotate --inclusive=yes`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AELC="$(realpath "$1")"; LABEL="$2"; MODE="$3"; N="${4:-1000}"
W="${TMPDIR:-/tmp}/aelc-callgrind-$LABEL"; rm -rf "$W"; mkdir -p "$W/echo/nodes" "$W/echo/prompts"
cat > "$W/client.py" <<'PY'
"""Sends N gate-refused runs, one after another, on one kept-alive connection."""
import http.client, sys
port, key, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
body = '{"text": "hello", "locale": "en-GB", "unknown": 1}'
headers = {"authorization": "Bearer " + key, "content-type": "application/json"}
c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for _ in range(n):
    c.request("POST", "/v1/agents/acme/echo/runs", body, headers)
    r = c.getresponse()
    r.read()
    assert r.status == 422, r.status
PY
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 600); do (echo >/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.2; done; return 1; }
cat > "$W/echo/ael.toml" <<TOML
[package]
name = "acme/echo"
version = "0.1.0"

[bindings.m]
provider = "openai"
model = "fake"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "AELC_FAKE_KEY"
accepts = ["text"]

[limits]
max_input_bytes = 2048
TOML
cat > "$W/echo/nodes/echo.node.ael" <<'AEL'
/// What to echo.
struct Ask {
    /// The text.
    text: Str<200>,
    /// The reader's language.
    locale: Option<Str<16>> @pattern(r"^[a-z]{2}(-[A-Z]{2})?$"),
}

/// The echo.
struct Echo {
    /// The reply.
    reply: Str<200>,
}

errors EchoError {
    /// The text is blank.
    blank,
}

check not_blank(ask: Ask) fails EchoError {
    require ask.text.trim().len() > 0 else blank "the text is blank";
}

/// Echoes a text.
agent echo(ask: Ask) -> Echo fails EchoError {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
    }
    input { check not_blank; }
    publish {
        capability: "text.echo";
        price: 0.000001 EUR;
    }
}
AEL
echo 'Echo this: {{ ask.text }}' > "$W/echo/prompts/echo.md"
(cd "$W/echo" && "$AELC" build >/dev/null)
store="sqlite:$W/store.db"
key="$("$AELC" account add bench --store "$store" | sed -n 's/API key (shown once): //p')"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
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
python3 "$W/client.py" "$port" "$key" 300
sleep 7
callgrind_control -z "$vg" >/dev/null 2>&1 || callgrind_control -z >/dev/null
python3 "$W/client.py" "$port" "$key" "$N"
sleep 7
callgrind_control -d "$vg" >/dev/null 2>&1 || callgrind_control -d >/dev/null
sleep 1
kill -TERM "$vg" 2>/dev/null || true; sleep 3
f="$(ls -t "$W"/cg.out.* 2>/dev/null | grep -v '\.0$' | head -1 || true)"
[ -n "$f" ] || f="$(ls -t "$W"/cg.out* | head -1)"
total="$(grep -m1 '^summary:\|^totals:' "$f" | awk '{print $2}')"
echo "$LABEL $MODE N=$N file=$f instructions=$total per_request=$(( total / N ))"
