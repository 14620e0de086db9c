#!/usr/bin/env bash
# Past one machine (issue 45): files through the gateway on the local folder and on an S3
# bucket, and the gate through HAProxy with two gateways against one.
#
#   cargo build --bin aelc
#   AELC=target/debug/aelc PYTHON=/tmp/peers/bin/python MOTO_SERVER=/tmp/peers/bin/moto_server \
#     benches/gateway/several.sh
#   AELC=target/release/aelc ... benches/gateway/several.sh      # the figures worth recording
#
# 1. Upload and fetch of a 5 MiB PNG (FILES rounds of each, one at a time): `POST /v1/files`
#    streams it into the file store; a run of an agent whose input is that picture reads it
#    back from the store, verifies its SHA-256 and sends it inline to the fake model (the
#    gateway has no route that returns a file's bytes: a run is how a file is fetched). Rates
#    in MiB/s of file, on the project's folder and on a bucket of `moto_server` (in memory, on
#    127.0.0.1: the figure is the gateway's and the S3 client's cost, not a network's).
# 2. The gate (a call refused at the gate for an unknown field: decoding, the refusal and its
#    journaled receipt) under wrk (2 threads, CONNECTIONS connections, SECONDS_PER_ROUND s,
#    ROUNDS rounds, A B C A B C): one gateway directly, through HAProxy to one gateway, and
#    through HAProxy to two. On one machine the two gateways share its cores, so the ratio
#    shows what the balancer costs, not what a second machine gains.
#
# Checked on a debug build (FILES=3 ROUNDS=1 SECONDS_PER_ROUND=2): it runs end to end; its
# figures are the release build's to record.
# Needs: curl, wrk and haproxy (Debian's packages), PYTHON with uvicorn and starlette (the fake
# model, fake_model.py), MOTO_SERVER (pip install "moto[server]==5.2.5"). The store is SQLite
# in a temp dir, or AELC_TEST_POSTGRES_URL when set (a database both gateways share).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
AELC="$(realpath "${AELC:-target/debug/aelc}")"
PYTHON="${PYTHON:-python3}"
MOTO_SERVER="${MOTO_SERVER:-${AELC_MOTO_SERVER:-moto_server}}"
HAPROXY="${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"
FILES="${FILES:-10}"
ROUNDS="${ROUNDS:-3}"
SECONDS_PER_ROUND="${SECONDS_PER_ROUND:-5}"
CONNECTIONS="${CONNECTIONS:-32}"
source "$here/../processes.sh"

now() { date +%s.%N; }

model_port="$(free_port)"
"$PYTHON" "$here/fake_model.py" "$model_port" & pids+=($!)
moto_port="$(free_port)"
"$MOTO_SERVER" -H 127.0.0.1 -p "$moto_port" >/dev/null 2>&1 & pids+=($!)
wait_port "$model_port"
wait_port "$moto_port"
curl -sf -X PUT "http://127.0.0.1:$moto_port/bench" >/dev/null

project="$work/look"
mkdir -p "$project/nodes" "$project/prompts"
cat > "$project/ael.toml" <<TOML
[package]
name = "acme/look"
version = "0.1.0"

[bindings.m]
provider = "openai"
model = "fake"
base_url = "http://127.0.0.1:$model_port/v1"
api_key_env = "AELC_FAKE_KEY"
accepts = ["text", "image"]

[limits]
max_input_bytes = 2048
max_stored_bytes_per_account = 4294967296
TOML
cat > "$project/nodes/look.node.ael" <<'AEL'
/// A picture.
struct Shot {
    /// The picture.
    photo: Image<8MiB>,
}

/// What to echo.
struct Ask {
    /// The text.
    text: Str<200>,
}

/// The answer.
struct Echo {
    /// The reply.
    reply: Str<200>,
}

builder shot_parts(shot: Shot) -> Parts {
    text("Describe the picture.")
    image(shot.photo)
}

/// Looks at a picture.
agent look(shot: Shot) -> Echo {
    config {
        model: binding("m");
    }
    input {
        builder shot_parts;
    }
    publish {
        capability: "image.look";
    }
}

/// Echoes a text.
agent echo(ask: Ask) -> Echo {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
    }
    publish {
        capability: "text.echo";
    }
}
AEL
echo 'Echo this: {{ ask.text }}' > "$project/prompts/echo.md"
(cd "$project" && "$AELC" build >/dev/null 2>&1)

export AELC_FAKE_KEY=bench AELC_LOG=error
export AWS_ENDPOINT_URL="http://127.0.0.1:$moto_port" AWS_ALLOW_HTTP=true \
  AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
store="${AELC_TEST_POSTGRES_URL:-sqlite:$work/store.db}"
key="$("$AELC" account add "bench$RANDOM$RANDOM" --store "$store" | sed -n 's/API key (shown once): //p')"

# A 5 MiB PNG: a 640×480 header, then bytes (the gateway reads headers, never decodes).
image="$work/image.png"
printf '\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x02\x80\x00\x00\x01\xe0\x08\x02\x00\x00\x00' > "$image"
head -c $(( 5 * 1024 * 1024 - 29 )) /dev/urandom >> "$image"

serve() { # $1 instance, $2 files URL ("" for the folder) → prints the port; the pid in $work/pid.$1
  local port; port="$(free_port)"
  local files=(); [ -z "$2" ] || files=(--files "$2")
  (cd "$project" && exec "$AELC" serve --built "$project/target/ael" --addr "127.0.0.1:$port" \
      --store "$store" --instance "$1" "${files[@]}" --max-runs 1024 >/dev/null) &
  echo $! > "$work/pid.$1"
  wait_port "$port"
  echo "$port"
}

files_round() { # $1 label, $2 files URL
  local port; port="$(serve "files-$1" "$2")"
  pids+=("$(cat "$work/pid.files-$1")")
  local ref="" start end
  start="$(now)"
  for _ in $(seq "$FILES"); do
    ref="$(curl -sf -X POST "http://127.0.0.1:$port/v1/files" -H "Authorization: Bearer $key" \
        --data-binary @"$image")"
  done
  end="$(now)"
  printf '%-28s %8.1f MiB/s  (%d × 5 MiB in %.2f s)\n' "upload, $1" \
    "$(echo "5 * $FILES / ($end - $start)" | bc -l)" "$FILES" "$(echo "$end - $start" | bc -l)"
  start="$(now)"
  for _ in $(seq "$FILES"); do
    code="$(curl -s -o "$work/run.out" -w '%{http_code}' -X POST \
        "http://127.0.0.1:$port/v1/agents/acme/look/runs" -H "Authorization: Bearer $key" \
        -H 'Content-Type: application/json' --data "{\"photo\": $ref}")"
    [ "$code" = 200 ] || { echo "a run with the picture answered $code: $(cat "$work/run.out")" >&2; exit 1; }
  done
  end="$(now)"
  printf '%-28s %8.1f MiB/s  (%d runs in %.2f s)\n' "fetch (a run), $1" \
    "$(echo "5 * $FILES / ($end - $start)" | bc -l)" "$FILES" "$(echo "$end - $start" | bc -l)"
  kill "$(cat "$work/pid.files-$1")"
}

echo "== $(nproc) cores; $(basename "$(dirname "$AELC")") build; store ${store%%:*}"
files_round folder ""
files_round s3 "s3://bench/files"

# The gate: a body the gate refuses (an unknown field).
a="$(serve gate-a "")"; pids+=("$(cat "$work/pid.gate-a")")
b="$(serve gate-b "")"; pids+=("$(cat "$work/pid.gate-b")")
balancer() { # $1 label, $2… backend ports → prints the balancer's port
  local port; port="$(free_port)"
  local cfg="$work/haproxy.$1.cfg"
  sed -e "s/127.0.0.1:8080/127.0.0.1:$port/" -e '/^    server /d' \
    "$here/../../book/src/deployment/haproxy.cfg" > "$cfg"
  local n=0
  for p in "${@:2}"; do n=$((n + 1)); echo "    server g$n 127.0.0.1:$p" >> "$cfg"; done
  "$HAPROXY" -db -f "$cfg" >/dev/null 2>&1 &
  echo $! > "$work/pid.haproxy-$1"
  wait_port "$port"
  echo "$port"
}
# Each runs in a command substitution: its pid comes back through a file.
one="$(balancer one "$a")"; pids+=("$(cat "$work/pid.haproxy-one")")
two="$(balancer two "$a" "$b")"; pids+=("$(cat "$work/pid.haproxy-two")")
sleep 2 # the first health checks
export BODY='{"text": "hi", "extra": 1}' KEY="$key"
declare -A results
for _ in $(seq "$ROUNDS"); do
  for row in "direct:$a" "haproxy, one gateway:$one" "haproxy, two gateways:$two"; do
    label="${row%%:*}"; port="${row##*:}"
    rate="$(wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_ROUND}s" -s "$here/post.lua" \
      "http://127.0.0.1:$port/v1/agents/acme/echo/runs" | awk '/Requests\/sec/ {print $2}')"
    results[$label]+="$rate "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for label in "direct" "haproxy, one gateway" "haproxy, two gateways"; do
  printf '%-28s %10.0f req/s (median of %d)\n' "gate, $label" "$(echo "${results[$label]}" | median)" "$ROUNDS"
done
printf 'two gateways / one, through haproxy: %.2f\n' \
  "$(echo "$(echo "${results["haproxy, two gateways"]}" | median) / $(echo "${results["haproxy, one gateway"]}" | median)" | bc -l)"
