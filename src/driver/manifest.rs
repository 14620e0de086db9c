//! A lenient reader of `ael.toml`: package, bindings and limits, whatever else is wrong.
//!
//! The located loader of `crate::project` reports every error and gives no configuration when
//! there is one; the driver then falls back on this reader, so that sema still knows the
//! bindings that are declared and does not report each `binding("…")` a second time.

use toml::de::{DeTable, DeValue};

use crate::diagnostics::Diagnostic;
use crate::ir;
use crate::sema::ProjectInfo;
use crate::span::FileId;

pub(super) fn load(_file: FileId, text: &str) -> (ProjectInfo, Vec<Diagnostic>) {
    let mut info = ProjectInfo::default();
    let Ok(table) = DeTable::parse(text) else {
        return (info, Vec::new());
    };
    let table = table.get_ref();
    if let Some(package) = table.get("package").and_then(|p| p.get_ref().as_table()) {
        info.package.name = string(package, "name").unwrap_or_default();
        info.package.version = string(package, "version").unwrap_or_default();
        info.package.description = string(package, "description");
    }
    if let Some(bindings) = table.get("bindings").and_then(|b| b.get_ref().as_table()) {
        for (name, value) in bindings.iter() {
            let Some(b) = value.get_ref().as_table() else {
                continue;
            };
            let accepts = b
                .get("accepts")
                .and_then(|a| a.get_ref().as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.get_ref().as_str().and_then(ir::PartKind::parse))
                        .collect()
                })
                .unwrap_or_else(|| vec![ir::PartKind::Text]);
            info.bindings.push(ir::Binding {
                name: name.get_ref().to_string(),
                // Unknown here is reported by the located loader; replay calls nothing.
                provider: string(b, "provider")
                    .and_then(|p| ir::Provider::parse(&p))
                    .unwrap_or(ir::Provider::Replay),
                model: string(b, "model").unwrap_or_default(),
                base_url: string(b, "base_url"),
                api_key_env: string(b, "api_key_env"),
                accepts,
                price: price(b, text),
                constrain: string(b, "constrain"),
            });
        }
    }
    if let Some(limits) = table.get("limits").and_then(|l| l.get_ref().as_table()) {
        if let Some(DeValue::Integer(i)) = limits.get("max_input_bytes").map(|v| v.get_ref()) {
            if let Ok(v) = i.as_str().replace('_', "").parse::<u64>() {
                info.limits.max_input_bytes = v;
            }
        }
    }
    (info, Vec::new())
}

fn string(table: &DeTable<'_>, key: &str) -> Option<String> {
    table
        .get(key)
        .and_then(|v| v.get_ref().as_str())
        .map(str::to_owned)
}

/// `price = { input_per_mtok = 0.15, output_per_mtok = 0.60, currency = "EUR" }`, the amounts
/// exactly as written (no float round trip); `None` when any part is missing or malformed.
fn price(binding: &DeTable<'_>, text: &str) -> Option<ir::Price> {
    let table = binding.get("price")?.get_ref().as_table()?;
    let amount = |key: &str| -> Option<String> {
        let value = table.get(key)?;
        match value.get_ref() {
            DeValue::Integer(_) | DeValue::Float(_) => {
                let written = text.get(value.span())?.replace('_', "");
                let plain = !written.is_empty()
                    && written.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && written.matches('.').count() <= 1;
                plain.then_some(written)
            }
            DeValue::String(s) => Some(s.to_string()),
            _ => None,
        }
    };
    Some(ir::Price {
        input_per_mtok: amount("input_per_mtok")?,
        output_per_mtok: amount("output_per_mtok")?,
        currency: string(table, "currency")?,
    })
}
