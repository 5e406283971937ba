//! SqliteSaver channel versions (spec §4.1): `f"{n:032}.{random.random():016}"`.

use crate::store::Version;

/// Python's `repr(float)` for a value in [0, 1): shortest round-trip digits, with Python's
/// switch to exponent notation below 1e-4 (`1.234e-05`).
pub fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return "0.0".into();
    }
    if f.abs() < 1e-4 || f.abs() >= 1e16 {
        // Rust: "1.234e-5" -> Python: "1.234e-05"
        let s = format!("{f:e}");
        let (mant, exp) = s.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();

        return format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// `get_next_version(current)`: integer part + 1, zero padded to 32 digits, then a random
/// fraction formatted like Python's `format(random.random(), "016")`.
pub fn next_version(current: Option<&Version>, fraction: f64) -> Version {
    let n = current.map(Version::number).unwrap_or(0) + 1;
    Version::Str(format!("{n:032}.{:0>16}", python_float_repr(fraction)))
}

/// `max(channel_versions.values())` with Python's comparison.
pub fn max_version<'a>(versions: impl Iterator<Item = &'a Version>) -> Option<&'a Version> {
    versions.fold(None, |acc, v| match acc {
        None => Some(v),
        Some(a) => Some(if Version::gt(Some(v), Some(a)) { v } else { a }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_formatting_matches_python() {
        // Python: format(x, "016") for these floats (spec §4.1)
        assert_eq!(
            format!("{:0>16}", python_float_repr(0.8235099401257282)),
            "0.8235099401257282"
        );
        assert_eq!(
            format!("{:0>16}", python_float_repr(0.5)),
            "00000000000000.5"
        );
        assert_eq!(
            format!("{:0>16}", python_float_repr(1.234e-05)),
            "00000001.234e-05"
        );
        assert_eq!(
            format!("{:0>16}", python_float_repr(0.730489470296857)),
            "0.730489470296857"
        );
    }

    #[test]
    fn next_version_bumps_the_integer_part() {
        let v = next_version(
            Some(&Version::Str("00000000000000000000000000000007.0.1".into())),
            0.25,
        );
        assert_eq!(
            v,
            Version::Str("00000000000000000000000000000008.0000000000000.25".into())
        );
        assert_eq!(next_version(None, 0.5).number(), 1);
    }
}
