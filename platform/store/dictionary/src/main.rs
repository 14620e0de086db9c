//! Writes `platform/store/src/document/receipts-v2.dict`: the receipt text of dictionary v1,
//! unchanged, with the entropy tables zstd would otherwise build for every document.
//!
//! Why: v1 is raw content, so zstd compressed each ~640-byte receipt by first counting its
//! symbols and building a Huffman table for its literals and three FSE tables for its
//! sequences, then writing those tables into the frame: over half of a receipt's 45 k
//! instructions, and a sixth of every gate refusal's (the book's performance page). A
//! dictionary that carries tables fitted to receipts lets zstd reuse them (its "repeat" mode,
//! chosen for blocks this small) and leaves them out of the frame: 19 k instructions, and
//! 111 bytes stored where v1 stored 140.
//!
//! The samples the tables are fitted to are v1's own documents (every kind of receipt the
//! gateway writes: refusals, failures, repairs, a success) with what differs between real
//! receipts filled in: a random receipt id and input hash, as the gateway writes them (hex).
//! The random numbers come from a fixed seed, so running this again writes the same bytes.
//! Never run it to replace v2 once rows are stored with it: a new dictionary is a new file and
//! a new tag (`document.rs`).

use std::path::Path;

/// `ZDICT_params_t::dictID`: frames are written without it (`document.rs`), so it is only a
/// label; fixed, so the output does not depend on a hash of the content.
const DICTIONARY_ID: u32 = 0x6165_6c02;
/// The level the store compresses at (`document.rs`'s `LEVEL`), which the tables are fitted for.
const LEVEL: i32 = 3;
/// Variants of each v1 document among the samples.
const VARIANTS: usize = 40;

fn main() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src/document");
    let content = std::fs::read(folder.join("receipts-v1.dict")).expect("dictionary v1 reads");
    let samples = samples(&content);
    let dictionary = finalize(&content, &samples);
    assert!(
        dictionary.ends_with(&content),
        "zstd kept v1's text as the dictionary's content"
    );
    std::fs::write(folder.join("receipts-v2.dict"), &dictionary).expect("receipts-v2.dict writes");
    println!(
        "receipts-v2.dict: {} bytes ({} of tables, {} samples)",
        dictionary.len(),
        dictionary.len() - content.len(),
        samples.len()
    );
}

/// v1's documents (one a line) with fresh ids and hashes in their empty slots.
fn samples(content: &[u8]) -> Vec<Vec<u8>> {
    let text = std::str::from_utf8(content).expect("dictionary v1 is text");
    let mut random = SplitMix64(0x5eed);
    let mut samples = Vec::new();
    for document in text.lines().filter(|l| !l.is_empty()) {
        for _ in 0..VARIANTS {
            let id = format!("rcpt_{}", random.hex(32));
            let hash = random.hex(64);
            let sample = document
                .replace("\"rcpt_\"", &format!("\"{id}\""))
                .replace(&"0".repeat(64), &hash);
            samples.push(sample.into_bytes());
        }
    }
    samples
}

fn finalize(content: &[u8], samples: &[Vec<u8>]) -> Vec<u8> {
    let joined = samples.concat();
    let sizes: Vec<usize> = samples.iter().map(Vec::len).collect();
    let mut out = vec![0u8; content.len() + (64 << 10)];
    let params = zstd_sys::ZDICT_params_t {
        compressionLevel: LEVEL,
        notificationLevel: 0,
        dictID: DICTIONARY_ID,
    };
    // SAFETY: every pointer comes from a live slice or vector with its length beside it; the
    // samples' sizes add up to `joined.len()`, as the function requires.
    let written = unsafe {
        zstd_sys::ZDICT_finalizeDictionary(
            out.as_mut_ptr().cast(),
            out.len(),
            content.as_ptr().cast(),
            content.len(),
            joined.as_ptr().cast(),
            sizes.as_ptr(),
            sizes.len() as u32,
            params,
        )
    };
    // SAFETY: a plain function of the returned code.
    assert!(
        unsafe { zstd_sys::ZDICT_isError(written) } == 0,
        "ZDICT_finalizeDictionary failed"
    );
    out.truncate(written);
    out
}

/// Vigna's SplitMix64: a small generator with a fixed seed, enough for sample text.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn hex(&mut self, digits: usize) -> String {
        (0..digits)
            .map(|_| char::from_digit((self.next() % 16) as u32, 16).unwrap())
            .collect()
    }
}
