"""MCP over Streamable HTTP against stdio (issue 46's benchmark), paired in one run.

    cargo build --release --bin aelc
    AELC=target/release/aelc /tmp/peers/bin/python benches/mcp/bench.py

PYTHON: a Python with the official `mcp` SDK (it brings uvicorn for the fake model), e.g. the
venv of .ci/run. Rows, each ROUNDS times (default 3) in the alternation stdio-1, http-1,
stdio-16, http-16 (SESSIONS, default 16), each for SECONDS (default 5) after one warm-up call
per session:

- `call_agent` round trips per second: every session calls `acme/echo` (a model that answers
  at once, benches/gateway/fake_model.py) one call after another; over stdio each session is
  an `aelc mcp` process (that is what a stdio session is), over HTTP each is a session of one
  mandate token on one `aelc serve` (the SDK's Streamable HTTP client);
- the memory an open idle HTTP session holds: the `aelc serve` process's RSS before and after
  IDLE (default 200) sessions are opened (initialize + initialized, no stream held), divided by
  IDLE; beside it the RSS of one idle `aelc mcp` stdio process, the cost of a stdio session.

The store is SQLite in a temp dir. Prints one line per row (median and spread over the rounds).
"""

import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HERE = os.path.dirname(os.path.abspath(__file__))
AELC = os.path.realpath(os.environ.get("AELC", "target/release/aelc"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
SECONDS = float(os.environ.get("SECONDS", "5"))
SESSIONS = int(os.environ.get("SESSIONS", "16"))
IDLE = int(os.environ.get("IDLE", "200"))
ENV = {**os.environ, "AELC_FAKE_KEY": "bench", "AELC_LOG": "error"}
CALL = {"agent": "acme/echo", "input": {"text": "hello"}}

AGENT = '''/// What to echo.
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
        price: 0.000001 EUR;
    }
}
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port):
    for _ in range(200):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            return
        time.sleep(0.05)
    raise SystemExit(f"port {port} never opened")


def aelc(*args, cwd=None):
    return subprocess.run([AELC, *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def setup(work, model_port):
    project = os.path.join(work, "echo")
    os.makedirs(os.path.join(project, "nodes"))
    os.makedirs(os.path.join(project, "prompts"))
    with open(os.path.join(project, "ael.toml"), "w") as f:
        f.write(f'''[package]
name = "acme/echo"
version = "0.1.0"

[bindings.m]
provider = "openai"
model = "fake"
base_url = "http://127.0.0.1:{model_port}/v1"
api_key_env = "AELC_FAKE_KEY"
accepts = ["text"]
''')
    with open(os.path.join(project, "nodes", "echo.node.ael"), "w") as f:
        f.write(AGENT)
    with open(os.path.join(project, "prompts", "echo.md"), "w") as f:
        f.write("Echo {{ ask.text }}\n")
    store = "sqlite:" + os.path.join(work, "store.db")
    aelc("build", cwd=project)
    aelc("account", "add", "demo", "--store", store, cwd=project)
    aelc("fund", "demo", "1000000 EUR", "--store", store, cwd=project)
    aelc("mandate", "create", "demo/bench", "--budget", "1000000 EUR", "--threshold", "1 EUR",
         "--allow", "*", "--store", store, cwd=project)
    token = aelc("mandate", "token", "demo/bench", "--store", store, cwd=project).strip()
    return project, store, token


@contextlib.asynccontextmanager
async def sessions(kind, n, project, store, url, token):
    """`n` initialized client sessions over `kind`."""
    async with contextlib.AsyncExitStack() as stack:
        out = []
        for _ in range(n):
            if kind == "stdio":
                params = StdioServerParameters(
                    command=AELC,
                    args=["mcp", "--mandate", "demo/bench", "--built",
                          os.path.join(project, "target", "ael"), "--store", store],
                    env=ENV)
                read, write = await stack.enter_async_context(stdio_client(params))
            else:
                client = await stack.enter_async_context(
                    create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
                read, write = await stack.enter_async_context(
                    streamable_http_client(url, http_client=client))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            out.append(session)
        yield out


async def round_trips(kind, n, project, store, url, token):
    """Calls per second of `n` sessions calling one after another for SECONDS."""
    async with sessions(kind, n, project, store, url, token) as all_sessions:
        for s in all_sessions:
            warm = await s.call_tool("call_agent", CALL)
            if warm.is_error or warm.structured_content["status"] != "succeeded":
                raise SystemExit(f"the warm-up call failed over {kind}: {warm.content}")
        done = 0
        end = time.monotonic() + SECONDS

        async def loop(s):
            nonlocal done
            while time.monotonic() < end:
                r = await s.call_tool("call_agent", CALL)
                if r.is_error:
                    raise SystemExit(f"a call failed over {kind}: {r.content}")
                done += 1

        start = time.monotonic()
        await asyncio.gather(*(loop(s) for s in all_sessions))
        return done / (time.monotonic() - start)


def raw_session(url, token):
    """Opens an idle session with two plain requests (no stream held); its id."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "authorization": f"Bearer {token}"}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}}
    request = urllib.request.Request(url, json.dumps(init).encode(), headers)
    with urllib.request.urlopen(request) as response:
        session = response.headers["mcp-session-id"]
        response.read()
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    request = urllib.request.Request(
        url, json.dumps(ready).encode(),
        {**headers, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
    with urllib.request.urlopen(request) as response:
        response.read()
    return session


def spread(values):
    return f"{statistics.median(values):9.1f}  (min {min(values):.1f}, max {max(values):.1f})"


async def main():
    work = tempfile.mkdtemp(prefix="aelc-mcp-bench-")
    procs = []
    try:
        model_port = free_port()
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "..", "gateway", "fake_model.py"),
                                       str(model_port)]))
        wait_port(model_port)
        project, store, token = setup(work, model_port)
        port = free_port()
        limits = ["--mcp-max-sessions-per-token", str(max(IDLE, SESSIONS) + 8),
                  "--mcp-max-sessions", str(max(IDLE, SESSIONS) * 2 + 16)]
        serve = subprocess.Popen([AELC, "serve", "--built", os.path.join(project, "target", "ael"),
                                  "--addr", f"127.0.0.1:{port}", "--store", store, *limits],
                                 env=ENV, stdout=subprocess.DEVNULL)
        procs.append(serve)
        wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"

        rows = {}
        for _ in range(ROUNDS):
            for n in (1, SESSIONS):
                for kind in ("stdio", "http"):
                    rate = await round_trips(kind, n, project, store, url, token)
                    rows.setdefault((kind, n), []).append(rate)
        print(f"aelc: {AELC}; {ROUNDS} rounds of {SECONDS:g} s; call_agent round trips per second")
        for (kind, n), rates in rows.items():
            print(f"  {kind:5} {n:3} session(s): {spread(rates)}")

        before = rss_kib(serve.pid)
        ids = [raw_session(url, token) for _ in range(IDLE)]
        time.sleep(0.5)
        after = rss_kib(serve.pid)
        print(f"idle HTTP sessions: {len(ids)} opened; aelc serve RSS {before} KiB -> {after} KiB: "
              f"{(after - before) / len(ids):.1f} KiB per session")
        async with sessions("stdio", 1, project, store, url, token):
            children = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "mcp --mandate"],
                                      capture_output=True, text=True).stdout.split()
            stdio_rss = [rss_kib(int(p)) for p in children]
            print(f"idle stdio session: one aelc mcp process, RSS {stdio_rss} KiB")
    finally:
        for p in procs:
            p.terminate()
            with contextlib.suppress(Exception):
                p.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


asyncio.run(main())
