//! Postgres stores from the command line: what goes wrong is one line naming the store (never
//! its password), exit 2, nothing written.
//!
//! `server_down` needs no server. The rest need one: `.ci/run` starts a throwaway cluster
//! (tests/postgres/cluster.sh) and runs them with `--ignored` and `SUPERSTEP_PG_URL` set to a
//! role that may create databases; without it they fail, loudly.

mod common;
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
