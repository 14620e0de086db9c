//! A scripted HTTP/1.1 server on 127.0.0.1 for the provider tests: it serves one recorded reply
//! per connection, in order, records each request (method, path, headers, JSON body) and, for
//! endless replies, whether the client hung up before the server finished writing.
//!
//! Everything is bounded: the number of connections is the number of replies, every write has
//! a timeout, and an endless reply stops after a fixed byte count.

#![allow(dead_code)] // each test file uses part of it

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names, in order.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as sent (its key order: `body` is a `serde_json::Value`, whose order depends
    /// on `serde_json`'s features).
    pub text: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// What one connection is answered with.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A whole response with `content-length`.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A server-sent event stream. `chunked`: chunked transfer encoding, else delimited by
    /// closing the connection. `complete: false` cuts the connection after the last event
    /// (without the final zero-size chunk when chunked).
    Stream {
        events: Vec<String>,
        chunked: bool,
        complete: bool,
    },
    /// One connection kept alive for several calls: a chunked server-sent event stream for
    /// each request read, in order (no `connection: close`).
    KeptAlive { streams: Vec<Vec<String>> },
    /// `head` then `piece` repeated until the client hangs up or `limit` bytes were written.
    Endless {
        head: Vec<u8>,
        piece: Vec<u8>,
        limit: usize,
    },
    /// Reads the request, then says nothing for `hold`, then closes.
    Stall { hold: Duration },
    /// Writes `head` (a status line, headers, part of a body), then says nothing for `hold`.
    StallAfter { head: Vec<u8>, hold: Duration },
}

/// How an endless reply ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub bytes_written: usize,
    pub client_hung_up: bool,
}

pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    outcomes: Arc<Mutex<Vec<Outcome>>>,
    worker: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let (log, ends) = (Arc::clone(&requests), Arc::clone(&outcomes));
        let worker = thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                serve(stream, reply, &log, &ends);
            }
        });
        Server {
            addr,
            requests,
            outcomes,
            worker: Some(worker),
        }
    }

    /// `http://127.0.0.1:PORT` + `suffix`.
    pub fn url(&self, suffix: &str) -> String {
        format!("http://{}{}", self.addr, suffix)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Waits until every reply was served, then returns the outcomes of endless replies.
    pub fn finish(mut self) -> (Vec<Recorded>, Vec<Outcome>) {
        if let Some(worker) = self.worker.take() {
            worker.join().expect("server thread");
        }
        let outcomes = self.outcomes.lock().map(|o| o.clone()).unwrap_or_default();
        (self.requests(), outcomes)
    }
}

fn serve(
    mut stream: TcpStream,
    reply: Reply,
    log: &Mutex<Vec<Recorded>>,
    ends: &Mutex<Vec<Outcome>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    if let Reply::KeptAlive { streams } = reply {
        return serve_kept_alive(stream, streams, log);
    }
    if let Some(request) = read_request(&mut stream) {
        if let Ok(mut log) = log.lock() {
            log.push(request);
        }
    }
    match reply {
        Reply::KeptAlive { .. } => {}
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            for (name, value) in &headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str(&format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            ));
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Stream {
            events,
            chunked,
            complete,
        } => {
            let framing = if chunked {
                "transfer-encoding: chunked\r\n"
            } else {
                ""
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n{framing}connection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            for event in events {
                let bytes = if chunked {
                    format!("{:x}\r\n{event}\r\n", event.len())
                } else {
                    event
                };
                let _ = stream.write_all(bytes.as_bytes());
                let _ = stream.flush();
            }
            if chunked && complete {
                let _ = stream.write_all(b"0\r\n\r\n");
            }
        }
        Reply::Endless { head, piece, limit } => {
            let mut written = 0;
            let mut hung_up = stream.write_all(&head).is_err();
            while !hung_up && written < limit {
                match stream.write_all(&piece) {
                    Ok(()) => written += piece.len(),
                    Err(_) => hung_up = true,
                }
            }
            if let Ok(mut ends) = ends.lock() {
                ends.push(Outcome {
                    bytes_written: written,
                    client_hung_up: hung_up,
                });
            }
        }
        Reply::Stall { hold } => thread::sleep(hold),
        Reply::StallAfter { head, hold } => {
            let _ = stream.write_all(&head);
            let _ = stream.flush();
            thread::sleep(hold);
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Answers each request on `stream` with the next of `streams`, then closes.
fn serve_kept_alive(mut stream: TcpStream, streams: Vec<Vec<String>>, log: &Mutex<Vec<Recorded>>) {
    for events in streams {
        let Some(request) = read_request(&mut stream) else {
            break;
        };
        if let Ok(mut log) = log.lock() {
            log.push(request);
        }
        let mut bytes =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_vec();
        for event in events {
            bytes.extend_from_slice(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
        if stream.write_all(&bytes).is_err() {
            break;
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

/// Reads one request: headers up to the blank line, then `content-length` bytes of body.
fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if bytes.len() > 64 * 1024 {
            return None;
        }
        let count = stream.read(&mut chunk).ok()?;
        if count == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..count]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length.min(16 << 20) {
        let count = stream.read(&mut chunk).ok()?;
        if count == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..count]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        text: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// `data: {json}\n\n`.
pub fn sse(json: &Value) -> String {
    format!("data: {json}\n\n")
}

/// `event: {name}\ndata: {json}\n\n`.
pub fn named_sse(name: &str, json: &Value) -> String {
    format!("event: {name}\ndata: {json}\n\n")
}

pub fn json_reply(status: u16, body: &Value) -> Reply {
    Reply::Full {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
    }
}
