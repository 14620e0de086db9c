"""The common Python choice for the same gate: FastAPI + pydantic validating the echo agent's
input schema (`{"text": string ≤ 200 characters, "locale": an optional code matching its
pattern}`, no other field, not blank), with the same
API-key check against a hash. Refusals answer 422 with the errors, as the gateway does.

    python peer_fastapi.py PORT KEY [WORKERS]

WORKERS uvicorn processes (default 1; `bench.sh` gives `$(nproc)`, so the peer uses every core
as the gateway does: one Python process runs on one core at a time). The workers import this
module afresh, so the key reaches them through the environment.
"""
import os
import hashlib
import sys

import uvicorn
from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel, ConfigDict, Field, field_validator

if __name__ == "__main__":
    os.environ["PEER_KEY"] = sys.argv[2]
KEY_SHA256 = hashlib.sha256(os.environ["PEER_KEY"].encode()).hexdigest()
app = FastAPI()


class Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=200)
    locale: str | None = Field(default=None, max_length=16, pattern=r"^[a-z]{2}(-[A-Z]{2})?$")

    @field_validator("text")
    @classmethod
    def not_blank(cls, v):
        if not v.strip():
            raise ValueError("the text is blank")
        return v


@app.post("/v1/agents/acme/echo/runs")
async def run(ask: Ask, authorization: str = Header()):
    if hashlib.sha256(authorization.removeprefix("Bearer ").encode()).hexdigest() != KEY_SHA256:
        raise HTTPException(401)
    return {"status": "succeeded", "output": {"reply": "echoed"}}


if __name__ == "__main__":
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    uvicorn.run(
        "peer_fastapi:app",
        app_dir=os.path.dirname(os.path.abspath(__file__)),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        workers=workers,
        log_level="warning",
    )
