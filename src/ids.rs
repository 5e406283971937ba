//! LangGraph's id formulas (spec §3, §5): task ids, interrupt ids, checkpoint-id clock sequence.

use uuid::Uuid;
use xxhash_rust::xxh3::xxh3_128;

pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

/// `xxh3_128_hexdigest(bytes)`: 32 lower-case hex chars, big-endian.
pub fn xxh3_hex(bytes: &[u8]) -> String {
    format!("{:032x}", xxh3_128(bytes))
}

/// `_xxhash_str(namespace, *parts)`: XXH3-128 over the 16 id bytes followed by the parts,
/// formatted 8-4-4-4-12 (not a valid RFC uuid).
pub fn xxhash_str<S: AsRef<str>>(checkpoint_id: &Uuid, parts: &[S]) -> String {
    let mut buf = checkpoint_id.as_bytes().to_vec();
    for p in parts {
        buf.extend_from_slice(p.as_ref().as_bytes());
    }
    dashed(&xxh3_hex(&buf))
}

/// LangGraph 0.2's `_uuid5_str(namespace, *parts)`: SHA-1 over the 16 id bytes followed by the
/// parts, formatted 8-4-4-4-12 (no version bits: not a valid RFC uuid).
pub fn uuid5_str<S: AsRef<str>>(checkpoint_id: &Uuid, parts: &[S]) -> String {
    let mut sha = sha1_smol::Sha1::new();
    sha.update(checkpoint_id.as_bytes());
    for p in parts {
        sha.update(p.as_ref().as_bytes());
    }
    dashed(&sha.digest().to_string())
}

/// The first 32 hex digits of a digest as 8-4-4-4-12.
fn dashed(h: &str) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// What a PULL task's id hashes: `ns, step, name, "__pregel_pull"`, then the triggers sorted
/// (LangGraph 0.2: the triggers that fired).
fn pull_parts(parent_ns: &str, step: i64, name: &str, triggers: &[String]) -> Vec<String> {
    let mut sorted: Vec<&String> = triggers.iter().collect();
    sorted.sort_unstable();
    let mut parts = vec![
        id_ns(parent_ns, name),
        step.to_string(),
        name.to_string(),
        "__pregel_pull".to_string(),
    ];
    parts.extend(sorted.into_iter().cloned());
    parts
}

/// What a PUSH task's id hashes: `ns, step, node, "__pregel_push", idx`.
fn push_parts(parent_ns: &str, step: i64, node: &str, idx: usize) -> Vec<String> {
    vec![
        id_ns(parent_ns, node),
        step.to_string(),
        node.to_string(),
        "__pregel_push".to_string(),
        idx.to_string(),
    ]
}

/// Id of a PULL task in LangGraph 0.2: the hash covers only the triggers that fired, sorted.
pub fn legacy_pull_task_id(
    checkpoint_id: &Uuid,
    parent_ns: &str,
    step: i64,
    name: &str,
    fired: &[String],
) -> String {
    uuid5_str(checkpoint_id, &pull_parts(parent_ns, step, name, fired))
}

/// Id of a PUSH task (the `idx`-th of `pending_sends`) in LangGraph 0.2.
pub fn legacy_push_task_id(
    checkpoint_id: &Uuid,
    parent_ns: &str,
    step: i64,
    node: &str,
    idx: usize,
) -> String {
    uuid5_str(checkpoint_id, &push_parts(parent_ns, step, node, idx))
}

/// `checkpoint_ns` part of a task id: `parent_ns|name`, or `name` at the root.
fn id_ns(parent_ns: &str, name: &str) -> String {
    if parent_ns.is_empty() {
        name.to_string()
    } else {
        format!("{parent_ns}|{name}")
    }
}

/// Id of a PULL task (edge-triggered node), spec §5.2.
pub fn pull_task_id(
    checkpoint_id: &Uuid,
    parent_ns: &str,
    step: i64,
    name: &str,
    triggers: &[String],
) -> String {
    xxhash_str(checkpoint_id, &pull_parts(parent_ns, step, name, triggers))
}

/// Id of a PUSH task created by the `idx`-th `Send` in `__pregel_tasks`, spec §5.2.
pub fn push_task_id(
    checkpoint_id: &Uuid,
    parent_ns: &str,
    step: i64,
    node: &str,
    idx: usize,
) -> String {
    xxhash_str(checkpoint_id, &push_parts(parent_ns, step, node, idx))
}

/// Interrupt id, spec §5.6: `xxh3(task_ns)` for the first interrupt of a task, `xxh3(task_ns|k)`
/// for the k-th.
pub fn interrupt_id(task_ns: &str, answered: usize) -> String {
    if answered == 0 {
        xxh3_hex(task_ns.as_bytes())
    } else {
        xxh3_hex(format!("{task_ns}|{answered}").as_bytes())
    }
}

/// `task_checkpoint_ns`: `node:task_id` at the root, `parent_ns|node:task_id` nested (§5.4).
pub fn task_ns(parent_ns: &str, name: &str, task_id: &str) -> String {
    if parent_ns.is_empty() {
        format!("{name}:{task_id}")
    } else {
        format!("{parent_ns}|{name}:{task_id}")
    }
}

/// The clock sequence (step, 14-bit two's complement) of a uuid6 checkpoint id, spec §3.1.
pub fn clock_seq_step(checkpoint_id: &Uuid) -> i64 {
    let b = checkpoint_id.as_bytes();
    let cs = (((b[8] as i64) << 8) | b[9] as i64) & 0x3FFF;
    if cs >= 0x2000 {
        cs - 0x4000
    } else {
        cs
    }
}

/// update_state task id: `uuid5(UUID(checkpoint_id), "__interrupt__")`, or
/// `"__interrupt__:{i}"` for the i-th update of a bulk superstep (spec §5.2).
pub fn update_task_id(checkpoint_id: &Uuid, i: usize) -> String {
    let name = if i == 0 {
        "__interrupt__".to_string()
    } else {
        format!("__interrupt__:{i}")
    };
    Uuid::new_v5(checkpoint_id, name.as_bytes()).to_string()
}

/// `task_path_str`, spec §5.5, for the path shapes this crate models.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum PathPart {
    Str(String),
    Int(i64),
    Bool(bool),
    Nested(Vec<PathPart>),
}

pub fn task_path_str(path: &[PathPart]) -> String {
    fn one(p: &PathPart) -> String {
        match p {
            PathPart::Str(s) => s.clone(),
            PathPart::Int(i) => format!("{i:010}"),
            PathPart::Bool(b) => format!("{:010}", *b as i64),
            PathPart::Nested(v) => task_path_str(v),
        }
    }
    format!("~{}", path.iter().map(one).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uuid {
        Uuid::parse_str(s).unwrap()
    }

    // Vectors quoted from the spec (§5.2, §5.6), which were produced by LangGraph 1.2.24.
    #[test]
    fn pull_and_push_ids_match_spec_vectors() {
        let start = pull_task_id(
            &u("1f1ee3be-2a69-6d7c-bfff-fac64441b6ce"),
            "",
            0,
            "__start__",
            &["__start__".into()],
        );
        assert_eq!(start, "81b568ae-b893-0787-9f1d-5b7bc32b2aee");
        let join = pull_task_id(
            &u("1f1ee3be-43e9-6a44-8002-79234714f660"),
            "",
            3,
            "c",
            &["join:a+b2:c".into(), "branch:to:c".into()],
        );
        assert_eq!(join, "c68e3752-c1bb-2feb-b750-de5b3546872e");
        let push = push_task_id(&u("1f1ee3be-43fa-6099-8001-563784ec10bb"), "", 2, "w", 0);
        assert_eq!(push, "4a0861f8-8a63-aa9d-443e-75e32f667357");
    }

    #[test]
    fn interrupt_ids_match_spec_vectors() {
        assert_eq!(
            interrupt_id("ask:7d8e6d33-1154-d10f-54ad-b84d6e3a7865", 0),
            "89dff3e2fdb4eca8aa374a1752471de2"
        );
        assert_eq!(
            interrupt_id("ask2:775ebff9-cfc7-9229-e95d-e3b69bfb5694", 1),
            "5fb53f015e41c671bbc29fe89fb22ab9"
        );
    }

    #[test]
    fn clock_seq_and_update_ids() {
        assert_eq!(
            clock_seq_step(&u("1f1ee3be-2a69-6d7c-bfff-fac64441b6ce")),
            -1
        );
        assert_eq!(
            clock_seq_step(&u("1f1ee3be-4fdf-638e-bffe-160213d91fce")),
            -2
        );
        assert_eq!(
            clock_seq_step(&u("1f1ee3be-2a70-693c-8001-9d44b80efb1a")),
            1
        );
        assert_eq!(
            update_task_id(&u("1f1ee3be-8435-6755-8002-b6057ed493b5"), 0),
            "8b438847-914a-5eec-b3d2-de434a83d5c0"
        );
    }

    #[test]
    fn task_paths_format_like_python() {
        let p = vec![
            PathPart::Str("__pregel_push".into()),
            PathPart::Int(2),
            PathPart::Bool(false),
        ];
        assert_eq!(task_path_str(&p), "~__pregel_push, 0000000002, 0000000000");
    }
}
