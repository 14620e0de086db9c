//! JSON-RPC over stdin/stdout, tolerant of malformed input.
//!
//! lsp-server's own `Connection::stdio()` ends its reader thread at the first malformed frame
//! or payload (`Message::read` returns `Err`, lsp-server 0.10 `stdio.rs`), which would kill the
//! server; the issue asks that garbage never does. So this reader frames messages itself: a
//! frame without a usable `Content-Length` is skipped line by line until a header is found
//! again, and a payload that is not a JSON-RPC message is reported on stderr and dropped. The
//! message types stay lsp-server's ([`Message`] serializes exactly as the protocol wants).
//!
//! The reader queues every message on an unbounded channel as soon as it arrives, which is what
//! lets the event loop see queued `didChange`s and `$/cancelRequest`s before doing stale work.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use lsp_server::Message;

/// What the reader hands the event loop.
pub enum Incoming {
    Message(Message),
    /// A frame that was not a JSON-RPC message; the text says why (for stderr).
    Malformed(String),
}

/// The two ends of the connection and the threads serving them.
pub struct Transport {
    pub receiver: Receiver<Incoming>,
    pub sender: Sender<Message>,
    writer: thread::JoinHandle<()>,
}

impl Transport {
    pub fn stdio() -> io::Result<Transport> {
        Transport::new(io::stdin(), io::stdout())
    }

    pub fn new(
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> io::Result<Transport> {
        let (in_tx, in_rx) = mpsc::channel();
        let (out_tx, out_rx) = mpsc::channel::<Message>();
        thread::Builder::new()
            .name("aelc-lsp-reader".into())
            .spawn(move || read_loop(io::BufReader::new(input), &in_tx))?;
        let writer = thread::Builder::new()
            .name("aelc-lsp-writer".into())
            .spawn(move || {
                let mut output = output;
                for message in out_rx {
                    if message.write(&mut output).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Transport {
            receiver: in_rx,
            sender: out_tx,
            writer,
        })
    }

    /// Closes the output and waits until everything queued was written.
    pub fn finish(self) {
        drop(self.sender);
        let _ = self.writer.join();
    }
}

fn read_loop(mut input: impl BufRead, tx: &Sender<Incoming>) {
    loop {
        let incoming = match read_frame(&mut input) {
            Ok(Some(body)) => parse(&body),
            Ok(None) => return,
            Err(err) if err.kind() == io::ErrorKind::InvalidData => {
                Incoming::Malformed(err.to_string())
            }
            Err(_) => return,
        };
        let is_exit =
            matches!(&incoming, Incoming::Message(Message::Notification(n)) if n.method == "exit");
        if tx.send(incoming).is_err() || is_exit {
            return;
        }
    }
}

fn parse(body: &[u8]) -> Incoming {
    match serde_json::from_slice::<Message>(body) {
        Ok(message) => Incoming::Message(message),
        Err(err) => {
            let shown: String = String::from_utf8_lossy(body).chars().take(200).collect();
            Incoming::Malformed(format!("not a JSON-RPC message ({err}): {shown}"))
        }
    }
}

/// Reads one frame's body. `Ok(None)` at the end of the input; `InvalidData` for a frame whose
/// header was unusable (the bytes up to the next blank line are skipped).
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    let mut bad_header = None;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        match text.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => bad_header = Some(text.to_owned()),
                }
            }
            Some(_) => {}
            None => bad_header = Some(text.to_owned()),
        }
    }
    let Some(length) = length else {
        let why = bad_header.unwrap_or_else(|| "no Content-Length".into());
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("malformed header: {why}"),
        ));
    };
    // A frame larger than this is not an edit anyone makes; refuse rather than allocate it.
    if length > 256 << 20 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame of {length} bytes is too large"),
        ));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_between_frames_is_skipped() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let input = format!(
            "garbage line\r\n\r\nContent-Length: 3\r\n\r\n{{x}}Content-Length: {}\r\n\r\n{good}",
            good.len()
        );
        let mut reader = io::BufReader::new(input.as_bytes());
        assert!(read_frame(&mut reader).is_err());
        let bad = read_frame(&mut reader).unwrap().unwrap();
        assert!(matches!(parse(&bad), Incoming::Malformed(_)));
        let body = read_frame(&mut reader).unwrap().unwrap();
        assert!(matches!(
            parse(&body),
            Incoming::Message(Message::Notification(_))
        ));
        assert!(read_frame(&mut reader).unwrap().is_none());
    }
}
