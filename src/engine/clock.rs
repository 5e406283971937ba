//! Where time and randomness come from: checkpoint ids (uuid6, spec §3.1), `ts`, version
//! fractions. Injected so tests and the TUI can be deterministic.

use uuid::Uuid;

/// Source of wall-clock time, random bits and version fractions.
pub trait IdSource {
    /// Nanoseconds since the Unix epoch.
    fn now_ns(&mut self) -> u128;
    /// 48 random bits for the uuid6 node field.
    fn node_bits(&mut self) -> u64;
    /// A float in [0, 1) for version suffixes.
    fn fraction(&mut self) -> f64;
}

/// Real time, pseudo-random bits (xorshift seeded from the clock and pid).
pub struct SystemIds {
    state: u64,
}

impl Default for SystemIds {
    fn default() -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        SystemIds {
            state: (t ^ ((std::process::id() as u64) << 32)) | 1,
        }
    }
}

fn xorshift(s: &mut u64) -> u64 {
    let mut x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    x
}

impl IdSource for SystemIds {
    fn now_ns(&mut self) -> u128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    }
    fn node_bits(&mut self) -> u64 {
        xorshift(&mut self.state) & 0xFFFF_FFFF_FFFF
    }
    fn fraction(&mut self) -> f64 {
        (xorshift(&mut self.state) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A fixed clock advancing 1 ms per reading and a seeded generator: for tests and `--print`.
pub struct FixedIds {
    pub ns: u128,
    state: u64,
}

impl FixedIds {
    pub fn new(start_ns: u128, seed: u64) -> Self {
        FixedIds {
            ns: start_ns,
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }
}

impl IdSource for FixedIds {
    fn now_ns(&mut self) -> u128 {
        self.ns += 1_000_000;
        self.ns
    }
    fn node_bits(&mut self) -> u64 {
        xorshift(&mut self.state) & 0xFFFF_FFFF_FFFF
    }
    fn fraction(&mut self) -> f64 {
        (xorshift(&mut self.state) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// LangGraph's uuid6 with a strictly increasing 100-ns timestamp.
#[derive(Default)]
pub struct Uuid6 {
    last: Option<u128>,
}

impl Uuid6 {
    /// `uuid6(clock_seq=step)`; also returns the timestamp's ISO form for `ts` (taken just before,
    /// as LangGraph computes `ts` before the id).
    pub fn next(&mut self, ids: &mut dyn IdSource, clock_seq: i64) -> (String, String) {
        let ns = ids.now_ns();
        let ts = iso_utc(ns);
        let mut timestamp = ns / 100 + 0x01B2_1DD2_1381_4000;
        if let Some(last) = self.last {
            if timestamp <= last {
                timestamp = last + 1;
            }
        }
        self.last = Some(timestamp);
        let node = ids.node_bits() as u128;
        let mut u: u128 = ((timestamp >> 12) & 0xFFFF_FFFF_FFFF) << 80;
        u |= (timestamp & 0x0FFF) << 64;
        u |= ((clock_seq as u128) & 0x3FFF) << 48;
        u |= node & 0xFFFF_FFFF_FFFF;
        u = (u & !(0xC000u128 << 48)) | (0x8000u128 << 48);
        u = (u & !(0xF000u128 << 64)) | (6u128 << 76);
        (Uuid::from_u128(u).to_string(), ts)
    }
}

/// `datetime.now(timezone.utc).isoformat()`: microseconds, omitted when zero.
pub fn iso_utc(ns: u128) -> String {
    let secs = (ns / 1_000_000_000) as i64;
    let micros = ((ns / 1000) % 1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let base = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    if micros == 0 {
        format!("{base}+00:00")
    } else {
        format!("{base}.{micros:06}+00:00")
    }
}

/// Days since 1970-01-01 -> (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid6_layout_matches_langgraph() {
        // ex01's input checkpoint id decodes to 10:33:59.8247xx on 2026-12-02 with clock_seq -1
        let mut ids = FixedIds::new(0, 1);
        ids.ns = 1_796_207_639_824_717_000 - 1_000_000;
        let (id, ts) = Uuid6::default().next(&mut ids, -1);
        assert!(
            id.starts_with("1f1ee3be-2a69-6") && &id[19..23] == "bfff",
            "{id}"
        );
        assert_eq!(ts, "2026-12-02T10:33:59.824717+00:00");
        assert_eq!(
            crate::ids::clock_seq_step(&Uuid::parse_str(&id).unwrap()),
            -1
        );
    }

    #[test]
    fn ids_strictly_increase_and_ts_omits_zero_micros() {
        let mut ids = FixedIds::new(1_700_000_000_000_000_000, 7);
        let mut u = Uuid6::default();
        let a = u.next(&mut ids, 0).0;
        let b = u.next(&mut ids, 1).0;
        assert!(b > a);
        assert_eq!(
            iso_utc(1_700_000_000_000_000_000),
            "2023-11-14T22:13:20+00:00"
        );
    }
}
