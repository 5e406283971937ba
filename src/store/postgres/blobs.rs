//! Big blobs: what a `checkpoints` row's body holds, and a blob read in chunks, never whole.

/// The checkpoint of one `checkpoints` row as Postgres holds it.
pub(super) struct Body {
    /// `checkpoint::text` (JSONB's own key order).
    pub(super) checkpoint: String,
    /// The blobs of its channel versions: channel, type, blob.
    pub(super) blobs: Vec<(String, String, Option<Vec<u8>>)>,
    /// Blobs over `PREVIEW_OVER` bytes, not loaded: previewed by streaming them on decode.
    pub(super) big: Vec<BigBlob>,
    /// v < 4 only: the parent's `__pregel_tasks` writes (type, blob), migrated into the
    /// checkpoint as PostgresSaver does.
    pub(super) sends: Option<Vec<(String, Vec<u8>)>>,
}

/// A `checkpoint_blobs` value too big to load whole (inspection only).
pub(super) struct BigBlob {
    pub(super) channel: String,
    pub(super) type_: String,
    /// `None` in ShallowPostgresSaver's layout (blobs by channel alone).
    pub(super) version: Option<String>,
    pub(super) len: u64,
}

/// Fetch this much of a big value per query while previewing it.
pub(super) const CHUNK: u64 = 256 * 1024;

/// A `Read + Seek` view of a value on the server, read in bounded `substring()` chunks: `fetch`
/// gets `(0-based offset, length)`.
pub(super) struct Chunked<F> {
    pub(super) fetch: F,
    pub(super) len: u64,
    pub(super) pos: u64,
    pub(super) buf: Vec<u8>,
    pub(super) at: u64,
}

impl<F: FnMut(u64, u64) -> std::io::Result<Vec<u8>>> std::io::Read for Chunked<F> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len || out.is_empty() {
            return Ok(0);
        }
        if self.pos < self.at || self.pos >= self.at + self.buf.len() as u64 {
            self.buf = (self.fetch)(self.pos, CHUNK.min(self.len - self.pos))?;
            self.at = self.pos;
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let off = (self.pos - self.at) as usize;
        let k = out.len().min(self.buf.len() - off);
        out[..k].copy_from_slice(&self.buf[off..off + k]);
        self.pos += k as u64;
        Ok(k)
    }
}

impl<F> std::io::Seek for Chunked<F> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let (base, d) = match to {
            std::io::SeekFrom::Start(n) => (0i128, n as i128),
            std::io::SeekFrom::Current(d) => (self.pos as i128, d as i128),
            std::io::SeekFrom::End(d) => (self.len as i128, d as i128),
        };
        let p = base + d;
        if p < 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start",
            ));
        }
        self.pos = p as u64;
        Ok(self.pos)
    }
}
