#!/usr/bin/env bash
# The gateway under load (issue 18's benchmark), paired in one run: the gate alone (an input the
# schema refuses) and a full run against a model that answers at once, on SQLite and on
# PostgreSQL, side by side with FastAPI + pydantic validating the same input schema. The peer
# runs one uvicorn worker per core (`--workers $(nproc)`, WORKERS), as the gateway uses every
# core. The input carries a `locale` with an `@pattern`, so the gate matches a regex, as most
# real inputs with a code or an identifier do. The peer is installed as FastAPI is deployed:
# `uvicorn[standard]` (uvloop and httptools); plain `uvicorn` parses HTTP in pure Python (h11),
# a handicap (1.4k against the issue's 5k req/s on the same host) no ratio should carry.
#
#   cargo build --release --bin aelc
#   python3 -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install fastapi==0.163.2 "uvicorn[standard]==0.54.0"
#   AELC=target/release/aelc PYTHON=/tmp/bench-venv/bin/python benches/gateway/bench.sh
#
# Load: wrk (Debian's package), 2 threads, 64 connections (CONNECTIONS), 10 s per round
# (SECONDS_PER_ROUND), two rounds each (ROUNDS; more make a p99 on a noisy host worth more),
# the SQLite store in STORE_DIR (default: on disk), alternating A B A B. PostgreSQL:
# AELC_TEST_POSTGRES_URL, or the half is skipped.
# BASELINE=<another build's aelc> serves that build beside it (its own SQLite file; on
# PostgreSQL the database BASELINE_POSTGRES_URL names, else the same one) and puts its rows in
# the same alternation, for paired figures. STORES (default "sqlite postgres") and ROWS (default
# "gate healthz full") pick the halves and the rows, for an experiment on one of them. The
# `healthz` row is the same gateway's `GET /healthz` (no body, no store): what its HTTP stack
# alone serves, the ceiling the gate's rate is read against.
# TRACES=1 serves the same build a second time with its traces exported (OTLP/HTTP, the
# default batching) to a local receiver (`otlp_sink.py`, which decodes every export when
# SINK_PYTHON (default PYTHON) has `opentelemetry-proto`), its own SQLite file, and puts its rows ("traces on") in
# the alternation beside the untraced ones ("aelc", export off): the paired cost of export.
# SINK picks the receiver: unset, `otlp_sink.py` decoding every export (its CPU is on the same
# cores); `nginx`, nginx (Debian's package, one worker) answering `POST /v1/traces` 200 with an
# empty ExportTraceServiceResponse and discarding the body, a receiver faster than the gateway
# (the fair local receiver: what the gateway pays to export to a collector elsewhere); `fast`,
# `otlp_sink.py` answering 200 without decoding (a Python process, so slower than nginx);
# `dead`, no receiver (every export refused at once).
#   TRACES=1 SINK=nginx STORES=sqlite ROWS="gate full" AELC=target/release/aelc benches/gateway/bench.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AELC="$(realpath "${AELC:-target/release/aelc}")"
PYTHON="${PYTHON:-python3}"
SECONDS_PER_ROUND="${SECONDS_PER_ROUND:-10}"
CONNECTIONS="${CONNECTIONS:-64}"
ROUNDS="${ROUNDS:-2}"
STORES="${STORES:-sqlite postgres}"
ROWS="${ROWS:-gate healthz full}"
WORKERS="${WORKERS:-$(nproc)}"
picked() { [[ " $1 " == *" $2 "* ]]; } # $1 a list of words, $2 a word
# Where the SQLite store lives (default: the run's temp dir on disk). `STORE_DIR=/dev/shm`
# puts it in memory: the difference is what the disk's flushes cost the latency tail.
STORE_DIR="${STORE_DIR:-}"
BASELINE="${BASELINE:+$(realpath "$BASELINE")}"
TRACES="${TRACES:-}"
SINK_PYTHON="${SINK_PYTHON:-$PYTHON}"
source "$here/../processes.sh"

model_port="$(free_port)"
# The model of the full run answers at once. nginx (Debian's package) serves the fake's answer
# as a fixed body: a model slower than the gateway would measure the model, and one Python
# process answers ~1k requests a second. Without nginx (or MODEL=python) the Python fake serves.
# (nginx reads `\"` in a quoted string as `"`: the body's backslashes are doubled.)
nginx="$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)"
if [ -n "$nginx" ] && [ "${MODEL:-nginx}" = nginx ]; then
  mkdir -p "$work/nginx"
  # The `.` keeps the body's last blank line, which `$(…)` would strip (an SSE event ends there).
  answer="$("$PYTHON" "$here/fake_model.py" --body | sed 's/\\/\\\\/g'; echo .)"
  answer="${answer%.}"
  cat > "$work/nginx/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log error;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$model_port;
    location = /v1/chat/completions {
      default_type text/event-stream;
      return 200 '$answer';
    }
  }
}
NGINX
  "$nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" & pids+=($!)
  model="nginx (1 worker)"
else
  "$PYTHON" "$here/fake_model.py" "$model_port" & pids+=($!)
  model="fake_model.py (Python, 1 process)"
fi
wait_port "$model_port"

project="$work/echo"
source "$here/echo_project.sh"
echo_project "$project" "$model_port" "$AELC"

export AELC_FAKE_KEY=bench AELC_LOG=error
declare -A results

sink_port=""
if [ -n "$TRACES" ]; then
  sink_port="$(free_port)"
  # SINK=dead: nothing listens there, so every export is refused at once. The spans are still
  # made, batched and encoded: what the gateway itself pays, without a receiver's CPU on the
  # same cores.
  # SINK=fast: the receiver reads each export and answers 200 without decoding it.
  if [ "${SINK:-}" = nginx ]; then
    [ -n "$nginx" ] || { echo "SINK=nginx needs nginx" >&2; exit 1; }
    mkdir -p "$work/sink"
    # `return` discards the request body (read off the socket, never buffered to disk); the
    # empty body is an empty ExportTraceServiceResponse. Keep-alive, as with a collector.
    cat > "$work/sink/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $work/sink/nginx.pid;
error_log $work/sink/error.log error;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/sink/body;
  proxy_temp_path $work/sink/proxy;
  fastcgi_temp_path $work/sink/fastcgi;
  uwsgi_temp_path $work/sink/uwsgi;
  scgi_temp_path $work/sink/scgi;
  client_max_body_size 64m;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$sink_port;
    location = /v1/traces {
      default_type application/x-protobuf;
      return 200 '';
    }
  }
}
NGINX
    "$nginx" -c "$work/sink/nginx.conf" -e "$work/sink/error.log" & pids+=($!)
    wait_port "$sink_port"
  elif [ "${SINK:-}" != dead ]; then
    sink_mode=()
    [ "${SINK:-}" != fast ] || sink_mode=(fast)
    "$SINK_PYTHON" "$here/otlp_sink.py" "$sink_port" "${sink_mode[@]}" & pids+=($!)
    sink_pid=$!
    wait_port "$sink_port"
  fi
fi

serve() { # $1 store URL, $2 aelc, $3 "traced" to export traces → sets gw_port, gw_pid, key
  local store="$1" aelc="$2" otel=()
  [ "${3:-}" != traced ] || otel=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink_port")
  key="$("$aelc" account add "bench$RANDOM$RANDOM" --store "$store" | sed -n 's/API key (shown once): //p')"
  gw_port="$(free_port)"
  (cd "$project" && exec env "${otel[@]}" "$aelc" serve --built "$project/target/ael" --addr "127.0.0.1:$gw_port" \
      --store "$store" --max-runs 1024 >/dev/null) & pids+=($!)
  gw_pid=$!
  wait_port "$gw_port"
}

payer() { # $1 store URL, $2 aelc → prints the API key of a funded account
  local account; account="$("$2" account add "payer$RANDOM$RANDOM" --store "$1")"
  local payer; payer="$(echo "$account" | sed -n 's/created account \([^ ]*\).*/\1/p')"
  "$2" fund "$payer" "1000000 EUR" --store "$1" >/dev/null
  echo "$account" | sed -n 's/API key (shown once): //p'
}


# Bytes the process had written to disk (what the kernel was asked to write back, less what was
# deleted before it was: a journal segment removed in time costs nothing), from /proc/PID/io.
disk_bytes() { # $1 pid
  awk '/^write_bytes/ {w=$2} /^cancelled_write_bytes/ {c=$2} END {printf "%.0f\n", w-c}' "/proc/$1/io" 2>/dev/null || echo 0
}

load() { # $1 label, $2 port, $3 body, $4 key, $5 the server's pid (for its disk bytes; optional)
  local out before=0
  [ -z "${5:-}" ] || before="$(disk_bytes "$5")"
  out="$(BODY="$3" KEY="$4" wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_ROUND}s" --latency -s "$here/post.lua" \
        "http://127.0.0.1:$2/v1/agents/acme/echo/runs")"
  local rps p50 p99 refused
  rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  p50="$(echo "$out" | awk '$1=="50%" {print $2}')"
  p99="$(echo "$out" | awk '$1=="99%" {print $2}')"
  # Answers other than 2xx: every one for the gate (a refused input is 422), none for a full
  # run — a full run's row with some is a failing gateway, not a fast one.
  refused="$(echo "$out" | awk '/Non-2xx or 3xx responses/ {print $5}')"
  local disk=""
  if [ -n "${5:-}" ]; then
    local requests; requests="$(echo "$out" | awk '/requests in/ {print $1}')"
    disk="$(awk -v b="$(( $(disk_bytes "$5") - before ))" -v n="$requests" \
      'BEGIN {printf "   disk %6.0f B/req", (n > 0 ? b / n : 0)}')"
  fi
  printf '%-34s %10s req/s   p50 %8s   p99 %8s   non-2xx %s%s\n' "$1" "$rps" "$p50" "$p99" "${refused:-0}" "$disk"
  results["$1"]+="$rps "
}

load_healthz() { # $1 label, $2 port: GET /healthz, the HTTP stack alone
  local out rps p99
  out="$(wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_ROUND}s" --latency "http://127.0.0.1:$2/healthz")"
  rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  p99="$(echo "$out" | awk '$1=="99%" {print $2}')"
  printf '%-34s %10s req/s   p99 %8s\n' "$1" "$rps" "$p99"
  results["$1"]+="$rps "
}

bad='{"text": "hello", "locale": "en-GB", "unknown": 1}'
good='{"text": "hello", "locale": "en-GB"}'

run_store() { # $1 label, $2 store URL, $3 the baseline's store URL, $4 the traced one's
  serve "$2" "$AELC"
  local port="$gw_port" pid="$gw_pid" gate_key="$key"
  local payer_key; payer_key="$(payer "$2" "$AELC")"
  local tr_port="" tr_pid="" tr_key="" tr_payer=""
  if [ -n "$TRACES" ]; then
    serve "$4" "$AELC" traced
    tr_port="$gw_port" tr_pid="$gw_pid" tr_key="$key"
    tr_payer="$(payer "$4" "$AELC")"
  fi
  local base_port="" base_pid="" base_key="" base_payer=""
  if [ -n "$BASELINE" ]; then
    serve "$3" "$BASELINE"
    base_port="$gw_port" base_pid="$gw_pid" base_key="$key"
    base_payer="$(payer "$3" "$BASELINE")"
  fi
  peer_port="$(free_port)"
  "$PYTHON" "$here/peer_fastapi.py" "$peer_port" "$gate_key" "$WORKERS" & pids+=($!)
  peer_pid=$!
  wait_port "$peer_port"
  for round in $(seq "$ROUNDS"); do
    picked "$ROWS" gate || break
    load "gate, aelc ($1)" "$port" "$bad" "$gate_key" "$pid"
    [ -z "$TRACES" ] || load "gate, traces on ($1)" "$tr_port" "$bad" "$tr_key" "$tr_pid"
    [ -z "$BASELINE" ] || load "gate, baseline ($1)" "$base_port" "$bad" "$base_key" "$base_pid"
    load "gate, FastAPI + pydantic" "$peer_port" "$bad" "$gate_key"
    if picked "$ROWS" healthz; then
      load_healthz "healthz, aelc ($1)" "$port"
    fi
  done
  for round in $(seq "$ROUNDS"); do
    picked "$ROWS" full || break
    load "full run, aelc ($1)" "$port" "$good" "$payer_key" "$pid"
    [ -z "$TRACES" ] || load "full run, traces on ($1)" "$tr_port" "$good" "$tr_payer" "$tr_pid"
    [ -z "$BASELINE" ] || load "full run, baseline ($1)" "$base_port" "$good" "$base_payer" "$base_pid"
  done
  kill "$pid" "$peer_pid" $base_pid $tr_pid 2>/dev/null || true
}

echo "== $(nproc) cores; $SECONDS_PER_ROUND s rounds; wrk -t2 -c$CONNECTIONS; FastAPI on $WORKERS worker(s); model: $model"
sqlite_dir="$work"
if [ -n "$STORE_DIR" ]; then
  sqlite_dir="$(mktemp -d -p "$STORE_DIR")"
  trap 'cleanup; rm -rf "$sqlite_dir"' EXIT
fi
if picked "$STORES" sqlite; then
  run_store sqlite "sqlite:$sqlite_dir/store.db" "sqlite:$sqlite_dir/baseline.db" \
    "sqlite:$sqlite_dir/traced.db"
fi
if ! picked "$STORES" postgres; then
  : # not asked for
elif [ -n "${AELC_TEST_POSTGRES_URL:-}" ]; then
  # The baseline gets a database of its own when BASELINE_POSTGRES_URL names one: a build with
  # fewer migrations refuses a database a newer one has migrated.
  run_store postgres "$AELC_TEST_POSTGRES_URL" "${BASELINE_POSTGRES_URL:-$AELC_TEST_POSTGRES_URL}" \
    "$AELC_TEST_POSTGRES_URL"
else
  echo "(PostgreSQL skipped: set AELC_TEST_POSTGRES_URL)"
fi
if [ -n "$TRACES" ] && [ -n "${sink_pid:-}" ]; then
  sleep 6 # the last batches (every 5 s by default)
  kill "$sink_pid" 2>/dev/null || true
  wait "$sink_pid" 2>/dev/null || true
fi
echo
echo "== medians over the rounds"
for k in "${!results[@]}"; do
  printf '%-34s %s\n' "$k" "$(echo ${results[$k]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') req/s"
done | sort
