//! Property tests: the decoder and the pre-scan never panic, on arbitrary bytes and on mutated
//! valid documents; the pre-scan's depth verdict matches the real depth; a decoded value
//! re-validates clean and its canonical JSON decodes back to it; bytes and text decode alike, and
//! the text of escaped strings is what serde_json reads.

use aelc_runtime::decode::Decoder;
use aelc_runtime::error::Code;
use aelc_runtime::prescan::prescan;
use aelc_runtime::testing::{
    model_output_json, named, review_json, review_types, REVIEW, REVIEW_REQUEST,
};
use aelc_runtime::validate::validate_value;
use proptest::prelude::*;

fn mutate(doc: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut bytes = doc.as_bytes().to_vec();
    for &(at, kind, b) in edits {
        if bytes.is_empty() {
            break;
        }
        let i = at % bytes.len();
        match kind % 3 {
            0 => bytes[i] = b,
            1 => {
                bytes.remove(i);
            }
            _ => bytes.insert(i, b),
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn decoder_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let table = review_types();
        let mut d = Decoder::new(&table);
        let _ = d.decode(&bytes, &named(REVIEW), "output");
        let _ = d.decode(&bytes, &named(REVIEW_REQUEST), "request");
    }

    #[test]
    fn decoder_never_panics_on_mutated_documents(
        findings in 0usize..4,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(b"{}[]\",:0123456789.eE-+tfnul\\ \xff\xc3a".to_vec())), 1..6),
    ) {
        let table = review_types();
        let doc = review_json(findings);
        let bytes = mutate(&doc, &edits);
        let mut d = Decoder::new(&table);
        match d.decode(&bytes, &named(REVIEW), "output") {
            Ok(v) => {
                // Whatever is accepted is a valid value whose canonical JSON decodes back to it.
                prop_assert!(validate_value(&v, &named(REVIEW), &table, "output").is_empty());
                let again = d.decode(v.to_json_string(&named(REVIEW), &table).as_bytes(), &named(REVIEW), "output");
                prop_assert_eq!(again.ok(), Some(v));
            }
            Err(errors) => {
                prop_assert!(!errors.is_empty() && errors.len() <= 100);
                for e in &errors {
                    let suffix = format!("({})", e.code);
                    prop_assert!(e.message.ends_with(&suffix), "{}", e.message);
                    prop_assert!(e.pointer.is_empty() || e.pointer.starts_with('/'));
                }
            }
        }
    }

    /// Model output (escapes in most strings), mutated: the `&str` entry and the bytes entry
    /// give the same value or the same errors, a decoder reused from document to document (its
    /// unescaping buffer lent on) gives what a fresh one gives, and accepted text is the text
    /// serde_json reads from the same bytes.
    #[test]
    fn text_and_bytes_decode_alike(
        findings in 0usize..4,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), prop::sample::select(b"{}[]\",:0123456789.eE-+tfnul\\ \xff\xc3abnrtu/".to_vec())), 0..6),
    ) {
        let table = review_types();
        let ty = named(REVIEW);
        let bytes = mutate(&model_output_json(findings), &edits);
        let mut reused = Decoder::new(&table);
        let _ = reused.decode(model_output_json(3).as_bytes(), &ty, "output");
        let from_bytes = Decoder::new(&table).decode(&bytes, &ty, "output");
        prop_assert_eq!(&reused.decode(&bytes, &ty, "output"), &from_bytes);
        if let Ok(text) = std::str::from_utf8(&bytes) {
            prop_assert_eq!(&reused.decode_str(text, &ty, "output"), &from_bytes);
        }
        if let (Ok(v), Ok(theirs)) = (&from_bytes, serde_json::from_slice::<serde_json::Value>(&bytes)) {
            let ours = v.to_json(&ty, &table);
            prop_assert_eq!(&ours["summary"], &theirs["summary"]);
            let found = theirs["findings"].as_array().map_or(0, Vec::len);
            for i in 0..found {
                prop_assert_eq!(&ours["findings"][i]["message"], &theirs["findings"][i]["message"]);
                if theirs["findings"][i].get("suggestion").is_some() {
                    prop_assert_eq!(&ours["findings"][i]["suggestion"], &theirs["findings"][i]["suggestion"]);
                }
            }
        }
    }

    #[test]
    fn prescan_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = prescan(&bytes, 1 << 20, "request");
    }

    #[test]
    fn prescan_depth_verdict_is_exact(shape in proptest::collection::vec(0u8..4, 0..140)) {
        // Build nested arrays and objects from `shape`, with strings holding brackets.
        let mut open = String::new();
        let mut close = String::new();
        for s in &shape {
            match s {
                0 => { open.push('['); close.insert(0, ']'); }
                1 => { open.push_str("{\"k[\":"); close.insert(0, '}'); }
                2 => { open.push_str("[\"]]\","); close.insert(0, ']'); }
                _ => { open.push_str("{\"a\":1,\"b\":"); close.insert(0, '}'); }
            }
        }
        let doc = format!("{open}0{close}");
        let verdict = prescan(doc.as_bytes(), 1 << 20, "request");
        if shape.len() > 64 {
            prop_assert_eq!(verdict.err().map(|e| e.code), Some(Code::TooDeep));
        } else {
            prop_assert!(verdict.is_ok(), "{}", doc);
        }
    }
}
