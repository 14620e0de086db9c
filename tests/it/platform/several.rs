//! Past one machine (issue 45): the file store on an S3-compatible object store (a real
//! `moto_server` on 127.0.0.1), and several gateways serving as one on one PostgreSQL and one
//! bucket.
//!
//! - `file_store_conformance`: one suite of the file store's promises, run on the local folder
//!   and on the bucket: bytes and records read back, an upload in pieces (multipart on S3)
//!   invisible until committed and nothing left of a dropped one, shared bytes kept until
//!   their last reference goes, the sweep of expired files one sweeper at a time.
//! - `two_gateways_serve_as_one`: a file uploaded through A used by a run through B, A's
//!   receipt read through B, one `Idempotency-Key` sent to A then B runs once, 20 calls split
//!   across both on the last cents of a balance, an expired file swept, the bucket refusing
//!   (a proxy in front of it that drops every connection) and coming back, then A killed
//!   (SIGKILL) with runs in flight and B voiding them after A's lease.
//! - `a_restarted_postgres_costs_a_window`: the database restarted under load (`pg_ctl -m
//!   fast -w restart` of a cluster of the test's own): the calls of that window get a 503 or
//!   their answer, the charges are exactly the successful receipts, and the gateway recovers by
//!   itself.
//!
//! `moto_server` is `AELC_MOTO_SERVER`, else found on `PATH`; without it the object-store
//! halves are skipped loudly, except under `CI`, where that fails.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aelc_runtime::files::{fetch, sha256_hex, Blobs, Files, MediaStore};
use aelc_runtime::money::Amount;
use aelc_store::{FileMeta, Store};
use serde_json::{json, Value};

use super::{
    account, amount, ask, get, http, ledger, look_project, open_runs, pg, png, post_run, project,
    runtime, temp_dir, FakeModel, Gateway, AELC,
};

// ---------------------------------------------------------------- moto and a proxy

/// A `moto_server` on a free port of 127.0.0.1, with one bucket; stopped when dropped.
struct Moto {
    child: Child,
    port: u16,
}

const BUCKET: &str = "aelc-test";

impl Moto {
    /// `None` (and a loud skip) when there is no `moto_server`; a failure under `CI`.
    fn start() -> Option<Moto> {
        let Some(exe) = moto_exe() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "no moto_server (AELC_MOTO_SERVER or PATH), but CI is set: .ci/run must \
                 install moto[server] and export AELC_MOTO_SERVER"
            );
            eprintln!(
                "\n!!! SKIPPED the object-store half: no moto_server (set AELC_MOTO_SERVER; \
                 pip install \"moto[server]==5.2.5\"); CI runs it !!!\n"
            );
            return None;
        };
        let port = free_port();
        let child = Command::new(&exe)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let moto = Moto { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "moto_server did not listen on {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // CreateBucket: moto takes an unsigned request.
        let status = http()
            .put(format!("http://127.0.0.1:{port}/{BUCKET}"))
            .send(&[][..])
            .expect("create the bucket")
            .status()
            .as_u16();
        assert_eq!(status, 200, "moto refused to create the bucket");
        Some(moto)
    }

    /// Whether `key` is in the bucket, asked directly (not through a gateway).
    fn has(&self, key: &str) -> bool {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let _entered = rt.enter();
        let blobs = bucket(self.port, &format!("s3://{BUCKET}"));
        blobs.get(key, 1).expect("read the bucket").is_some()
    }
}

/// The bucket's store under `url`, with the `AWS_*` settings of a client of `port`.
fn bucket(port: u16, url: &str) -> aelc_gateway::files::ObjectBlobs {
    let settings: Vec<(String, String)> = aws_env(port)
        .into_iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect();
    let settings: Vec<(&str, &str)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    aelc_gateway::files::ObjectBlobs::s3_with(url, &settings).expect("the bucket's store")
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn moto_exe() -> Option<PathBuf> {
    if let Some(exe) = std::env::var_os("AELC_MOTO_SERVER").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(exe));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("moto_server"))
        .find(|exe| exe.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A TCP proxy in front of moto that can refuse: while down, every connection (open ones
/// included) is closed at once, as an object store that is unreachable.
struct Proxy {
    port: u16,
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("its address").port();
        let down = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::<TcpStream>::new()));
        let (refusing, tracked) = (Arc::clone(&down), Arc::clone(&open));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if refusing.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
                    let mut open = tracked.lock().unwrap_or_else(|e| e.into_inner());
                    open.push(c);
                    open.push(s);
                }
                pipe(&client, &server);
                pipe(&server, &client);
            }
        });
        Proxy { port, down, open }
    }

    fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
        if down {
            for stream in self
                .open
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
}

fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// The `AWS_*` settings of a client of `port` (moto takes any key).
fn aws_env(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ]
}

// ---------------------------------------------------------------- the conformance suite

/// A file store on `backend` for the suite: the folder of `dir`, or the bucket under `prefix`.
fn open_files(backend: &Backend, dir: &Path) -> Files {
    match backend {
        Backend::Folder => aelc_gateway::files::open(None, dir).expect("the folder"),
        Backend::Bucket(port) => {
            let url = format!("s3://{BUCKET}/conformance-{}", std::process::id());
            Files::new(Arc::new(bucket(*port, &url)))
        }
    }
}

enum Backend {
    Folder,
    Bucket(u16),
}

/// Bytes that are not the same from one call to the next, `len` long.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 13) as u8)
        .collect()
}

/// The file store's promises, the same on every backend.
fn conformance(name: &str, backend: Backend) {
    // A multi-threaded runtime: the object store's client waits on it from this thread, and
    // its multipart parts are sent by its tasks.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let _entered = rt.enter();
    let dir = temp_dir(&format!("files-{name}"));
    let files = open_files(&backend, &dir);

    // -- a small file: its record and bytes read back, verified
    let small = files
        .put(b"hello, object", "acme", None, Some("file:a.txt".into()))
        .expect("put");
    assert_eq!(files.record(small.id()).expect("read"), Some(small.clone()));
    assert_eq!(
        fetch(&files, &small.media, "acme", 0).expect("fetch"),
        b"hello, object"
    );
    // Another tenant's, a missing and an escaping id are all "no such file".
    assert!(fetch(&files, &small.media, "bob", 0).is_err());
    for id in [
        "../../etc/passwd",
        "a/b",
        "",
        "0190b7a5c2e47a3b9c1d2e3f4a5b6c7d",
    ] {
        assert_eq!(files.record(id), Ok(None), "{id}");
    }

    // -- 12 MiB in 256 KiB pieces (three multipart parts on S3): invisible until committed
    let big = pattern(7, 12 * 1024 * 1024 + 5);
    let mut incoming = files.incoming().expect("incoming");
    for piece in big.chunks(256 * 1024) {
        incoming.write(piece).expect("write");
    }
    let received = incoming.finish("acme", None, None).expect("finish");
    let id = received.stored().id().to_owned();
    assert_eq!(received.stored().media.sha256, sha256_hex(&big));
    assert_eq!(received.stored().media.size, big.len() as u64);
    assert_eq!(files.record(&id), Ok(None), "visible before its commit");
    let stored = received.commit().expect("commit");
    assert_eq!(fetch(&files, &stored.media, "acme", 0).expect("fetch"), big);

    // -- a dropped upload leaves no record, and nothing under tmp/ once its abort has run
    let refs_before = files.record(&id).expect("read").is_some();
    assert!(refs_before);
    let mut dropped = files.incoming().expect("incoming");
    dropped.write(&pattern(9, 6 * 1024 * 1024)).expect("write");
    drop(dropped);
    let received = {
        let mut i = files.incoming().expect("incoming");
        i.write(b"received, never committed").expect("write");
        i.finish("acme", None, None).expect("finish")
    };
    let never = received.stored().id().to_owned();
    drop(received);
    assert_eq!(files.record(&never), Ok(None));
    let blobs_tmp = wait_until_empty(&files, "tmp/");
    assert!(blobs_tmp.is_empty(), "left in tmp/: {blobs_tmp:?}");

    // -- shared bytes stay until their last reference goes
    let a = files.put(b"same bytes", "acme", None, None).expect("a");
    let b = files.put(b"same bytes", "bob", None, None).expect("b");
    assert_eq!(files.remove(a.id()).expect("remove a"), Some(a.clone()));
    assert_eq!(files.record(a.id()), Ok(None));
    assert_eq!(
        fetch(&files, &b.media, "bob", 0).expect("b's bytes"),
        b"same bytes"
    );
    assert_eq!(files.remove(b.id()).expect("remove b"), Some(b.clone()));
    let gone = files.bytes(&b, 100).expect_err("bytes no reference names");
    assert!(gone.contains("the file's bytes are gone"), "{gone}");
    assert_eq!(files.remove(b.id()).expect("again"), None);

    // -- the sweep: expired files go (row, record, bytes), one sweeper at a time
    rt.block_on(async {
        let store_dir = temp_dir(&format!("files-{name}-store"));
        let url = format!("sqlite:{}", store_dir.join("store.db").display());
        let store: Arc<dyn Store> = aelc_store::open(&url).await.expect("the store");
        let now = 1_796_220_000_000;
        let row = |stored: &aelc_runtime::files::StoredFile, expires_ms| FileMeta {
            id: stored.id().to_owned(),
            tenant: stored.tenant.clone(),
            sha256: stored.media.sha256.clone(),
            size: stored.media.size,
            media_type: stored.media.content_type.clone(),
            created_ms: now - 10_000,
            expires_ms,
            source: None,
        };
        let put = |bytes: &'static [u8], expires: Option<String>| {
            let files = files.clone();
            tokio::task::spawn_blocking(move || files.put(bytes, "acme", expires, None))
        };
        let old = put(b"expired", Some("2026-12-02T13:00:00Z".into()))
            .await
            .expect("join")
            .expect("put");
        let live = put(b"still good", Some("2026-12-03T13:00:00Z".into()))
            .await
            .expect("join")
            .expect("put");
        for (file, expires) in [(&old, now - 1), (&live, now + 86_400_000)] {
            store
                .put_file(&row(file, Some(expires)), u64::MAX)
                .await
                .expect("row");
        }
        let turn = Duration::from_millis(300);
        let swept = aelc_gateway::files::sweep(&store, &files, now, turn)
            .await
            .expect("sweep");
        assert_eq!(swept.files, 1);
        assert!(swept.took_turn);
        // Another process asking while the turn lasts does nothing.
        let other = aelc_gateway::files::sweep(&store, &files, now + 100, turn)
            .await
            .expect("sweep");
        assert!(!other.took_turn);
        assert_eq!(store.file("acme", old.id()).await.expect("read"), None);
        assert!(store.file("acme", live.id()).await.expect("read").is_some());
        let (f, o, l) = (files.clone(), old.clone(), live.clone());
        let (old_record, old_bytes, live_bytes) = tokio::task::spawn_blocking(move || {
            (
                f.record(o.id()),
                f.bytes(&o, 100),
                fetch(&f, &l.media, "acme", now),
            )
        })
        .await
        .expect("join");
        assert_eq!(old_record, Ok(None));
        assert!(
            old_bytes.is_err(),
            "the expired file's bytes are still there"
        );
        assert_eq!(live_bytes.expect("the live file"), b"still good");
        // Once the turn has lapsed, the next sweeper takes it.
        let later = aelc_gateway::files::sweep(&store, &files, now + 400, turn)
            .await
            .expect("sweep");
        assert_eq!((later.took_turn, later.files), (true, 0));
    });
}

/// The keys under `prefix`, waiting up to 5 s for them to go (an abort is a background task).
fn wait_until_empty(files: &Files, prefix: &str) -> Vec<String> {
    let started = Instant::now();
    loop {
        let left = files.list(prefix).expect("list");
        if left.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn file_store_conformance_on_the_folder() {
    conformance("folder", Backend::Folder);
}

#[test]
fn file_store_conformance_on_s3() {
    let Some(moto) = Moto::start() else { return };
    conformance("s3", Backend::Bucket(moto.port));
}

// ---------------------------------------------------------------- two gateways

fn upload(gw: &Gateway, key: &str, bytes: &[u8], query: &str) -> (u16, Value) {
    let mut response = http()
        .post(gw.url(&format!("/v1/files{query}")))
        .header("authorization", &format!("Bearer {key}"))
        .send(bytes)
        .expect("upload");
    let text = response.body_mut().read_to_string().expect("the body");
    (
        response.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn look(gw: &Gateway, key: &str, photo: &Value) -> (u16, Value) {
    let mut response = http()
        .post(gw.url("/v1/agents/acme/look/runs"))
        .header("authorization", &format!("Bearer {key}"))
        .header("content-type", "application/json")
        .send(&json!({ "photo": photo }).to_string())
        .expect("run");
    let text = response.body_mut().read_to_string().expect("the body");
    (
        response.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn file_id(reference: &Value) -> String {
    reference["ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("holon://files/"))
        .expect("a reference")
        .to_owned()
}

#[test]
fn two_gateways_serve_as_one() {
    let Some(server) = pg::server() else { return };
    let Some(moto) = Moto::start() else { return };
    let store = runtime().block_on(server.fresh_database("several"));
    let proxy = Proxy::start(moto.port);
    let model = FakeModel::start();
    let dir = temp_dir("several");
    look_project(&dir, model.port);
    let demo = account(&dir, &store, "demo", "5 EUR");
    let prefix = format!("several-{}", std::process::id());
    let files = format!("s3://{BUCKET}/{prefix}");
    let env = aws_env(proxy.port);
    let a = Gateway::start_with_env(
        &dir,
        &store,
        &["--files", &files, "--instance", "a", "--lease", "2"],
        &env,
    );
    let b = Gateway::start_with_env(
        &dir,
        &store,
        &["--files", &files, "--instance", "b", "--lease", "1"],
        &env,
    );

    // -- a file uploaded through A is read by a run through B
    let (status, photo) = upload(&a, &demo, &png("shared"), "");
    assert_eq!(status, 201, "{photo}");
    assert!(
        moto.has(&format!("{prefix}/{}", photo["sha256"].as_str().unwrap())),
        "the bytes are not in the bucket"
    );
    let calls = model.calls();
    let (status, seen) = look(&b, &demo, &photo);
    assert_eq!(status, 200, "{seen}");
    assert_eq!(seen["status"], "succeeded");
    assert_eq!(model.calls(), calls + 1);
    // Its metadata is the store's: B lists it too.
    let (status, meta) = get(&b, &format!("/v1/files/{}", file_id(&photo)), Some(&demo));
    assert_eq!(status, 200, "{meta}");

    // -- `aelc files put --files s3://…` stores in the same bucket: a run through B uses it,
    //    and `aelc files delete --files s3://…` removes it from there
    let picture = dir.join("picture.png");
    std::fs::write(&picture, png("from the command line")).expect("picture");
    let cli = |args: &[&str]| {
        let out = Command::new(AELC)
            .args(args)
            .current_dir(&dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run aelc");
        assert!(
            out.status.success(),
            "aelc {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let put = cli(&[
        "files",
        "put",
        "picture.png",
        "--tenant",
        "demo",
        "--files",
        &files,
    ]);
    let put: Value = serde_json::from_str(put.trim()).expect("a reference");
    let (status, seen) = look(&b, &demo, &put);
    assert_eq!(status, 200, "{seen}");
    let deleted = cli(&[
        "files",
        "delete",
        &file_id(&put),
        "--store",
        &store,
        "--files",
        &files,
    ]);
    assert!(deleted.starts_with("deleted "), "{deleted}");
    assert!(!moto.has(&format!("{prefix}/refs/{}.json", file_id(&put))));

    // -- A's receipt read through B
    let first = post_run(&a, &demo, &ask("[ok] through A"), None);
    assert_eq!(first.status, 200, "{}", first.body);
    let id = first.body["receipt"]["receipt"].as_str().expect("an id");
    let (status, text) = get(&b, &format!("/v1/receipts/{id}"), Some(&demo));
    assert_eq!(status, 200, "{text}");
    let receipt: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(receipt["status"], "succeeded");

    // -- one Idempotency-Key sent to A then B: one run, one charge
    let (before, calls) = (ledger(&store, &["demo"])[0].0, model.calls());
    let once = post_run(&a, &demo, &ask("[ok] once"), Some("several-1"));
    let again = post_run(&b, &demo, &ask("[ok] once"), Some("several-1"));
    assert_eq!((once.status, again.status), (200, 200), "{}", again.body);
    assert!(again.replayed, "B ran the call again: {}", again.body);
    assert_eq!(
        once.body["receipt"]["receipt"],
        again.body["receipt"]["receipt"]
    );
    assert_eq!(model.calls(), calls + 1);
    assert_eq!(
        before.0 - ledger(&store, &["demo"])[0].0 .0,
        amount("0.01").0,
        "billed other than once"
    );

    // -- 20 calls split across A and B on the last 5 cents: exactly 5 are charged
    let thin = account(&dir, &store, "thin", "0.05");
    let ports = [a.port, b.port];
    let workers: Vec<_> = (0..20)
        .map(|i| {
            let (thin, port) = (thin.clone(), ports[i % 2]);
            std::thread::spawn(move || {
                let mut response = http()
                    .post(format!("http://127.0.0.1:{port}/v1/agents/acme/echo/runs"))
                    .header("authorization", &format!("Bearer {thin}"))
                    .header("content-type", "application/json")
                    .send(ask(&format!("[slow] {i}")))
                    .expect("the request");
                let text = response.body_mut().read_to_string().expect("the body");
                (response.status().as_u16(), text)
            })
        })
        .collect();
    let replies: Vec<(u16, String)> = workers
        .into_iter()
        .map(|w| w.join().expect("a worker"))
        .collect();
    let paid = replies.iter().filter(|(s, _)| *s == 200).count();
    let refused = replies.iter().filter(|(s, _)| *s == 402).count();
    assert_eq!((paid, refused), (5, 15), "{replies:?}");
    for (status, text) in &replies {
        if *status == 402 {
            assert!(text.contains("insufficient_funds"), "{text}");
        }
    }
    let thin_balance = ledger(&store, &["thin"])[0];
    assert_eq!(thin_balance, (Amount::ZERO, Amount::ZERO));

    // -- a file with an expiry is swept by a gateway: row, record and bytes
    let (status, brief) = upload(&a, &demo, b"a file that expires soon", "?expires=1s");
    assert_eq!(status, 201, "{brief}");
    let brief_id = file_id(&brief);
    let (status, bad) = upload(&a, &demo, b"x", "?expires=soon");
    assert_eq!(status, 400, "{bad}");
    assert_eq!(bad["error"]["code"], "bad_expiry");
    let started = Instant::now();
    while get(&b, &format!("/v1/files/{brief_id}"), Some(&demo)).0 != 404 {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the expired file was not swept"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let swept = |key: &str| {
        let started = Instant::now();
        while moto.has(key) {
            assert!(started.elapsed() < Duration::from_secs(5), "{key} was left");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    swept(&format!("{prefix}/refs/{brief_id}.json"));
    swept(&format!("{prefix}/{}", brief["sha256"].as_str().unwrap()));

    // -- the bucket refuses for a few seconds: uploads get a clear 503, nothing is stored or
    //    charged, and both gateways recover by themselves
    let before = ledger(&store, &["demo"])[0];
    proxy.set_down(true);
    let started = Instant::now();
    let (status, refused) = upload(&a, &demo, &png("while down"), "");
    assert_eq!(status, 503, "{refused}");
    assert_eq!(refused["error"]["code"], "files_unavailable");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the refusal took {:?}",
        started.elapsed()
    );
    // A run whose picture cannot be checked is refused before the model, free: a 503 naming
    // the refusal's receipt, which says why.
    let (status, seen) = look(&b, &demo, &photo);
    assert_eq!(status, 503, "{seen}");
    assert_eq!(seen["error"]["code"], "files_unavailable");
    let message = seen["error"]["message"].as_str().expect("a message");
    let refused_id = message
        .split_once("GET /v1/receipts/")
        .and_then(|(_, rest)| rest.split(')').next())
        .expect("the receipt's id in the message")
        .to_owned();
    assert_eq!(ledger(&store, &["demo"])[0], before, "charged while down");
    proxy.set_down(false);
    // Journaled by B, then in the store, where A reads it.
    let started = Instant::now();
    let refused = loop {
        let (status, text) = get(&a, &format!("/v1/receipts/{refused_id}"), Some(&demo));
        if status == 200 {
            break serde_json::from_str::<Value>(&text).expect("json");
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the refused run's receipt is not in the store"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(refused["status"], "rejected_input");
    let (status, again) = upload(&a, &demo, &png("after"), "");
    assert_eq!(status, 201, "{again}");
    let (status, seen) = look(&b, &demo, &again);
    assert_eq!(status, 200, "{seen}");

    // -- A killed with runs in flight: B voids them after A's lease; nothing billed twice,
    //    no answered receipt lost
    let answered: Vec<String> = (0..3)
        .map(|i| {
            let reply = post_run(&a, &demo, &ask(&format!("[ok] answered {i}")), None);
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body["receipt"]["receipt"]
                .as_str()
                .expect("an id")
                .to_owned()
        })
        .collect();
    let calls = model.calls();
    let a_port = a.port;
    let demo_key = demo.clone();
    let held: Vec<_> = (0..3)
        .map(|i| {
            let key = demo_key.clone();
            std::thread::spawn(move || {
                let _ = http()
                    .post(format!(
                        "http://127.0.0.1:{a_port}/v1/agents/acme/echo/runs"
                    ))
                    .header("authorization", &format!("Bearer {key}"))
                    .header("content-type", "application/json")
                    .send(ask(&format!("[hold] in flight {i}")));
            })
        })
        .collect();
    let started = Instant::now();
    while model.calls() < calls + 3 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the held calls did not reach the model"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let reserved = ledger(&store, &["demo"])[0].1;
    assert_eq!(reserved, amount("0.03"), "three runs hold their price");
    a.kill(); // SIGKILL

    for h in held {
        let _ = h.join();
    }
    model.release();
    let started = Instant::now();
    while open_runs(&store) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "B did not void A's runs after its lease"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (available, reserved) = ledger(&store, &["demo"])[0];
    assert_eq!(reserved, Amount::ZERO);
    // Since the bucket came back: one look and three answers, each charged once.
    assert_eq!(available.0, before.0 .0 - amount("0.04").0);
    for id in &answered {
        let (status, text) = get(&b, &format!("/v1/receipts/{id}"), Some(&demo));
        assert_eq!(
            status, 200,
            "receipt {id} was answered and then lost: {text}"
        );
    }
    // B serves on.
    let after = post_run(&b, &demo, &ask("[ok] after A"), None);
    assert_eq!(after.status, 200, "{}", after.body);
    drop(b);
}

#[test]
fn a_restarted_postgres_costs_a_window() {
    let Some(server) = pg::own_cluster() else {
        return;
    };
    let store = runtime().block_on(server.fresh_database("restarted"));
    let model = FakeModel::start();
    let dir = temp_dir("restarted");
    project(&dir, model.port);
    let demo = account(&dir, &store, "demo", "100");
    let gw = Gateway::start(&dir, &store, &["--lease", "2"]);
    let stop = Arc::new(AtomicBool::new(false));
    let port = gw.port;
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let (demo, stop) = (demo.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    i += 1;
                    let sent = http()
                        .post(format!("http://127.0.0.1:{port}/v1/agents/acme/echo/runs"))
                        .header("authorization", &format!("Bearer {demo}"))
                        .header("content-type", "application/json")
                        .send(ask(&format!("[ok] {t}-{i}")));
                    let Ok(mut response) = sent else {
                        // The gateway itself never goes away here: a refused connection is a
                        // finding, kept as status 0.
                        seen.push((0, Instant::now(), String::new()));
                        continue;
                    };
                    let text = response.body_mut().read_to_string().unwrap_or_default();
                    seen.push((response.status().as_u16(), Instant::now(), text));
                }
                seen
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let restarted = Instant::now();
    server.restart();
    let back = Instant::now();
    std::thread::sleep(Duration::from_millis(3000));
    stop.store(true, Ordering::SeqCst);
    let seen: Vec<(u16, Instant, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("a worker"))
        .collect();
    let mut succeeded = Vec::new();
    let mut owed = Vec::new();
    for (status, _, text) in &seen {
        let body: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        match status {
            200 => succeeded.push(
                body["receipt"]["receipt"]
                    .as_str()
                    .expect("a receipt id")
                    .to_owned(),
            ),
            503 => {
                assert!(
                    matches!(
                        body["error"]["code"].as_str(),
                        Some("store_unavailable" | "overloaded")
                    ),
                    "{text}"
                );
                // A run that ended while the store was away names the receipt it is owed.
                if let Some((_, id)) = body["error"]["message"]
                    .as_str()
                    .and_then(|m| m.split_once("GET /v1/receipts/"))
                {
                    owed.push(id.to_owned());
                }
            }
            _ => {
                panic!("neither an answer nor a 503 while the database restarted: {status} {text}")
            }
        }
    }
    let after = seen
        .iter()
        .filter(|(s, at, _)| *s == 200 && *at > back + Duration::from_millis(1000))
        .count();
    assert!(
        after > 0,
        "no call succeeded after the restart (restart took {:?})",
        back - restarted
    );
    // Every answered receipt is stored, and the charges are exactly the successful ones.
    let started = Instant::now();
    while open_runs(&store) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "runs stayed open"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in &succeeded {
        let (status, text) = get(&gw, &format!("/v1/receipts/{id}"), Some(&demo));
        assert_eq!(
            status, 200,
            "receipt {id} was answered and then lost: {text}"
        );
    }
    // Each owed receipt is stored by the gateway itself once the store is back; a successful
    // one is charged, the others are free.
    for id in &owed {
        let (status, text) = get(&gw, &format!("/v1/receipts/{id}"), Some(&demo));
        assert_eq!(status, 200, "the owed receipt {id} was not stored: {text}");
        let receipt: Value = serde_json::from_str(&text).expect("json");
        if receipt["status"] == "succeeded" {
            succeeded.push(id.clone());
        }
    }
    let balances = ledger(&store, &["demo", "acme"]);
    assert_eq!(balances[0].1, Amount::ZERO);
    let charged = amount("100").0 - balances[0].0 .0;
    let others: Vec<String> = seen
        .iter()
        .filter(|(s, _, _)| *s != 200)
        .map(|(s, _, text)| format!("{s} {text}"))
        .collect();
    assert_eq!(
        charged,
        amount("0.01").0 * succeeded.len() as u128,
        "charged other than the successful receipts ({} of {} calls): {others:#?}",
        succeeded.len(),
        seen.len()
    );
    assert_eq!(balances[1].0 .0, charged, "the author was paid otherwise");
}

// ---------------------------------------------------------------- behind a load balancer

/// HAProxy with the book's configuration (`book/src/deployment/haproxy.cfg`), its ports
/// replaced; stopped when dropped. `None` (and a loud skip) without `haproxy`, a failure under
/// `CI`.
struct Balancer {
    child: Child,
    port: u16,
    _dir: crate::support::scratch::Scratch,
}

impl Balancer {
    fn start(backends: [u16; 2]) -> Option<Balancer> {
        let exe = ["/usr/sbin/haproxy", "/usr/bin/haproxy"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file());
        let Some(exe) = exe else {
            assert!(
                std::env::var_os("CI").is_none(),
                "no haproxy, but CI is set: .ci/run must apt-get install haproxy"
            );
            eprintln!(
                "\n!!! SKIPPED the load balancer test: no haproxy (apt-get install -y haproxy); \
                 CI runs it !!!\n"
            );
            return None;
        };
        let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/deployment/haproxy.cfg");
        let config = std::fs::read_to_string(&book).expect("the book's haproxy.cfg");
        let port = free_port();
        let config = config
            .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"))
            .replace("127.0.0.1:8081", &format!("127.0.0.1:{}", backends[0]))
            .replace("127.0.0.1:8082", &format!("127.0.0.1:{}", backends[1]));
        let dir = temp_dir("haproxy");
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).expect("write the config");
        let child = Command::new(exe)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start haproxy");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "haproxy did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Balancer {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The number in `/metrics` of successful runs (`aelc_runs_total{…status="succeeded"}`).
fn succeeded_runs(gw: &Gateway) -> u64 {
    let (_, text) = get(gw, "/metrics", None);
    text.lines()
        .filter(|l| l.starts_with("aelc_runs_total") && l.contains("status=\"succeeded\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|n| n as u64)
        .sum()
}

#[test]
fn two_gateways_behind_haproxy() {
    let Some(server) = pg::server() else { return };
    let store = runtime().block_on(server.fresh_database("balanced"));
    let model = FakeModel::start();
    let dir = temp_dir("balanced");
    project(&dir, model.port);
    let demo = account(&dir, &store, "demo", "5 EUR");
    let a = Gateway::start(&dir, &store, &["--instance", "a", "--lease", "2"]);
    let b = Gateway::start(&dir, &store, &["--instance", "b", "--lease", "2"]);
    let Some(balancer) = Balancer::start([a.port, b.port]) else {
        return;
    };
    // The balancer's address, in the shape the helpers take (its process is a placeholder).
    let front = Gateway {
        child: Command::new("true").spawn().expect("a placeholder child"),
        port: balancer.port,
    };
    // Both gateways serve calls through the balancer.
    let started = Instant::now();
    while get(&front, "/healthz", None).0 != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no healthy gateway"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let workers: Vec<_> = (0..8)
        .map(|i| {
            let (demo, port) = (demo.clone(), balancer.port);
            std::thread::spawn(move || {
                let response = http()
                    .post(format!("http://127.0.0.1:{port}/v1/agents/acme/echo/runs"))
                    .header("authorization", &format!("Bearer {demo}"))
                    .header("content-type", "application/json")
                    .send(ask(&format!("[slow] balanced {i}")))
                    .expect("the request");
                response.status().as_u16()
            })
        })
        .collect();
    for w in workers {
        assert_eq!(w.join().expect("a worker"), 200);
    }
    let (on_a, on_b) = (succeeded_runs(&a), succeeded_runs(&b));
    assert_eq!(on_a + on_b, 8, "{on_a} + {on_b}");
    assert!(
        on_a > 0 && on_b > 0,
        "one gateway served all: {on_a}, {on_b}"
    );
    // One dies: the balancer's health check takes it out, the other serves every call.
    a.kill();
    std::thread::sleep(Duration::from_millis(2500));
    for i in 0..6 {
        let reply = post_run(&front, &demo, &ask(&format!("[ok] after {i}")), None);
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    assert_eq!(succeeded_runs(&b), on_b + 6);
    let (available, reserved) = ledger(&store, &["demo"])[0];
    assert_eq!(reserved, Amount::ZERO);
    assert_eq!(available.0, amount("5").0 - amount("0.14").0);
}
