"""Two MCP sessions of one mandate on one store, driven by the official Python SDK
(tests/it/platform.rs, tests/it/platform/mcp_http.rs):

    python concurrency.py AELC PROJECT_DIR STORE_URL [URL]

Without URL each session is an `aelc mcp` process over stdio; with URL (the `/mcp` of a running
`aelc serve`) each is a Streamable HTTP session, all of a mandate's sessions on one token.

- the seed's race: while a long call_agent runs in one session, the human approves another
  call with `aelc approve` in another process; the approval survives (20 rounds);
- 20 concurrent calls from two sessions on the last cents of one mandate: exactly what the
  budget allows runs;
- receipts and approvals are seen only under their own mandate;
- an expired mandate refuses everything, saying so.
"""

import asyncio
import json
import subprocess
import sys
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

AELC, PROJECT, STORE = sys.argv[1:4]
URL = sys.argv[4] if len(sys.argv) > 4 else None
report = {"transport": "http" if URL else "stdio"}
# One token per mandate over HTTP: every session of a mandate carries the same one.
tokens = {}


def check(condition, what):
    if not condition:
        print(json.dumps(report, indent=1), file=sys.stderr)
        raise SystemExit(f"broken expectation: {what}")


def token(mandate):
    if mandate not in tokens:
        # A day: the token outlives an expired mandate, whose tools must say it expired.
        made = subprocess.run([AELC, "mandate", "token", mandate, "--expires", "1d",
                               "--store", STORE], check=True, capture_output=True, text=True)
        tokens[mandate] = made.stdout.strip()
    return tokens[mandate]


async def server(stack, mandate):
    if URL:
        client = await stack.enter_async_context(
            create_mcp_http_client(headers={"Authorization": f"Bearer {token(mandate)}"}))
        read, write = await stack.enter_async_context(
            streamable_http_client(URL, http_client=client))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session
    params = StdioServerParameters(
        command=AELC,
        args=["mcp", "--mandate", mandate, "--built", PROJECT + "/target/ael", "--store", STORE],
        env={"AELC_FAKE_KEY": "test-key", "AELC_LOG": "warn", "PATH": "/usr/bin:/bin"},
    )
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def data(result):
    check(not result.is_error, f"a tool error: {result.content}")
    return result.structured_content


async def race():
    async with AsyncExitStack() as stack:
        first = await server(stack, "demo/sandbox")
        second = await server(stack, "demo/sandbox")
        survived = 0
        for i in range(20):
            asked = data(await second.call_tool(
                "call_agent", {"agent": "acme/pipeline", "input": {"text": f"[ok] job {i}"}}))
            check(asked["status"] == "approval_required", f"round {i}: {asked}")
            approval = asked["approval"]
            long_call = asyncio.create_task(first.call_tool(
                "call_agent", {"agent": "acme/echo", "input": {"text": f"[slow] {i}"}}))
            await asyncio.sleep(0.05)
            approve = await asyncio.create_subprocess_exec(
                AELC, "approve", approval, "--no-run", "--store", STORE,
                stdout=asyncio.subprocess.DEVNULL)
            check(await approve.wait() == 0, "aelc approve succeeded")
            slow = data(await long_call)
            check(slow["status"] == "succeeded", f"the long call: {slow}")
            state = data(await first.call_tool("check_approval", {"approval": approval}))
            if state["state"] == "approved":
                survived += 1
        report["race"] = {"rounds": 20, "approvals_survived": survived}
        check(survived == 20, f"approvals lost: {20 - survived}")


async def budget():
    async with AsyncExitStack() as stack:
        a = await server(stack, "demo/tight")
        b = await server(stack, "demo/tight")
        calls = [s.call_tool("call_agent", {"agent": "acme/echo", "input": {"text": f"[slow] {n}"}})
                 for n in range(10) for s in (a, b)]
        results = await asyncio.gather(*calls)
        ok = sum(1 for r in results if not r.is_error and r.structured_content["status"] == "succeeded")
        refused = [r.content[0].text for r in results if r.is_error]
        spent = data(await a.call_tool("get_budget", {}))
        report["budget"] = {"succeeded": ok, "refused": len(refused), "spent": spent["spent"],
                            "a_refusal": refused[:1]}
        check(ok == 5, f"exactly the budget's five calls ran: {ok}")
        check(spent["spent"] == "0.05" and spent["remaining"] == "0", f"spent: {spent}")
        check(all("budget" in r for r in refused), f"refusals name the budget: {refused[:3]}")


async def receipts():
    async with AsyncExitStack() as stack:
        sandbox = await server(stack, "demo/sandbox")
        tight = await server(stack, "demo/tight")
        ran = data(await sandbox.call_tool(
            "call_agent", {"agent": "acme/echo", "input": {"text": "[ok] mine"}}))
        check(ran["status"] == "succeeded", f"the sandbox's call: {ran}")
        mine = await sandbox.call_tool("get_receipt", {"receipt": ran["receipt"]})
        check(not mine.is_error, "a mandate reads its own receipt")
        theirs = await tight.call_tool("get_receipt", {"receipt": ran["receipt"]})
        check(theirs.is_error and "under this mandate" in theirs.content[0].text,
              "another mandate's receipt is not found")
        asked = data(await sandbox.call_tool(
            "call_agent", {"agent": "acme/pipeline", "input": {"text": "[ok] big"}}))
        check(asked["status"] == "approval_required", f"an approval: {asked}")
        other = await tight.call_tool("check_approval", {"approval": asked["approval"]})
        check(other.is_error, "another mandate's approval is not found")
        report["receipts"] = {"refused": theirs.content[0].text}


async def expired():
    async with AsyncExitStack() as stack:
        s = await server(stack, "demo/old")
        found = data(await s.call_tool("search_agents", {}))
        check(found["agents"] == [], "an expired mandate allows nothing")
        check(all("expired" in e["reason"] for e in found["excluded"]), f"why: {found['excluded']}")
        call = await s.call_tool("call_agent", {"agent": "acme/echo", "input": {"text": "[ok] x"}})
        check(call.is_error and "expired" in call.content[0].text, "a call says the mandate expired")
        report["expired"] = call.content[0].text


async def main():
    await race()
    await budget()
    await receipts()
    await expired()
    print(json.dumps(report))


asyncio.run(main())
