"""The pydantic v2 contender of `benches/decode.rs`: the spec's review types (the bounds of
`aelc_runtime::testing::review_types`) as pydantic models, timed on `Review.model_validate_json`
over the very payload bytes the Rust contenders read.

The bench starts this script once (`PYDANTIC_PYTHON=/path/to/python cargo bench -p aelc-runtime
--bench decode`) with a directory holding `<payload>.json` files, and then asks for one sample
per round, in turn with the Rust contenders: a line `<payload> <iterations>` on stdin is
answered by a line with the mean seconds per call. Every payload is validated once at start;
a payload pydantic refuses ends the script with its error (the comparison would mean nothing).
"""

import sys
import time
from pathlib import Path
from typing import Annotated, List, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints


def text(max_length: int):
    return Annotated[str, StringConstraints(max_length=max_length)]


def distinct(items: List[str]) -> List[str]:
    # `Set<Str<32>, 8>`: a repeated tag is an error, as in aelc (a Python `set` would drop it).
    if len(set(items)) != len(items):
        raise ValueError("a set holds distinct items")
    return items


class Strict(BaseModel):
    # Unknown fields are errors, as in aelc.
    model_config = ConfigDict(extra="forbid")


class Finding(Strict):
    line: Annotated[int, Field(ge=1, le=4294967295)]
    severity: Literal["low", "medium", "high"]
    message: text(500)
    suggestion: Optional[text(500)] = None
    tags: Annotated[List[text(32)], Field(max_length=8), AfterValidator(distinct)]


class Approve(Strict):
    kind: Literal["approve"]


class RequestChanges(Strict):
    kind: Literal["request_changes"]
    reasons: Annotated[List[text(200)], Field(min_length=1, max_length=20)]


class Comment(Strict):
    kind: Literal["comment"]
    text: text(1000)


Verdict = Annotated[Union[Approve, RequestChanges, Comment], Field(discriminator="kind")]


class Review(Strict):
    summary: text(2000)
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    findings: Annotated[List[Finding], Field(max_length=10000)]
    verdict: Verdict


def main() -> None:
    folder = Path(sys.argv[1])
    payloads = {p.stem: p.read_bytes() for p in sorted(folder.glob("*.json"))}
    for name, data in payloads.items():
        Review.model_validate_json(data)
    print("ready " + " ".join(payloads), flush=True)
    validate = Review.model_validate_json
    for line in sys.stdin:
        name, iterations = line.split()
        data = payloads[name]
        count = max(1, int(iterations))
        start = time.perf_counter()
        for _ in range(count):
            validate(data)
        print((time.perf_counter() - start) / count, flush=True)


if __name__ == "__main__":
    main()
