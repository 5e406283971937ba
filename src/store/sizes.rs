//! What a store holds, by size and by reference, without decoding a value: the rows `du` adds up
//! and `prune` plans from. A backend streams one [`ThreadSizes`] per thread
//! ([`super::Backend::scan_sizes`]), in thread-id order, so memory stays bounded by the largest
//! thread's row count, never by the store.

/// How a channel's value is held at a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// In the checkpoint row itself (SQLite's msgpack blob; a Postgres primitive in the JSONB).
    Inline,
    /// In a `checkpoint_blobs` row shared by every checkpoint at that version (Postgres).
    Blob,
    /// A version and no value (a DeltaChannel between snapshots, a consumed trigger, or an
    /// `empty` blob).
    Nothing,
}

/// One channel of one checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAt {
    pub channel: String,
    /// `channel_versions[channel]` as text; `None` for a value without a version.
    pub version: Option<String>,
    /// The value's stored length (for [`Held::Blob`]/[`Held::Snapshot`] in Postgres, the blob's).
    pub bytes: u64,
    pub held: Held,
    /// The value is a DeltaChannel's `_DeltaSnapshot` (inline in SQLite; a blob behind an
    /// inline `true` marker in Postgres).
    pub snapshot: bool,
}

/// One checkpoint row: where it sits, its size, and the facts pruning needs, read from the
/// store's own lengths, the metadata's few fields and the checkpoint's structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSize {
    pub ns: String,
    pub id: String,
    pub parent: Option<String>,
    /// The `checkpoint` column's stored length.
    pub bytes: u64,
    pub metadata_bytes: u64,
    /// `metadata.step`, `metadata.source`.
    pub step: Option<i64>,
    pub source: Option<String>,
    /// `metadata.parents[""]`: the root checkpoint a subgraph call started from.
    pub anchor: Option<String>,
    /// Keys of `metadata.counters_since_delta_snapshot`: DeltaChannels whose value here is
    /// rebuilt from the ancestors' writes back to their nearest snapshot.
    pub delta_pending: Vec<String>,
    /// The checkpoint format `v` (before 4, pending sends live in the parent's writes).
    pub format: Option<i64>,
    pub channels: Vec<ChannelAt>,
    /// The checkpoint's structure could not be read (corrupt, encrypted, not msgpack): sizes
    /// are the row's, `channels` is empty.
    pub opaque: Option<String>,
}

/// One pending write row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteSize {
    pub ns: String,
    pub checkpoint_id: String,
    pub task_id: String,
    pub idx: i64,
    pub channel: String,
    pub bytes: u64,
}

/// One `checkpoint_blobs` row (Postgres).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobSize {
    pub ns: String,
    pub channel: String,
    pub version: String,
    pub bytes: u64,
    /// Type `empty`: the channel had no value at that version.
    pub empty: bool,
}

/// Everything one thread holds, every namespace, ordered by (namespace, id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadSizes {
    pub thread_id: String,
    pub checkpoints: Vec<CheckpointSize>,
    pub writes: Vec<WriteSize>,
    pub blobs: Vec<BlobSize>,
}

/// The store as the database sees it: file and table sizes, free space.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Space {
    /// The database file (SQLite) or database (Postgres) in bytes.
    pub total: Option<u64>,
    /// A SQLite `-wal` beside the file.
    pub wal: Option<u64>,
    /// Pages or space the database holds free (SQLite's freelist; what VACUUM gives back).
    pub free: Option<u64>,
    /// Each table with its indexes (and TOAST), in bytes.
    pub tables: Vec<(String, u64)>,
}

/// What `prune` removes from one thread, row by row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    pub thread_id: String,
    /// Every row of the thread.
    pub whole: bool,
    /// `(namespace, checkpoint id)`: the checkpoint row and its writes.
    pub checkpoints: Vec<(String, String)>,
    /// `(namespace, channel, version)`: blobs no kept checkpoint references (Postgres).
    pub blobs: Vec<(String, String, String)>,
}

/// Rows a removal deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Deleted {
    pub checkpoints: u64,
    pub writes: u64,
    pub blobs: u64,
}

impl std::ops::AddAssign for Deleted {
    fn add_assign(&mut self, o: Deleted) {
        self.checkpoints += o.checkpoints;
        self.writes += o.writes;
        self.blobs += o.blobs;
    }
}

/// The few metadata fields the doctor reads, from the metadata JSON.
pub(crate) fn metadata_facts(
    m: &serde_json::Map<String, serde_json::Value>,
) -> (Option<i64>, Option<String>, Option<String>, Vec<String>) {
    let step = m.get("step").and_then(serde_json::Value::as_i64);
    let source = m
        .get("source")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    let anchor = m
        .get("parents")
        .and_then(|p| p.get(""))
        .and_then(serde_json::Value::as_str)
        .map(str::to_string);
    let delta = m
        .get("counters_since_delta_snapshot")
        .and_then(serde_json::Value::as_object)
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default();
    (step, source, anchor, delta)
}
