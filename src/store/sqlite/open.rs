//! Opening a SQLite file safely: what the path is, its header, its locks (who holds the file, a WAL
//! in use), a private copy of a leftover WAL pair, and the connection's flags.

use super::*;

#[cfg(unix)]
pub(super) fn file_ident(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_ident(path: &Path) -> std::io::Result<(u64, u64)> {
    std::fs::metadata(path).map(|_| (0, 0))
}

/// A WAL-mode file with a `-wal` that no process has open (a writer crashed or was killed, or
/// the `-shm` was deleted): SQLite would create a `-shm` next to it, or rewrite a stale one, to
/// read it. To leave the directory as it is, the file and its `-wal` are copied into a private
/// directory (mode 0700, removed when the store is dropped) and the copy is read.
pub(super) struct PrivateCopy {
    pub(super) dir: PathBuf,
    pub(super) db: PathBuf,
}

impl PrivateCopy {
    pub(super) fn of(path: &Path) -> std::io::Result<PrivateCopy> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "superstep-wal-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(&dir)?;
        let copy = PrivateCopy {
            db: dir.join("db.sqlite"),
            dir,
        };
        std::fs::copy(path, &copy.db)?;
        std::fs::copy(sidecar(path, "-wal"), sidecar(&copy.db, "-wal"))?;
        Ok(copy)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A descriptor of `path` for superstep's own looks at a database (its header, its lock bytes),
/// opened once per file and **never closed**. POSIX drops every `fcntl` lock a process holds on a
/// file when *any* of its descriptors of that file is closed — SQLite's too: a connection of this
/// process to the same file (the engine's writer beside a reader, the TUI's) would silently lose
/// its locks. On the `-shm` that is the dead-man-switch lock: another process then believes it
/// is the first, truncates the `-shm` this process has mapped, and our next access dies with
/// SIGBUS (seen as `continue` killed by signal 7 when two CLI steppers raced). SQLite's own unix
/// VFS defers closing for the same reason. Keyed by (device, inode): a file replaced under the
/// path is another entry; the table grows by one small entry per distinct file looked at.
#[cfg(unix)]
pub(super) fn probe(path: &Path) -> std::io::Result<Arc<std::fs::File>> {
    use std::sync::{Mutex, OnceLock};
    type Kept = HashMap<(u64, u64), Arc<std::fs::File>>;
    static OPEN: OnceLock<Mutex<Kept>> = OnceLock::new();
    let table = OPEN.get_or_init(Default::default);
    let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = file_ident(path).ok().and_then(|id| table.get(&id)) {
        return Ok(f.clone());
    }
    let f = Arc::new(std::fs::File::open(path)?);
    let id = {
        use std::os::unix::fs::MetadataExt;
        let m = f.metadata()?;
        (m.dev(), m.ino())
    };
    match table.entry(id) {
        // the path changed between stat and open to a file already kept: use the kept one, and
        // keep the new descriptor open as well (closing it would drop the locks, as above)
        std::collections::hash_map::Entry::Occupied(e) => {
            std::mem::forget(f);
            Ok(e.get().clone())
        }
        std::collections::hash_map::Entry::Vacant(e) => Ok(e.insert(f).clone()),
    }
}

#[cfg(not(unix))]
pub(super) fn probe(path: &Path) -> std::io::Result<Arc<std::fs::File>> {
    std::fs::File::open(path).map(Arc::new)
}

#[cfg(unix)]
pub(super) fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

#[cfg(not(unix))]
pub(super) fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f: &std::fs::File = f;
    f.seek(SeekFrom::Start(at))?;
    f.read(buf)
}

/// Whether some process has the WAL-mode database open: it holds a read lock on the `-shm`
/// file's dead-man-switch byte (SQLite's unix VFS: offset 128), or a lock on the database
/// file's lock bytes (offset 2^30, 512 bytes). No `-shm` file means no shared-memory reader.
#[cfg(unix)]
pub(super) fn wal_in_use(path: &Path) -> bool {
    fn locked(file: &Path, start: i64, len: i64) -> bool {
        use std::os::unix::io::AsRawFd;
        let Ok(f) = probe(file) else {
            return false;
        };
        // SAFETY: a zeroed flock is a valid argument; F_GETLK only fills it in
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = start as libc::off_t;
        fl.l_len = len as libc::off_t;
        // an open-file-description query also reports this process's own POSIX locks (the
        // TUI's engine connection holds the file in the same process)
        #[cfg(target_os = "linux")]
        let cmd = libc::F_OFD_GETLK;
        #[cfg(not(target_os = "linux"))]
        let cmd = libc::F_GETLK;
        // SAFETY: a valid open descriptor and a valid flock (l_pid 0, as F_OFD_GETLK requires)
        let r = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &mut fl) };
        r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short
    }
    let shm = sidecar(path, "-shm");
    (shm.exists() && locked(&shm, 120, 16)) || locked(path, 0x4000_0000, 512)
}

#[cfg(not(unix))]
pub(super) fn wal_in_use(_path: &Path) -> bool {
    true
}

/// The process holding the lock [`wal_in_use`] found (F_GETLK names a POSIX lock's owner).
#[cfg(unix)]
pub(super) fn lock_holder(path: &Path) -> Option<i32> {
    fn holder(file: &Path, start: i64, len: i64) -> Option<i32> {
        use std::os::unix::io::AsRawFd;
        let f = probe(file).ok()?;
        // SAFETY: a zeroed flock is a valid argument; F_GETLK only fills it in
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = start as libc::off_t;
        fl.l_len = len as libc::off_t;
        // SAFETY: a valid open descriptor and a valid flock
        let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) };
        (r == 0 && fl.l_type != libc::F_UNLCK as libc::c_short && fl.l_pid > 0)
            .then_some(fl.l_pid as i32)
    }
    let shm = sidecar(path, "-shm");
    shm.exists()
        .then(|| holder(&shm, 120, 16))
        .flatten()
        .or_else(|| holder(path, 0x4000_0000, 512))
}

#[cfg(not(unix))]
pub(super) fn lock_holder(_path: &Path) -> Option<i32> {
    None
}

/// What the path is, before anything opens it (opening a FIFO would block): missing (an error
/// for inspection; the engine creates it), a regular file, or something that cannot be a
/// checkpoint file — a directory, a device (`/dev/null`, `/dev/zero`), a FIFO, a socket.
pub(super) fn check_kind(path: &Path, mode: Mode) -> Result<(), StoreError> {
    let shown = || path.display().to_string();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match mode {
                Mode::ReadOnly | Mode::Maintain => Err(StoreError::Missing { path: shown() }),
                Mode::ReadWrite => Ok(()),
            };
        }
        Err(e) => {
            return Err(StoreError::Sqlite {
                path: shown(),
                detail: e.to_string(),
            })
        }
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    let what = if ft.is_dir() {
        "it is a directory"
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_char_device() {
                "it is a character device"
            } else if ft.is_block_device() {
                "it is a block device"
            } else if ft.is_fifo() {
                "it is a named pipe"
            } else if ft.is_socket() {
                "it is a socket"
            } else {
                "it is not a regular file"
            }
        }
        #[cfg(not(unix))]
        "it is not a regular file"
    };
    Err(StoreError::NotSqlite {
        path: shown(),
        detail: what.to_string(),
    })
}

/// The engine writes: refuse before SQLite opens anything (which would leave `-wal` / `-shm`
/// files it cannot use, and report "attempt to write a readonly database" at the first step)
/// when the file, or the directory its journal goes in, is not writable by this process.
pub(super) fn check_writable(path: &Path) -> Result<(), StoreError> {
    let err = |detail: String| StoreError::Sqlite {
        path: path.display().to_string(),
        detail,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.exists() && !writable(path) {
        return Err(err(
            "the file is read-only for this user: the engine writes a checkpoint per superstep \
             (make it writable, or inspect it: superstep threads/history/show --db FILE)"
                .into(),
        ));
    }
    if !writable(dir) {
        return Err(err(format!(
            "the directory {} is read-only for this user: SQLite keeps its journal (-wal, -shm) \
             next to the file (copy the file somewhere writable, or inspect it: superstep \
             threads/history/show --db FILE)",
            dir.display()
        )));
    }
    Ok(())
}

/// `access(W_OK)`: whether this process may write the path (root may write a 0444 file).
#[cfg(unix)]
pub(super) fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; access() only reads it
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
pub(super) fn writable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

/// Reject files that are not SQLite before SQLite sees them; returns whether the header says
/// WAL mode (file format version bytes 18/19 = 2).
pub(super) fn check_header(path: &Path) -> Result<bool, StoreError> {
    let shown = path.display().to_string();
    let f = probe(path).map_err(|e| StoreError::Sqlite {
        path: shown.clone(),
        detail: e.to_string(),
    })?;
    let mut head = [0u8; 20];
    let mut n = 0;
    while n < head.len() {
        let k = read_at(&f, &mut head[n..], n as u64).map_err(|e| StoreError::Sqlite {
            path: shown.clone(),
            detail: e.to_string(),
        })?;
        if k == 0 {
            break;
        }
        n += k;
    }
    if n == 0 {
        return Err(StoreError::NotSqlite {
            path: shown,
            detail: "empty file".into(),
        });
    }
    if n < 20 || &head[..16] != b"SQLite format 3\0" {
        return Err(StoreError::NotSqlite {
            path: shown,
            detail: "no SQLite header".into(),
        });
    }
    Ok(head[18] == 2 || head[19] == 2)
}

/// Read-only opens use SQLite's read-only mode, which never writes the file. A WAL-mode
/// database with no `-wal` file (nobody has it open) would still get `-wal`/`-shm` files created
/// next to it, so it is opened `immutable=1` instead and the directory stays byte-identical. When a
/// `-wal` exists a writer may be live, and the normal read-only path (which sees its committed
/// frames and honours its locks) is used; rollback-journal databases always use it.
pub(super) fn open_conn(path: &Path, mode: Mode, wal_header: bool) -> rusqlite::Result<Connection> {
    match mode {
        Mode::ReadWrite | Mode::Maintain => Connection::open(path),
        Mode::ReadOnly => {
            let immutable = wal_header && !sidecar(path, "-wal").exists();
            let uri = format!(
                "file:{}?mode=ro{}",
                uri_path(path),
                if immutable { "&immutable=1" } else { "" }
            );
            let conn = Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            // inspection never needs SQLite to build a value this large (bigger blobs are
            // streamed): a generated column computing gigabytes fails instead of eating memory
            conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, BUILD_LIMIT)?;
            Ok(conn)
        }
    }
}

/// The largest string or blob SQLite may build for an inspection query.
pub(super) const BUILD_LIMIT: i32 = 64 * 1024 * 1024;

pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

pub(super) fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub(super) fn table_columns(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = conn.prepare(
        "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name IN ('checkpoints', 'writes')",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
