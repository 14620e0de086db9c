//! JSON Schemas (draft 2020-12) of node inputs and outputs, from the bounded types (spec §3, §4,
//! §9).
//!
//! The schema of a type says exactly what its decoder accepts (spec §4), so every bound of the
//! type is written: `maxLength`/`minLength`, `minimum`/`maximum`/`exclusiveMaximum`,
//! `maxItems`/`minItems`/`uniqueItems`, `maxProperties`/`minProperties`/`propertyNames`,
//! `pattern`, `format`; every object has `additionalProperties: false` (a map's is the value
//! schema); `Option` fields are left out of `required` and accept `null`.
//!
//! Named types go into `$defs` under their name, or `module.path.Name` when two modules
//! declare the same name (so keys do not depend on which node is emitted). The root type is
//! written inline so that the document's top level says what it is (providers require an object
//! there); it is also in `$defs` only when something inside refers back to it.
//!
//! Output is deterministic: keys are built in a fixed order (serde_json keeps insertion order),
//! and `$defs` is sorted by key.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aelc_runtime::media::{content_type_prefix, MEDIA_FIELDS};
use aelc_runtime::ty::{
    DefId, DefKind, FieldTy, FloatKind, FloatTy, IntTy, MediaKind, MediaTy, StrTy, Ty, TypeDef,
    TypeTable, VariantTy,
};
use serde_json::{json, Map, Value};

use crate::ir::size::media_bounds;
use crate::ir::{NodeIr, Param, Program};

/// The `$schema` of every emitted document.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The unique `$defs` key of every named type of a program.
#[derive(Clone, Debug, Default)]
pub struct DefKeys {
    keys: Vec<String>,
}

impl DefKeys {
    /// Keys for every definition: the bare name when it is unique in the program, else the
    /// module path with `.` for `::` before it (`nodes.review.Finding`). Should two definitions
    /// still collide (same module and name, which sema rejects), the later gets `_2`, `_3`, ….
    pub fn new(types: &TypeTable) -> DefKeys {
        let mut name_count: HashMap<&str, usize> = HashMap::new();
        for def in &types.defs {
            *name_count.entry(def.name.as_str()).or_default() += 1;
        }
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let mut keys = Vec::with_capacity(types.defs.len());
        for def in &types.defs {
            let base = if name_count.get(def.name.as_str()).copied().unwrap_or(0) > 1
                && !def.module.is_empty()
            {
                format!("{}.{}", def.module.replace("::", "."), def.name)
            } else {
                def.name.clone()
            };
            let mut key = base.clone();
            let mut n = 2;
            while taken.contains(&key) {
                key = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(key.clone());
            keys.push(key);
        }
        DefKeys { keys }
    }

    pub fn key(&self, def: DefId) -> &str {
        self.keys
            .get(def.0 as usize)
            .map_or("unknown", String::as_str)
    }
}

/// Builds schemas for one program; collects the definitions each document refers to.
pub struct SchemaBuilder<'a> {
    types: &'a TypeTable,
    keys: &'a DefKeys,
    used: BTreeSet<DefId>,
}

impl<'a> SchemaBuilder<'a> {
    pub fn new(types: &'a TypeTable, keys: &'a DefKeys) -> SchemaBuilder<'a> {
        SchemaBuilder {
            types,
            keys,
            used: BTreeSet::new(),
        }
    }

    /// A complete document for `ty`: `$schema`, `title`, `description`, the type's schema
    /// inline, and `$defs`.
    pub fn document(mut self, title: &str, description: Option<&str>, ty: &Ty) -> Value {
        let body = self.inline(ty);
        self.finish(title, description, body)
    }

    /// The input document of a node (spec §4): the single parameter's value, or an object with
    /// one field per parameter.
    pub fn input_document(mut self, node: &NodeIr) -> Value {
        let title = format!("{} input", node.name);
        match node.params.as_slice() {
            [only] => {
                let description = self.ty_docs(&only.ty).map(str::to_owned);
                let body = self.inline(&only.ty);
                self.finish(&title, description.as_deref(), body)
            }
            params => {
                let body = self.params_object(params);
                self.finish(&title, node.docs.as_deref(), body)
            }
        }
    }

    /// The output document of a node.
    pub fn output_document(mut self, node: &NodeIr) -> Value {
        let title = format!("{} output", node.name);
        let description = self.ty_docs(&node.output).map(str::to_owned);
        let body = self.inline(&node.output);
        self.finish(&title, description.as_deref(), body)
    }

    fn finish(mut self, title: &str, description: Option<&str>, body: Value) -> Value {
        let mut doc = Map::new();
        doc.insert("$schema".into(), json!(DRAFT_2020_12));
        doc.insert("title".into(), json!(title));
        if let Some(d) = description {
            doc.insert("description".into(), json!(d));
        }
        if let Value::Object(body) = body {
            for (k, v) in body {
                // The body's own title (a type name) yields to the document's.
                if k == "title" || (k == "description" && doc.contains_key("description")) {
                    continue;
                }
                doc.insert(k, v);
            }
        }
        let defs = self.defs();
        if !defs.is_empty() {
            doc.insert("$defs".into(), Value::Object(defs));
        }
        Value::Object(doc)
    }

    /// Every definition referred to so far, and those they refer to, sorted by key.
    fn defs(&mut self) -> Map<String, Value> {
        let mut done: BTreeMap<String, Value> = BTreeMap::new();
        let mut seen: BTreeSet<DefId> = BTreeSet::new();
        loop {
            let pending: Vec<DefId> = self.used.difference(&seen).copied().collect();
            if pending.is_empty() {
                break;
            }
            for id in pending {
                seen.insert(id);
                if let Some(def) = self.types.get(id) {
                    let schema = self.def_schema(def);
                    done.insert(self.keys.key(id).to_owned(), schema);
                }
            }
        }
        done.into_iter().collect()
    }

    /// The docs of the type a `Ty` names, if it names one.
    fn ty_docs(&self, ty: &Ty) -> Option<&'a str> {
        match ty {
            Ty::Ref { def } => self.types.get(*def)?.docs.as_deref(),
            _ => None,
        }
    }

    /// The schema of `ty`, with a named type's body written out rather than referenced.
    fn inline(&mut self, ty: &Ty) -> Value {
        match ty {
            Ty::Ref { def } => match self.types.get(*def) {
                Some(d) => self.def_schema(d),
                None => self.ty(ty),
            },
            _ => self.ty(ty),
        }
    }

    /// The object of a node with several parameters: one required field per parameter (an
    /// `Option` parameter may be absent).
    fn params_object(&mut self, params: &[Param]) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in params {
            let schema = self.ty(&p.ty);
            properties.insert(p.name.clone(), schema);
            if !matches!(p.ty, Ty::Option { .. }) {
                required.push(json!(p.name));
            }
        }
        object(properties, required)
    }

    /// The schema of one type, referring to named types with `$ref`.
    pub fn ty(&mut self, ty: &Ty) -> Value {
        match ty {
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Int(int) => int_schema(int),
            Ty::Float(float) => float_schema(float),
            Ty::Str(s) => str_schema(s),
            Ty::List(list) => {
                let mut m = Map::new();
                m.insert("type".into(), json!("array"));
                m.insert("items".into(), self.ty(&list.item));
                if list.min > 0 {
                    m.insert("minItems".into(), json!(list.min));
                }
                m.insert("maxItems".into(), json!(list.max));
                if list.unique {
                    m.insert("uniqueItems".into(), json!(true));
                }
                Value::Object(m)
            }
            Ty::Map(map) => {
                let mut m = Map::new();
                m.insert("type".into(), json!("object"));
                m.insert("propertyNames".into(), self.ty(&map.key));
                m.insert("additionalProperties".into(), self.ty(&map.value));
                if map.min > 0 {
                    m.insert("minProperties".into(), json!(map.min));
                }
                m.insert("maxProperties".into(), json!(map.max));
                Value::Object(m)
            }
            Ty::Option { some } => json!({"anyOf": [self.ty(some), {"type": "null"}]}),
            Ty::Ref { def } => {
                self.used.insert(*def);
                json!({"$ref": format!("#/$defs/{}", escape_pointer(self.keys.key(*def)))})
            }
            Ty::Media(media) => media_schema(media),
        }
    }

    fn def_schema(&mut self, def: &TypeDef) -> Value {
        let mut m = Map::new();
        m.insert("title".into(), json!(def.name));
        if let Some(d) = &def.docs {
            m.insert("description".into(), json!(d));
        }
        let body = match &def.kind {
            DefKind::Struct { fields } => self.fields_object(None, fields),
            DefKind::Alias { ty } => self.ty(ty),
            DefKind::Enum { tag, variants } => {
                if variants.iter().all(|v| v.fields.is_none()) {
                    unit_enum_schema(variants)
                } else {
                    let arms: Vec<Value> =
                        variants.iter().map(|v| self.variant_arm(tag, v)).collect();
                    json!({"oneOf": arms})
                }
            }
        };
        merge_under(m, body)
    }

    /// One arm of a data enum: an object whose tag field is pinned with `const`.
    fn variant_arm(&mut self, tag: &str, variant: &VariantTy) -> Value {
        let mut m = Map::new();
        m.insert("title".into(), json!(variant.name));
        if let Some(d) = &variant.docs {
            m.insert("description".into(), json!(d));
        }
        let fields = variant.fields.as_deref().unwrap_or_default();
        let body = self.fields_object(Some((tag, &variant.name)), fields);
        merge_under(m, body)
    }

    /// A closed object of `fields`, led by a pinned tag when it is a data-enum arm.
    fn fields_object(&mut self, tag: Option<(&str, &str)>, fields: &[FieldTy]) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        if let Some((tag, name)) = tag {
            properties.insert(tag.to_owned(), json!({"const": name}));
            required.push(json!(tag));
        }
        for field in fields {
            let mut schema = self.ty(&field.ty);
            if let Value::Object(s) = &mut schema {
                if let Some(d) = &field.docs {
                    s.insert("description".into(), json!(d));
                }
                if let Some(default) = &field.default {
                    s.insert("default".into(), (**default).clone());
                }
            }
            properties.insert(field.name.clone(), schema);
            if field.is_required() {
                required.push(json!(field.name));
            }
        }
        object(properties, required)
    }
}

/// `{"type":"object","properties":…,"required":…,"additionalProperties":false}`.
fn object(properties: Map<String, Value>, required: Vec<Value>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("object"));
    m.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        m.insert("required".into(), Value::Array(required));
    }
    m.insert("additionalProperties".into(), json!(false));
    Value::Object(m)
}

/// `head` (title, description) followed by the keys of `body`.
fn merge_under(mut head: Map<String, Value>, body: Value) -> Value {
    if let Value::Object(body) = body {
        for (k, v) in body {
            head.insert(k, v);
        }
    }
    Value::Object(head)
}

fn unit_enum_schema(variants: &[VariantTy]) -> Value {
    let names: Vec<Value> = variants.iter().map(|v| json!(v.name)).collect();
    let mut m = Map::new();
    m.insert("type".into(), json!("string"));
    m.insert("enum".into(), Value::Array(names));
    Value::Object(m)
}

/// A JSON number for an integer bound (every bound fits `i64` or `u64`).
pub fn int_json(v: i128) -> Value {
    // The runtime's rule, which the Gemini variant also uses for its inclusive bounds.
    aelc_runtime::model_schema::int_json(v).to_value()
}

fn int_schema(int: &IntTy) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("integer"));
    m.insert("minimum".into(), int_json(int.min));
    if int.max_exclusive {
        m.insert("exclusiveMaximum".into(), int_json(int.max));
    } else {
        m.insert("maximum".into(), int_json(int.max));
    }
    Value::Object(m)
}

/// The largest finite `f32`, as the `f64` the decoder compares with.
pub const F32_MAX: f64 = f32::MAX as f64;

fn float_schema(float: &FloatTy) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("number"));
    // An `f32` must be representable (spec §4): without a bound of its own, its range is one.
    let f32_range = float.kind == FloatKind::F32;
    match float.min {
        Some(b) if b.exclusive => insert_f64(&mut m, "exclusiveMinimum", b.value),
        Some(b) => insert_f64(&mut m, "minimum", b.value),
        None if f32_range => insert_f64(&mut m, "minimum", -F32_MAX),
        None => {}
    }
    match float.max {
        Some(b) if b.exclusive => insert_f64(&mut m, "exclusiveMaximum", b.value),
        Some(b) => insert_f64(&mut m, "maximum", b.value),
        None if f32_range => insert_f64(&mut m, "maximum", F32_MAX),
        None => {}
    }
    Value::Object(m)
}

fn insert_f64(m: &mut Map<String, Value>, key: &str, v: f64) {
    if let Some(n) = serde_json::Number::from_f64(v) {
        m.insert(key.into(), Value::Number(n));
    }
}

fn str_schema(s: &StrTy) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!("string"));
    if s.min > 0 {
        m.insert("minLength".into(), json!(s.min));
    }
    m.insert("maxLength".into(), json!(s.max));
    if let Some(p) = &s.pattern {
        m.insert("pattern".into(), json!(p));
    }
    if let Some(f) = s.format {
        m.insert("format".into(), json!(f.as_str()));
    }
    Value::Object(m)
}

fn media_kind_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "image",
        MediaKind::Audio => "audio",
        MediaKind::Video => "video",
        MediaKind::File => "file",
    }
}

/// A media reference (spec §7): every key of [`MEDIA_FIELDS`], bounded by the declaration.
fn media_schema(media: &MediaTy) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in MEDIA_FIELDS {
        let schema = media_field_schema(media, field.name);
        properties.insert(field.name.into(), schema);
        if field.required {
            required.push(json!(field.name));
        }
    }
    let mut m = Map::new();
    m.insert(
        "description".into(),
        json!(format!(
            "A reference to a {} of at most {} bytes, uploaded to holon://files/.",
            media_kind_name(media.kind),
            media.max_bytes
        )),
    );
    merge_under(m, object(properties, required))
}

fn count_schema(max: Option<u64>) -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": max.unwrap_or(u64::MAX)})
}

fn media_field_schema(media: &MediaTy, key: &str) -> Value {
    use media_bounds::*;
    match key {
        // Something after the prefix, as the decoder requires.
        "ref" => json!({"type": "string", "maxLength": REF_MAX_LEN, "pattern": "^holon://files/."}),
        "content_type" => {
            if media.content_types.is_empty() {
                let mut m = Map::new();
                m.insert("type".into(), json!("string"));
                m.insert("maxLength".into(), json!(CONTENT_TYPE_MAX_LEN));
                if let Some(prefix) = content_type_prefix(media.kind) {
                    m.insert("pattern".into(), json!(format!("^{prefix}")));
                }
                Value::Object(m)
            } else {
                json!({"type": "string", "enum": media.content_types})
            }
        }
        "size" => count_schema(Some(media.max_bytes)),
        "sha256" => json!({"type": "string", "pattern": format!("^[0-9a-f]{{{SHA256_LEN}}}$")}),
        "expires_at" => {
            json!({"type": "string", "maxLength": EXPIRES_AT_MAX_LEN, "format": "date-time"})
        }
        "source" => json!({"type": "string", "maxLength": SOURCE_MAX_LEN}),
        "width" => count_schema(media.max_pixels.map(|(w, _)| u64::from(w))),
        "height" => count_schema(media.max_pixels.map(|(_, h)| u64::from(h))),
        "duration_ms" => count_schema(media.max_duration_ms),
        "sample_rate" => match media.sample_rate {
            Some(rate) => json!({"type": "integer", "const": rate}),
            None => count_schema(None),
        },
        _ => count_schema(None),
    }
}

/// Escapes a `$defs` key for a JSON Pointer fragment (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The two JSON Schema documents of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSchemas {
    pub input: Value,
    pub output: Value,
}

/// The input and output schemas of every node, in program order.
pub fn node_schemas(program: &Program) -> Vec<NodeSchemas> {
    let keys = DefKeys::new(&program.types);
    program
        .nodes
        .iter()
        .map(|node| NodeSchemas {
            input: SchemaBuilder::new(&program.types, &keys).input_document(node),
            output: SchemaBuilder::new(&program.types, &keys).output_document(node),
        })
        .collect()
}
