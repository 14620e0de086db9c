#!/usr/bin/env bash
# The console with a large account (issue 44): the runs list (first page, a filtered page, a
# page deep in the cursor) and a run page, with RUNS runs (default 100,000) in the store, on
# SQLite and on PostgreSQL. wrk, 2 threads, CONNECTIONS connections (default 8: people, not a
# load test), SECONDS_PER_ROUND seconds per row; p50/p99 from wrk's latency distribution.
#
#   cargo build --release --bin aelc
#   python3 -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install fastapi==0.163.2 "uvicorn[standard]==0.54.0"
#   AELC=target/release/aelc PYTHON=/tmp/bench-venv/bin/python benches/console/bench.sh
#
# The runs are real in shape: one call through the gateway (the fake model of the gateway
# bench) stores a receipt, and RUNS rows of `runs` and `receipts` are then written by SQL with
# that receipt's document and that run's kept input (and a trace id), a third of them for
# another agent and one in ten `invalid_output`, one a second apart. PostgreSQL: AELC_TEST_POSTGRES_URL (a server where a database may be
# created), or the half is skipped. STORES picks the halves (default "sqlite postgres").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AELC="$(realpath "${AELC:-target/release/aelc}")"
PYTHON="${PYTHON:-python3}"
RUNS="${RUNS:-100000}"
SECONDS_PER_ROUND="${SECONDS_PER_ROUND:-10}"
CONNECTIONS="${CONNECTIONS:-8}"
STORES="${STORES:-sqlite postgres}"
source "$here/../processes.sh"

model_port="$(free_port)"
"$PYTHON" "$here/../gateway/fake_model.py" "$model_port" & pids+=($!)
wait_port "$model_port"

project="$work/echo"
mkdir -p "$project/nodes" "$project/prompts"
cat > "$project/ael.toml" <<TOML
[package]
name = "acme/echo"
version = "0.1.0"

[bindings.m]
provider = "openai"
model = "fake"
base_url = "http://127.0.0.1:$model_port/v1"
api_key_env = "AELC_FAKE_KEY"
accepts = ["text"]
TOML
cat > "$project/nodes/echo.node.ael" <<'AEL'
/// What to echo.
struct Ask {
    /// The text.
    text: Str<200>,
}

/// The echo.
struct Echo {
    /// The reply.
    reply: Str<200>,
}

/// Echoes a text.
agent echo(ask: Ask) -> Echo {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
    }
    publish {
        capability: "text.echo";
        price: 0.01 EUR;
    }
}

/// Echoes through the echo agent: a delegated call.
agent pipeline(ask: Ask) -> Echo {
    publish {
        capability: "text.pipeline";
        price: 0.02 EUR;
    }
    return echo(ask);
}
AEL
echo 'Echo this: {{ ask.text }}' > "$project/prompts/echo.md"
(cd "$project" && "$AELC" build >/dev/null 2>&1)
export AELC_FAKE_KEY=bench AELC_LOG=error

# Fills the store with RUNS runs like the one real run `$2` of tenant demo. $1: "sqlite FILE"
# or "postgres URL".
fill() {
  local kind="$1" where="$2" seed="$3"
  local rows="
    INSERT INTO runs (id, tenant, agent, version, input_sha256, idempotency_key, mandate,
                      reserved, currency, state, created_ms, finished_ms, owner, input, trace_id)
    SELECT 'rcpt_bench' || lpad(CAST(i AS TEXT), 27, '0'), 'demo',
           CASE WHEN i % 3 = 0 THEN 'acme/echo' ELSE 'acme/pipeline' END, '0.1.0', 'x', NULL,
           NULL, 20000000, 'EUR', 'finished', 1765000000000 + i * 1000,
           1765000000000 + i * 1000 + 400, '', (SELECT input FROM runs WHERE id = '$seed'),
           '4bf92f3577b34da6a3ce929d0e0e4736'
    FROM series;
    INSERT INTO receipts (id, tenant, agent, version, status, code, mandate, document, at_ms)
    SELECT r.id, r.tenant, r.agent, r.version,
           CASE WHEN CAST(substr(r.id, 11) AS BIGINT) % 10 = 7 THEN 'invalid_output' ELSE 'succeeded' END,
           NULL, NULL, (SELECT document FROM receipts WHERE id = '$seed'), r.finished_ms
    FROM runs r WHERE r.id LIKE 'rcpt_bench%';"
  case "$kind" in
    sqlite)
      sqlite3 "$where" "CREATE TEMP TABLE series AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $RUNS) SELECT i FROM n;
        $(echo "$rows" | sed "s/lpad(CAST(i AS TEXT), 27, '0')/printf('%027d', i)/")" ;;
    postgres)
      psql -q "$where" -c "CREATE TEMP TABLE series AS SELECT i FROM generate_series(1, $RUNS) AS i; $rows" ;;
  esac
}

row() { # $1 label, $2 port, $3 path, $4 cookie
  local out rps p50 p99
  out="$(wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_ROUND}s" --latency -H "Cookie: aelc_console=$4" \
        "http://127.0.0.1:$2$3")"
  if echo "$out" | grep -q "Non-2xx"; then echo "$1: non-2xx answers" >&2; echo "$out" >&2; exit 1; fi
  rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  p50="$(echo "$out" | awk '$1 == "50%" {print $2}')"
  p99="$(echo "$out" | awk '$1 == "99%" {print $2}')"
  printf '%-34s %10s req/s   p50 %8s   p99 %8s\n' "$1" "$rps" "$p50" "$p99"
}

half() { # $1 kind, $2 store URL, $3 where (file or URL for the SQL)
  local kind="$1" store="$2" where="$3"
  local key; key="$("$AELC" account add demo --store "$store" | sed -n 's/API key (shown once): //p')"
  "$AELC" fund demo "100 EUR" --store "$store" >/dev/null
  local port; port="$(free_port)"
  (cd "$project" && exec "$AELC" serve --built "$project/target/ael" --addr "127.0.0.1:$port" \
      --store "$store" >/dev/null) & pids+=($!)
  local gw=$!
  wait_port "$port"
  local seed
  seed="$(curl -s -H "authorization: Bearer $key" -H 'content-type: application/json' \
      -d '{"text":"hello"}' "http://127.0.0.1:$port/v1/agents/acme/pipeline/runs" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["receipt"]["receipt"])')"
  local started; started="$(date +%s)"
  fill "$kind" "$where" "$seed"
  echo "== $kind: $RUNS runs written in $(( $(date +%s) - started )) s"
  local cookie
  cookie="$(curl -s -o /dev/null -D - --data-urlencode "key=$key" "http://127.0.0.1:$port/console/sign-in" \
      | sed -n 's/^set-cookie: aelc_console=\([^;]*\).*/\1/ip')"
  [ -n "$cookie" ] || { echo "signing in failed" >&2; exit 1; }
  local deep; deep="rcpt_bench$(printf '%027d' $(( RUNS / 2 )))"
  row "runs, first page" "$port" "/console/runs" "$cookie"
  row "runs, one agent's invalid_output" "$port" "/console/runs?agent=acme/echo&status=invalid_output" "$cookie"
  row "runs, a page halfway down" "$port" "/console/runs?before=$deep" "$cookie"
  row "a run page (delegated call)" "$port" "/console/runs/$deep" "$cookie"
  row "healthz (the HTTP ceiling)" "$port" "/healthz" "$cookie"
  kill "$gw" 2>/dev/null || true
  wait "$gw" 2>/dev/null || true
}

if [[ " $STORES " == *" sqlite "* ]]; then
  half sqlite "sqlite:$work/store.db" "$work/store.db"
fi
if [[ " $STORES " == *" postgres "* ]]; then
  if [ -n "${AELC_TEST_POSTGRES_URL:-}" ]; then
    db="console_bench_$$"
    psql -q "$AELC_TEST_POSTGRES_URL" -c "CREATE DATABASE $db"
    pg="${AELC_TEST_POSTGRES_URL%/*}/$db"
    half postgres "$pg" "$pg"
    psql -q "$AELC_TEST_POSTGRES_URL" -c "DROP DATABASE $db WITH (FORCE)"
  else
    echo "== postgres: skipped (set AELC_TEST_POSTGRES_URL)"
  fi
fi
