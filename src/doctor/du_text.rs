//! `du`'s report as text lines: the CLI prints them, the TUI's `:du` view shows them.

use super::sizes::Du;
use crate::text::{escape, fit, pad};

/// Bytes for a human: `512 B`, `1.5 KiB`, `3.2 MiB`, `1.07 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    match u {
        0 => format!("{n} B"),
        _ if v < 10.0 => format!("{v:.2} {}", UNITS[u]),
        _ if v < 100.0 => format!("{v:.1} {}", UNITS[u]),
        _ => format!("{v:.0} {}", UNITS[u]),
    }
}

/// A growth per step, signed.
pub fn growth(g: Option<f64>) -> String {
    match g {
        None => "-".into(),
        Some(g) if g < 0.0 => format!("-{}", bytes((-g).round() as u64)),
        Some(g) => format!("+{}", bytes(g.round() as u64)),
    }
}

/// A namespace with each task id cut to its first 8 characters (`work:9842cca2…|sub:0a44…`),
/// escaped.
fn short_ns(ns: &str) -> String {
    ns.split('|')
        .map(|seg| match seg.split_once(':') {
            Some((node, id)) if id.chars().count() > 8 => {
                format!("{}:{}…", escape(node), escape(crate::text::head(id, 8)))
            }
            _ => escape(seg).into_owned(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// A thread id or namespace for a column: escaped, cut to `w`.
fn name(s: &str, w: usize) -> String {
    fit(&escape(s), w)
}

/// The report as tables.
pub fn lines(du: &Du, top: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let t = &du.totals;
    let sp = &du.space;
    let mut head = format!("{} ({})", escape(&du.store), du.kind);
    if let Some(total) = sp.total {
        head.push_str(&format!(": {} in the database", bytes(total)));
    }
    if let Some(free) = sp.free {
        head.push_str(&format!(", {} of it free", bytes(free)));
    }
    if let Some(wal) = sp.wal {
        head.push_str(&format!(", -wal {}", bytes(wal)));
    }
    out.push(head);
    out.push(format!(
        "{} threads, {} namespaces, {} checkpoints ({}, metadata {}), {} writes ({}){}",
        t.threads,
        t.namespaces,
        t.checkpoints,
        bytes(t.checkpoint_bytes),
        bytes(t.metadata_bytes),
        t.writes,
        bytes(t.write_bytes),
        if t.blobs > 0 {
            format!(", {} blobs ({})", t.blobs, bytes(t.blob_bytes))
        } else {
            String::new()
        }
    ));
    if t.opaque > 0 {
        out.push(format!(
            "{} checkpoints are not msgpack (encrypted or foreign): sized by their rows only",
            t.opaque
        ));
    }
    for (table, n) in &sp.tables {
        out.push(format!("  table {}: {}", escape(table), bytes(*n)));
    }
    out.push(String::new());
    out.push(format!(
        "{}  {:>11}  {:>10}  {:>11}  FASTEST-GROWING CHANNEL",
        pad("THREAD", 24),
        "CHECKPOINTS",
        "BYTES",
        "GROWTH/STEP"
    ));
    for th in du.threads.iter().take(top) {
        let fastest = th
            .fastest_channel
            .as_ref()
            .map(|(c, g)| format!("{} {}/step", escape(c), growth(Some(*g))))
            .unwrap_or_default();
        out.push(format!(
            "{}  {:>11}  {:>10}  {:>11}  {fastest}",
            name(&th.thread_id, 24),
            th.checkpoints,
            bytes(th.bytes),
            growth(th.growth_per_step)
        ));
        for n in th.namespaces.iter().filter(|n| !n.ns.is_empty()) {
            out.push(format!(
                "  {}  {:>11}  {:>10}  {:>11}",
                fit(&short_ns(&n.ns), 22),
                n.checkpoints,
                bytes(n.checkpoint_bytes + n.write_bytes + n.blob_bytes),
                growth(n.growth_per_step)
            ));
        }
    }
    if du.threads.len() > top {
        out.push(format!(
            "… {} more threads (--top N)",
            du.threads.len() - top
        ));
    }
    out.push(String::new());
    out.push(format!(
        "{}  {:>10}  {:>10}  {:>11}  {:>10}  {:>11}",
        pad("CHANNEL", 24),
        "STORED",
        "WRITES",
        "CHECKPOINTS",
        "BIGGEST",
        "GROWTH/STEP"
    ));
    for c in du.channels.iter().take(top) {
        out.push(format!(
            "{}  {:>10}  {:>10}  {:>11}  {:>10}  {:>11}",
            name(&c.channel, 24),
            bytes(c.stored_bytes),
            bytes(c.write_bytes),
            c.held_at,
            bytes(c.biggest),
            growth(c.growth_per_step)
        ));
    }
    if du.channels.len() > top {
        out.push(format!(
            "… {} more channels (--top N)",
            du.channels.len() - top
        ));
    }
    if !du.biggest.is_empty() {
        out.push(String::new());
        out.push("BIGGEST VALUES".to_string());
        for v in &du.biggest {
            let ns = if v.ns.is_empty() {
                String::new()
            } else {
                format!(" ns {}", escape(&v.ns))
            };
            out.push(format!(
                "  {:>10}  {} in thread {}{ns} at {} ({})",
                bytes(v.bytes),
                escape(&v.channel),
                escape(&v.thread_id),
                escape(&v.checkpoint_id),
                v.place
            ));
        }
    }
    out.push(String::new());
    out.push("SAVINGS".to_string());
    for d in &du.delta {
        out.push(format!("  {} as a DeltaChannel (a snapshot every {} updates): {} stored instead of {} (it grew on {} of {} updates)",
            escape(&d.channel),
            d.snapshot_frequency,
            bytes(d.as_delta_bytes),
            bytes(d.stored_bytes),
            d.growing_updates,
            d.updates
        ));
    }
    if du.delta.is_empty() {
        out.push(
            "  no channel grows on most updates: a DeltaChannel would not save much".to_string(),
        );
    }
    if let Some(p) = &du.prune {
        out.push(format!("  {}: {} checkpoints, {} (superstep prune --keep 1 --keep-fork-tips --db … to see them)",
            p.policy,
            p.checkpoints,
            bytes(p.bytes)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_read_like_du_h() {
        assert_eq!(super::bytes(0), "0 B");
        assert_eq!(super::bytes(1023), "1023 B");
        assert_eq!(super::bytes(1536), "1.50 KiB");
        assert_eq!(super::bytes(50 * 1024 * 1024), "50.0 MiB");
        assert_eq!(super::bytes(3 << 30), "3.00 GiB");
    }
}
