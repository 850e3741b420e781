//! Points in time: transaction timestamps and the `@WHEN` syntax.
//!
//! A [`Timestamp`] is a count of microseconds since 1970-01-01T00:00:00Z, printed as
//! `2026-08-19T16:40:00.000000Z` (fixed width, so text order is time order).
//!
//! `WHEN` is written `@2026-08-01` (00:00:00 UTC that day), `@2026-08-01T16:40:00Z`
//! (RFC 3339, any offset, fractions of a second allowed), or `@tx:42` (right after
//! transaction 42). The leading `@` is optional. An as-of read includes every
//! transaction with `at <= WHEN`.

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
    "cannot read {0:?} as a time; write @2026-08-01, @2026-08-01T16:40:00Z (any offset) or @tx:42"
)]
pub struct WhenError(pub String);

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
}
