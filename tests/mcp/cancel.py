"""A `call_agent` the client gives up on, driven by the official Python SDK (tests/it/platform/hangup.rs):

    python cancel.py AELC PROJECT_DIR STORE_URL MANDATE

The client calls an agent whose model takes 3 s and stops waiting after one: the SDK sends
`notifications/cancelled` for the request. The call still ends on the server: its budget is
spent once (not held, not refunded) within a few seconds, seen through `get_budget` in the same
session; the Rust side then checks the receipt, the ledger and the open runs in the store.
"""

import asyncio
import sys
import time
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

AELC, PROJECT, STORE, MANDATE = sys.argv[1:5]


def check(condition, what):
    if not condition:
        raise SystemExit(f"broken expectation: {what}")


async def main():
    params = StdioServerParameters(
        command=AELC,
        args=["mcp", "--mandate", MANDATE, "--built", PROJECT + "/target/ael", "--store", STORE],
        env={"AELC_FAKE_KEY": "test-key", "AELC_LOG": "warn", "PATH": "/usr/bin:/bin"},
    )
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        gave_up = False
        try:
            await session.call_tool(
                "call_agent",
                {"agent": "acme/echo", "input": {"text": "[stall] cancel me"}},
                read_timeout_seconds=1.0,
            )
        except Exception as e:  # the SDK's timeout: it cancels the request on the wire
            gave_up = True
            print(f"the client gave up: {type(e).__name__}: {e}", file=sys.stderr)
        check(gave_up, "the call answered before the client gave up")
        # While the model works, the price is held against the budget.
        budget = (await session.call_tool("get_budget", {})).structured_content
        check(budget["reserved"] == "0.01", f"held while running: {budget}")
        deadline = time.monotonic() + 30
        while True:
            budget = (await session.call_tool("get_budget", {})).structured_content
            if budget["reserved"] == "0" and budget["spent"] == "0.01":
                break
            check(time.monotonic() < deadline, f"the cancelled call never settled: {budget}")
            await asyncio.sleep(0.1)


asyncio.run(main())
