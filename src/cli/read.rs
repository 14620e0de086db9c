//! Reading the documents a command is handed (`--input`, `--output`, `--replay`, or stdin for
//! `-`) without ever holding more of them than their bound.
//!
//! A document is read through [`Read::take`] of its bound plus one byte: a file within its bound
//! is read whole, and a larger one (`/dev/zero`, a 50 MB file, an endless pipe) stops one byte
//! past the bound. That prefix is what the decoder is given, and it refuses it as `too_large`
//! with its own sentence (`the document has more than N bytes, …`), so the command answers
//! exactly as the decoder does for a document held in memory, having read at most N + 1 bytes.
//!
//! A replay file (`aelc run --replay`) is a list of recorded answers, one JSON line each, which
//! the pipeline then holds to the node's `max_answer` ([`replay_bounds`] says how big it may
//! be); a file past them is an error naming the file and the bound, before anything runs.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// Room on one replay line for everything but the answer's text: the JSON envelope,
/// `finish_reason` and `usage`.
pub const REPLAY_LINE_ENVELOPE: u64 = 4096;
/// The most answers a replay file is read for: far more calls than any node's `on_failure`
/// policies make in one run (each retry, repair and fallback is one call).
pub const REPLAY_MAX_ANSWERS: u64 = 64;
/// The widest escape of one byte of text inside a JSON string (`\u0001`).
const JSON_ESCAPE_WIDTH: u64 = 6;

/// The document at `path` (stdin for `-`), read up to `limit` bytes and one more. More than
/// `limit` bytes back means the document is larger than its bound: hand it to the decoder,
/// which refuses it as `too_large`. The error is the sentence to print (exit 2).
pub fn read_document(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let read =
        open(path).and_then(|source| source.take(limit.saturating_add(1)).read_to_end(&mut bytes));
    match read {
        Ok(_) => Ok(bytes),
        Err(e) => Err(format!("cannot read {}: {e}", shown(path))),
    }
}

/// The most bytes one line and a whole replay file may have for a node whose `max_answer` is
/// `max_answer`: a line holds one answer, whose text may be up to six bytes per byte once
/// escaped in JSON, and a little more than `max_answer` (so that a replay can test the
/// `too_large` refusal), plus [`REPLAY_LINE_ENVELOPE`]; a file holds at most
/// [`REPLAY_MAX_ANSWERS`] such lines.
pub fn replay_bounds(max_answer: u64) -> (u64, u64) {
    let line = max_answer
        .saturating_add(1)
        .saturating_mul(JSON_ESCAPE_WIDTH)
        .saturating_add(REPLAY_LINE_ENVELOPE);
    (line, line.saturating_mul(REPLAY_MAX_ANSWERS))
}

/// The text of a replay file for a node whose `max_answer` is `max_answer`, read line by line
/// within [`replay_bounds`]. The error names the file, the line and the bound.
pub fn read_replay(path: &Path, max_answer: u64) -> Result<String, String> {
    let (line_bound, total_bound) = replay_bounds(max_answer);
    let cannot = |e: io::Error| format!("cannot read {}: {e}", shown(path));
    let mut source =
        BufReader::new(open(path).map_err(cannot)?).take(total_bound.saturating_add(1));
    let mut bytes = Vec::new();
    let mut number = 0u64;
    loop {
        number += 1;
        let start = bytes.len();
        let read = (&mut source)
            .take(line_bound.saturating_add(1))
            .read_until(b'\n', &mut bytes)
            .map_err(cannot)?;
        if read == 0 {
            break;
        }
        let line = &bytes[start..];
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        if content.len() as u64 > line_bound {
            return Err(format!(
                "{}: line {number} has more than {line_bound} bytes, the most one recorded answer \
                 may take for this node (max_answer {max_answer}, six bytes per byte once \
                 escaped, plus {REPLAY_LINE_ENVELOPE} for the rest of the line)",
                shown(path)
            ));
        }
        if bytes.len() as u64 > total_bound {
            return Err(format!(
                "{}: more than {total_bound} bytes, the most a replay file may have for this \
                 node ({REPLAY_MAX_ANSWERS} recorded answers of at most {line_bound} bytes)",
                shown(path)
            ));
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "cannot read {}: not UTF-8 (invalid byte at offset {})",
            shown(path),
            e.utf8_error().valid_up_to()
        )
    })
}

pub use aelc_runtime::exec::session_line_bound;

/// A file read one line at a time, each line within a bound: memory stays within one line
/// whatever the file holds.
pub struct Lines {
    source: BufReader<Box<dyn Read>>,
    bound: u64,
    shown: String,
}

/// The lines of `path` (stdin for `-`), each at most `bound` bytes.
pub fn lines(path: &Path, bound: u64) -> Result<Lines, String> {
    let source = open(path).map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    Ok(Lines {
        source: BufReader::new(source),
        bound,
        shown: shown(path),
    })
}

impl Lines {
    /// The next line without its line break; `None` at the end. A line over the bound, or not
    /// UTF-8, is an error naming the file.
    pub fn next_line(&mut self) -> Result<Option<String>, String> {
        let mut bytes = Vec::new();
        let read = (&mut self.source)
            .take(self.bound.saturating_add(1))
            .read_until(b'\n', &mut bytes)
            .map_err(|e| format!("cannot read {}: {e}", self.shown))?;
        if read == 0 {
            return Ok(None);
        }
        let content = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        if content.len() as u64 > self.bound {
            return Err(format!(
                "{}: a line has more than {} bytes, the most one observation may take",
                self.shown, self.bound
            ));
        }
        String::from_utf8(content.to_vec())
            .map(Some)
            .map_err(|_| format!("{}: a line is not UTF-8", self.shown))
    }
}

/// The file at `path`, or stdin for `-`.
fn open(path: &Path) -> io::Result<Box<dyn Read>> {
    if path == Path::new("-") {
        return Ok(Box::new(io::stdin().lock()));
    }
    Ok(Box::new(File::open(path)?))
}

/// How a document is named in messages: its path, or "the input from stdin".
fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("aelc-read-{name}-{}", std::process::id()));
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        path
    }

    #[test]
    fn reads_at_most_one_byte_past_the_bound() {
        let path = scratch("doc", &[b'a'; 100]);
        assert_eq!(read_document(&path, 1000).map(|b| b.len()), Ok(100));
        assert_eq!(read_document(&path, 100).map(|b| b.len()), Ok(100));
        assert_eq!(read_document(&path, 10).map(|b| b.len()), Ok(11));
        let _ = std::fs::remove_file(&path);
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_cut_at_the_bound() {
        let bytes = read_document(Path::new("/dev/zero"), 1 << 20);
        assert_eq!(bytes.map(|b| b.len()), Ok((1 << 20) + 1));
    }

    #[test]
    fn a_replay_is_held_to_its_bounds() {
        let (line, total) = replay_bounds(10);
        assert_eq!(line, 11 * 6 + REPLAY_LINE_ENVELOPE);
        assert_eq!(total, line * REPLAY_MAX_ANSWERS);
        let fine = "{\"text\": \"{}\", \"finish_reason\": \"stop\"}\n";
        let path = scratch("replay-ok", fine.as_bytes());
        assert_eq!(read_replay(&path, 10).as_deref(), Ok(fine));
        let _ = std::fs::remove_file(&path);
        let long = format!("{{\"text\": \"{}\"}}\n", "a".repeat(line as usize));
        let path = scratch("replay-line", long.as_bytes());
        let err = read_replay(&path, 10).err().unwrap_or_default();
        assert!(err.contains("line 1 has more than"), "{err}");
        let _ = std::fs::remove_file(&path);
        let many = fine.repeat((total / fine.len() as u64 + 1) as usize);
        let path = scratch("replay-total", many.as_bytes());
        let err = read_replay(&path, 10).err().unwrap_or_default();
        assert!(err.contains("the most a replay file may have"), "{err}");
        let _ = std::fs::remove_file(&path);
    }
}
