# Benchmark (issue 26), run by hand with a Python that has llguidance 1.9.1 (see .ci/run):
#   cargo build
#   for e in review invoice table-extract text-stats; do
#     target/debug/aelc build examples/$e --out /tmp/gr/$e; done
#   target/debug/aelc build benches/grammar-bounds --out /tmp/gr/grammar-bounds
#   python benches/grammars_llguidance.py --aelc target/debug/aelc /tmp/gr/*/
# (`benches/grammar-bounds` is a project whose output has every kind of bound; its build folder
# must keep that name, as each example's does: `--examples` says where the projects are.)
# For every emitted node under the given build folders, aelc's Lark grammar against llguidance's
# own JSON-schema path on the same node's output schema (`schemas/<node>.output.json`):
# - grammar size and compile time (a one-token-per-byte tokenizer, best of 20);
# - how many of 10,000 random out-of-bound answers each path lets through. The answers come
#   from the node's type (through its exact schema): a valid value with one bound broken — a
#   text one to three characters too long or too short, an integer or float just outside its
#   range, a field too many or missing, one list item or map entry too many or too few, a
#   repeated `Set` item, a bad enum name or tag, a pattern broken at the right length, a wrong
#   kind of value. Written compactly, fields in declared order. With `--aelc`, 20 answers per
#   node and samples of what each path lets through are checked with `aelc validate` (the
#   decoder), so a generator bug shows as "generator mistakes" rather than as a leak.
# Where llguidance refuses the schema outright, the keywords it names are stripped one at a
# time (`uniqueItems`, `propertyNames`, integer bounds beyond 2^53) and the stripped schema is
# measured; the table says what was stripped.

import argparse, copy, glob, json, os, random, re, subprocess, sys, tempfile, time
import llguidance as llg

try:
    import re._parser as sre_parse  # Python 3.11+
    from re._constants import (ANY, AT, BRANCH, CATEGORY, IN, LITERAL, MAX_REPEAT,
                               MIN_REPEAT, NEGATE, RANGE, SUBPATTERN)
except ImportError:  # older Pythons
    import sre_parse
    from sre_constants import (ANY, AT, BRANCH, CATEGORY, IN, LITERAL, MAX_REPEAT,
                               MIN_REPEAT, NEGATE, RANGE, SUBPATTERN)


class Bytes:
    # One token per byte, and an end-of-sequence token.
    def __init__(self):
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.eos_token_id = 256; self.bos_token_id = None; self.special_token_ids = [256]
    def __call__(self, s):
        return list(s if isinstance(s, bytes) else s.encode())

tok = llg.LLTokenizer(llg.TokenizerWrapper(Bytes()))



def inline_shared(schema, defs_path):
    """The node schema made self-contained, as `aelc schema` prints it: the shared definitions
    of `schemas/defs.json` it reaches (`defs.json#/$defs/K`) go into its own `$defs`."""
    prefix = "defs.json#/$defs/"
    if prefix not in json.dumps(schema):
        return schema
    shared = json.load(open(defs_path)).get("$defs", {})

    def refs(value, found):
        if isinstance(value, dict):
            for k, v in value.items():
                if k == "$ref" and isinstance(v, str):
                    found.append(v)
                elif k not in ("default", "const", "enum", "examples"):
                    refs(v, found)
        elif isinstance(value, list):
            for v in value:
                refs(v, found)
        return found

    def unescape(key):
        return key.replace("~1", "/").replace("~0", "~")

    wanted = [unescape(r[len(prefix):]) for r in refs(schema, []) if r.startswith(prefix)]
    copied = {}
    while wanted:
        key = wanted.pop()
        if key in copied:
            continue
        copied[key] = shared[key]
        wanted += [unescape(r[len("#/$defs/"):]) for r in refs(shared[key], []) if r.startswith("#/$defs/")]
    text = json.dumps(schema).replace('"' + prefix, '"#/$defs/')
    schema = json.loads(text)
    schema["$defs"] = dict(sorted(copied.items()))
    return schema

def compile_ms(grammar, runs=20):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        m = llg.LLMatcher(tok, grammar, log_level=0)
        m.compute_bitmask()
        dt = (time.perf_counter() - t) * 1000
        if m.is_error():
            return None, m.get_error()
        best = dt if best is None else min(best, dt)
    return best, None


def accepts(fresh, text):
    # A copy of a fresh matcher: `reset()` keeps an earlier error.
    matcher = fresh.deep_copy()
    ok = matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
    return bool(ok) and not matcher.is_error()


# ------------------------------------------------------------------ the JSON-schema path

def strip(schema, what):
    """A copy of `schema` without the keyword llguidance refused."""
    s = copy.deepcopy(schema)
    def walk(x):
        if isinstance(x, dict):
            if what in ("uniqueItems", "propertyNames"):
                x.pop(what, None)
            elif what == "big integer bounds" and x.get("type") == "integer":
                for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                    if k in x and abs(x[k]) > 2 ** 53:
                        x.pop(k)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(s)
    return s


def schema_grammar(schema):
    """The JSON-schema path's matcher, after stripping what llguidance refuses; also the list
    of what was stripped, or the error when even that does not compile."""
    stripped = []
    for what in ["", "uniqueItems", "propertyNames", "big integer bounds"]:
        if what:
            schema = strip(schema, what)
            stripped.append(what)
        try:
            g = llg.grammar_from("json_schema", json.dumps(schema))
            ms, err = compile_ms(g)
        except Exception as e:
            ms, err = None, str(e)
        if err is None:
            return g, ms, stripped, None
    return None, None, stripped, err


# ------------------------------------------------------------------ answers from the type

def resolve(root, s):
    while isinstance(s, dict) and "$ref" in s:
        s = root["$defs"][s["$ref"].split("/")[-1]]
    return s


def sample_regex(pattern, rng):
    """A random text matching `pattern` (the small regexes of `@pattern`)."""
    def gen(items):
        out = []
        for op, av in items:
            if op == LITERAL:
                out.append(chr(av))
            elif op == ANY:
                out.append("a")
            elif op == IN:
                choices = []
                negate = False
                for o, a in av:
                    if o == NEGATE:
                        negate = True
                    elif o == LITERAL:
                        choices.append(chr(a))
                    elif o == RANGE:
                        choices.extend(chr(c) for c in range(a[0], a[1] + 1))
                    elif o == CATEGORY:
                        choices.extend("0123456789" if "DIGIT" in str(a) else "abc")
                out.append("#" if negate else rng.choice(choices))
            elif op in (MAX_REPEAT, MIN_REPEAT):
                lo, hi, sub = av
                hi = min(hi, lo + 3)
                for _ in range(rng.randint(lo, hi)):
                    out.append(gen(sub))
            elif op == SUBPATTERN:
                out.append(gen(av[-1]))
            elif op == BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op == AT:
                pass
        return "".join(out)
    return gen(sre_parse.parse(pattern))


ALPHABET = "abcxyz019 éü😀\"\\\n"
FORMATS = {"date": "2024-02-29", "date-time": "2024-02-29T12:00:00Z", "email": "a@b.example",
           "uri": "https://example.com/x", "uuid": "123e4567-e89b-12d3-a456-426614174000"}


class Gen:
    """Valid values of a schema, remembering every place one bound could be broken."""

    def __init__(self, root, rng):
        self.root, self.rng, self.sites = root, rng, []

    def text(self, n):
        return "".join(self.rng.choice(ALPHABET) for _ in range(n))

    def count(self, lo, hi):
        hi = lo + 3 if hi is None else min(hi, lo + 3)
        return self.rng.randint(lo, hi)

    def value(self, s, holder, key, depth=0):
        s = resolve(self.root, s)
        rng = self.rng
        if "const" in s:
            v = s["const"]
        elif "enum" in s:
            v = rng.choice(s["enum"])
        elif "oneOf" in s or "anyOf" in s:
            arms = s.get("oneOf") or s.get("anyOf")
            arms = [a for a in arms if resolve(self.root, a).get("type") != "null"] or arms
            return self.value(rng.choice(arms), holder, key, depth)
        else:
            t = s.get("type")
            if isinstance(t, list):
                t = rng.choice([x for x in t if x != "null"] or t)
            if t == "boolean":
                v = rng.random() < 0.5
            elif t == "null":
                v = None
            elif t == "integer":
                lo, hi = int_bounds(s)
                lo, hi = max(lo, -10 ** 6) if hi > -10 ** 6 else lo, min(hi, 10 ** 6) if lo < 10 ** 6 else hi
                v = rng.choice([lo, hi, rng.randint(lo, hi)])
            elif t == "number":
                lo = s.get("minimum", s.get("exclusiveMinimum", -1000.0))
                hi = s.get("maximum", s.get("exclusiveMaximum", 1000.0))
                v = round(lo + (hi - lo) * rng.uniform(0.01, 0.99), 6)
            elif t == "string":
                if "pattern" in s:
                    v = sample_regex(s["pattern"], rng)
                elif "format" in s:
                    v = FORMATS.get(s["format"], "x")
                else:
                    v = self.text(self.count(s.get("minLength", 0), s.get("maxLength")))
            elif t == "array":
                v = []
                holder[key] = v
                n = self.count(s.get("minItems", 0), s.get("maxItems"))
                seen = set()
                for i in range(n * 4):
                    if len(v) == n:
                        break
                    v.append(None)
                    self.value(s.get("items", {}), v, len(v) - 1, depth + 1)
                    if s.get("uniqueItems"):
                        k = json.dumps(v[-1], sort_keys=True)
                        if k in seen:
                            v.pop()
                        seen.add(k)
            elif t == "object":
                v = {}
                holder[key] = v
                props = s.get("properties", {})
                required = set(s.get("required", []))
                for name, ps in props.items():
                    if name in required or rng.random() < 0.5:
                        v[name] = None
                        self.value(ps, v, name, depth + 1)
                extra = s.get("additionalProperties")
                if isinstance(extra, dict):
                    keys = {"type": "string", **(s.get("propertyNames") or {})}
                    n = self.count(s.get("minProperties", 0), s.get("maxProperties"))
                    for _ in range(n * 4):
                        if len(v) == n:
                            break
                        k = [None]
                        Gen(self.root, rng).value(keys, k, 0)
                        if isinstance(k[0], str) and k[0] not in v:
                            v[k[0]] = None
                            self.value(extra, v, k[0], depth + 1)
            else:
                v = None
        holder[key] = v
        self.sites.append((holder, key, s))
        return v


def int_bounds(s):
    lo = s.get("minimum", -2 ** 63)
    if "exclusiveMinimum" in s:
        lo = s["exclusiveMinimum"] + 1
    hi = s.get("maximum", 2 ** 64 - 1)
    if "exclusiveMaximum" in s:
        hi = s["exclusiveMaximum"] - 1
    return lo, hi


def breakings(g, holder, key, s):
    """The ways to break one bound of the value at `holder[key]` (kind, new value or None to
    delete the key)."""
    v, rng, out = holder[key], g.rng, []
    t = s.get("type")
    if "const" in s or "enum" in s:
        if isinstance(v, str):
            out.append(("bad enum name or tag", lambda: v + "X"))
    elif t == "integer":
        lo, hi = int_bounds(s)
        out.append(("integer out of range", lambda: rng.choice([lo - 1, hi + 1, hi + 1000])))
    elif t == "number" and any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        def outside():
            if "maximum" in s or "exclusiveMaximum" in s:
                return s.get("maximum", s.get("exclusiveMaximum")) + 0.5
            return s.get("minimum", s.get("exclusiveMinimum")) - 0.5
        out.append(("float out of range", outside))
    elif t == "string":
        if "maxLength" in s:
            out.append(("text too long", lambda: g.text(s["maxLength"] + rng.randint(1, 3))))
        if s.get("minLength", 0) > 0:
            out.append(("text too short", lambda: g.text(s["minLength"] - 1)))
        if "pattern" in s:
            def broken():
                for _ in range(50):
                    w = g.text(len(v))
                    if not re.search(s["pattern"], w):
                        return w
                return "#" * max(len(v), 1)
            out.append(("pattern broken", broken))
        if "format" in s:
            out.append(("format broken", lambda: "not a " + s["format"]))
    elif t == "array":
        if "maxItems" in s:
            def more():
                w = list(v)
                while len(w) <= s["maxItems"]:
                    k = [None]
                    g.value(s.get("items", {}), k, 0)
                    w.append(k[0])
                return w
            out.append(("one list item too many", more))
        if s.get("minItems", 0) > 0:
            out.append(("one list item too few", lambda: v[: s["minItems"] - 1]))
        if s.get("uniqueItems") and v:
            out.append(("Set item repeated", lambda: (v[:-1] if len(v) == s.get("maxItems") else v) + [v[0]]))
    elif t == "object":
        props = s.get("properties", {})
        extra = s.get("additionalProperties")
        if props and extra is False:
            out.append(("extra field", lambda: {**v, "zz_extra": 1}))
        missing = [p for p in s.get("required", []) if p in v]
        if missing:
            def without():
                gone = rng.choice(missing)
                return {k: x for k, x in v.items() if k != gone}
            out.append(("required field missing", without))
        if isinstance(extra, dict):
            if "maxProperties" in s:
                def more():
                    w = dict(v)
                    while len(w) <= s["maxProperties"]:
                        k = [None]
                        g.value(extra, k, 0)
                        w["k%d" % len(w)] = k[0]
                    return w
                out.append(("one map entry too many", more))
            names = resolve(g.root, s.get("propertyNames") or {})
            if v and ("maxLength" in names or "enum" in names):
                def bad_key():
                    w = dict(v)
                    x = w.pop(next(iter(w)))
                    w["Z" * (names.get("maxLength", 3) + 1)] = x
                    return w
                out.append(("bad map key", bad_key))
    if t in ("integer", "number", "string", "boolean"):
        out.append(("wrong kind of value", lambda: [] if t == "string" else "1"))
    return out


def out_of_bound(schema, rng):
    """One answer breaking exactly one bound, with the kind of breaking."""
    while True:
        g = Gen(schema, rng)
        top = [None]
        g.value(schema, top, 0)
        options = [(holder, key, kind, make)
                   for holder, key, s in g.sites
                   for kind, make in breakings(g, holder, key, s)]
        if not options:
            return None
        holder, key, kind, make = rng.choice(options)
        holder[key] = make()
        return json.dumps(top[0], ensure_ascii=False, separators=(",", ":")), kind


def decoder_accepts(aelc, project, node, text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run([aelc, "validate", node, "--output", f.name, "--project", project],
                           capture_output=True)
        if r.returncode not in (0, 1):
            sys.exit(f"aelc validate {node}: {r.stderr.decode()}")
        return r.returncode == 0
    finally:
        os.unlink(f.name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--answers", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--aelc", help="check samples of what each path lets through with aelc validate")
    ap.add_argument("--examples", default="examples", help="where the built projects are")
    ap.add_argument("--check", type=int, default=5, help="samples checked per node, kind and path")
    args = ap.parse_args()
    rows, notes, mistakes = [], [], 0
    for out in args.builds:
        # The build folder is named after the example it was built from.
        name = os.path.basename(os.path.normpath(out))
        project = next((p for p in (os.path.join(args.examples, name), os.path.join("benches", name))
                        if os.path.isdir(p)), None)
        for lark_path in sorted(glob.glob(os.path.join(out, "grammar", "*.lark"))):
            node = os.path.basename(lark_path)[:-5]
            lark = open(lark_path).read()
            schema_text = open(os.path.join(out, "schemas", node + ".output.json")).read()
            schema = inline_shared(json.loads(schema_text), os.path.join(out, "schemas", "defs.json"))
            lg = llg.grammar_from("lark", lark)
            lms, lerr = compile_ms(lg)
            sg, sms, stripped, serr = schema_grammar(schema)
            lm = llg.LLMatcher(tok, lg, log_level=0) if lerr is None else None
            sm = llg.LLMatcher(tok, sg, log_level=0) if sg is not None else None
            rng = random.Random(f"{args.seed}/{node}")
            through = {"lark": {}, "schema": {}}
            kinds = {}
            n, every = 0, []
            for _ in range(args.answers):
                made = out_of_bound(schema, rng)
                if made is None:
                    break
                text, kind = made
                n += 1
                every.append((kind, text))
                kinds[kind] = kinds.get(kind, 0) + 1
                for path, m in (("lark", lm), ("schema", sm)):
                    if m is not None and accepts(m, text):
                        through[path].setdefault(kind, []).append(text)
            # Samples of what got through, and of all answers, checked by the decoder.
            if args.aelc and project:
                for kind, text in rng.sample(every, min(4 * args.check, len(every))):
                    if decoder_accepts(args.aelc, project, node, text):
                        mistakes += 1
                        notes.append(f"{node}: the decoder accepts a sampled '{kind}' answer: {text[:120]}")
                for path in through:
                    for kind, texts in through[path].items():
                        sample = rng.sample(texts, min(args.check, len(texts)))
                        valid = [t for t in sample if decoder_accepts(args.aelc, project, node, t)]
                        if valid:
                            mistakes += len(valid)
                            notes.append(f"{node}: the decoder accepts {len(valid)}/{len(sample)} "
                                         f"sampled '{kind}' answers {path} let through, e.g. {valid[0][:120]}")
            count = lambda p: sum(len(t) for t in through[p].values())
            detail = lambda p: ", ".join(f"{k} {len(t)}/{kinds[k]}" for k, t in sorted(through[p].items()))
            fmt = lambda ms, err: f"{ms:.2f}" if ms is not None else "refused: " + err.splitlines()[0][:60]
            schema_ms = fmt(sms, serr) + (f" (without {', '.join(stripped)})" if stripped and sg else "")
            rows.append(f"| {node} | {len(lark)} | {fmt(lms, lerr)} | {count('lark') if lm else '—'} / {n} "
                        f"| {len(schema_text)} | {schema_ms} | {count('schema') if sm else '—'} / {n} |")
            if through["lark"]:
                notes.append(f"{node}, Lark lets through: {detail('lark')}")
            if through["schema"]:
                notes.append(f"{node}, JSON schema lets through: {detail('schema')}")
            print(f"{node}: answers by kind {kinds}", file=sys.stderr)
    print("| node | Lark bytes | Lark compile ms | Lark lets through | schema bytes | JSON-schema compile ms | JSON schema lets through |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    for n in notes:
        print("- " + n)
    if args.aelc:
        print(f"\nSampled let-throughs the decoder accepts (generator mistakes): {mistakes}")


if __name__ == "__main__":
    main()
