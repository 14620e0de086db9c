"""Checks model-facing schema variants with each provider's own Python SDK.

Run by tests/it/codegen_model.rs with the Python of AELC_PROVIDER_SDK_PYTHON (.ci/run installs
`openai`, `anthropic` and `google-genai` into it). Reads a JSON list of
{"file": ..., "provider": "openai"|"anthropic"|"gemini", "variant": ...} on stdin and prints
one JSON object: the SDK versions, how many variants each SDK checked, and every failure.

- openai: a strict variant must be a fixed point of the SDK's own strict-schema pass
  (`openai.lib._pydantic._ensure_strict_json_schema`, what `client.chat.completions.parse`
  sends), and every schema in it must say its `type` (or be an `anyOf`/`$ref`), as the API
  demands ("schema must have a 'type' key").
- anthropic: the variant must be a fixed point of `anthropic.lib._parse._transform.transform_schema`
  (what the SDK sends as `output_config.format`), so the SDK strips nothing.
- gemini: the variant must validate as `google.genai.types.JSONSchema` (unknown fields are
  refused), convert with `types.Schema.from_json_schema(..., raise_error_on_unsupported_field=True)`
  and be taken by `types.GenerateContentConfig(response_json_schema=...)`.
"""

import copy
import json
import sys
from importlib.metadata import version

from anthropic.lib._parse._transform import transform_schema
from google.genai import types
from openai.lib._pydantic import _ensure_strict_json_schema


def subschemas(schema, path=""):
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs"):
        for name, child in (schema.get(key) or {}).items():
            yield from subschemas(child, f"{path}/{key}/{name}")
    if isinstance(schema.get("items"), dict):
        yield from subschemas(schema["items"], f"{path}/items")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, arm in enumerate(schema.get(key) or []):
            yield from subschemas(arm, f"{path}/{key}/{i}")


def check_openai(variant):
    problems = []
    schema = variant["schema"]
    if schema.get("type") != "object":
        problems.append("the root is not an object")
    if not variant.get("strict"):
        return problems
    strict = copy.deepcopy(schema)
    strict = _ensure_strict_json_schema(strict, path=(), root=strict)
    if strict != schema:
        problems.append("the SDK's strict pass changes the schema")
    for path, sub in subschemas(schema):
        if not ("type" in sub or "anyOf" in sub or "$ref" in sub):
            problems.append(f"{path or '/'}: no `type`")
        if "$ref" in sub and len([k for k in sub if k != "$defs"]) > 1:
            problems.append(f"{path}: `$ref` with siblings")
    return problems


def check_anthropic(variant):
    transformed = transform_schema(copy.deepcopy(variant))
    if transformed != variant:
        return [f"transform_schema changes it: {json.dumps(transformed)[:400]}"]
    return []


def check_gemini(variant):
    problems = []
    try:
        parsed = types.JSONSchema.model_validate(variant)
        types.Schema.from_json_schema(
            json_schema=parsed,
            api_option="GEMINI_API",
            raise_error_on_unsupported_field=True,
        )
        types.GenerateContentConfig(
            response_mime_type="application/json", response_json_schema=variant
        )
    except Exception as error:  # the SDK's refusal, whatever its type
        problems.append(f"{type(error).__name__}: {str(error)[:400]}")
    for path, sub in subschemas(variant):
        if "$ref" in sub or "$defs" in sub:
            problems.append(f"{path}: a reference")
    return problems


CHECKS = {"openai": check_openai, "anthropic": check_anthropic, "gemini": check_gemini}


def main():
    items = json.load(sys.stdin)
    checked = {name: 0 for name in CHECKS}
    failures = []
    for item in items:
        provider = item["provider"]
        try:
            problems = CHECKS[provider](item["variant"])
        except Exception as error:
            problems = [f"the SDK raised {type(error).__name__}: {str(error)[:400]}"]
        checked[provider] += 1
        failures.extend(f"{item['file']}: {p}" for p in problems)
    print(
        json.dumps(
            {
                "versions": {
                    name: version(name) for name in ("openai", "anthropic", "google-genai")
                },
                "checked": checked,
                "failures": failures,
            }
        )
    )


if __name__ == "__main__":
    main()
