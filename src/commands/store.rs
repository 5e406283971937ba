//! `store ls` / `store get`: LangGraph's key-value store kept in the checkpoint database (the
//! memory an app keeps with `store.put` / `store.search`), read-only — the database is opened as
//! for inspection and left byte-identical (a database without a store is not given one).

use super::{human, CliError};
use crate::cli::{StoreArgs, StoreCommand};
use crate::store::items::{ns_text, Item, ItemQuery};
use crate::store::{Mode, Store};
use crate::text::escape;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::Path;

fn parse_namespace(text: &str) -> Result<Vec<String>, CliError> {
    crate::store::items::parse_namespace(text).map_err(CliError)
}

fn item_json(i: &Item) -> Json {
    json!({
        "namespace": i.namespace,
        "key": i.key,
        "value": i.value,
        "created_at": i.created_at,
        "updated_at": i.updated_at,
    })
}

fn no_store(store: &Store) -> String {
    format!(
        "{}: no LangGraph store in this database (SqliteStore / PostgresStore make their \"store\" table when a graph first uses the store)",
        store.label()
    )
}

pub fn run(db: &Path, a: &StoreArgs, color: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let store = Store::open(db, Mode::ReadOnly)?;
    match &a.command {
        StoreCommand::Ls {
            namespace: None,
            out: o,
            ..
        } => {
            let Some(list) = store.store_namespaces()? else {
                if o.json {
                    writeln!(out, "{}", json!({"namespaces": []}))?;
                }
                eprintln!("superstep: {}", escape(&no_store(&store)));
                return Ok(());
            };
            if o.json {
                let j: Vec<Json> = list
                    .iter()
                    .map(|n| json!({"namespace": n.namespace, "items": n.items}))
                    .collect();
                serde_json::to_writer_pretty(&mut *out, &json!({ "namespaces": j }))?;
                writeln!(out)?;
                return Ok(());
            }
            writeln!(out, "{}", human::bold("items  namespace", color))?;
            for n in &list {
                writeln!(out, "{:>5}  {}", n.items, escape(&ns_text(&n.namespace)))?;
            }
            Ok(())
        }
        StoreCommand::Ls {
            namespace: Some(ns),
            limit,
            out: o,
        } => {
            let prefix = parse_namespace(ns)?;
            let q = ItemQuery {
                prefix: Some(prefix),
                key: None,
                limit: *limit,
            };
            let Some(items) = store.store_items(&q)? else {
                return Err(CliError(no_store(&store)));
            };
            if o.json {
                let j: Vec<Json> = items.iter().map(item_json).collect();
                serde_json::to_writer_pretty(&mut *out, &json!({ "items": j }))?;
                writeln!(out)?;
                return Ok(());
            }
            if items.is_empty() {
                eprintln!(
                    "superstep: no item in namespace {} or under it (superstep store ls lists the namespaces)",
                    escape(ns)
                );
            }
            for i in &items {
                writeln!(
                    out,
                    "{}  {}  {}  {}",
                    escape(&ns_text(&i.namespace)),
                    human::bold(&escape(&i.key), color),
                    human::dim(&escape(&i.updated_at), color),
                    escape(&human::preview(&i.value, 80))
                )?;
            }
            Ok(())
        }
        StoreCommand::Get {
            namespace,
            key,
            out: o,
        } => {
            let q = ItemQuery {
                prefix: Some(parse_namespace(namespace)?),
                key: Some(key.clone()),
                limit: usize::MAX >> 1,
            };
            let Some(items) = store.store_items(&q)? else {
                return Err(CliError(no_store(&store)));
            };
            let want = parse_namespace(namespace)?;
            let Some(i) = items.iter().find(|i| i.namespace == want) else {
                return Err(CliError(format!(
                    "{}: no item {key:?} in namespace {} (superstep store ls {} lists its keys)",
                    store.label(),
                    ns_text(&want),
                    ns_text(&want)
                )));
            };
            if o.json {
                serde_json::to_writer_pretty(&mut *out, &item_json(i))?;
                writeln!(out)?;
                return Ok(());
            }
            writeln!(
                out,
                "{}",
                human::bold(
                    &escape(&format!("{} / {}", ns_text(&i.namespace), i.key)),
                    color
                )
            )?;
            writeln!(
                out,
                "created  {}\nupdated  {}",
                escape(&i.created_at),
                escape(&i.updated_at)
            )?;
            let pretty = serde_json::to_string_pretty(&i.value)?;
            for line in pretty.lines() {
                writeln!(out, "{}", escape(line))?;
            }
            Ok(())
        }
    }
}
