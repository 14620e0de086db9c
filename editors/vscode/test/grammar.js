// Snapshot tests of the TextMate grammars: each fixture under test/fixtures is tokenized with
// vscode-textmate (the engine VS Code runs) and compared to its committed `.tokens` dump.
// `AEL_BLESS=1 node test/grammar.js` rewrites the dumps (review the diff).
"use strict";
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const root = path.join(__dirname, "..");
const fixtures = path.join(__dirname, "fixtures");
const bless = process.env.AEL_BLESS === "1";

const grammars = {
  "source.ael": path.join(root, "syntaxes/ael.tmLanguage.json"),
  "text.ael.prompt.injection": path.join(root, "syntaxes/ael-prompt.injection.tmLanguage.json"),
};
// VS Code's Markdown grammar is not a dependency: prompts are tested on a bare stand-in,
// which is where the injection must do all the work anyway.
const markdown = { scopeName: "text.html.markdown", patterns: [] };

async function main() {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName === "text.html.markdown") return markdown;
      const file = grammars[scopeName];
      if (!file) return null;
      return vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
    },
    getInjections: (scopeName) =>
      scopeName === "text.html.markdown" ? ["text.ael.prompt.injection"] : [],
  });

  let failed = 0;
  const names = fs.readdirSync(fixtures).filter((n) => !n.endsWith(".tokens")).sort();
  for (const name of names) {
    const scope = name.endsWith(".md") ? "text.html.markdown" : "source.ael";
    const grammar = await registry.loadGrammar(scope);
    const text = fs.readFileSync(path.join(fixtures, name), "utf8");
    const dump = tokenize(grammar, text);
    const expectedFile = path.join(fixtures, name + ".tokens");
    if (bless) {
      fs.writeFileSync(expectedFile, dump);
      continue;
    }
    const expected = fs.existsSync(expectedFile) ? fs.readFileSync(expectedFile, "utf8") : "";
    if (dump !== expected) {
      failed++;
      console.error(`${name}: tokens differ from ${name}.tokens (AEL_BLESS=1 to rewrite)`);
      const got = dump.split("\n");
      const want = expected.split("\n");
      for (let i = 0; i < Math.max(got.length, want.length); i++) {
        if (got[i] !== want[i]) {
          console.error(`  first difference at line ${i + 1}:\n  - ${want[i]}\n  + ${got[i]}`);
          break;
        }
      }
    }
  }
  console.log(`grammar snapshots: ${names.length - failed}/${names.length} match`);
  process.exit(failed ? 1 : 0);
}

/// One line per token: its text and its scopes below the root, blank tokens left out.
function tokenize(grammar, text) {
  let stack = vsctm.INITIAL;
  const out = [];
  for (const line of text.split("\n")) {
    const result = grammar.tokenizeLine(line, stack);
    for (const token of result.tokens) {
      const piece = line.slice(token.startIndex, token.endIndex);
      if (piece.trim() === "") continue;
      out.push(`${JSON.stringify(piece)} ${token.scopes.slice(1).join(" ")}`);
    }
    stack = result.ruleStack;
  }
  return out.join("\n") + "\n";
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
