//! How a receipt's document is kept in the `receipts` table: compressed with zstd against a
//! dictionary of receipt text, so a refusal's ~640 bytes of JSON take ~110–125 on disk.
//!
//! Why: under a flood of bad input the gateway stores one receipt per request, tens of
//! thousands a second. On SQLite each stored byte is written twice (the log, then the
//! database at a checkpoint) and flushed; on the virtual machines gateways run on, a disk busy
//! flushing takes CPU time from every process on the machine, which was the gate's whole
//! latency tail (book/src/gateway.md, "fewer bytes a refusal"). Receipts are alike: the same keys,
//! the same statuses and codes, the same agent; what differs is an id, a hash and a few words.
//! A zstd frame over a dictionary made of such text keeps only the difference. Each row is
//! compressed alone, so a receipt is read by its id without touching its neighbours.
//!
//! Format: one tag byte, then the payload.
//! - `0x02`: a zstd frame made with [`DICTIONARY_V2`] (its content size in the frame header, no
//!   checksum: both databases check their own pages). What is written now.
//! - `0x01`: the same over [`DICTIONARY_V1`], as rows were written before v2.
//! - `{`: plain JSON, as rows written before migration 0004 were.
//!
//! A better dictionary later gets a new tag and the old one stays, so every stored row reads.

use std::cell::RefCell;
use std::sync::OnceLock;

use zstd::dict::{DecoderDictionary, EncoderDictionary};

use crate::{Result, StoreError};

/// The tag of a document compressed with [`DICTIONARY_V1`].
const TAG_V1: u8 = 0x01;
/// The tag of a document compressed with [`DICTIONARY_V2`].
const TAG_V2: u8 = 0x02;

/// Receipt text as the gateway writes it, most common last (zstd finds the nearest match
/// cheapest): a raw-content dictionary. Never edit it: rows tagged [`TAG_V1`] need it as it is.
const DICTIONARY_V1: &[u8] = include_bytes!("document/receipts-v1.dict");

/// v1's text with zstd's entropy tables fitted to receipts (made by `platform/store/dictionary`,
/// whose header says how). With v1 zstd built a Huffman table and three FSE tables for every
/// document and wrote them into its frame, over half the cost of compressing a receipt; with
/// v2 it reuses the dictionary's (45 k instructions a refusal's receipt became 19 k, and 140
/// stored bytes 123). Never edit it: rows tagged [`TAG_V2`] need it as it is.
const DICTIONARY_V2: &[u8] = include_bytes!("document/receipts-v2.dict");

/// zstd's level: 3 is its default; the gain over 1 on receipts is a byte or two, the cost a
/// third more time. A refusal's receipt is compressed by the journal's mover, off the
/// request's path; a finished run's, in the transaction that stores it (after its model call,
/// whose time dwarfs this).
const LEVEL: i32 = 3;

/// A stored document never decompresses to more than this (a frame header that claims more
/// is damage, not a receipt): four times the gateway's largest input and output together.
const MAX_DOCUMENT: usize = 256 << 20;

fn encoder() -> &'static EncoderDictionary<'static> {
    static DICTIONARY: OnceLock<EncoderDictionary<'static>> = OnceLock::new();
    DICTIONARY.get_or_init(|| EncoderDictionary::copy(DICTIONARY_V2, LEVEL))
}

/// The dictionary a stored frame was made with, by its tag.
fn decoder(tag: u8) -> &'static DecoderDictionary<'static> {
    static V1: OnceLock<DecoderDictionary<'static>> = OnceLock::new();
    static V2: OnceLock<DecoderDictionary<'static>> = OnceLock::new();
    match tag {
        TAG_V1 => V1.get_or_init(|| DecoderDictionary::copy(DICTIONARY_V1)),
        _ => V2.get_or_init(|| DecoderDictionary::copy(DICTIONARY_V2)),
    }
}

thread_local! {
    /// One compression context per thread, reused (making one costs more than a receipt).
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
}

/// Below this many bytes a JSON object is stored as it is: a zstd frame has six bytes of its
/// own, and what the dictionary finds in a short object (a run's input: `{"text": …}`) is
/// little, so compressing it (18 k instructions, a thirtieth of a full run) saved nothing.
const SMALL: usize = 64;

/// `json` as stored: [`TAG_V2`] and its zstd frame, or the object itself (first byte `{`) when
/// it is short or its frame would be no shorter.
pub(crate) fn pack(json: &str) -> Vec<u8> {
    let object = json.starts_with('{');
    if object && json.len() < SMALL {
        return plain(json);
    }
    let packed = compress(json);
    if object && packed.len() > json.len() {
        return plain(json);
    }
    packed
}

fn compress(json: &str) -> Vec<u8> {
    COMPRESSOR.with(|cell| {
        let mut cell = cell.borrow_mut();
        let compressor = match &mut *cell {
            Some(compressor) => compressor,
            None => match new_compressor() {
                Ok(compressor) => cell.insert(compressor),
                Err(_) => return plain(json),
            },
        };
        let mut out = vec![0; 1 + zstd::zstd_safe::compress_bound(json.len())];
        out[0] = TAG_V2;
        match compressor.compress_to_buffer(json.as_bytes(), &mut out[1..]) {
            Ok(written) => {
                out.truncate(1 + written);
                out
            }
            // zstd fails only when out of memory or misconfigured: the plain text still stores.
            Err(_) => plain(json),
        }
    })
}

fn new_compressor() -> std::io::Result<zstd::bulk::Compressor<'static>> {
    let mut compressor = zstd::bulk::Compressor::with_prepared_dictionary(encoder())?;
    compressor.include_checksum(false)?;
    compressor.include_contentsize(true)?;
    compressor.include_dictid(false)?;
    Ok(compressor)
}

fn plain(json: &str) -> Vec<u8> {
    json.as_bytes().to_vec()
}

/// The JSON text of a stored document (`id` names the receipt in an error).
pub(crate) fn unpack(id: &str, stored: Vec<u8>) -> Result<String> {
    let bytes = match stored.first() {
        Some(&tag @ (TAG_V1 | TAG_V2)) => decompress(id, tag, &stored[1..])?,
        Some(b'{') => stored,
        _ => {
            return Err(damaged(
                id,
                "it is neither JSON nor a known compressed form",
            ))
        }
    };
    String::from_utf8(bytes).map_err(|_| damaged(id, "it is not UTF-8 text"))
}

fn decompress(id: &str, tag: u8, frame: &[u8]) -> Result<Vec<u8>> {
    let size = match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size <= MAX_DOCUMENT as u64 => size as usize,
        _ => return Err(damaged(id, "its compressed frame has no valid size")),
    };
    let mut decompressor = zstd::bulk::Decompressor::with_prepared_dictionary(decoder(tag))
        .map_err(|e| damaged(id, &e.to_string()))?;
    let bytes = decompressor
        .decompress(frame, size)
        .map_err(|e| damaged(id, &e.to_string()))?;
    if bytes.len() != size {
        return Err(damaged(id, "it is shorter than its frame says"));
    }
    Ok(bytes)
}

fn damaged(id: &str, why: &str) -> StoreError {
    StoreError::Backend(format!(
        "the stored document of receipt `{id}` does not read: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal as the gateway stores it (`runs.rs`'s document around the receipt).
    fn refusal(id: &str, sha: &str) -> String {
        format!(
            r#"{{"status":"rejected_input","code":"rejected_input","output":null,"receipt":{{"receipt":"{id}","agent":"acme/echo","version":"0.1.0","node":"echo","status":"rejected_input","code":"rejected_input","input_sha256":"{sha}","output_sha256":null,"attempts":[],"cost":{{"amount":"0","currency":null}},"spent":{{"amount":"0","currency":null}},"reserved":{{"amount":"0","currency":null}},"delegated":[]}},"errors":[{{"pointer":"/unknown","path":"ask.unknown","code":"unknown_field","message":"`unknown` is not a field of `Ask`"}}]}}"#
        )
    }

    #[test]
    fn documents_come_back_as_written() {
        let samples = [
            refusal("rcpt_0190d9e5a1b27c3d8e4f5a6b7c8d9e0f", &"ab".repeat(32)),
            format!("{{\"text\":\"{}\"}}", "é∑🦀 ".repeat(10_000)),
        ];
        for json in samples {
            let stored = pack(&json);
            assert_eq!(stored[0], TAG_V2);
            assert_eq!(unpack("r", stored).unwrap(), json);
        }
    }

    /// A short object, or one zstd cannot shorten, is kept as it is; short text that is not an
    /// object (which the plain form could not tell from damage) is still framed.
    #[test]
    fn short_or_incompressible_objects_are_stored_plain() {
        // 100 letters and digits drawn by an LCG: no match in the dictionary, and too few for
        // a Huffman table to pay for itself.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut state = 7u64;
        let random: String = (0..100)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                alphabet[(state >> 33) as usize % alphabet.len()] as char
            })
            .collect();
        for json in [
            "{}".to_owned(),
            r#"{"text": "hello", "locale": "en-GB"}"#.to_owned(),
            format!(r#"{{"t":"{random}"}}"#),
        ] {
            let stored = pack(&json);
            assert_eq!(stored, json.as_bytes());
            assert_eq!(unpack("r", stored).unwrap(), json);
        }
        let stored = pack("[1]");
        assert_eq!(stored[0], TAG_V2);
        assert_eq!(unpack("r", stored).unwrap(), "[1]");
    }

    /// A frame over dictionary v1, as the store wrote before v2 (made then, kept as bytes).
    #[test]
    fn rows_written_with_dictionary_v1_still_read() {
        const V1_ROW: &str = "0128b52ffd20767500002076317d7d020041e71af1cf2482";
        let stored: Vec<u8> = (0..V1_ROW.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&V1_ROW[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(
            unpack("rcpt_v1", stored).unwrap(),
            r#"{"status":"rejected_input","code":"invalid_input","output":null,"receipt":{"receipt":"rcpt_v1","agent":"acme/review"}}"#
        );
    }

    /// v2 is v1's text with tables before it (zstd's dictionary format: magic, id, tables,
    /// then the content), so the two compress alike and only v2's tables are new.
    #[test]
    fn dictionary_v2_is_v1_with_entropy_tables() {
        assert_eq!(&DICTIONARY_V2[..4], &[0x37, 0xa4, 0x30, 0xec]);
        assert!(DICTIONARY_V2.ends_with(DICTIONARY_V1));
    }

    #[test]
    fn a_refusal_keeps_little_more_than_its_id_and_hash() {
        let json = refusal(
            "rcpt_0190d9e5a1b27c3d8e4f5a6b7c8d9e0f",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        );
        let stored = pack(&json);
        // 16 random bytes of id and 32 of hash, written as 96 hex digits, take 48 bytes at
        // best; the rest of a refusal, with the dictionary's tables, costs little more.
        assert!(
            stored.len() < json.len() / 4,
            "{} bytes of {} stored",
            stored.len(),
            json.len()
        );
    }

    #[test]
    fn rows_written_before_compression_still_read() {
        let json = refusal("rcpt_1", "00");
        assert_eq!(unpack("rcpt_1", json.clone().into_bytes()).unwrap(), json);
    }

    #[test]
    fn a_damaged_document_is_an_error_naming_its_receipt() {
        let mut stored = pack(&refusal("rcpt_2", "11"));
        let cut = stored.len() / 2;
        stored.truncate(cut);
        let damaged = [
            stored,
            vec![TAG_V1],
            vec![TAG_V2],
            vec![TAG_V2, 0x28, 0xb5, 0x2f],
            vec![0x7f, 1, 2],
            vec![],
            b"{\xff}".to_vec(),
        ];
        for bytes in damaged {
            let error = unpack("rcpt_2", bytes).unwrap_err().to_string();
            assert!(error.contains("`rcpt_2`"), "{error}");
        }
    }
}
