# Sourced by the benches that start servers (gateway/bench.sh, gateway/several.sh,
# console/bench.sh): a temp folder `$work`, the servers' pids in `pids` (each stopped, and the
# folder removed, when the script exits), a free port, and waiting for one to open.
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# 30 s at most (a moto_server or a cold fake model can take seconds to listen).
wait_port() { for _ in $(seq 300); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
