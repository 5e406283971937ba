//! Where a Postgres store lives, the way libpq finds it: a `postgresql://` (or `postgres://`) URL,
//! then the environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`, …),
//! then `~/.pgpass` (or `PGPASSFILE`) for the password, then libpq's defaults (the local socket,
//! port 5432, the OS user, a database named like the user). The label names the store in every
//! message and never holds the password.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A URL superstep treats as a Postgres store rather than a file path.
pub fn is_postgres_url(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.starts_with("postgresql://") || l.starts_with("postgres://")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    /// A directory holding the server's socket (`.s.PGSQL.<port>`).
    Unix(PathBuf),
}

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode, String> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "invalid sslmode {other:?} (disable, allow, prefer, require, verify-ca, verify-full)"
                ))
            }
        })
    }

    /// `verify-ca` / `verify-full`: the server's certificate must be checked.
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// A resolved connection target.
#[derive(Debug, Clone)]
pub struct Target {
    pub host: Host,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    /// Where the password came from, for messages (`URL`, `PGPASSWORD`, a pgpass file).
    pub password_from: Option<String>,
    pub dbname: String,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
    /// A client certificate and its key (`sslcert` / `sslkey`, `PGSSLCERT` / `PGSSLKEY`).
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    /// The home directory libpq's default files live under (`~/.postgresql/root.crt`, …).
    pub home: Option<PathBuf>,
    pub connect_timeout: Option<Duration>,
    pub application_name: Option<String>,
    pub options: Option<String>,
    /// Whether `sslmode` was given (URL or `PGSSLMODE`): shown in the label.
    sslmode_given: bool,
}

/// The environment a target is resolved in (the process's, or a test's).
pub trait Env {
    fn var(&self, k: &str) -> Option<String>;
    fn home(&self) -> Option<PathBuf>;
    fn os_user(&self) -> String;
}

/// The real environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, k: &str) -> Option<String> {
        std::env::var(k).ok().filter(|v| !v.is_empty())
    }
    fn home(&self) -> Option<PathBuf> {
        std::env::var_os("HOME").map(PathBuf::from)
    }
    fn os_user(&self) -> String {
        whoami::username().unwrap_or_else(|_| "postgres".into())
    }
}

fn pct_decode(s: &str, what: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid percent-encoding in the {what}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("the {what} is not UTF-8 after percent-decoding"))
}

fn pct_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// libpq's default socket directory on Debian, else the upstream default.
fn default_socket_dir() -> PathBuf {
    let debian = Path::new("/var/run/postgresql");
    if debian.is_dir() {
        debian.to_path_buf()
    } else {
        PathBuf::from("/tmp")
    }
}

fn host_of(h: &str) -> Host {
    if h.starts_with('/') {
        Host::Unix(PathBuf::from(h))
    } else {
        Host::Tcp(h.to_string())
    }
}

impl Target {
    /// Resolve `url` (`postgresql://[user[:password]@][host][:port][/dbname][?param=value&…]`)
    /// in `env`.
    pub fn parse(url: &str, env: &dyn Env) -> Result<Target, String> {
        let rest = url
            .split_once("://")
            .map(|(_, r)| r)
            .ok_or("not a postgresql:// URL")?;
        let (main, query) = match rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match main.find('/') {
            Some(i) => (&main[..i], Some(&main[i + 1..])),
            None => (main, None),
        };
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        let (mut user, mut password) = (None, None);
        if let Some(ui) = userinfo {
            let (u, p) = match ui.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (ui, None),
            };
            if !u.is_empty() {
                user = Some(pct_decode(u, "user name")?);
            }
            if let Some(p) = p {
                password = Some(pct_decode(p, "password")?);
            }
        }
        if hostport.contains(',') {
            return Err("several hosts in one URL are not supported: give one host".into());
        }
        let (mut host, mut port) = (None, None);
        if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or("unterminated [IPv6 address] in the URL")?;
            host = Some(h.to_string());
            if let Some(p) = after.strip_prefix(':') {
                port = Some(p.to_string());
            } else if !after.is_empty() {
                return Err(format!("unexpected {after:?} after the IPv6 address"));
            }
        } else if !hostport.is_empty() {
            let (h, p) = match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            };
            if !h.is_empty() {
                host = Some(pct_decode(h, "host")?);
            }
            port = p.map(str::to_string);
        }
        let mut dbname = path
            .filter(|p| !p.is_empty())
            .map(|p| pct_decode(p, "database name"))
            .transpose()?;
        let (mut sslmode, mut sslrootcert, mut timeout, mut app, mut options, mut passfile) =
            (None, None, None, None, None, None);
        let (mut sslcert, mut sslkey) = (None, None);
        for kv in query.unwrap_or("").split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("URL parameter {kv:?} has no value"))?;
            let v = pct_decode(v, k)?;
            match k {
                "host" | "hostaddr" => host = Some(v),
                "port" => port = Some(v),
                "user" => user = Some(v),
                "password" => password = Some(v),
                "dbname" => dbname = Some(v),
                "sslmode" => sslmode = Some(v),
                "sslrootcert" => sslrootcert = Some(v),
                "sslcert" => sslcert = Some(v),
                "sslkey" => sslkey = Some(v),
                "connect_timeout" => timeout = Some(v),
                "application_name" => app = Some(v),
                "options" => options = Some(v),
                "passfile" => passfile = Some(v),
                // accepted and meaningless for one host / one read-only session
                "target_session_attrs" | "sslcompression" | "gssencmode" | "keepalives" => {}
                other => return Err(format!("unknown URL parameter {other:?}")),
            }
        }
        let password_from_url = password.is_some();
        let host = host
            .or_else(|| env.var("PGHOST"))
            .map(|h| host_of(&h))
            .unwrap_or_else(|| Host::Unix(default_socket_dir()));
        let port = match port.or_else(|| env.var("PGPORT")) {
            None => 5432,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("invalid port {p:?}"))?,
        };
        let user = user
            .or_else(|| env.var("PGUSER"))
            .unwrap_or_else(|| env.os_user());
        let dbname = dbname
            .or_else(|| env.var("PGDATABASE"))
            .unwrap_or_else(|| user.clone());
        let sslmode_given = sslmode.is_some() || env.var("PGSSLMODE").is_some();
        let sslmode = match sslmode.or_else(|| env.var("PGSSLMODE")) {
            Some(m) => SslMode::parse(&m)?,
            None => SslMode::Prefer,
        };
        let connect_timeout = match timeout.or_else(|| env.var("PGCONNECT_TIMEOUT")) {
            None => None,
            Some(t) => Some(Duration::from_secs(
                t.parse::<u64>()
                    .map_err(|_| format!("invalid connect_timeout {t:?}"))?
                    .max(2),
            )),
        };
        let mut t = Target {
            host,
            port,
            user,
            password_from: password_from_url.then(|| "the URL".to_string()),
            password,
            dbname,
            sslmode,
            sslrootcert: sslrootcert
                .or_else(|| env.var("PGSSLROOTCERT"))
                .map(PathBuf::from),
            sslcert: sslcert.or_else(|| env.var("PGSSLCERT")).map(PathBuf::from),
            sslkey: sslkey.or_else(|| env.var("PGSSLKEY")).map(PathBuf::from),
            home: env.home(),
            connect_timeout,
            application_name: app.or_else(|| env.var("PGAPPNAME")),
            options: options.or_else(|| env.var("PGOPTIONS")),
            sslmode_given,
        };
        if t.password.is_none() {
            if let Some(p) = env.var("PGPASSWORD") {
                t.password = Some(p);
                t.password_from = Some("PGPASSWORD".into());
            }
        }
        if t.password.is_none() {
            let file = passfile
                .or_else(|| env.var("PGPASSFILE"))
                .map(PathBuf::from)
                .or_else(|| env.home().map(|h| h.join(".pgpass")));
            if let Some(file) = file {
                if let Some(p) = pgpass_lookup(&file, &t) {
                    t.password = Some(p);
                    t.password_from = Some(file.display().to_string());
                }
            }
        }
        Ok(t)
    }

    /// The store as messages name it: a URL without the password.
    pub fn label(&self) -> String {
        let db = pct_encode(&self.dbname);
        let user = pct_encode(&self.user);
        let ssl = if self.sslmode_given {
            format!("sslmode={}", self.sslmode.name())
        } else {
            String::new()
        };
        match &self.host {
            Host::Tcp(h) => {
                let h = if h.contains(':') {
                    format!("[{h}]")
                } else {
                    h.clone()
                };
                let q = if ssl.is_empty() {
                    String::new()
                } else {
                    format!("?{ssl}")
                };
                format!("postgresql://{user}@{h}:{}/{db}{q}", self.port)
            }
            Host::Unix(dir) => {
                let mut q = format!("host={}", dir.display());
                if self.port != 5432 {
                    q.push_str(&format!("&port={}", self.port));
                }
                if !ssl.is_empty() {
                    q.push('&');
                    q.push_str(&ssl);
                }
                format!("postgresql://{user}@/{db}?{q}")
            }
        }
    }

    /// `host` as pgpass and messages see it: a socket directory counts as `localhost`.
    fn pgpass_host(&self) -> &str {
        match &self.host {
            Host::Tcp(h) => h,
            Host::Unix(_) => "localhost",
        }
    }
}

/// The password for `t` in a pgpass file (`hostname:port:database:username:password`, `*`
/// matches anything, `\:` and `\\` escape), first matching line wins. Like libpq, a file that
/// group or others can read is ignored.
fn pgpass_lookup(file: &Path, t: &Target) -> Option<String> {
    let meta = std::fs::metadata(file).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return None;
        }
    }
    if !meta.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let port = t.port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() < 5 {
            continue;
        }
        let want = [
            t.pgpass_host(),
            port.as_str(),
            t.dbname.as_str(),
            t.user.as_str(),
        ];
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Some(fields[4..].join(":"));
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut().unwrap().push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Fake(HashMap<&'static str, String>, Option<PathBuf>);
    impl Env for Fake {
        fn var(&self, k: &str) -> Option<String> {
            self.0.get(k).cloned()
        }
        fn home(&self) -> Option<PathBuf> {
            self.1.clone()
        }
        fn os_user(&self) -> String {
            "alice".into()
        }
    }

    fn env(vars: &[(&'static str, &str)]) -> Fake {
        Fake(
            vars.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            None,
        )
    }

    #[test]
    fn a_full_url_wins_over_the_environment_and_the_label_hides_the_password() {
        let e = env(&[("PGHOST", "elsewhere"), ("PGPASSWORD", "envpw")]);
        let t = Target::parse(
            "postgresql://bob:s%40cret@db.example:6543/app%20db?sslmode=require",
            &e,
        )
        .unwrap();
        assert_eq!(t.host, Host::Tcp("db.example".into()));
        assert_eq!((t.port, t.user.as_str()), (6543, "bob"));
        assert_eq!(t.password.as_deref(), Some("s@cret"));
        assert_eq!(t.dbname, "app db");
        assert_eq!(t.sslmode, SslMode::Require);
        assert_eq!(
            t.label(),
            "postgresql://bob@db.example:6543/app%20db?sslmode=require"
        );
        assert!(!t.label().contains("cret"));
    }

    #[test]
    fn an_empty_url_is_all_environment_then_defaults() {
        let e = env(&[
            ("PGHOST", "/tmp/sock"),
            ("PGPORT", "55432"),
            ("PGUSER", "carol"),
        ]);
        let t = Target::parse("postgresql://", &e).unwrap();
        assert_eq!(t.host, Host::Unix("/tmp/sock".into()));
        assert_eq!(
            (t.port, t.user.as_str(), t.dbname.as_str()),
            (55432, "carol", "carol")
        );
        assert_eq!(t.sslmode, SslMode::Prefer);
        assert_eq!(
            t.label(),
            "postgresql://carol@/carol?host=/tmp/sock&port=55432"
        );
        let d = Target::parse("postgres:///x", &env(&[])).unwrap();
        assert_eq!(
            (d.user.as_str(), d.dbname.as_str(), d.port),
            ("alice", "x", 5432)
        );
    }

    #[test]
    fn pgpass_supplies_the_password_when_neither_url_nor_pgpassword_does() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(".pgpass");
        std::fs::write(
            &f,
            "# comment\nother:5432:*:*:nope\ndb.example:*:app:bob:pa\\:ss:word\n*:*:*:*:fallback\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let e = Fake(HashMap::new(), Some(dir.path().to_path_buf()));
        let t = Target::parse("postgresql://bob@db.example/app", &e).unwrap();
        assert_eq!(t.password.as_deref(), Some("pa:ss:word"));
        let t = Target::parse("postgresql://zed@somewhere/x", &e).unwrap();
        assert_eq!(t.password.as_deref(), Some("fallback"));
        // PGPASSWORD comes before the file
        let mut vars = HashMap::new();
        vars.insert("PGPASSWORD", "env".to_string());
        let e2 = Fake(vars, Some(dir.path().to_path_buf()));
        let t = Target::parse("postgresql://bob@db.example/app", &e2).unwrap();
        assert_eq!(t.password.as_deref(), Some("env"));
        // a file others can read is ignored, as libpq does
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
            let t = Target::parse("postgresql://bob@db.example/app", &e).unwrap();
            assert_eq!(t.password, None);
        }
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        let e = env(&[]);
        for (url, why) in [
            ("postgresql://h:99999/x", "invalid port"),
            ("postgresql://h/x?sslmode=maybe", "invalid sslmode"),
            ("postgresql://h/x?frobnicate=1", "unknown URL parameter"),
            ("postgresql://a,b/x", "several hosts"),
            ("postgresql://h/x%zz", "percent-encoding"),
        ] {
            let err = Target::parse(url, &e).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
    }
}
