//! Compiling an emitted `schemas/` file as a validator that loads files by path does: the
//! node schemas refer to `schemas/defs.json` (`defs.json#/$defs/…`, relative to the file), so
//! `defs.json` is registered beside the document's own location.

use serde_json::Value;

/// Where the tests pretend the output folder is: any absolute URI does, as references are
/// relative.
const BASE: &str = "file:///project/target/ael/schemas/";

/// A validator of the `schemas/` document `schema`, its shared definitions from `defs` (the
/// content of `schemas/defs.json`).
pub fn file_validator(schema: &Value, defs: &Value) -> Result<jsonschema::Validator, String> {
    let registry = jsonschema::Registry::new()
        .add(format!("{BASE}defs.json"), defs.clone())
        .and_then(|r| r.prepare())
        .map_err(|e| e.to_string())?;
    jsonschema::draft202012::options()
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .with_base_uri(format!("{BASE}node.json"))
        .with_registry(&registry)
        .build(schema)
        .map_err(|e| e.to_string())
}
