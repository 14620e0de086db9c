# Sourced by the gateway benches (bench.sh, callgrind.sh): the echo project they serve, an
# input with an `@pattern` field, a check, and one agent calling the model at 127.0.0.1:PORT.
echo_project() { # $1 the folder to write it in, $2 the model's port, $3 the aelc that builds it
  local dir="$1" port="$2" aelc="$3"
  mkdir -p "$dir/nodes" "$dir/prompts"
  cat > "$dir/ael.toml" <<TOML
[package]
name = "acme/echo"
version = "0.1.0"

[bindings.m]
provider = "openai"
model = "fake"
base_url = "http://127.0.0.1:$port/v1"
api_key_env = "AELC_FAKE_KEY"
accepts = ["text"]

[limits]
max_input_bytes = 2048
TOML
  cat > "$dir/nodes/echo.node.ael" <<'AEL'
/// What to echo.
struct Ask {
    /// The text.
    text: Str<200>,
    /// The reader's language.
    locale: Option<Str<16>> @pattern(r"^[a-z]{2}(-[A-Z]{2})?$"),
}

/// The echo.
struct Echo {
    /// The reply.
    reply: Str<200>,
}

errors EchoError {
    /// The text is blank.
    blank,
}

check not_blank(ask: Ask) fails EchoError {
    require ask.text.trim().len() > 0 else blank "the text is blank";
}

/// Echoes a text.
agent echo(ask: Ask) -> Echo fails EchoError {
    config {
        prompt: file("prompts/echo.md");
        model: binding("m");
    }
    input { check not_blank; }
    publish {
        capability: "text.echo";
        price: 0.000001 EUR;
    }
}
AEL
  echo 'Echo this: {{ ask.text }}' > "$dir/prompts/echo.md"
  (cd "$dir" && "$aelc" build >/dev/null 2>&1)
}
