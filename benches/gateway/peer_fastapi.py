"""The common Python choice for the same gate: FastAPI + pydantic validating the echo agent's
input schema (`{"text": string ≤ 200 characters}`, no other field, not blank), with the same
API-key check against a hash. Refusals answer 422 with the errors, as the gateway does.

    python peer_fastapi.py PORT KEY
"""
import hashlib
import sys

import uvicorn
from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel, ConfigDict, Field, field_validator

KEY_SHA256 = hashlib.sha256(sys.argv[2].encode()).hexdigest()
app = FastAPI()


class Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(max_length=200)

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
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
