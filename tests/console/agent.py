"""An agent waiting for a human's yes while the human decides in the console (issue 44): two
MCP clients of the official Python SDK (`mcp` from PyPI) on the `/mcp` of a live `aelc serve`,
with a mandate token. Run by tests/it/platform/console.rs beside tests/console/browse.py:

    agent.py MCP_URL TOKEN

- The polling client declares no elicitation: it asks for two calls above the mandate's
  threshold (`approval_required`, two approval ids), prints them as one JSON line
  (`{"poll_yes": ID, "poll_no": ID}`) for the test to hand to the browser, then polls
  `check_approval` until the human has decided both. The approved one is then called with its
  approval and must run; the rejected one must stay rejected.
- The eliciting client declares elicitation and never answers the form (its human is away
  from that window): the call waits until the human approves it in the console, and must then
  run, with the open form withdrawn by the server.

Prints the names of the checks that passed as one JSON line at the end; exits non-zero on any
broken expectation.
"""

import asyncio
import contextlib
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
import mcp.types as types
from mcp.shared._httpx_utils import create_mcp_http_client

URL, TOKEN = sys.argv[1:3]
AGENT = "acme/pipeline"
# The human has this long to decide in the browser (the test's browser run takes ~20 s).
DECISION_TIMEOUT = 240
passed = []
seen = {"forms": 0, "withdrawn": 0}


def check(name, condition, detail=""):
    if not condition:
        raise SystemExit(f"broken expectation: {name}: {detail}")
    passed.append(name)


def structured(result):
    if result.is_error:
        raise SystemExit(f"a tool error: {result.content}")
    return result.structured_content


@contextlib.asynccontextmanager
async def session(callback=None):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(URL, http_client=client) as (read, write, *_):
            async with ClientSession(read, write, elicitation_callback=callback) as s:
                await s.initialize()
                yield s


async def away_from_the_form(context, params):
    """Shows the form and waits: nobody answers it here."""
    seen["forms"] += 1
    try:
        await asyncio.sleep(DECISION_TIMEOUT + 60)
    except asyncio.CancelledError:
        # The server withdrew the form (`notifications/cancelled`).
        seen["withdrawn"] += 1
        raise
    return types.ElicitResult(action="cancel")


async def elicited_call():
    async with session(away_from_the_form) as s:
        call = {"agent": AGENT, "input": {"text": "[ok] elicit approve"}}
        return structured(await s.call_tool("call_agent", call))


async def main():
    waiting = asyncio.create_task(elicited_call())
    async with session() as s:
        asked = {}
        for name, text in (("poll_yes", "[ok] poll approve"), ("poll_no", "[ok] poll reject")):
            first = structured(await s.call_tool("call_agent", {"agent": AGENT, "input": {"text": text}}))
            check(f"{name}_needs_approval", first["status"] == "approval_required", first)
            asked[name] = first["approval"]
        print(json.dumps(asked), flush=True)

        # Polled as an agent does, until the human has decided both in the console.
        states = {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DECISION_TIMEOUT
        while loop.time() < deadline:
            for name, approval in asked.items():
                states[name] = structured(
                    await s.call_tool("check_approval", {"approval": approval}))["state"]
            if "pending" not in states.values():
                break
            await asyncio.sleep(0.2)
        check("poll_saw_approved", states.get("poll_yes") == "approved", states)
        check("poll_saw_rejected", states.get("poll_no") == "rejected", states)

        done = structured(await s.call_tool("call_agent", {
            "agent": AGENT, "input": {"text": "[ok] poll approve"}, "approval": asked["poll_yes"]}))
        check("approved_call_ran", done["status"] == "succeeded", done)
        used = structured(await s.call_tool("check_approval", {"approval": asked["poll_yes"]}))
        check("approval_used_once", used["state"] == "used", used)
        again = await s.call_tool("call_agent", {
            "agent": AGENT, "input": {"text": "[ok] poll reject"}, "approval": asked["poll_no"]})
        check("rejected_call_refused", again.is_error, again.content)

    elicited = await asyncio.wait_for(waiting, timeout=DECISION_TIMEOUT)
    check("form_shown", seen["forms"] == 1, seen)
    check("elicited_call_ran_on_console_approval", elicited["status"] == "succeeded", elicited)
    check("form_withdrawn", seen["withdrawn"] == 1, seen)
    print(json.dumps(passed), flush=True)


asyncio.run(main())
