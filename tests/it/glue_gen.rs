//! A seeded generator of random AEL projects for the Rust glue tests (`glue_random.rs`,
//! `glue_fmt.rs`): structs and enums with bounds, `Option`, `List`, `Set`, `Map`, `@pattern`s,
//! defaults, a `match`, errors, an input check, an output check, a transform, a failure
//! policy, a node with a body and one whose body delegates to the first; names drawn from a pool that holds Rust keywords (`loop`, `Type` → `r#type`), names
//! no raw identifier can spell (`self`, `Self`, `crate`, `super`) and names that differ only
//! in case across namespaces (`Loop` the struct, `loop` the field). Each project comes with
//! input documents and model answers, most valid, some broken in one place.
//!
//! Seeded rather than proptest-driven: every project goes into ONE crate that is compiled
//! once, so a failing case cannot be shrunk by re-running anyway; the seed is printed and
//! `GLUE_SEED` replays it.

use serde_json::{json, Map, Value};

/// splitmix64: small, seedable, good enough to draw programs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// A type of a generated field.
#[derive(Clone, Debug)]
pub enum G {
    Bool,
    Int {
        kind: &'static str,
        min: i64,
        max: i64,
    },
    Float {
        min: f64,
        max: f64,
    },
    Str {
        min: u32,
        max: u32,
        pattern: Option<usize>,
    },
    Opt(Box<G>),
    List {
        item: Box<G>,
        max: u32,
        set: bool,
    },
    Map {
        key: Box<G>,
        value: Box<G>,
        max: u32,
    },
    /// A definition of the project, by index.
    Ref(usize),
}

/// Patterns and strings that match them (and one that does not).
const PATTERNS: &[(&str, &[&str], &str)] = &[
    (r"^[a-z]{2}$", &["en", "fr", "de"], "EN"),
    (r"^[0-9]+$", &["1", "42", "007"], "4a"),
    (r"^[A-Z][a-z]*$", &["Ab", "Zed", "Q"], "ab"),
];

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: G,
    /// The default as AEL and as JSON.
    pub default: Option<(String, Value)>,
}

#[derive(Clone, Debug)]
pub enum Def {
    Struct {
        name: String,
        fields: Vec<Field>,
    },
    Unit {
        name: String,
        variants: Vec<String>,
    },
    Data {
        name: String,
        tag: Option<String>,
        variants: Vec<(String, Vec<Field>)>,
    },
}

impl Def {
    pub fn name(&self) -> &str {
        match self {
            Def::Struct { name, .. } | Def::Unit { name, .. } | Def::Data { name, .. } => name,
        }
    }
}

/// One generated project: its files and the runs to compare.
pub struct Project {
    /// `p0`, `p1`, …: the Rust module the glue goes in.
    pub id: String,
    pub files: Vec<(String, String)>,
    pub cases: Vec<Case>,
    /// Input documents of the second node, `again_<node>`, whose body is run. (The third,
    /// `relay_<node>`, delegates to the first and runs on the first's cases.)
    pub body_inputs: Vec<String>,
}

/// An input document and the model's answers.
pub struct Case {
    pub input: String,
    pub answers: Vec<String>,
}

/// Type names: keywords of Rust that AEL allows, names `r#` cannot spell, plain names.
const TYPE_NAMES: &[&str] = &[
    "Loop", "Type", "Match", "Self", "Crate", "Super", "Item", "Box", "TryFrom", "Result", "Value",
    "Vec", "String", "Dyn", "Impl", "Async", "Record", "Shape", "Kind", "Entry",
];
/// Field, variant, code and node names: the same mix in lower case.
const FIELD_NAMES: &[&str] = &[
    "loop", "mod", "impl", "async", "dyn", "ref", "move", "where", "while", "for", "in", "as",
    "self", "crate", "super", "Type", "Match", "yield", "gen", "union", "static", "trait",
    "unsafe", "pub", "const", "box", "try", "abstract", "macro", "value", "item", "kind", "count",
    "label", "note", "score", "tags", "size", "ctx", "r", "T", "await",
];

/// What the glue makes of a field name, to avoid drawing two that clash (E0850 is tested
/// elsewhere; here every project must build).
fn ident_key(name: &str) -> String {
    aelc::codegen::rust::snake(name)
}

struct Gen<'r> {
    rng: &'r mut Rng,
    defs: Vec<Def>,
    /// Unit enums usable as set items and map keys.
    units: Vec<usize>,
}

fn names(rng: &mut Rng, pool: &[&str], n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut guard = 0;
    while out.len() < n && guard < 200 {
        guard += 1;
        let mut name = rng.pick(pool).to_string();
        if rng.chance(20) {
            name = format!("{name}_{}", rng.below(9));
        }
        let key = ident_key(&name).trim_end_matches('_').to_owned();
        if keys.contains(&key) {
            continue;
        }
        keys.push(key);
        out.push(name);
    }
    out
}

impl Gen<'_> {
    fn scalar(&mut self) -> G {
        match self.rng.below(4) {
            0 => G::Bool,
            1 => {
                let (kind, lo, hi) = *self.rng.pick(&[
                    ("u8", 0i64, 255i64),
                    ("u16", 0, 65535),
                    ("i32", -1000, 1000),
                    ("u32", 0, 100_000),
                    ("i64", -5, 5),
                ]);
                let min = self.rng.range(lo, lo + (hi - lo) / 4);
                let max = self.rng.range(min + 1, hi);
                G::Int { kind, min, max }
            }
            2 => {
                let min = self.rng.range(-10, 0) as f64 / 2.0;
                let max = self.rng.range(1, 20) as f64 / 2.0;
                G::Float { min, max }
            }
            _ => {
                let pattern = if self.rng.chance(30) {
                    Some(self.rng.below(PATTERNS.len() as u64) as usize)
                } else {
                    None
                };
                let min = if pattern.is_none() && self.rng.chance(30) {
                    1
                } else {
                    0
                };
                let max = self.rng.range(3, 12) as u32;
                G::Str { min, max, pattern }
            }
        }
    }

    /// Items of sets and keys of maps: text or a unit enum.
    fn key(&mut self) -> G {
        if !self.units.is_empty() && self.rng.chance(50) {
            G::Ref(*self.rng.pick(&self.units))
        } else {
            G::Str {
                min: 0,
                max: self.rng.range(2, 8) as u32,
                pattern: None,
            }
        }
    }

    fn ty(&mut self, depth: u32, refs: &[usize]) -> G {
        let roll = self.rng.below(10);
        if depth >= 2 || roll < 4 {
            return self.scalar();
        }
        match roll {
            4 => G::Opt(Box::new(self.plain(depth + 1, refs))),
            5 => G::List {
                item: Box::new(self.plain(depth + 1, refs)),
                max: self.rng.range(1, 5) as u32,
                set: false,
            },
            6 => G::List {
                item: Box::new(self.key()),
                max: self.rng.range(1, 5) as u32,
                set: true,
            },
            7 => G::Map {
                key: Box::new(self.key()),
                value: Box::new(self.plain(depth + 1, refs)),
                max: self.rng.range(1, 4) as u32,
            },
            _ if !refs.is_empty() => G::Ref(*self.rng.pick(refs)),
            _ => self.scalar(),
        }
    }

    /// A type that is not an `Option` (items, values, what an `Option` holds).
    fn plain(&mut self, depth: u32, refs: &[usize]) -> G {
        match self.ty(depth, refs) {
            G::Opt(t) => *t,
            t => t,
        }
    }

    fn fields(&mut self, n: usize, refs: &[usize]) -> Vec<Field> {
        let names = names(self.rng, FIELD_NAMES, n);
        names
            .into_iter()
            .map(|name| {
                let ty = self.ty(0, refs);
                let default = if self.rng.chance(30) {
                    self.default(&ty)
                } else {
                    None
                };
                Field { name, ty, default }
            })
            .collect()
    }

    fn default(&mut self, ty: &G) -> Option<(String, Value)> {
        match ty {
            G::Bool => Some(("true".into(), json!(true))),
            G::Int { min, max, .. } => {
                let v = (min + max) / 2;
                if v < 0 {
                    None // a negative literal is an expression; keep defaults plain
                } else {
                    Some((v.to_string(), json!(v)))
                }
            }
            G::Str {
                min: 0,
                pattern: None,
                max,
            } if *max >= 2 => Some(("\"ok\"".into(), json!("ok"))),
            G::Ref(d) => match &self.defs[*d] {
                Def::Unit { variants, .. } => {
                    let v = variants[0].clone();
                    Some((v.clone(), json!(v)))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// AEL spelling of a type.
pub fn ael(defs: &[Def], ty: &G) -> String {
    match ty {
        G::Bool => "bool".into(),
        G::Int { kind, min, max } => {
            let b = |v: i64| if v < 0 { format!("{v}") } else { v.to_string() };
            format!("{kind}<{}..={}>", b(*min), b(*max))
        }
        G::Float { min, max } => format!("f64<{min:?}..={max:?}>"),
        G::Str { min, max, pattern } => {
            let base = if *min > 0 {
                format!("Str<{min}..={max}>")
            } else {
                format!("Str<{max}>")
            };
            match pattern {
                Some(p) => format!("{base} @pattern(r\"{}\")", PATTERNS[*p].0),
                None => base,
            }
        }
        G::Opt(t) => {
            // A refinement after `Option<T>` refines T: write the pattern outside.
            let inner = ael(defs, t);
            match inner.split_once(" @") {
                Some((head, attr)) => format!("Option<{head}> @{attr}"),
                None => format!("Option<{inner}>"),
            }
        }
        G::List { item, max, set } => {
            let inner = ael(defs, item);
            let head = if *set { "Set" } else { "List" };
            match inner.split_once(" @") {
                Some((h, attr)) => format!("{head}<{h}, {max}> @{attr}"),
                None => format!("{head}<{inner}, {max}>"),
            }
        }
        G::Map { key, value, max } => {
            format!("Map<{}, {}, {max}>", ael(defs, key), ael(defs, value))
        }
        G::Ref(d) => defs[*d].name().to_owned(),
    }
}

/// Drops `@pattern`s inside lists and maps, where AEL cannot attach them.
fn strip_nested(ty: G, inside: bool) -> G {
    match ty {
        G::Str { min, max, pattern } => G::Str {
            min,
            max,
            pattern: if inside { None } else { pattern },
        },
        G::Opt(t) => G::Opt(Box::new(strip_nested(*t, inside))),
        G::List { item, max, set } => G::List {
            item: Box::new(strip_nested(*item, true)),
            max,
            set,
        },
        G::Map { key, value, max } => G::Map {
            key: Box::new(strip_nested(*key, true)),
            value: Box::new(strip_nested(*value, true)),
            max,
        },
        other => other,
    }
}

fn write_fields(out: &mut String, defs: &[Def], fields: &[Field], indent: &str) {
    for f in fields {
        let ty = ael(defs, &f.ty);
        match &f.default {
            Some((lit, _)) => out.push_str(&format!("{indent}{}: {ty} = {lit},\n", f.name)),
            None => out.push_str(&format!("{indent}{}: {ty},\n", f.name)),
        }
    }
}

/// A text of `n` characters from a small alphabet (with one non-ASCII letter).
fn text(rng: &mut Rng, n: u32) -> String {
    (0..n)
        .map(|_| *rng.pick(&['a', 'b', 'z', ' ', 'é', 'Q', '7']))
        .collect()
}

/// A JSON value of `ty`; `bad` is the chance in percent, at each place, of breaking it.
pub fn value(rng: &mut Rng, defs: &[Def], ty: &G, bad: u64) -> Value {
    if bad > 0 && rng.chance(bad) {
        return match rng.below(3) {
            0 => json!("wrong"),
            1 => json!(1e300),
            _ => json!({"unexpected": [1, 2]}),
        };
    }
    match ty {
        G::Bool => json!(rng.chance(50)),
        G::Int { min, max, .. } => {
            if bad > 0 && rng.chance(bad) {
                json!(max + 1)
            } else if rng.chance(10) {
                json!(*min as f64) // an integral float is accepted
            } else {
                json!(rng.range(*min, *max))
            }
        }
        G::Float { min, max } => {
            let steps = rng.range(0, 8) as f64 / 8.0;
            json!(min + (max - min) * steps)
        }
        G::Str { min, max, pattern } => match pattern {
            Some(p) => {
                let (_, good, wrong) = PATTERNS[*p];
                if bad > 0 && rng.chance(bad) {
                    json!(wrong)
                } else {
                    json!(*rng.pick(good))
                }
            }
            None => {
                let n = if bad > 0 && rng.chance(bad) {
                    max + 1
                } else {
                    rng.range(*min as i64, *max as i64) as u32
                };
                json!(text(rng, n))
            }
        },
        G::Opt(t) => {
            if rng.chance(40) {
                Value::Null
            } else {
                value(rng, defs, t, bad)
            }
        }
        G::List { item, max, set } => {
            let n = if bad > 0 && rng.chance(bad) {
                max + 1
            } else {
                rng.range(0, *max as i64) as u32
            };
            let mut items: Vec<Value> = Vec::new();
            for _ in 0..n {
                let v = value(rng, defs, item, bad);
                if *set && items.contains(&v) && !(bad > 0 && rng.chance(bad)) {
                    continue;
                }
                items.push(v);
            }
            Value::Array(items)
        }
        G::Map { key, value: v, max } => {
            let n = rng.range(0, *max as i64);
            let mut m = Map::new();
            for _ in 0..n {
                let k = match value(rng, defs, key, 0) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                let val = value(rng, defs, v, bad);
                m.insert(k, val);
            }
            Value::Object(m)
        }
        G::Ref(d) => match &defs[*d] {
            Def::Struct { fields, .. } => object(rng, defs, fields, bad, None),
            Def::Unit { variants, .. } => {
                if bad > 0 && rng.chance(bad) {
                    json!("no_such_variant")
                } else {
                    json!(rng.pick(variants))
                }
            }
            Def::Data { tag, variants, .. } => {
                let (name, fields) = rng.pick(variants).clone();
                let tag = tag.clone().unwrap_or_else(|| "type".into());
                object(rng, defs, &fields, bad, Some((tag, name)))
            }
        },
    }
}

fn object(
    rng: &mut Rng,
    defs: &[Def],
    fields: &[Field],
    bad: u64,
    tag: Option<(String, String)>,
) -> Value {
    let mut m = Map::new();
    if let Some((t, v)) = tag {
        m.insert(t, json!(v));
    }
    for f in fields {
        let optional = matches!(f.ty, G::Opt(_)) || f.default.is_some();
        if optional && rng.chance(30) {
            continue;
        }
        if bad > 0 && rng.chance(bad / 2) {
            continue; // a required field missing
        }
        let v = value(rng, defs, &f.ty, bad);
        m.insert(f.name.clone(), v);
    }
    if bad > 0 && rng.chance(bad / 2) {
        m.insert("extra_field".into(), json!(1));
    }
    Value::Object(m)
}

/// The seeded projects.
pub fn projects(seed: u64, count: usize) -> Vec<Project> {
    let mut rng = Rng::new(seed);
    (0..count).map(|i| project(&mut rng, i)).collect()
}

fn project(rng: &mut Rng, index: usize) -> Project {
    let type_names = names(rng, TYPE_NAMES, 6);
    let mut g = Gen {
        rng,
        defs: Vec::new(),
        units: Vec::new(),
    };
    // A unit enum first (set items, map keys, the `match`), then data enums and structs that
    // refer only to earlier definitions (no recursion here: the emitted-code tests cover it).
    let variants = names(g.rng, FIELD_NAMES, 3);
    g.defs.push(Def::Unit {
        name: type_names[0].clone(),
        variants,
    });
    g.units.push(0);
    let mut names_iter = type_names.into_iter().skip(1);
    let refs: Vec<usize> = vec![0];
    if g.rng.chance(70) {
        let name = names_iter.next().unwrap_or_else(|| "Shape".into());
        let vs = names(g.rng, FIELD_NAMES, 3);
        let mut variants = Vec::new();
        for (k, v) in vs.into_iter().enumerate() {
            let fields = if k == 0 {
                Vec::new()
            } else {
                g.fields(2, &refs)
            };
            let fields: Vec<Field> = fields
                .into_iter()
                .map(|f| Field {
                    ty: strip_nested(f.ty, false),
                    ..f
                })
                .collect();
            variants.push((v, fields));
        }
        let tag = g.rng.chance(50).then(|| "kind".to_owned());
        // The tag must not be a field name of a variant.
        let tag_name = tag.clone().unwrap_or_else(|| "type".into());
        for (_, fs) in &mut variants {
            fs.retain(|f: &Field| f.name != tag_name);
        }
        g.defs.push(Def::Data {
            name,
            tag,
            variants,
        });
    }
    let refs: Vec<usize> = (0..g.defs.len()).collect();
    // The input and the output structs.
    let input_name = names_iter.next().unwrap_or_else(|| "Request".into());
    let output_name = names_iter.next().unwrap_or_else(|| "Answer".into());
    let (n_in, n_out) = (g.rng.range(2, 4) as usize, g.rng.range(2, 4) as usize);
    let mut input_fields = g.fields(n_in, &refs);
    let mut output_fields = g.fields(n_out, &refs);
    for f in input_fields.iter_mut().chain(output_fields.iter_mut()) {
        f.ty = strip_nested(f.ty.clone(), false);
    }
    // The checks and the transform need a field of a known shape: always one int and one
    // text field in the output, one int in the input.
    let taken_in: Vec<String> = input_fields.iter().map(|f| ident_key(&f.name)).collect();
    let taken_out: Vec<String> = output_fields.iter().map(|f| ident_key(&f.name)).collect();
    let fresh = |taken: &[String], base: &str| {
        let mut n = base.to_owned();
        while taken.contains(&ident_key(&n)) {
            n.push('x');
        }
        n
    };
    let in_int = fresh(&taken_in, "limit");
    input_fields.push(Field {
        name: in_int.clone(),
        ty: G::Int {
            kind: "u16",
            min: 0,
            max: 20,
        },
        default: Some(("10".into(), json!(10))),
    });
    let out_int = fresh(&taken_out, "total");
    let out_text = fresh(
        &[taken_out.clone(), vec![ident_key(&out_int)]].concat(),
        "label",
    );
    let out_enum = fresh(
        &[
            taken_out.clone(),
            vec![ident_key(&out_int), ident_key(&out_text)],
        ]
        .concat(),
        "level",
    );
    output_fields.push(Field {
        name: out_int.clone(),
        ty: G::Int {
            kind: "i32",
            min: -5,
            max: 25,
        },
        default: None,
    });
    output_fields.push(Field {
        name: out_text.clone(),
        ty: G::Str {
            min: 0,
            max: 6,
            pattern: if g.rng.chance(40) { Some(2) } else { None },
        },
        default: None,
    });
    output_fields.push(Field {
        name: out_enum.clone(),
        ty: G::Ref(0),
        default: None,
    });
    let input_def = g.defs.len();
    g.defs.push(Def::Struct {
        name: input_name.clone(),
        fields: input_fields,
    });
    let output_def = g.defs.len();
    g.defs.push(Def::Struct {
        name: output_name.clone(),
        fields: output_fields,
    });
    let defs = g.defs;
    let rng = g.rng;

    let mut src = String::from("//! A generated project.\n\n");
    for d in &defs {
        match d {
            Def::Unit { name, variants } => {
                src.push_str(&format!(
                    "/// A unit enum.\nenum {name} {{ {} }}\n\n",
                    variants.join(", ")
                ));
            }
            Def::Data {
                name,
                tag,
                variants,
            } => {
                if let Some(t) = tag {
                    src.push_str(&format!("@tag(\"{t}\")\n"));
                }
                src.push_str(&format!("enum {name} {{\n"));
                for (v, fields) in variants {
                    if fields.is_empty() {
                        src.push_str(&format!("    {v},\n"));
                    } else {
                        src.push_str(&format!("    {v} {{\n"));
                        write_fields(&mut src, &defs, fields, "        ");
                        src.push_str("    },\n");
                    }
                }
                src.push_str("}\n\n");
            }
            Def::Struct { name, fields } => {
                src.push_str(&format!("/// A struct.\nstruct {name} {{\n"));
                write_fields(&mut src, &defs, fields, "    ");
                src.push_str("}\n\n");
            }
        }
    }
    let codes = names(rng, FIELD_NAMES, 2);
    let (c_in, c_out) = (codes[0].clone(), codes[1].clone());
    // Node modules sit beside the types: `std` and `core` would shadow the crates of those
    // names, keywords need `r#`, `self` cannot have it.
    let node_names = names(
        rng,
        &[
            "loop", "mod", "self", "crate", "super", "Type", "std", "core", "r", "async", "yield",
            "in",
        ],
        1,
    );
    let mut node = if rng.chance(60) {
        node_names[0].clone()
    } else {
        format!("{}_node", node_names[0])
    };
    if defs.iter().any(|d| d.name() == node) {
        node.push_str("_node"); // one namespace for types and nodes in AEL
    }
    let errors = format!("{output_name}Error");
    let Def::Unit {
        variants: levels, ..
    } = &defs[0]
    else {
        unreachable!()
    };
    let param = rng
        .pick(&["request", "req", "doc", "in_put", "self", "Type"])
        .to_string();
    let limit = rng.range(0, 20);
    let cap = rng.range(-3, 25);
    src.push_str(&format!(
        "/// The failures.\nerrors {errors} {{\n    /// Input refused.\n    {c_in},\n    /// Output refused.\n    {c_out},\n}}\n\n"
    ));
    src.push_str(&format!(
        "check small({param}: {input_name}) fails {errors} {{\n    require {param}.{in_int} <= {limit} else {c_in} \"too big\";\n}}\n\n"
    ));
    src.push_str(&format!(
        "fn rank(l: {}) -> u8 {{\n    match l {{ {} => 0, _ => 1 }}\n}}\n\n",
        defs[0].name(),
        levels[0]
    ));
    src.push_str(&format!(
        "check fits(output: {output_name}, {param}: {input_name}) fails {errors} {{\n    require output.{out_int} <= {cap} else {c_out};\n    require rank(output.{out_enum}) <= 1 || {param}.{in_int} > 0 else {c_out} \"ranked\";\n}}\n\n"
    ));
    let transform = match rng.below(3) {
        0 => format!("{output_name} {{ {out_text}: output.{out_text}.to_upper(), ..output }}"),
        1 => format!("{output_name} {{ {out_int}: output.{out_int} + 1, ..output }}"),
        _ => format!("{output_name} {{ {out_text}: output.{out_text} + \"!\", ..output }}"),
    };
    src.push_str(&format!(
        "fn polish(output: {output_name}) -> {output_name} {{\n    {transform}\n}}\n\n"
    ));
    let policy = match rng.below(4) {
        0 => format!("retry(1), fail({c_out})"),
        1 => "repair(2)".to_owned(),
        2 => format!("repair(1), fail({c_out})"),
        _ => "retry(2)".to_owned(),
    };
    let with_check = rng.chance(80);
    let with_transform = rng.chance(70);
    src.push_str(&format!(
        "/// The node.\nnode {node}({param}: {input_name}) -> {output_name} fails {errors} {{\n"
    ));
    src.push_str("    config {\n        prompt: file(\"prompts/p.md\");\n        model: binding(\"primary_model\");\n    }\n");
    src.push_str("    input {\n        check small;\n    }\n    output {\n");
    if with_check {
        src.push_str("        check fits;\n");
    }
    if with_transform {
        src.push_str("        transform polish;\n");
    }
    src.push_str(&format!("        on_failure: {policy};\n    }}\n}}\n"));
    // A second node with a body (spec §6): `let`s, a pure fn, and the answer's bounds (the
    // transform may break them). It takes the output type, so its inputs are answers.
    src.push_str(&format!(
        "\n/// A node with a body.\nnode again_{node}(o: {output_name}) -> {output_name} {{\n    let first = polish(o);\n    let second = polish(first);\n    return second;\n}}\n"
    ));
    // A third whose body delegates to the first (spec §12): the child's gate, pipeline,
    // policies and receipt, its failure the caller's (they declare the same codes).
    src.push_str(&format!(
        "\n/// A node that delegates.\nnode relay_{node}({param}: {input_name}) -> {output_name} fails {errors} {{\n    let asked = {node}({param});\n    return polish(asked);\n}}\n"
    ));

    let toml = format!(
        "[package]\nname = \"gen/p{index}\"\nversion = \"0.1.0\"\n\n[bindings.primary_model]\nprovider = \"replay\"\nmodel = \"recorded\"\naccepts = [\"text\"]\n"
    );
    let files = vec![
        ("ael.toml".to_owned(), toml),
        ("nodes/gen.node.ael".to_owned(), src),
        (
            "prompts/p.md".to_owned(),
            "Answer with one JSON value.\n".to_owned(),
        ),
    ];

    let input_ty = G::Ref(input_def);
    let output_ty = G::Ref(output_def);
    let mut cases = Vec::new();
    for k in 0..12 {
        let bad_in = if k % 3 == 2 { 8 } else { 0 };
        let input = value(rng, &defs, &input_ty, bad_in).to_string();
        let n = rng.range(1, 3);
        let answers = (0..n)
            .map(|_| {
                let bad = if rng.chance(40) { 10 } else { 0 };
                let v = value(rng, &defs, &output_ty, bad).to_string();
                match rng.below(8) {
                    0 => format!("```json\n{v}\n```"),
                    1 => "not json at all".to_owned(),
                    2 => format!("{v} trailing"),
                    _ => v,
                }
            })
            .collect();
        cases.push(Case { input, answers });
    }
    let body_inputs = (0..8)
        .map(|k| value(rng, &defs, &output_ty, if k % 4 == 3 { 10 } else { 0 }).to_string())
        .collect();
    Project {
        id: format!("p{index}"),
        files,
        cases,
        body_inputs,
    }
}

/// Builds a throw-away binary crate `name` under `target/tmp/glue-crates/` from `sources`
/// (paths relative to the crate, `src/main.rs` among them) depending on `aelc-runtime` by
/// path, with a target folder shared by every such crate and kept between runs (a repeat
/// compiles only the crate); returns the executable.
pub fn build_crate(name: &str, sources: &[(String, String)]) -> std::path::PathBuf {
    let workspace = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("glue-crates");
    let krate = base.join(name);
    let _ = std::fs::remove_dir_all(krate.join("src"));
    let _ = std::fs::remove_dir_all(krate.join("glue"));
    for (path, text) in sources {
        let path = krate.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let runtime = workspace.join("stdlib/runtime");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\naelc-runtime = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
            runtime.display().to_string()
        ),
    )
    .expect("write Cargo.toml");
    // The workspace's lock file: the same dependency versions, nothing to download.
    if !krate.join("Cargo.lock").exists() {
        std::fs::copy(workspace.join("Cargo.lock"), krate.join("Cargo.lock")).expect("lock");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = base.join("target");
    // `cargo SUBCOMMAND --offline --quiet --manifest-path …/Cargo.toml EXTRA…` on the crate.
    let run_cargo = |subcommand: &str, extra: &[&str]| {
        std::process::Command::new(&cargo)
            .args([subcommand, "--offline", "--quiet", "--manifest-path"])
            .arg(krate.join("Cargo.toml"))
            .args(extra)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap_or_else(|e| panic!("cannot run cargo {subcommand}: {e}"))
    };
    let build = run_cargo("build", &[]);
    assert!(
        build.status.success(),
        "the generated crate {} does not compile:\n{}",
        krate.display(),
        String::from_utf8_lossy(&build.stderr)
    );
    // Generated code must also pass clippy (issue: "compiles without warnings under -D warnings
    // and clippy"); the crate is already built, so this only lints it.
    let lint = run_cargo("clippy", &["--", "-D", "warnings"]);
    assert!(
        lint.status.success(),
        "clippy refuses the generated crate {}:\n{}",
        krate.display(),
        String::from_utf8_lossy(&lint.stderr)
    );
    target
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Checks the project under `root` and returns its program and glue, failing with the
/// rendered diagnostics.
pub fn glue_of(root: &std::path::Path) -> (aelc::ir::Program, String) {
    let compilation =
        aelc::driver::check_path(&aelc::driver::DiskWorld, root).expect("read the project");
    assert!(
        !compilation.has_errors(),
        "{} does not check:\n{}",
        root.display(),
        aelc::diagnostics::render::human(
            &compilation.sources,
            &compilation.diagnostics,
            aelc::diagnostics::render::Color::Never
        )
    );
    let program = compilation.program.expect("a program");
    match aelc::codegen::rust::glue(&program) {
        Ok(g) => (program, g),
        Err(d) => panic!(
            "{}: no glue: {:?}",
            root.display(),
            d.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
        ),
    }
}

/// Writes `files` under `root` (emptied first).
pub fn write_files(root: &std::path::Path, files: &[(String, String)]) {
    let _ = std::fs::remove_dir_all(root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
}
