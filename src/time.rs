//! Points in time: transaction timestamps and the `@WHEN` syntax.
//!
//! A [`Timestamp`] is a count of microseconds since 1970-01-01T00:00:00Z, printed as
//! `2026-08-19T16:40:00.000000Z` (fixed width, so text order is time order).
//!
//! `WHEN` is written `@2026-08-01` (00:00:00 UTC that day), `@2026-08-01T16:40:00Z`
//! (RFC 3339, any offset, fractions of a second allowed), or `@tx:42` (right after
//! transaction 42). The leading `@` is optional. An as-of read includes every
//! transaction with `at <= WHEN`. [`When::parse`] reads these strict forms only.
//!
//! [`When::parse_at`] also reads what git users type, relative to a clock reading the
//! caller passes in (the library never reads the clock): `yesterday`, `2 weeks ago`,
//! `3 days ago`, `last friday`, `2026-08-01 16:40`, `2026-08-01T16:40`. A time written
//! without an offset is UTC, as `@2026-08-01` is. The relative grammar is the `interim`
//! crate's (`yesterday` is the same time of day, 24 hours earlier; `today` is now).

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use std::fmt;

/// Microseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// From a chrono time.
    pub fn from_datetime(dt: DateTime<Utc>) -> Self {
        Self(dt.timestamp_micros())
    }

    /// The chrono time, or `None` when out of chrono's range.
    pub fn to_datetime(self) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp_micros(self.0)
    }

    /// Parses the stored text form (any RFC 3339 text is accepted).
    pub fn parse_rfc3339(text: &str) -> Option<Self> {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|dt| Self::from_datetime(dt.with_timezone(&Utc)))
    }

    /// The calendar date part, `2026-08-19`.
    pub fn date(self) -> String {
        self.to_datetime()
            .map_or_else(|| self.to_string(), |dt| dt.format("%Y-%m-%d").to_string())
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_datetime() {
            Some(dt) => f.write_str(&dt.to_rfc3339_opts(SecondsFormat::Micros, true)),
            None => write!(f, "@{}us", self.0),
        }
    }
}

/// A point in the history named by the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every transaction with `at <=` this time.
    At(Timestamp),
    /// Every transaction up to and including this id.
    Tx(i64),
}

/// A `WHEN` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot read {0:?} as a time; write @2026-08-01, @2026-08-01T16:40:00Z (any offset), @tx:42, @yesterday or @'2 weeks ago'"
)]
pub struct WhenError(pub String);

/// Date-and-time forms without an offset, read as UTC (after the strict forms).
const NAIVE_FORMATS: [&str; 6] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M:%S%.fZ",
    "%Y-%m-%d %H:%M:%S%.fZ",
];

impl When {
    /// Parses `@2026-08-01`, `@2026-08-01T16:40:00+02:00` or `@tx:42` (the `@` is optional).
    pub fn parse(input: &str) -> Result<Self, WhenError> {
        let err = || WhenError(input.to_owned());
        let text = input.strip_prefix('@').unwrap_or(input).trim();
        if let Some(id) = text.strip_prefix("tx:") {
            return id.parse::<i64>().map(When::Tx).map_err(|_| err());
        }
        if let Some(ts) = Timestamp::parse_rfc3339(text) {
            return Ok(When::At(ts));
        }
        let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| err())?;
        let dt = date.and_hms_opt(0, 0, 0).ok_or_else(err)?.and_utc();
        Ok(When::At(Timestamp::from_datetime(dt)))
    }

    /// Parses every form [`When::parse`] reads, and also what git users type, resolved
    /// against `now` (the command's clock): `yesterday`, `2 weeks ago`, `last friday`,
    /// `2026-08-01 16:40`. A time without an offset is UTC.
    pub fn parse_at(input: &str, now: Timestamp) -> Result<Self, WhenError> {
        let strict = Self::parse(input);
        if strict.is_ok() {
            return strict;
        }
        let err = || WhenError(input.to_owned());
        let text = input.strip_prefix('@').unwrap_or(input).trim();
        if text.is_empty() || text.starts_with("tx:") {
            return Err(err());
        }
        for format in NAIVE_FORMATS {
            if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(text, format) {
                return Ok(When::At(Timestamp::from_datetime(dt.and_utc())));
            }
        }
        let now = now.to_datetime().ok_or_else(err)?;
        let dt = interim::parse_date_string(text, now, interim::Dialect::Uk).map_err(|_| err())?;
        Ok(When::At(Timestamp::from_datetime(dt)))
    }
}

impl fmt::Display for When {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            When::At(ts) => write!(f, "@{ts}"),
            When::Tx(id) => write!(f, "@tx:{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let day = When::parse("@2026-08-01").unwrap();
        assert_eq!(day.to_string(), "@2026-08-01T00:00:00.000000Z");
        let exact = When::parse("@2026-08-19T16:40:00Z").unwrap();
        assert_eq!(exact.to_string(), "@2026-08-19T16:40:00.000000Z");
        let offset = When::parse("2026-08-19T18:40:00+02:00").unwrap();
        assert_eq!(offset, exact);
        assert_eq!(When::parse("@tx:42").unwrap(), When::Tx(42));
        assert_eq!(
            When::parse("@2026-08-19T16:40:00.123456Z")
                .unwrap()
                .to_string(),
            "@2026-08-19T16:40:00.123456Z"
        );
    }

    #[test]
    fn refuses_the_rest() {
        for bad in [
            "",
            "@",
            "yesterday",
            "@tx:",
            "@tx:x",
            "2026-13-01",
            "2026-08-01T16:40:00",
        ] {
            assert!(When::parse(bad).is_err(), "{bad}");
        }
    }

    /// 2026-08-19T16:40:00Z, a Wednesday.
    const NOW: Timestamp = Timestamp(1_787_157_600_000_000);

    fn at(input: &str) -> String {
        When::parse_at(input, NOW)
            .unwrap_or_else(|e| panic!("{input}: {e}"))
            .to_string()
    }

    #[test]
    fn reads_what_git_users_type() {
        assert_eq!(at("@yesterday"), "@2026-08-18T16:40:00.000000Z");
        assert_eq!(at("2 weeks ago"), "@2026-08-05T16:40:00.000000Z");
        assert_eq!(at("@3 days ago"), "@2026-08-16T16:40:00.000000Z");
        assert_eq!(at("1 hour ago"), "@2026-08-19T15:40:00.000000Z");
        assert_eq!(at("now"), "@2026-08-19T16:40:00.000000Z");
        assert_eq!(at("last friday"), "@2026-08-14T00:00:00.000000Z");
        // Without an offset: UTC, as @2026-08-01 is.
        assert_eq!(at("@2026-08-01 16:40"), "@2026-08-01T16:40:00.000000Z");
        assert_eq!(at("2026-08-01T16:40:00"), "@2026-08-01T16:40:00.000000Z");
        assert_eq!(at("2026-08-01 16:40:05.5"), "@2026-08-01T16:40:05.500000Z");
    }

    #[test]
    fn strict_forms_read_the_same_with_a_clock() {
        for text in [
            "@2026-08-01",
            "@2026-08-19T16:40:00Z",
            "2026-08-19T18:40:00+02:00",
            "@tx:42",
            "@2026-08-19T16:40:00.123456Z",
        ] {
            assert_eq!(When::parse_at(text, NOW), When::parse(text), "{text}");
        }
        for bad in [
            "",
            "@",
            "@tx:",
            "@tx:x",
            "2026-13-01",
            "bananas",
            "2 bananas ago",
        ] {
            assert!(When::parse_at(bad, NOW).is_err(), "{bad}");
        }
    }
}
