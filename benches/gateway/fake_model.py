"""A fake OpenAI-compatible model that answers at once (the gateway benchmark's model).

    python fake_model.py PORT    serve it (Starlette on uvicorn)
    python fake_model.py --body  print the answer it serves, for nginx to serve instead
                                 (bench.sh: a fake no slower than the gateway it measures)
"""
import json
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

ANSWER = json.dumps({"reply": "echoed"})


def chunk(delta, finish):
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


BODY = (chunk({"content": ANSWER}, None) + chunk({}, "stop")
        + "data: " + json.dumps({"id": "c", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5}})
        + "\n\ndata: [DONE]\n\n")


async def completions(request):
    await request.body()
    return Response(BODY, media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

if __name__ == "__main__" and sys.argv[1] == "--body":
    sys.stdout.write(BODY)
elif __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
