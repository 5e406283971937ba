//! Postgres stores from the command line: what goes wrong is one line naming the store (never
//! its password), exit 2, nothing written.
//!
//! `server_down` needs no server. The rest need one: `.ci/run` starts a throwaway cluster
//! (tests/postgres/cluster.sh) and runs them with `--ignored` and `SUPERSTEP_PG_URL` set to a
//! role that may create databases; without it they fail, loudly.

use crate::common;
use common::*;

const SECRET: &str = "superstep-pw";

/// The URL of the test server's role, and a client on its admin database.
fn server() -> (String, postgres::Client) {
    let url = std::env::var("SUPERSTEP_PG_URL").expect(
        "SUPERSTEP_PG_URL is not set: start a server with tests/postgres/cluster.sh (as .ci/run does)",
    );
    let c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    (url, c)
}

/// `url` with its database replaced.
fn with_db(url: &str, db: &str) -> String {
    let (head, _) = url.rsplit_once('/').unwrap();
    format!("{head}/{db}")
}

/// A fresh, empty database on the test server.
fn fresh_db(c: &mut postgres::Client, name: &str) {
    // one statement each: a multi-statement query is one transaction, CREATE DATABASE runs outside
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
}

/// One line on stderr, exit 2, naming the store, never the password.
fn refused(args: &[&str], want: &str) -> String {
    let o = superstep(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    assert!(err.contains(want), "{args:?}: {err:?} should say {want:?}");
    assert!(
        !err.contains(SECRET),
        "{args:?}: the password leaked: {err}"
    );
    assert!(stdout(&o).is_empty(), "{args:?}: nothing on stdout");
    err
}

#[test]
fn server_down_is_one_line_naming_the_store() {
    let url = format!("postgresql://someone:{SECRET}@127.0.0.1:1/app");
    let err = refused(
        &["threads", "--db", &url],
        "postgresql://someone@127.0.0.1:1/app: cannot connect: no server at 127.0.0.1:1",
    );
    assert!(err.starts_with("superstep: "), "{err}");
    // a URL that does not parse is shown without its password either
    refused(
        &[
            "threads",
            "--db",
            &format!("postgresql://u:{SECRET}@h:99999/x"),
        ],
        "invalid port",
    );
}

#[test]
#[ignore = "needs a Postgres server: .ci/run starts one (SUPERSTEP_PG_URL)"]
fn bad_credentials_wrong_database_no_tables_and_newer_migrations_are_refused() {
    let (url, mut admin) = server();
    // bad credentials
    let bad = url.replace(SECRET, "wrong-password");
    refused(
        &["threads", "--db", &bad],
        "authentication failed for user \"superstep\", password from the URL",
    );
    // a database that does not exist
    refused(
        &["threads", "--db", &with_db(&url, "no_such_db")],
        "database \"no_such_db\" does not exist",
    );
    // a database without LangGraph's tables: refused, and still without them
    fresh_db(&mut admin, "pg_empty");
    let empty = with_db(&url, "pg_empty");
    for cmd in [
        vec!["threads", "--db", &empty],
        vec!["show", "--db", &empty, "-t", "x"],
        vec!["history", "--db", &empty, "-t", "x"],
    ] {
        refused(&cmd, "Postgres, but not a LangGraph checkpoint database");
    }
    let mut c = postgres::Client::connect(&empty, postgres::NoTls).unwrap();
    let tables: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "inspection created tables");
    // a migration level newer than known: a store the engine set up, then migrated further
    fresh_db(&mut admin, "pg_newer");
    let newer = with_db(&url, "pg_newer");
    let o = superstep(&[
        "run",
        "graphs/approval.json",
        "--db",
        &newer,
        "-t",
        "t",
        "--input",
        r#"{"request":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut c = postgres::Client::connect(&newer, postgres::NoTls).unwrap();
    c.batch_execute("INSERT INTO checkpoint_migrations (v) VALUES (10)")
        .unwrap();
    let rows = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM checkpoint_writes) + (SELECT count(*) FROM checkpoint_blobs)",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let before = rows(&mut c);
    refused(
        &["threads", "--db", &newer],
        "checkpoint_migrations is at level 10, newer than superstep knows (9",
    );
    refused(
        &[
            "resume",
            "graphs/approval.json",
            "--db",
            &newer,
            "-t",
            "t",
            "--value",
            "true",
        ],
        "newer than superstep knows",
    );
    assert_eq!(before, rows(&mut c), "a refused command wrote rows");
    // the password comes from libpq's environment just as well
    let no_pw = url.replace(&format!(":{SECRET}"), "");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(["threads", "--db", &with_db(&no_pw, "pg_newer")])
        .env("PGPASSWORD", SECRET)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("newer than superstep knows"));
}

/// The test cluster's TLS files (tests/postgres/cluster.sh: a CA, a server certificate for
/// `localhost` only, another CA, a client certificate for role `superstep_cert`).
fn tls_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(std::env::var("SUPERSTEP_PG_TLS_DIR").expect(
        "SUPERSTEP_PG_TLS_DIR is not set: start a server with tests/postgres/cluster.sh (as .ci/run does)",
    ))
}

/// `superstep threads` with HOME set to an empty directory (no ~/.postgresql of the user's).
fn threads_at(url: &str, home: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args(["threads", "--db", url])
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs a Postgres server with TLS: .ci/run starts one (SUPERSTEP_PG_URL, SUPERSTEP_PG_TLS_DIR)"]
fn tls_sslmodes_are_honoured_as_libpq_does() {
    let (url, _) = server();
    let tls = tls_dir();
    let port = url
        .rsplit_once(':')
        .unwrap()
        .1
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let home = tempfile::tempdir().unwrap();
    let (ca, other) = (tls.join("ca.crt"), tls.join("other-ca.crt"));
    let (ca, other) = (ca.to_str().unwrap(), other.to_str().unwrap());
    // superstep_tls may only connect over TLS: make its database a checkpoint store (the engine
    // runs setup() over TLS), then read it under every sslmode
    let at = |host: &str, q: &str| {
        format!("postgresql://superstep_tls:tls-pw@{host}:{port}/superstep_tls?{q}")
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args([
            "run",
            "graphs/approval.json",
            "-t",
            "t1",
            "--input",
            r#"{"request":"x"}"#,
        ])
        .args(["--db", &at("127.0.0.1", "sslmode=require")])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "run over TLS: {}", stderr(&o));
    let ok = |u: &str| {
        let o = threads_at(u, home.path());
        assert_eq!(o.status.code(), Some(0), "{u}: {}", stderr(&o));
        assert!(stdout(&o).contains("t1"), "{u}: {}", stdout(&o));
    };
    let refused_tls = |u: &str, want: &str| {
        let o = threads_at(u, home.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{u}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{u}: one line: {err}");
        assert!(err.contains(want), "{u}: {err:?} should say {want:?}");
        assert!(!err.contains("tls-pw"), "{u}: the password leaked: {err}");
        err
    };
    // plain text is refused by the server for this role: every success below is over TLS
    refused_tls(
        &at("127.0.0.1", "sslmode=disable"),
        "without TLS (try sslmode=require)",
    );
    ok(&at("127.0.0.1", "sslmode=prefer"));
    ok(&at("127.0.0.1", "sslmode=allow"));
    ok(&at("127.0.0.1", "sslmode=require"));
    // verify-ca: the chain is checked, the name is not (the certificate names localhost only)
    ok(&at(
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={ca}"),
    ));
    refused_tls(
        &at(
            "127.0.0.1",
            &format!("sslmode=verify-ca&sslrootcert={other}"),
        ),
        "not signed by a root certificate in",
    );
    // require with a root file checks the chain too (libpq's rule)
    refused_tls(
        &at("127.0.0.1", &format!("sslmode=require&sslrootcert={other}")),
        "not signed by a root certificate in",
    );
    // verify-full: the name as well
    ok(&at(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ));
    refused_tls(
        &at(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        "is not valid for the host name \"127.0.0.1\"",
    );
    // verify-* needs a root certificate: none given, none in ~/.postgresql
    refused_tls(
        &at("localhost", "sslmode=verify-full"),
        "root certificate file",
    );
    // ~/.postgresql/root.crt is libpq's default
    std::fs::create_dir_all(home.path().join(".postgresql")).unwrap();
    std::fs::copy(tls.join("ca.crt"), home.path().join(".postgresql/root.crt")).unwrap();
    ok(&at("localhost", "sslmode=verify-full"));
    // PGSSLMODE / PGSSLROOTCERT from the environment
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args([
            "threads",
            "--db",
            &format!("postgresql://superstep_tls:tls-pw@127.0.0.1:{port}/superstep_tls"),
        ])
        .env("HOME", home.path())
        .env("PGSSLMODE", "verify-full")
        .env("PGSSLROOTCERT", ca)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not valid for the host name"),
        "{}",
        stderr(&o)
    );
    // a client certificate: superstep_cert authenticates with it alone (no password)
    let cert = |q: &str| {
        format!(
            "postgresql://superstep_cert@localhost:{port}/superstep_cert?sslmode=verify-full&sslrootcert={ca}{q}"
        )
    };
    let with_cert = cert(&format!(
        "&sslcert={}&sslkey={}",
        tls.join("client.crt").display(),
        tls.join("client.key").display()
    ));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_superstep"))
        .args([
            "run",
            "graphs/approval.json",
            "-t",
            "c1",
            "--input",
            r#"{"request":"x"}"#,
            "--db",
            &with_cert,
        ])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "run with a client certificate: {}",
        stderr(&o)
    );
    ok_list(&with_cert, home.path(), "c1");
    refused_tls(&cert(""), "superstep_cert");
}

fn ok_list(url: &str, home: &std::path::Path, thread: &str) {
    let o = threads_at(url, home);
    assert_eq!(o.status.code(), Some(0), "{url}: {}", stderr(&o));
    assert!(stdout(&o).contains(thread), "{url}: {}", stdout(&o));
}

/// Run superstep with at most 400 MiB of address space (GNU time's peak RSS printed).
fn limited(args: &[&str]) -> std::process::Output {
    let time = if std::path::Path::new("/usr/bin/time").exists() {
        "/usr/bin/time -f 'peak RSS %M KiB' "
    } else {
        ""
    };
    let mut cmd = format!(
        "ulimit -v {}; exec {time}{}",
        400 * 1024,
        env!("CARGO_BIN_EXE_superstep")
    );
    for a in args {
        cmd.push_str(&format!(" '{a}'"));
    }
    let o = std::process::Command::new("bash")
        .args(["-c", &cmd])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    if let Some(l) = stderr(&o).lines().find(|l| l.starts_with("peak RSS")) {
        eprintln!("superstep {}: {l}", args[0]);
    }
    o
}

#[test]
#[ignore = "needs a Postgres server: .ci/run starts one (SUPERSTEP_PG_URL)"]
fn values_over_16_mib_are_previewed_in_bounded_memory() {
    const HUGE: i32 = 100 * 1024 * 1024;
    let (url, mut admin) = server();
    fresh_db(&mut admin, "pg_huge");
    let db = with_db(&url, "pg_huge");
    // PostgresSaver's rows (the engine's, proved equal by the differential suite), then made huge
    // on the server: a 100 MiB string in a list blob, one inline in the checkpoint JSONB (str is
    // a PostgresSaver "primitive"), and a 100 MiB pending write
    let o = superstep(&[
        "run",
        "graphs/approval.json",
        "--db",
        &db,
        "-t",
        "t",
        "--input",
        r#"{"request":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    let r = c
        .query_one(
            "SELECT checkpoint_id, checkpoint -> 'channel_versions' ->> 'log' FROM checkpoints
             WHERE thread_id = 't' AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            &[],
        )
        .unwrap();
    let (cid, version): (String, String) = (r.get(0), r.get(1));
    // msgpack built by the server: 0x91 = a list of one, 0xdb + 4 bytes = a str32
    let n = c
        .execute(
            "UPDATE checkpoint_blobs SET blob = '\\x91db'::bytea || int4send($1) || convert_to(repeat('x', $1), 'UTF8')
             WHERE thread_id = 't' AND checkpoint_ns = '' AND channel = 'log' AND version = $2",
            &[&HUGE, &version],
        )
        .unwrap();
    assert_eq!(n, 1);
    c.execute(
        "UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{channel_values,request}', to_jsonb(repeat('y', $1)))
         WHERE thread_id = 't' AND checkpoint_ns = '' AND checkpoint_id = $2",
        &[&HUGE, &cid],
    )
    .unwrap();
    c.execute(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
         VALUES ('t', '', $2, 'c5c2ecbd-6ad7-47b8-92ac-a7cc106d6313', '', 0, 'log', 'msgpack',
                 '\\xdb'::bytea || int4send($1) || convert_to(repeat('z', $1), 'UTF8'))",
        &[&HUGE, &cid],
    )
    .unwrap();
    let marker = format!("… [cut by superstep: {HUGE} bytes in all]");

    let o = limited(&["show", "--db", &db, "-t", "t", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let log = j["values"]["log"][0].as_str().unwrap();
    assert!(
        log.len() < 70 * 1024 && log.starts_with("xxxx") && log.ends_with(&marker),
        "{}",
        &log[log.len().saturating_sub(80)..]
    );
    let request = j["values"]["request"].as_str().unwrap();
    assert!(
        request.len() < 300 * 1024 && request.starts_with("yyyy") && request.ends_with(&marker),
        "{}",
        &request[request.len().saturating_sub(80)..]
    );
    let warnings = j["warnings"].to_string();
    assert!(warnings.contains("values are a preview"), "{warnings}");
    assert!(
        warnings.contains(&format!(
            "write of task c5c2ecbd-6ad7-47b8-92ac-a7cc106d6313 (idx 0) is {} bytes",
            HUGE + 5
        )),
        "{warnings}"
    );
    let pw = j["pending_writes"].to_string();
    assert!(pw.contains(&marker), "{}", &pw[..pw.len().min(300)]);

    let o = limited(&["history", "--db", &db, "-t", "t", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = limited(&["--db", &db, "--thread", "t", "--print", "--keys", "jk"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("xxxx"), "{}", stdout(&o));
}

/// A TUI inspecting a Postgres store under tmux (the pane is 120x40).
struct Tui {
    sock: std::path::PathBuf,
}

impl Tui {
    fn cmd(&self, args: &[&str]) -> String {
        let o = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .expect("tmux is required for this test (apt-get install tmux)");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    /// Wait until the pane shows `what` (20 s at most).
    fn wait_for(&self, what: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            let pane = self.cmd(&["capture-pane", "-p", "-t", "pg"]);
            if pane.contains(what) {
                return pane;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "pane never showed {what:?}; it shows:\n{pane}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}

#[test]
#[ignore = "needs a Postgres server and tmux: .ci/run starts one (SUPERSTEP_PG_URL)"]
fn a_dropped_connection_in_the_tui_is_shown_and_retried() {
    let (url, mut admin) = server();
    fresh_db(&mut admin, "pg_drop");
    let db = with_db(&url, "pg_drop");
    let o = superstep(&[
        "run",
        "graphs/approval.json",
        "--db",
        &db,
        "-t",
        "t",
        "--input",
        r#"{"request":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let t = Tui {
        sock: dir.path().join("tmux.sock"),
    };
    let bin = env!("CARGO_BIN_EXE_superstep");
    t.cmd(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "pg",
        "-x",
        "120",
        "-y",
        "40",
        &format!("env -i PATH=/usr/bin:/bin TERM=xterm-256color {bin} --db '{db}' --thread t"),
    ]);
    t.wait_for("INSPECT");
    // the server drops superstep's session and refuses new ones for a while
    admin
        .batch_execute("ALTER DATABASE pg_drop ALLOW_CONNECTIONS false")
        .unwrap();
    admin
        .batch_execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'pg_drop'",
        )
        .unwrap();
    let pane = t.wait_for("live refresh:");
    assert!(!pane.contains("superstep-pw"), "{pane}");
    // a key that reads the store now fails inline, the TUI stays up
    t.cmd(&["send-keys", "-t", "pg", "j"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pane = t.cmd(&["capture-pane", "-p", "-t", "pg"]);
    assert!(pane.contains("INSPECT"), "the TUI went away:\n{pane}");
    // the server takes connections again: the next check reconnects and reloads
    admin
        .batch_execute("ALTER DATABASE pg_drop ALLOW_CONNECTIONS true")
        .unwrap();
    t.wait_for("reachable again");
    t.cmd(&["send-keys", "-t", "pg", "q"]);
}

#[test]
#[ignore = "needs a Postgres server and live LangGraph: tests/postgres/ci.sh (SUPERSTEP_PG_URL, SUPERSTEP_PG_ENCRYPTED)"]
fn encrypted_values_are_shown_opaque_with_a_note() {
    // tests/postgres/gen_encrypted.py: PostgresSaver with LangGraph's EncryptedSerializer
    let db = std::env::var("SUPERSTEP_PG_ENCRYPTED").expect(
        "SUPERSTEP_PG_ENCRYPTED is not set: the URL of the database tests/postgres/gen_encrypted.py wrote",
    );
    let o = superstep(&["show", "--db", &db, "-t", "t", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // a str is inline in the JSONB, never encrypted; the list blob is
    assert_eq!(j["values"]["request"], "transfer", "{j}");
    let log = &j["values"]["log"];
    assert_eq!(log["__type__"], "encrypted", "{log}");
    assert_eq!(log["serializer"], "msgpack", "{log}");
    assert_eq!(log["cipher"], "xortest", "{log}");
    assert!(log["bytes"].as_u64().unwrap() > 0, "{log}");
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains("EncryptedSerializer (msgpack+xortest)")
            && warnings.contains("no key to decrypt"),
        "{warnings}"
    );
    // the human views and the TUI take it too
    let o = superstep(&["show", "--db", &db, "-t", "t"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("encrypted"), "{}", stdout(&o));
    let o = superstep(&["history", "--db", &db, "-t", "t", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = superstep(&["--db", &db, "--thread", "t", "--print"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
