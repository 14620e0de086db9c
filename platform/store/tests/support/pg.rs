//! A PostgreSQL server for the conformance suite: `AELC_TEST_POSTGRES_URL`, or a throwaway
//! cluster started here (initdb + pg_ctl in a temp dir, on a free 127.0.0.1 port) and stopped
//! when the [`Server`] is dropped. As root, initdb and the server run as the `postgres` user
//! (initdb refuses root).

use sqlx::Connection;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Server {
    /// A URL whose user may create databases (its path is replaced per database).
    admin_url: String,
    /// A throwaway cluster of the test's own: stopped when dropped, restarted by [`Server::restart`].
    cluster: Option<Cluster>,
}

struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
}

/// The server to test on, `None` when the PostgreSQL half must be skipped (never under `CI`).
pub fn server() -> Option<Server> {
    if let Ok(url) = std::env::var("AELC_TEST_POSTGRES_URL") {
        return Some(Server {
            admin_url: url,
            cluster: None,
        });
    }
    let Some(bin) = find_bin() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no PostgreSQL binaries (initdb, pg_ctl) and no AELC_TEST_POSTGRES_URL, but CI is \
             set: .ci/run must install them (apt-get install -y postgresql)"
        );
        eprintln!(
            "\n!!! SKIPPED the PostgreSQL half of the store's conformance suite: no initdb/pg_ctl \
             on PATH or under /usr/lib/postgresql/*/bin and no AELC_TEST_POSTGRES_URL \
             (apt-get install -y postgresql); CI runs it !!!\n"
        );
        return None;
    };
    Some(start(bin))
}

/// A throwaway cluster of this test's own, whatever `AELC_TEST_POSTGRES_URL` says: for a test
/// that restarts its server ([`Server::restart`]), which a shared one must never be. `None`
/// when there are no PostgreSQL binaries (never under `CI`).
#[allow(dead_code)] // The root package's platform tests use it; the store's suite does not.
pub fn own_cluster() -> Option<Server> {
    let Some(bin) = find_bin() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no PostgreSQL binaries (initdb, pg_ctl), but CI is set: .ci/run must install them \
             (apt-get install -y postgresql)"
        );
        eprintln!(
            "\n!!! SKIPPED a test that restarts PostgreSQL: no initdb/pg_ctl on PATH or under \
             /usr/lib/postgresql/*/bin (apt-get install -y postgresql); CI runs it !!!\n"
        );
        return None;
    };
    Some(start(bin))
}

/// `initdb` on PATH, else the newest `/usr/lib/postgresql/*/bin`.
fn find_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort_by_key(|p| {
            p.parent()
                .and_then(|v| v.file_name())
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(0)
        });
        versions.pop()
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Cluster {
    /// `bin/tool args…`, as the `postgres` user when we are root.
    fn command(&self, tool: &str, args: &[&str]) -> Command {
        let exe = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(args).current_dir(&self.dir);
        cmd
    }

    /// [`Cluster::command`], run; a command that cannot start fails the test.
    fn run(&self, tool: &str, args: &[&str]) -> std::process::Output {
        self.command(tool, args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
    }
}

/// Clusters this process has started: each gets a folder of its own, as tests of one process
/// may start theirs at the same time (the root package's test crate has three such tests; a
/// folder named by the process id alone was emptied under a running cluster by the next).
static CLUSTERS: AtomicUsize = AtomicUsize::new(0);

fn start(bin: PathBuf) -> Server {
    let n = CLUSTERS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("aelc-store-pg-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir for the cluster");
    let as_postgres = is_root();
    if as_postgres {
        let chown = Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(&dir)
            .status();
        assert!(
            chown.is_ok_and(|s| s.success()),
            "chown of {} to postgres failed",
            dir.display()
        );
    }
    let cluster = Cluster {
        dir,
        bin,
        as_postgres,
    };
    let data = cluster.dir.join("data");
    let data = data.to_str().expect("a UTF-8 temp dir");
    let out = cluster.run(
        "initdb",
        &[
            "-D",
            data,
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        ],
    );
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let socket_dir = cluster.dir.to_str().expect("UTF-8");
    let options = format!(
        "-p {port} -k {socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    );
    let log = cluster.dir.join("log");
    let out = cluster.run(
        "pg_ctl",
        &[
            "-D",
            data,
            "-o",
            &options,
            "-l",
            log.to_str().expect("UTF-8"),
            "-w",
            "start",
        ],
    );
    assert!(
        out.status.success(),
        "pg_ctl start failed: {}{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    Server {
        admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        cluster: Some(cluster),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Server {
    /// `pg_ctl -m fast -w restart` of this test's own cluster ([`own_cluster`]): every
    /// connection is closed, the server is back when it returns.
    #[allow(dead_code)] // The root package's platform tests use it; the store's suite does not.
    pub fn restart(&self) {
        let cluster = self
            .cluster
            .as_ref()
            .expect("only a cluster of the test's own is restarted");
        let data = cluster.dir.join("data");
        // Its output to the log, as at the start: a server writing to this process's pipe
        // would keep `output()` waiting for ever.
        let log = cluster.dir.join("log");
        let out = cluster.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().expect("UTF-8"),
                "-l",
                log.to_str().expect("UTF-8"),
                "-m",
                "fast",
                "-w",
                "restart",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl restart failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A new empty database for one rule; its URL.
    pub async fn fresh_database(&self, rule: &str) -> String {
        let name = database_name(rule);
        let mut admin = sqlx::PgConnection::connect(&self.admin_url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.admin_url));
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name}"))
            .execute(&mut admin)
            .await
            .expect("drop");
        sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .expect("create database");
        let _ = admin.close().await;
        with_database(&self.admin_url, &name)
    }

    /// Drops the rule's database once the suite is done with it (`WITH (FORCE)`: a pool
    /// dropped by the rule may still be closing its connections). A run that fails keeps its
    /// databases for a person to look at; a run that passes leaves nothing on the server.
    #[allow(dead_code)] // The store's suite uses it; the root package's platform tests do not.
    pub async fn drop_database(&self, rule: &str) {
        let name = database_name(rule);
        let mut admin = sqlx::PgConnection::connect(&self.admin_url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.admin_url));
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut admin)
            .await
            .expect("drop");
        let _ = admin.close().await;
    }
}

/// The database of one rule in this process.
fn database_name(rule: &str) -> String {
    format!("aelc_{}_{rule}", std::process::id())
}

/// `url` with its database (path) replaced by `name`, keeping any query.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    format!("{}/{name}{query}", &base[..host_end])
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let data = data.to_str().unwrap_or_default().to_owned();
        // Never a panic here: during a failing test's unwinding it would abort the process,
        // and with it every other test of the crate.
        let _ = self
            .command("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
