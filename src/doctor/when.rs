//! Time for `prune --older-than`: a checkpoint's creation time read from its id (LangGraph's ids
//! are uuid6: the 100-ns timestamp `ts` was taken from leads the id), and the cut-off a user
//! writes (a date, a date and time in UTC, or an age such as `30d`).

/// 100-ns intervals between the Gregorian epoch (1582-10-15) and the Unix epoch.
const GREGORIAN_OFFSET: u128 = 0x01B2_1DD2_1381_4000;

/// When the checkpoint with this id was created (ns since the Unix epoch), if the id is a
/// uuid6 as LangGraph writes them; `None` for any other id (such a checkpoint is never "older").
pub fn id_time_ns(id: &str) -> Option<u128> {
    let u = uuid::Uuid::parse_str(id).ok()?;
    if u.get_version_num() != 6 {
        return None;
    }
    let u = u.as_u128();
    let ts = (((u >> 80) & 0xFFFF_FFFF_FFFF) << 12) | ((u >> 64) & 0x0FFF);
    ts.checked_sub(GREGORIAN_OFFSET).map(|t| t * 100)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn num<T: std::str::FromStr>(s: &str, what: &str, all: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("--older-than {all:?}: {what} {s:?} is not a number"))
}

/// The cut-off `--older-than` names, in ns since the Unix epoch: `2025-01-31` (midnight UTC),
/// `2025-01-31T12:00[:00][Z]`, or an age before `now_ns`: `90m`, `12h`, `30d`, `2w`.
pub fn parse_cutoff(s: &str, now_ns: u128) -> Result<u128, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "--older-than {s:?}: expected a date (2025-01-31), a UTC time (2025-01-31T12:00:00Z) or an age (90m, 12h, 30d, 2w)"
        )
    };
    if let Some(unit) = t.chars().last().filter(|c| "mhdw".contains(*c)) {
        let n: u128 = num(&t[..t.len() - 1], "the age", s)?;
        let secs = match unit {
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => 7 * 86_400,
        };
        return now_ns
            .checked_sub(n.saturating_mul(secs * 1_000_000_000))
            .ok_or_else(bad);
    }
    let t = t
        .strip_suffix('Z')
        .or(t.strip_suffix("+00:00"))
        .unwrap_or(t);
    let (date, time) = t.split_once(['T', ' ']).unwrap_or((t, ""));
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3 || parts[0].len() != 4 {
        return Err(bad());
    }
    let (y, m, d): (i64, u32, u32) = (
        num(parts[0], "the year", s)?,
        num(parts[1], "the month", s)?,
        num(parts[2], "the day", s)?,
    );
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || y < 1970 {
        return Err(bad());
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    if !time.is_empty() {
        let hms: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&hms.len()) {
            return Err(bad());
        }
        let h: i64 = num(hms[0], "the hour", s)?;
        let mi: i64 = num(hms[1], "the minute", s)?;
        let se: f64 = hms.get(2).map_or(Ok(0.0), |x| num(x, "the second", s))?;
        if h > 23 || mi > 59 || !(0.0..61.0).contains(&se) {
            return Err(bad());
        }
        secs += h * 3600 + mi * 60 + se as i64;
    }
    Ok(secs as u128 * 1_000_000_000)
}

/// Now, in ns since the Unix epoch.
pub fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_langgraph_id_gives_its_creation_time() {
        // written by LangGraph with ts 2026-12-02T12:21:56.914938+00:00 (tests/fixtures/linear)
        let t = id_time_ns("1f1ee4af-74c2-661f-8006-5d3731b4ef58").unwrap();
        let at = parse_cutoff("2026-12-02T12:21:56Z", 0).unwrap();
        assert!(t >= at + 914_000_000 && t < at + 916_000_000, "{t} {at}");
        assert_eq!(id_time_ns("not-a-uuid"), None);
        assert_eq!(id_time_ns("67e55044-10b1-426f-9247-bb680e5fe0c8"), None); // v4
    }

    #[test]
    fn cutoffs_parse_dates_times_and_ages() {
        assert_eq!(parse_cutoff("1970-01-02", 0).unwrap(), 86_400_000_000_000);
        assert_eq!(
            parse_cutoff("2000-03-01T00:00:01Z", 0).unwrap(),
            951_868_801_000_000_000
        );
        let now = 10 * 86_400 * 1_000_000_000;
        assert_eq!(parse_cutoff("1d", now).unwrap(), 9 * 86_400 * 1_000_000_000);
        assert_eq!(parse_cutoff("1w", now).unwrap(), 3 * 86_400 * 1_000_000_000);
        for bad in ["yesterday", "2025-13-01", "2025-01-01T25:00", "xd", "11d"] {
            assert!(parse_cutoff(bad, now).is_err(), "{bad}");
        }
    }
}
