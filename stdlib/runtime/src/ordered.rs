//! JSON that keeps its objects' keys in the order they were written or inserted, whatever
//! features `serde_json` is built with: the output schemas a prompt prints and a provider
//! receives (a model generates properties in the order its schema lists them), and the
//! provider request bodies that carry them.
//!
//! `serde_json::Value` keeps key order only with its `preserve_order` feature, and turning that
//! on here would turn it on for every binary linking the runtime (issue 23: an unrelated
//! `Value` + jsonschema path got 15–30% slower); so the runtime keeps its own tree for the few
//! documents whose order is part of their meaning, and reads, writes and compares it through
//! serde like any value. Numbers are `serde_json::Number`s, so they print as `serde_json` prints
//! them.

use indexmap::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::Number;

/// A JSON value whose objects keep their key order.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Json {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Map),
}

/// An object's members in their order. Equality does not look at the order (as JSON's
/// objects compare).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Map(IndexMap<String, Json>);

impl Map {
    pub fn new() -> Map {
        Map(IndexMap::new())
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.0.get_mut(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Sets `key`: a new key goes last, an existing one keeps its place.
    pub fn insert(&mut self, key: String, value: Json) -> Option<Json> {
        self.0.insert(key, value)
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<Json> {
        self.0.shift_remove(key)
    }

    /// Sets `key` at `index` (moved there if it was elsewhere), shifting the ones after it.
    pub fn insert_at(&mut self, index: usize, key: String, value: Json) {
        self.0.shift_insert(index, key, value);
    }

    pub fn keys(&self) -> indexmap::map::Keys<'_, String, Json> {
        self.0.keys()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> indexmap::map::Iter<'_, String, Json> {
        self.0.iter()
    }

    pub fn iter_mut(&mut self) -> indexmap::map::IterMut<'_, String, Json> {
        self.0.iter_mut()
    }

    pub fn values(&self) -> indexmap::map::Values<'_, String, Json> {
        self.0.values()
    }
}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a String, &'a Json);
    type IntoIter = indexmap::map::Iter<'a, String, Json>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Map {
    type Item = (String, Json);
    type IntoIter = indexmap::map::IntoIter<String, Json>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(String, Json)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Json)>>(iter: I) -> Map {
        Map(iter.into_iter().collect())
    }
}

impl Extend<(String, Json)> for Map {
    fn extend<I: IntoIterator<Item = (String, Json)>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl Json {
    /// An object of these members, in this order.
    pub fn object<const N: usize>(members: [(&str, Json); N]) -> Json {
        Json::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.get(key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The same document as a `serde_json::Value` (whose key order follows `serde_json`'s
    /// features: for reading it, not for printing it).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => serde_json::Value::Bool(*b),
            Json::Number(n) => serde_json::Value::Number(n.clone()),
            Json::String(s) => serde_json::Value::String(s.clone()),
            Json::Array(items) => {
                serde_json::Value::Array(items.iter().map(Json::to_value).collect())
            }
            Json::Object(m) => serde_json::Value::Object(
                m.iter().map(|(k, v)| (k.clone(), v.to_value())).collect(),
            ),
        }
    }
}

/// In the value's own order (the order it was built or read in when `serde_json` keeps it).
impl From<serde_json::Value> for Json {
    fn from(value: serde_json::Value) -> Json {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(b),
            serde_json::Value::Number(n) => Json::Number(n),
            serde_json::Value::String(s) => Json::String(s),
            serde_json::Value::Array(items) => {
                Json::Array(items.into_iter().map(Json::from).collect())
            }
            serde_json::Value::Object(m) => {
                Json::Object(m.into_iter().map(|(k, v)| (k, Json::from(v))).collect())
            }
        }
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s)
    }
}

impl From<&String> for Json {
    fn from(s: &String) -> Json {
        Json::String(s.clone())
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Json {
        Json::Number(n.into())
    }
}

impl From<i64> for Json {
    fn from(n: i64) -> Json {
        Json::Number(n.into())
    }
}

impl From<u32> for Json {
    fn from(n: u32) -> Json {
        Json::Number(n.into())
    }
}

/// A non-finite float is `null`, as `serde_json` writes it.
impl From<f64> for Json {
    fn from(f: f64) -> Json {
        Number::from_f64(f).map_or(Json::Null, Json::Number)
    }
}

impl From<Vec<Json>> for Json {
    fn from(items: Vec<Json>) -> Json {
        Json::Array(items)
    }
}

/// Compact JSON text, as `serde_json::Value` prints.
impl std::fmt::Display for Json {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(text) => s.serialize_str(text),
            Json::Array(items) => s.collect_seq(items),
            Json::Object(m) => s.collect_map(m.iter()),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Json, E> {
        Ok(Json::from(f))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    /// A repeated key keeps its first place and its last value, as `serde_json` reads one.
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Json, A::Error> {
        let mut m = Map::new();
        while let Some((key, value)) = access.next_entry::<String, Json>()? {
            m.insert(key, value);
        }
        Ok(Json::Object(m))
    }
}

#[cfg(test)]
mod tests {
    use super::Json;

    /// Keys come back in the order written, however `serde_json` is built (the runtime's own
    /// tests build it without `preserve_order`), pretty or compact, and through a
    /// `serde_json::Value` built with the same order.
    #[test]
    fn keys_keep_their_order() {
        let text = r#"{"zeta":1,"alpha":{"y":[true,null,"s"],"b":2.5},"mid":-3}"#;
        let json: Json = serde_json::from_str(text).unwrap_or_default();
        assert_eq!(serde_json::to_string(&json).unwrap_or_default(), text);
        let pretty = serde_json::to_string_pretty(&json).unwrap_or_default();
        let back: Json = serde_json::from_str(&pretty).unwrap_or_default();
        assert_eq!(serde_json::to_string(&back).unwrap_or_default(), text);
        let built = Json::object([
            ("zeta", 1u64.into()),
            (
                "alpha",
                Json::object([
                    ("y", vec![true.into(), Json::Null, "s".into()].into()),
                    ("b", 2.5.into()),
                ]),
            ),
            ("mid", Json::from(serde_json::json!(-3))),
        ]);
        assert_eq!(built, json);
        assert_eq!(serde_json::to_string(&built).unwrap_or_default(), text);
        assert_eq!(
            json.to_value(),
            serde_json::from_str::<serde_json::Value>(text).unwrap_or_default()
        );
    }
}
