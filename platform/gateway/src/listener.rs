//! The gateway's connections: accepted, bounded and timed here, served by hyper.
//!
//! What a client without a key can hold, and for how long, is bounded at this layer, before
//! any route runs (issue 48: a hundred sockets that sent nothing held every slot forever):
//!
//! - **At most `max_connections` at once** ([`BoundedListener`]); one more is answered `503`
//!   with a `Retry-After` and closed by the listener itself. Refusing is bounded too: at most
//!   [`REFUSING`] refusals are written at once; beyond that a connection is closed unanswered.
//! - **At most `max_connections_per_client` from one client** (an IPv4 address, an IPv6 /64:
//!   what one host can spend); one more is answered `429 too_many_connections` and closed, so a
//!   handful of clients cannot take every slot from the rest.
//! - **A complete request head within `header_timeout`**: hyper's own header timer
//!   (`header_read_timeout`, HTTP/1.1) cuts a connection that trickles its head, and starts
//!   again whenever a kept-alive connection waits for its next request, so an idle HTTP/1.1
//!   connection is closed after the same time. The first request must also have begun by
//!   then, which covers what hyper's timer does not see: a socket that sends nothing at all
//!   (the protocol is still being detected) and an HTTP/2 connection that opens no stream.
//! - **No request in progress for `idle_timeout`**: the connection is closed (HTTP/2 has no
//!   header timer, and its pings keep a connection alive without any request).
//!
//! Every connection is served by `hyper_util`'s automatic HTTP/1.1 or HTTP/2 builder: this is
//! `axum::serve` with the timers it does not expose. On shutdown the listener stops accepting,
//! every connection is asked to finish (`graceful_shutdown`: requests in progress complete,
//! runs store their receipts) and [`serve`] returns once the last one has closed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tower::ServiceExt;

/// Refusals written at once.
pub const REFUSING: usize = 256;

const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 83\r\n\r\n\
{\"error\":{\"code\":\"overloaded\",\"message\":\"the gateway is at capacity; retry later\"}}";

const TOO_MANY: &[u8] = b"HTTP/1.1 429 Too Many Requests\r\n\
content-type: application/json\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 101\r\n\r\n\
{\"error\":{\"code\":\"too_many_connections\",\"message\":\"this client holds as many connections as it may\"}}";

/// How connections are bounded (see the module doc).
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
}

/// See the module doc.
pub struct BoundedListener {
    inner: TcpListener,
    slots: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    clients: Arc<Clients>,
}

impl BoundedListener {
    pub fn new(
        inner: TcpListener,
        max_connections: usize,
        max_connections_per_client: usize,
    ) -> BoundedListener {
        BoundedListener {
            inner,
            slots: Arc::new(Semaphore::new(max_connections.max(1))),
            refusing: Arc::new(Semaphore::new(REFUSING)),
            clients: Arc::new(Clients {
                max: max_connections_per_client.max(1),
                held: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The next connection within the limits; those over them are refused on the way
    /// (answered by a task of their own, never by this loop).
    pub async fn accept(&mut self) -> (Counted, SocketAddr) {
        loop {
            match self.inner.accept().await {
                // A full gateway says so first (503, retry anywhere later); a free slot is
                // then refused to a client over its share (429, its own doing).
                Ok((stream, addr)) => match Arc::clone(&self.slots).try_acquire_owned() {
                    Err(_) => self.refuse(stream, REFUSAL),
                    Ok(slot) => match Clients::admit(&self.clients, addr.ip()) {
                        None => self.refuse(stream, TOO_MANY),
                        Some(client) => {
                            let _ = stream.set_nodelay(true);
                            return (
                                Counted {
                                    stream,
                                    _slot: slot,
                                    _client: client,
                                },
                                addr,
                            );
                        }
                    },
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

    fn refuse(&self, stream: TcpStream, answer: &'static [u8]) {
        if let Ok(permit) = Arc::clone(&self.refusing).try_acquire_owned() {
            tokio::spawn(refuse(stream, answer, permit));
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// Connections held per client: an IPv4 address, or the /64 of an IPv6 address (one host's
/// usual share; a host can pick any address of its /64).
struct Clients {
    max: usize,
    held: Mutex<HashMap<IpAddr, usize>>,
}

impl Clients {
    fn key(ip: IpAddr) -> IpAddr {
        match ip {
            IpAddr::V4(_) => ip,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let mut octets = v6.octets();
                    octets[8..].fill(0);
                    IpAddr::V6(octets.into())
                }
            },
        }
    }

    fn admit(clients: &Arc<Clients>, ip: IpAddr) -> Option<ClientSlot> {
        let key = Clients::key(ip);
        let mut held = clients.held.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(key).or_insert(0);
        if *count >= clients.max {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            clients: Arc::clone(clients),
            key,
        })
    }
}

/// One connection of a client, given back when the connection closes.
struct ClientSlot {
    clients: Arc<Clients>,
    key: IpAddr,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.clients.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.key) {
            *count -= 1;
            // Forgotten at zero, so the map holds only clients with a connection open.
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

/// An accepted connection holding its slots until it closes.
pub struct Counted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
    _client: ClientSlot,
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

/// Answers a connection over a limit: reads what the client sent (briefly, so closing does not
/// reset the connection before it reads the answer), writes the refusal, closes.
async fn refuse(mut stream: TcpStream, answer: &'static [u8], _permit: OwnedSemaphorePermit) {
    let mut scratch = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut scratch)).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(answer).await?;
        stream.shutdown().await
    })
    .await;
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves, then stops
/// accepting and returns once every connection has finished (see the module doc).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let mut listener = BoundedListener::new(
        listener,
        limits.max_connections,
        limits.max_connections_per_client,
    );
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    // Pings find dead peers of long requests; the idle timer below closes the live ones that
    // hold a connection without using it.
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.idle_timeout)
        .keep_alive_timeout(limits.header_timeout);
    let builder = Arc::new(builder);
    let (stop, stopping) = tokio::sync::watch::channel(false);
    // Every connection's task holds a sender; `recv` answers `None` once all are gone.
    let (open, mut all_closed) = tokio::sync::mpsc::channel::<Infallible>(1);
    tokio::pin!(shutdown);
    loop {
        let (io, _addr) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let connection = Connection {
            builder: Arc::clone(&builder),
            router: router.clone(),
            header_timeout: limits.header_timeout,
            idle_timeout: limits.idle_timeout,
            stopping: stopping.clone(),
            _open: open.clone(),
        };
        tokio::spawn(connection.serve(io));
    }
    drop(listener);
    let _ = stop.send(true);
    drop(open);
    let _ = all_closed.recv().await;
    Ok(())
}

/// What one connection's task needs.
struct Connection {
    builder: Arc<hyper_util::server::conn::auto::Builder<TokioExecutor>>,
    router: Router,
    header_timeout: Duration,
    idle_timeout: Duration,
    stopping: tokio::sync::watch::Receiver<bool>,
    _open: tokio::sync::mpsc::Sender<Infallible>,
}

impl Connection {
    async fn serve(mut self, io: Counted) {
        let activity = Arc::new(Activity::new());
        let seen = Arc::clone(&activity);
        let router = self.router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = seen.begin();
            let router = router.clone();
            async move {
                let response = router.oneshot(request.map(axum::body::Body::new)).await;
                drop(busy);
                response
            }
        });
        let connection = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(io), service);
        tokio::pin!(connection);
        let cut = activity.watch(self.header_timeout, self.idle_timeout);
        tokio::pin!(cut);
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(error = %e, "connection ended");
                }
                return;
            }
            why = &mut cut => {
                tracing::debug!(why, "connection closed");
                return;
            }
            _ = self.stopping.wait_for(|stop| *stop) => {}
        }
        // Shutting down: requests in progress finish; an idle connection closes at once, and a
        // client that never completes a request is still cut by its timers.
        connection.as_mut().graceful_shutdown();
        tokio::select! {
            _ = connection.as_mut() => {}
            _ = &mut cut => {}
        }
    }
}

/// What a connection is doing, for its timers: how many requests are in progress (the
/// service's futures, which end when their response is ready), since when none is, and whether
/// any has begun.
struct Activity {
    in_flight: AtomicUsize,
    begun: AtomicBool,
    idle_since: Mutex<Instant>,
    idle: Notify,
}

/// A request in progress on its connection.
struct Busy(Arc<Activity>);

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicUsize::new(0),
            begun: AtomicBool::new(false),
            idle_since: Mutex::new(Instant::now()),
            idle: Notify::new(),
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.begun.store(true, Ordering::SeqCst);
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(Arc::clone(self))
    }

    /// Since when no request has been in progress (`None` while one is).
    fn idle_since(&self) -> Option<Instant> {
        let since = self.idle_since.lock().unwrap_or_else(|e| e.into_inner());
        (self.in_flight.load(Ordering::SeqCst) == 0).then_some(*since)
    }

    /// Resolves (with the reason) when the connection should be cut: no request begun within
    /// `header` of its start, or none in progress for `idle`.
    async fn watch(&self, header: Duration, idle: Duration) -> &'static str {
        tokio::time::sleep(header).await;
        if !self.begun.load(Ordering::SeqCst) {
            return "no request within the header timeout";
        }
        loop {
            let Some(since) = self.idle_since() else {
                // A permit left by an earlier end wakes this at once; the loop looks again.
                self.idle.notified().await;
                continue;
            };
            let deadline = since + idle;
            if Instant::now() >= deadline {
                return "idle for the idle timeout";
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut since = self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner());
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            *since = Instant::now();
            self.0.idle.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_say_their_length() {
        for (answer, code) in [(REFUSAL, "overloaded"), (TOO_MANY, "too_many_connections")] {
            let text = std::str::from_utf8(answer).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(head.contains(&format!("content-length: {}", body.len())));
            let json: serde_json::Value = serde_json::from_str(body.trim()).unwrap();
            assert_eq!(json["error"]["code"], code);
        }
    }

    #[test]
    fn a_client_is_an_ipv4_address_or_an_ipv6_slash_64() {
        let clients = Arc::new(Clients {
            max: 2,
            held: Mutex::new(HashMap::new()),
        });
        let a: IpAddr = "2001:db8::1".parse().unwrap();
        let b: IpAddr = "2001:db8::ffff:2".parse().unwrap();
        let other: IpAddr = "2001:db8:0:1::1".parse().unwrap();
        let first = Clients::admit(&clients, a).unwrap();
        let _second = Clients::admit(&clients, b).unwrap();
        assert!(Clients::admit(&clients, a).is_none(), "the /64 is full");
        assert!(Clients::admit(&clients, other).is_some(), "another /64");
        drop(first);
        assert!(Clients::admit(&clients, b).is_some(), "a slot came back");
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(Clients::key(mapped), "127.0.0.1".parse::<IpAddr>().unwrap());
    }
}
