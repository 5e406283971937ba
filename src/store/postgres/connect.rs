//! Connecting (TLS as `sslmode` asks, read-only for inspection) and naming what went wrong.

use super::*;

/// Connect (over TLS when `tls` is given, as `sslmode` asks); an inspecting session is read-only
/// from its first statement on.
pub(super) fn connect(
    t: &Target,
    tls: Option<&tls::Connector>,
    mode: Mode,
) -> Result<Client, postgres::Error> {
    let mut cfg = postgres::Config::new();
    match &t.host {
        Host::Tcp(h) => cfg.host(h),
        Host::Unix(d) => cfg.host_path(d),
    };
    cfg.port(t.port)
        .user(&t.user)
        .dbname(&t.dbname)
        .application_name(t.application_name.as_deref().unwrap_or("superstep"))
        .connect_timeout(t.connect_timeout.unwrap_or(CONNECT_TIMEOUT))
        .ssl_mode(match (tls, t.sslmode) {
            (None, _) | (_, SslMode::Disable) => postgres::config::SslMode::Disable,
            // libpq's `allow` tries plain text first; tokio-postgres only knows TLS-first
            (_, SslMode::Allow | SslMode::Prefer) => postgres::config::SslMode::Prefer,
            (_, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull) => {
                postgres::config::SslMode::Require
            }
        });
    if let Some(p) = &t.password {
        cfg.password(p);
    }
    if let Some(o) = &t.options {
        cfg.options(o);
    }
    let mut c = match tls {
        Some(tls) => cfg.connect(tls.clone())?,
        None => cfg.connect(NoTls)?,
    };
    if mode == Mode::ReadOnly {
        c.batch_execute("SET default_transaction_read_only = on")?;
    }
    Ok(c)
}

/// A URL that did not parse, shown without anything that may be a password.
pub(super) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://…{}", &url[..s], &url[at..]),
        _ => url.split('?').next().unwrap_or(url).to_string(),
    }
}

/// One line saying what went wrong, in the terms of the store (never the password).
pub(super) fn classify(label: &str, t: &Target, e: &postgres::Error) -> StoreError {
    use postgres::error::SqlState;
    let detail = if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            && db.message().contains("pg_hba.conf")
        {
            format!(
                "the server's pg_hba.conf admits no connection for user {:?} from here{} ({})",
                t.user,
                if db.message().contains("no encryption") {
                    " without TLS (try sslmode=require)"
                } else {
                    ""
                },
                db.message()
            )
        } else if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            format!(
                "authentication failed for user {:?}{} ({})",
                t.user,
                match &t.password_from {
                    Some(f) => format!(", password from {f}"),
                    None => ", no password given (URL, PGPASSWORD or ~/.pgpass)".into(),
                },
                db.message()
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!("database {:?} does not exist", t.dbname)
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            format!("refused a write in a read-only session: {}", db.message())
        } else {
            format!("{}: {}", db.severity(), db.message())
        }
    } else if e.is_closed() {
        "the connection to the server was lost (it is opened again on the next try)".into()
    } else {
        let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
        let mut io = None;
        while let Some(s) = source {
            if let Some(i) = s.downcast_ref::<std::io::Error>() {
                io = Some(i.kind());
            }
            source = s.source();
        }
        let place = match &t.host {
            Host::Tcp(h) => format!("{h}:{}", t.port),
            Host::Unix(d) => format!("{}/.s.PGSQL.{}", d.display(), t.port),
        };
        match io {
            Some(std::io::ErrorKind::ConnectionRefused) | Some(std::io::ErrorKind::NotFound) => {
                format!("cannot connect: no server at {place} (is it running?)")
            }
            Some(std::io::ErrorKind::TimedOut) => format!("cannot connect: {place} timed out"),
            _ => tls::explain(e, t).unwrap_or_else(|| e.to_string()),
        }
    };
    StoreError::Server {
        path: label.to_string(),
        detail,
    }
}
