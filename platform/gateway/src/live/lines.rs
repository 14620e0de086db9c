//! A request body cut into lines as its frames arrive, each line within a bound: what the
//! session and stream routes read, one line at a time, so a line is handled (and a paused
//! stream stops reading) before the next frame is asked for.
//!
//! Memory: the frame hyper handed over (hyper bounds it) plus one partial line, which is
//! refused as soon as it is longer than a line may be, before its end arrives.

use axum::body::Bytes;

/// A line longer than the bound: its 1-based number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    pub line: usize,
}

pub struct Lines {
    /// The frame being cut, and how far.
    frame: Bytes,
    at: usize,
    /// The start of a line whose newline is in a later frame.
    pending: Vec<u8>,
    max: usize,
    /// Lines handed out so far.
    pub line: usize,
}

impl Lines {
    pub fn new(max: usize) -> Lines {
        Lines {
            frame: Bytes::new(),
            at: 0,
            pending: Vec::new(),
            max,
            line: 0,
        }
    }

    /// Whether the current frame is used up (time to read the next).
    pub fn needs_frame(&self) -> bool {
        self.at >= self.frame.len()
    }

    /// Takes the next frame (after [`Lines::needs_frame`]).
    pub fn push(&mut self, frame: Bytes) {
        self.frame = frame;
        self.at = 0;
    }

    /// The next complete line of what has arrived, without its `\n` (or `\r\n`); `Ok(None)`
    /// when the rest of the frame is a partial line (kept for the next frame).
    pub fn next_line(&mut self) -> Result<Option<Bytes>, TooLong> {
        let rest = self.frame.slice(self.at.min(self.frame.len())..);
        match rest.iter().position(|b| *b == b'\n') {
            Some(i) => {
                self.at += i + 1;
                self.line += 1;
                let line = if self.pending.is_empty() {
                    rest.slice(..i)
                } else {
                    self.pending.extend_from_slice(&rest[..i]);
                    Bytes::from(std::mem::take(&mut self.pending))
                };
                let line = if line.ends_with(b"\r") {
                    line.slice(..line.len() - 1)
                } else {
                    line
                };
                if line.len() > self.max {
                    return Err(TooLong { line: self.line });
                }
                Ok(Some(line))
            }
            None => {
                self.at = self.frame.len();
                self.pending.extend_from_slice(&rest);
                if self.pending.len() > self.max {
                    self.pending = Vec::new();
                    return Err(TooLong {
                        line: self.line + 1,
                    });
                }
                Ok(None)
            }
        }
    }

    /// The body has ended: its last line when it had no newline.
    pub fn last_line(&mut self) -> Option<Bytes> {
        if self.pending.is_empty() {
            return None;
        }
        self.line += 1;
        Some(Bytes::from(std::mem::take(&mut self.pending)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(frames: &[&str], max: usize) -> Vec<Result<String, TooLong>> {
        let mut lines = Lines::new(max);
        let mut out = Vec::new();
        for f in frames {
            lines.push(Bytes::from(f.to_string()));
            loop {
                match lines.next_line() {
                    Ok(Some(l)) => out.push(Ok(String::from_utf8_lossy(&l).into_owned())),
                    Ok(None) => break,
                    Err(e) => {
                        out.push(Err(e));
                        break;
                    }
                }
            }
        }
        if let Some(l) = lines.last_line() {
            out.push(Ok(String::from_utf8_lossy(&l).into_owned()));
        }
        out
    }

    #[test]
    fn lines_across_frames_and_crlf() {
        let got = all(&["ab\r\ncd", "ef\n\ng", "h"], 10);
        let want: Vec<Result<String, TooLong>> = ["ab", "cdef", "", "gh"]
            .iter()
            .map(|s| Ok(s.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_long_line_is_refused_before_its_end() {
        let got = all(&["ok\n12345", "678"], 5);
        assert_eq!(got[0], Ok("ok".to_owned()));
        assert_eq!(got[1], Err(TooLong { line: 2 }));
    }
}
