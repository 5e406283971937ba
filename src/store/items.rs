//! LangGraph's key-value store (`BaseStore`: the long-term memory an app keeps with
//! `store.put` / `store.search`), as `SqliteStore` and `PostgresStore` leave it in their `store`
//! table: one row per item, the namespace tuple joined with `.` in `prefix` (LangGraph forbids
//! `.` in a namespace label), the value JSON. Read-only, through the checkpoint store's own
//! connection (a read-only one for inspection: nothing is created — a database without the table
//! simply has no store).

use serde_json::Value as Json;

/// One stored item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub namespace: Vec<String>,
    pub key: String,
    /// The value as stored (JSON); a value that is not JSON is kept as a string.
    pub value: Json,
    pub created_at: String,
    pub updated_at: String,
}

/// A namespace and how many items it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceCount {
    pub namespace: Vec<String>,
    pub items: u64,
}

/// Which items: those whose namespace is `prefix` or under it (`None`: all), and with `key`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemQuery {
    pub prefix: Option<Vec<String>>,
    pub key: Option<String>,
    pub limit: usize,
}

/// The namespace as LangGraph stores it (`("memories", "u1")` -> `memories.u1`).
pub fn ns_text(ns: &[String]) -> String {
    ns.join(".")
}

/// The stored `prefix` text back to the namespace tuple.
pub fn ns_parts(text: &str) -> Vec<String> {
    text.split('.').map(str::to_string).collect()
}

/// A namespace as the user writes it: LangGraph's stored text (`memories.u1`, labels joined with
/// `.`) or a JSON list (`["memories", "u1"]`).
pub fn parse_namespace(text: &str) -> Result<Vec<String>, String> {
    if text.trim_start().starts_with('[') {
        let parts: Vec<String> = serde_json::from_str(text)
            .map_err(|e| format!("namespace {text:?}: expected a JSON list of strings: {e}"))?;
        if parts.is_empty() || parts.iter().any(|p| p.contains('.') || p.is_empty()) {
            return Err(format!(
                "namespace {text:?}: LangGraph namespace labels are non-empty and cannot contain \".\""
            ));
        }
        return Ok(parts);
    }
    if text.is_empty() || text.split('.').any(str::is_empty) {
        return Err(format!(
            "namespace {text:?}: expected labels joined with \".\" (memories.user-1)"
        ));
    }
    Ok(ns_parts(text))
}

fn value_of(text: String) -> Json {
    serde_json::from_str(&text).unwrap_or(Json::String(text))
}

/// A timestamp as LangGraph's `Item.dict()` gives it (`datetime.isoformat()`): SQLite's
/// `CURRENT_TIMESTAMP` text `2026-12-04 05:35:40` is `2026-12-04T05:35:40`; Postgres's
/// `2026-12-04 05:35:40.123+00` is `2026-12-04T05:35:40.123+00:00`.
pub fn iso(ts: &str) -> String {
    let mut t = ts.replacen(' ', "T", 1);
    let b = t.as_bytes();
    let n = b.len();
    if n > 3
        && matches!(b[n - 3], b'+' | b'-')
        && b[n - 2..].iter().all(u8::is_ascii_digit)
        && t[..n - 3].contains('T')
    {
        t.push_str(":00");
    }
    t
}

fn item(prefix: String, key: String, value: String, created: String, updated: String) -> Item {
    Item {
        namespace: ns_parts(&prefix),
        key,
        value: value_of(value),
        created_at: iso(&created),
        updated_at: iso(&updated),
    }
}

/// `(where clause, params)` for a query: a namespace prefix matches itself and what is under it
/// (`substr`, not LIKE: `_` and `%` are ordinary characters in a label).
fn filters(q: &ItemQuery, sqlite: bool) -> (String, Vec<String>) {
    let mut cond = Vec::new();
    let mut params = Vec::new();
    let p = |n: usize| {
        if sqlite {
            format!("?{n}")
        } else {
            format!("${n}")
        }
    };
    if let Some(prefix) = &q.prefix {
        let t = ns_text(prefix);
        params.push(t.clone());
        let a = p(params.len());
        params.push(format!("{t}."));
        let b = p(params.len());
        cond.push(format!(
            "(prefix = {a} OR substr(prefix, 1, {}) = {b})",
            t.chars().count() + 1
        ));
    }
    if let Some(k) = &q.key {
        params.push(k.clone());
        cond.push(format!("key = {}", p(params.len())));
    }
    let w = if cond.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", cond.join(" AND "))
    };
    (w, params)
}

/// SQLite: the `store` table of `SqliteStore`, or `None` when the file has none.
pub fn sqlite_has_store(c: &rusqlite::Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store')",
        [],
        |r| r.get(0),
    )
}

pub fn sqlite_namespaces(c: &rusqlite::Connection) -> rusqlite::Result<Vec<NamespaceCount>> {
    let mut st = c.prepare("SELECT prefix, count(*) FROM store GROUP BY prefix ORDER BY prefix")?;
    let rows = st.query_map([], |r| {
        Ok(NamespaceCount {
            namespace: ns_parts(&r.get::<_, String>(0)?),
            items: r.get::<_, i64>(1)? as u64,
        })
    })?;
    rows.collect()
}

pub fn sqlite_items(c: &rusqlite::Connection, q: &ItemQuery) -> rusqlite::Result<Vec<Item>> {
    let (w, params) = filters(q, true);
    let sql = format!(
        "SELECT prefix, key, value, CAST(created_at AS TEXT), CAST(updated_at AS TEXT) FROM store{w} ORDER BY prefix, key LIMIT {}",
        q.limit
    );
    let mut st = c.prepare(&sql)?;
    let rows = st.query_map(rusqlite::params_from_iter(params.iter()), |r| {
        Ok(item(
            r.get(0)?,
            r.get(1)?,
            sqlite_text(r.get_ref(2)?),
            r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            r.get::<_, Option<String>>(4)?.unwrap_or_default(),
        ))
    })?;
    rows.collect()
}

/// SqliteStore writes `value` as orjson's bytes (a BLOB in a `text` column); text stays text.
fn sqlite_text(v: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Null => "null".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
    }
}

/// Postgres: `PostgresStore`'s `store` table (in the search path), or `None` when there is none.
pub fn postgres_has_store(c: &mut postgres::Client) -> Result<bool, postgres::Error> {
    c.query_one("SELECT to_regclass('store') IS NOT NULL", &[])
        .map(|r| r.get(0))
}

pub fn postgres_namespaces(
    c: &mut postgres::Client,
) -> Result<Vec<NamespaceCount>, postgres::Error> {
    Ok(c.query(
        "SELECT prefix, count(*) FROM store GROUP BY prefix ORDER BY prefix",
        &[],
    )?
    .into_iter()
    .map(|r| NamespaceCount {
        namespace: ns_parts(r.get::<_, &str>(0)),
        items: r.get::<_, i64>(1) as u64,
    })
    .collect())
}

pub fn postgres_items(
    c: &mut postgres::Client,
    q: &ItemQuery,
) -> Result<Vec<Item>, postgres::Error> {
    let (w, params) = filters(q, false);
    let sql = format!(
        "SELECT prefix, key, value::text, created_at::text, updated_at::text FROM store{w} ORDER BY prefix, key LIMIT {}",
        q.limit
    );
    let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect();
    Ok(c.query(&sql, &refs)?
        .into_iter()
        .map(|r| {
            item(
                r.get(0),
                r.get(1),
                r.get(2),
                r.get::<_, Option<String>>(3).unwrap_or_default(),
                r.get::<_, Option<String>>(4).unwrap_or_default(),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table as SqliteStore's migrations leave it.
    fn db() -> rusqlite::Connection {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL,
               created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
               expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key));
             INSERT INTO store (prefix, key, value) VALUES
               ('memories.u1', 'a', '{\"content\": \"tea\"}'),
               ('memories.u1', 'b', CAST('{\"content\": \"rust\"}' AS BLOB)),
               ('memories.u10', 'c', '{}'),
               ('memories.u_1', 'd', '[1]'),
               ('notes', 'x', 'not json');",
        )
        .unwrap();
        c
    }

    #[test]
    fn timestamps_read_as_langgraph_shows_them() {
        assert_eq!(iso("2026-12-04 05:35:40"), "2026-12-04T05:35:40");
        assert_eq!(
            iso("2026-12-04 05:35:40.123456+00"),
            "2026-12-04T05:35:40.123456+00:00"
        );
        assert_eq!(
            iso("2026-12-04 05:35:40+05:30"),
            "2026-12-04T05:35:40+05:30"
        );
    }

    #[test]
    fn namespaces_and_items_by_prefix_and_key() {
        let c = db();
        assert!(sqlite_has_store(&c).unwrap());
        let ns = sqlite_namespaces(&c).unwrap();
        assert_eq!(ns.len(), 4);
        assert_eq!(ns[0].namespace, vec!["memories", "u1"]);
        assert_eq!(ns[0].items, 2);
        let q = |prefix: &[&str], key: Option<&str>| ItemQuery {
            prefix: Some(prefix.iter().map(|s| s.to_string()).collect()),
            key: key.map(str::to_string),
            limit: 100,
        };
        // `memories.u1` is not a prefix of `memories.u10`; `_` is no wildcard
        let keys = |v: Vec<Item>| v.into_iter().map(|i| i.key).collect::<Vec<_>>();
        assert_eq!(
            keys(sqlite_items(&c, &q(&["memories", "u1"], None)).unwrap()),
            ["a", "b"]
        );
        assert_eq!(
            keys(sqlite_items(&c, &q(&["memories"], None)).unwrap()),
            ["a", "b", "c", "d"]
        );
        let got = sqlite_items(&c, &q(&["memories", "u1"], Some("b"))).unwrap();
        assert_eq!(got[0].value, serde_json::json!({"content": "rust"}));
        let all = sqlite_items(
            &c,
            &ItemQuery {
                limit: 100,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(all.last().unwrap().value, Json::String("not json".into()));
        let none = rusqlite::Connection::open_in_memory().unwrap();
        assert!(!sqlite_has_store(&none).unwrap());
    }
}
