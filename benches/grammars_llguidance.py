# Benchmark (issue 26), run by hand: build the examples, then
#   for e in review invoice table-extract text-stats; do aelc build examples/$e --out /tmp/gr/$e; done
#   python benches/grammars_llguidance.py /tmp/gr/*/   (a Python with llguidance 1.9.1)
# Compile times use a one-token-per-byte tokenizer, best of 20.
# Grammar size and llguidance compile time: aelc's Lark grammar vs llguidance's own JSON-schema
# path on the same node's output schema, for every emitted node under the given build folders.

import glob, json, os, sys, time
import llguidance as llg

class Bytes:
    def __init__(self):
        self.tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        self.eos_token_id = 256; self.bos_token_id = None; self.special_token_ids = [256]
    def __call__(self, s):
        return list(s if isinstance(s, bytes) else s.encode())

tok = llg.LLTokenizer(llg.TokenizerWrapper(Bytes()))

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

print("| node | Lark bytes | Lark compile ms | schema bytes | JSON-schema compile ms |")
print("|---|---|---|---|---|")
for out in sys.argv[1:]:
    for lark_path in sorted(glob.glob(os.path.join(out, "grammar", "*.lark"))):
        node = os.path.basename(lark_path)[:-5]
        lark = open(lark_path).read()
        schema = open(os.path.join(out, "schemas", node + ".output.json")).read()
        lms, lerr = compile_ms(llg.grammar_from("lark", lark))
        try:
            sms, serr = compile_ms(llg.grammar_from("json_schema", schema))
        except Exception as e:
            sms, serr = None, str(e)
        fmt = lambda ms, err: f"{ms:.2f}" if ms is not None else "refused: " + err.splitlines()[0][:60]
        print(f"| {node} | {len(lark)} | {fmt(lms, lerr)} | {len(schema)} | {fmt(sms, serr)} |")
