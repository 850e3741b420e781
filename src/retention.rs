//! Retention policies: how long the changes at a path are kept in full detail.
//!
//! A retention rule (`hist rules retention PATTERN …`) says, for the changes recorded at or
//! below the places PATTERN selects:
//! - `--forever` (the default for every path): never compacted;
//! - `--keep 90d --then daily`: changes older than 90 days are compacted by `hist gc` to one
//!   change per path and UTC day (the old value of the first, the new value of the last);
//! - `--then hourly`: the same, one change per hour;
//! - `--then drop` (the default after `--keep`): changes older than the window are folded
//!   into one change per path carrying their net effect, so the state at the window's
//!   start stays exact while the detail before it is gone.
//!
//! When several retention rules cover a change, the one with the longest pattern wins
//! (`/items[*]/price` beats `""`); between equal patterns the one declared last wins.
//! A change recorded at an ancestor of the pattern (a whole item added, a whole document
//! written) is not covered by it and is kept.

use crate::path::DocPath;
use crate::time::Timestamp;
use std::fmt;

/// What happens to the changes a retention rule covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retention {
    /// Kept in full detail, always.
    Forever,
    /// Kept in full for `seconds`; older changes are compacted as `then` says.
    Keep {
        /// The window, in seconds.
        seconds: i64,
        /// What becomes of changes older than the window.
        then: Then,
    },
}

/// How changes older than a retention window are compacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// One change per path and UTC day.
    Daily,
    /// One change per path and UTC hour.
    Hourly,
    /// One change per path for the whole span before the window (the net effect).
    Drop,
}

impl Then {
    /// The stored and printed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Then::Daily => "daily",
            Then::Hourly => "hourly",
            Then::Drop => "drop",
        }
    }

    /// Parses `daily`, `hourly` or `drop`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "daily" => Then::Daily,
            "hourly" => Then::Hourly,
            "drop" => Then::Drop,
            _ => return None,
        })
    }

    /// The bucket a change at `micros` since the epoch falls in: changes in one bucket are
    /// compacted together.
    pub fn bucket(self, micros: i64) -> i64 {
        match self {
            Then::Daily => micros.div_euclid(86_400_000_000),
            Then::Hourly => micros.div_euclid(3_600_000_000),
            Then::Drop => 0,
        }
    }
}

impl fmt::Display for Then {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a retention window: a whole number followed by `s`, `m`, `h`, `d` or `w`
/// (`90d`, `12h`, `2w`). Returns seconds.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let bad = || {
        format!(
            "{text:?} is not a duration: write a whole number and a unit, s, m, h, d or w (90d, 12h)"
        )
    };
    let unit = text.chars().last().ok_or_else(bad)?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return Err(bad()),
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: i64 = digits.parse().map_err(|_| bad())?;
    let seconds = n.checked_mul(scale).ok_or_else(bad)?;
    // Keep the window within what timestamps can represent (about 292,000 years).
    if seconds == 0 || seconds > 9_000_000_000_000 {
        return Err(format!(
            "{text:?} is not a usable retention window: it must be at least 1s and less than 280,000 years"
        ));
    }
    Ok(seconds)
}

/// Prints a window in the largest unit that divides it: `90d`, `12h`, `2w`.
pub fn format_duration(seconds: i64) -> String {
    for (unit, scale) in [('w', 7 * 86_400), ('d', 86_400), ('h', 3600), ('m', 60)] {
        if seconds % scale == 0 && seconds >= scale {
            return format!("{}{unit}", seconds / scale);
        }
    }
    format!("{seconds}s")
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Retention::Forever => f.write_str("--forever"),
            Retention::Keep { seconds, then } => {
                write!(f, "--keep {} --then {then}", format_duration(*seconds))
            }
        }
    }
}

/// What a compaction did (or, in a plan, will do) to one compacted path of one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// The `compact` transaction that recorded it (`None` in a plan).
    pub tx: Option<i64>,
    /// The document.
    pub key: String,
    /// The compacted path.
    pub path: DocPath,
    /// The retention rule applied.
    pub rule: i64,
    /// Daily, hourly or drop.
    pub mode: Then,
    /// How many change rows were replaced.
    pub replaced: usize,
    /// How many change rows were written in their place.
    pub kept: usize,
    /// The first transaction of the span.
    pub first_tx: i64,
    /// The last transaction of the span.
    pub last_tx: i64,
    /// When the span starts.
    pub first_at: Timestamp,
    /// When it ends.
    pub last_at: Timestamp,
}

impl Compaction {
    /// True when a read right after transaction `tx` falls inside this span: its values at
    /// [`Compaction::path`] are the compacted ones.
    pub fn covers_tx(&self, tx: i64) -> bool {
        self.first_tx <= tx && tx < self.last_tx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90d"), Ok(90 * 86_400));
        assert_eq!(parse_duration("12h"), Ok(12 * 3600));
        assert_eq!(parse_duration("2w"), Ok(14 * 86_400));
        assert_eq!(parse_duration("30m"), Ok(1800));
        assert_eq!(parse_duration("45s"), Ok(45));
        for bad in [
            "",
            "d",
            "90",
            "-1d",
            "1.5d",
            "0d",
            "90D",
            "9999999999999w",
            "1 d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration(90 * 86_400), "90d");
        assert_eq!(format_duration(14 * 86_400), "2w");
        assert_eq!(format_duration(1800), "30m");
        assert_eq!(format_duration(45), "45s");
        assert_eq!(format_duration(25 * 3600), "25h");
    }

    #[test]
    fn buckets() {
        let day = 86_400_000_000;
        assert_eq!(Then::Daily.bucket(day - 1), 0);
        assert_eq!(Then::Daily.bucket(day), 1);
        assert_eq!(Then::Daily.bucket(-1), -1);
        assert_eq!(Then::Hourly.bucket(3_600_000_000 * 5 + 7), 5);
        assert_eq!(Then::Drop.bucket(day * 400), 0);
    }
}
