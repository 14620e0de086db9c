//! A TCP listener that holds at most N connections: one more is answered `503` with a
//! `Retry-After` and closed, so ten thousand clients cost a bounded amount of memory instead of
//! ten thousand connection states.
//!
//! Refusing is itself bounded: at most [`REFUSING`] refusals are written at once; beyond that a
//! connection is closed without an answer.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Refusals written at once.
pub const REFUSING: usize = 256;

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 83\r\n\r\n\
{\"error\":{\"code\":\"overloaded\",\"message\":\"the gateway is at capacity; retry later\"}}";

/// See the module doc.
pub struct BoundedListener {
    inner: TcpListener,
    slots: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
}

impl BoundedListener {
    pub fn new(inner: TcpListener, max_connections: usize) -> BoundedListener {
        BoundedListener {
            inner,
            slots: Arc::new(Semaphore::new(max_connections.max(1))),
            refusing: Arc::new(Semaphore::new(REFUSING)),
        }
    }
}

/// An accepted connection holding its slot until it closes.
pub struct Counted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => match Arc::clone(&self.slots).try_acquire_owned() {
                    Ok(slot) => {
                        let _ = stream.set_nodelay(true);
                        return (
                            Counted {
                                stream,
                                _slot: slot,
                            },
                            addr,
                        );
                    }
                    Err(_) => {
                        if let Ok(permit) = Arc::clone(&self.refusing).try_acquire_owned() {
                            tokio::spawn(refuse(stream, permit));
                        }
                    }
                },
                // Out of file descriptors or a connection reset before accept: wait a little
                // (as axum's own listener does) instead of spinning.
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// Answers 503 to a connection over the limit: reads what the client sent (briefly, so closing
/// does not reset the connection before it reads the answer), writes the refusal, closes.
async fn refuse(mut stream: TcpStream, _permit: OwnedSemaphorePermit) {
    let mut scratch = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut scratch)).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(REFUSAL).await?;
        stream.shutdown().await
    })
    .await;
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_says_its_length() {
        let text = std::str::from_utf8(super::REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body.trim()).unwrap();
        assert_eq!(json["error"]["code"], "overloaded");
    }
}
