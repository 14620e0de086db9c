// Starts `aelc-lsp` for `.ael` files, `ael.toml` and prompt templates.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("aelc").get("serverPath") || "aelc-lsp";
  const run = { command, transport: TransportKind.stdio };
  client = new LanguageClient(
    "aelc",
    "AEL language server",
    { run, debug: run },
    {
      documentSelector: [
        { scheme: "file", language: "ael" },
        { scheme: "file", pattern: "**/ael.toml" },
        // Prompt templates: the server checks their `{{ … }}` against the node's parameters.
        { scheme: "file", pattern: "**/prompts/**/*.md" },
      ],
    }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
