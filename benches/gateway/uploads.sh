#!/usr/bin/env bash
# Uploads at once (issue 48): how much the gateway's peak memory grows while N clients each
# upload one file of SIZE_MB to `POST /v1/files`. Uploads are streamed to the file store, so
# the growth is buffers, not files: the issue's bound is 128 MiB for 30 uploads of 20 MB
# (before streaming, the same load grew it by 659 MiB).
#
#   cargo build --bin aelc
#   AELC=target/debug/aelc benches/gateway/uploads.sh            # 30 × 20 MB
#   UPLOADS=30 SIZE_MB=20 AELC=target/release/aelc benches/gateway/uploads.sh
#
# Peak memory is the kernel's high-water mark of the gateway's resident set (`VmHWM` in
# /proc/PID/status), read once the gateway has started and answered a request (the baseline)
# and again after every upload finished. A project made by `aelc new` (no model is called),
# an account with a quota larger than the load, the SQLite store and the files in a temp dir.
set -euo pipefail
AELC="$(realpath "${AELC:-target/debug/aelc}")"
UPLOADS="${UPLOADS:-30}"
SIZE_MB="${SIZE_MB:-20}"
work="$(mktemp -d)"
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

hwm_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

cd "$work"
"$AELC" new bench >/dev/null
cd bench
# Room for the whole load in one account.
echo "max_stored_bytes_per_account = $(( (UPLOADS + 1) * SIZE_MB * 1024 * 1024 ))" >> ael.toml
key="$("$AELC" account add uploader | sed -n 's/^API key (shown once): //p')"
head -c "$(( SIZE_MB * 1000 * 1000 ))" /dev/urandom > "$work/file.bin"

AELC_LOG=warn "$AELC" serve --addr 127.0.0.1:0 --max-uploads "$UPLOADS" > "$work/serve.out" &
pid=$!
for _ in $(seq 600); do grep -q "serving" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port="$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.out" | head -1)"
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null
before="$(hwm_kib "$pid")"

start="$(date +%s.%N)"
codes=()
for i in $(seq "$UPLOADS"); do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "http://127.0.0.1:$port/v1/files" \
        -H "Authorization: Bearer $key" -H 'Content-Type: application/octet-stream' \
        --data-binary @"$work/file.bin" > "$work/code.$i" &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
end="$(date +%s.%N)"
after="$(hwm_kib "$pid")"
for i in $(seq "$UPLOADS"); do codes+=("$(cat "$work/code.$i")"); done
created="$(printf '%s\n' "${codes[@]}" | grep -c '^201$' || true)"

printf 'uploads: %d × %d MB at once, %d answered 201 in %.1f s\n' \
    "$UPLOADS" "$SIZE_MB" "$created" "$(echo "$end - $start" | bc)"
printf 'peak RSS: %d KiB after start, %d KiB after the uploads: grew %d KiB (%.1f MiB)\n' \
    "$before" "$after" "$(( after - before ))" "$(echo "($after - $before) / 1024" | bc -l)"
[[ "$created" == "$UPLOADS" ]] || { echo "not every upload was stored: ${codes[*]}" >&2; exit 1; }
