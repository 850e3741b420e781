//! What a query asks of `hist_changes`: the constraints [`best_index`] takes, how they
//! reach `filter` (the plan travels as the index string), and the bounds they set.
//!
//! A constraint is taken only when reading can apply it exactly: `key =` and `at` only
//! with SQLite's default (BINARY) collation, since they are compared byte for byte. It is
//! left for SQLite to check again ("omit" off) unless its right-hand side is a constant of
//! the column's own type (text for `key` and `at`, an integer for `tx`): a bound of another
//! type (a parameter bound to a number, say) is then ignored by the reader, which returns a
//! superset that SQLite narrows with its own comparison rules.

use rusqlite::types::ValueRef;
use rusqlite::vtab::{IndexConstraintOp, IndexInfo, Values};
use std::ffi::{CStr, c_int};

/// The table's declaration (the names `hist_changes` and the `changes` view show).
pub(crate) const DECLARATION: &CStr = c"CREATE TABLE x(id INTEGER, tx INTEGER, at TEXT, actor TEXT, reason TEXT, key TEXT, path TEXT, op TEXT, old TEXT, new TEXT)";

/// Column numbers, in the declaration's order.
pub(crate) const ID: usize = 0;
pub(crate) const TX: usize = 1;
pub(crate) const AT: usize = 2;
pub(crate) const ACTOR: usize = 3;
pub(crate) const REASON: usize = 4;
pub(crate) const KEY: usize = 5;
pub(crate) const PATH: usize = 6;
pub(crate) const OP: usize = 7;
pub(crate) const OLD: usize = 8;
pub(crate) const NEW: usize = 9;
const COLUMNS: usize = 10;

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A constraint the reader applies, in the order `filter` receives their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// `key = v` (and each value of `key IN (…)`: SQLite gives them one at a time).
    Key,
    /// `key GLOB pattern`.
    KeyGlob,
    /// `tx` compared with an integer.
    Tx(Cmp),
    /// `at` compared with a text.
    At(Cmp),
}

/// What one scan reads: the columns the query uses and the constraints it applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Bit `i`: column `i` is used.
    pub(crate) cols: u16,
    pub(crate) args: Vec<Arg>,
}

impl Plan {
    /// True when the scan uses column `col`.
    pub(crate) fn uses(&self, col: usize) -> bool {
        self.cols & (1 << col) != 0
    }

    /// The index string: the columns in hex, then a code per constraint.
    pub(crate) fn encode(&self) -> String {
        let mut out = format!("{:x}", self.cols);
        for arg in &self.args {
            let (column, cmp) = match *arg {
                Arg::Key => ('k', Cmp::Eq),
                Arg::KeyGlob => ('g', Cmp::Eq),
                Arg::Tx(c) => ('t', c),
                Arg::At(c) => ('a', c),
            };
            out.push(';');
            out.push(column);
            out.push(match cmp {
                Cmp::Eq => '=',
                Cmp::Lt => '<',
                Cmp::Le => 'l',
                Cmp::Gt => '>',
                Cmp::Ge => 'g',
            });
        }
        out
    }

    /// The plan an index string names; `None` when it is not one of [`Plan::encode`]'s.
    pub(crate) fn decode(text: &str) -> Option<Self> {
        let mut parts = text.split(';');
        let cols = u16::from_str_radix(parts.next()?, 16).ok()?;
        let mut args = Vec::new();
        for part in parts {
            let mut chars = part.chars();
            let (column, cmp) = (chars.next()?, chars.next()?);
            if chars.next().is_some() {
                return None;
            }
            let cmp = match cmp {
                '=' => Cmp::Eq,
                '<' => Cmp::Lt,
                'l' => Cmp::Le,
                '>' => Cmp::Gt,
                'g' => Cmp::Ge,
                _ => return None,
            };
            args.push(match (column, cmp) {
                ('k', Cmp::Eq) => Arg::Key,
                ('g', Cmp::Eq) => Arg::KeyGlob,
                ('t', c) => Arg::Tx(c),
                ('a', c) => Arg::At(c),
                _ => return None,
            });
        }
        Some(Plan { cols, args })
    }
}

/// `xBestIndex`: takes the constraints the reader can apply, gives each its place among
/// `filter`'s values, and tells SQLite how selective the plan is.
pub(crate) fn best_index(info: &mut IndexInfo) -> rusqlite::Result<()> {
    let constraints: Vec<(c_int, IndexConstraintOp, bool)> = info
        .constraints()
        .map(|c| (c.column(), c.operator(), c.is_usable()))
        .collect();
    let mut args = Vec::new();
    // Rows the scan is expected to return; without constraints, all of a large log.
    let mut rows = 1e6_f64;
    for (i, (column, op, usable)) in constraints.into_iter().enumerate() {
        let Ok(column) = usize::try_from(column) else {
            continue;
        };
        if !usable {
            continue;
        }
        let cmp = match op {
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_EQ => Some(Cmp::Eq),
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LT => Some(Cmp::Lt),
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_LE => Some(Cmp::Le),
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GT => Some(Cmp::Gt),
            IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GE => Some(Cmp::Ge),
            _ => None,
        };
        let glob = op == IndexConstraintOp::SQLITE_INDEX_CONSTRAINT_GLOB;
        let binary = info
            .collation(i)
            .is_ok_and(|c| c.eq_ignore_ascii_case("BINARY"));
        let rhs = info.rhs_value(i).ok().flatten();
        let text = matches!(rhs, Some(ValueRef::Text(_)));
        let (arg, omit) = match (column, cmp) {
            (KEY, Some(Cmp::Eq)) if binary => (Arg::Key, text),
            (KEY, None) if glob => (Arg::KeyGlob, text),
            (TX, Some(c)) => (Arg::Tx(c), matches!(rhs, Some(ValueRef::Integer(_)))),
            (AT, Some(c)) if binary => (Arg::At(c), text),
            _ => continue,
        };
        args.push(arg);
        let mut usage = info.constraint_usage(i);
        usage.set_argv_index(c_int::try_from(args.len()).unwrap_or(c_int::MAX));
        usage.set_omit(omit);
        rows /= match arg {
            Arg::Key => 1000.0,
            Arg::KeyGlob => 20.0,
            Arg::Tx(Cmp::Eq) | Arg::At(Cmp::Eq) => 100.0,
            Arg::Tx(_) | Arg::At(_) => 4.0,
        };
    }
    let used = info.col_used();
    // Bit 63 stands for every column from the 64th on; there are fewer here.
    let cols = (0..COLUMNS).fold(
        0u16,
        |m, c| {
            if used & (1 << c) != 0 { m | 1 << c } else { m }
        },
    );
    info.set_idx_str(&Plan { cols, args }.encode());
    let rows = rows.max(1.0);
    info.set_estimated_cost(rows);
    info.set_estimated_rows(rows as i64);
    Ok(())
}

/// The bounds a scan's constraints set, from `filter`'s values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// `key =` values (all must hold: more than one distinct value matches nothing).
    pub(crate) keys: Vec<Vec<u8>>,
    /// `key GLOB` patterns (all must match).
    pub(crate) globs: Vec<Vec<u8>>,
    /// `tx` in `tx_lo..=tx_hi`.
    pub(crate) tx_lo: i64,
    pub(crate) tx_hi: i64,
    /// `at` above this (inclusive when the flag is set).
    pub(crate) at_lo: Option<(Vec<u8>, bool)>,
    /// `at` below this (inclusive when the flag is set).
    pub(crate) at_hi: Option<(Vec<u8>, bool)>,
}

impl Bounds {
    /// The bounds of `plan`'s constraints, whose values are `values`.
    pub(crate) fn new(plan: &Plan, values: &Values<'_>) -> Result<Self, String> {
        if values.len() != plan.args.len() {
            return Err(format!(
                "the plan has {} constraints but the scan got {} values",
                plan.args.len(),
                values.len()
            ));
        }
        let mut b = Bounds {
            tx_lo: i64::MIN,
            tx_hi: i64::MAX,
            ..Bounds::default()
        };
        for (arg, value) in plan.args.iter().zip(values.iter()) {
            match (*arg, value) {
                (Arg::Key, ValueRef::Text(t)) => b.keys.push(t.to_vec()),
                (Arg::KeyGlob, ValueRef::Text(t)) => b.globs.push(t.to_vec()),
                (Arg::Tx(c), ValueRef::Integer(v)) => {
                    // No integer is below i64::MIN or above i64::MAX: an empty range.
                    const NONE: (i64, i64) = (i64::MAX, i64::MIN);
                    let (lo, hi) = match c {
                        Cmp::Eq => (v, v),
                        Cmp::Lt => v.checked_sub(1).map_or(NONE, |h| (i64::MIN, h)),
                        Cmp::Le => (i64::MIN, v),
                        Cmp::Gt => v.checked_add(1).map_or(NONE, |l| (l, i64::MAX)),
                        Cmp::Ge => (v, i64::MAX),
                    };
                    b.tx_lo = b.tx_lo.max(lo);
                    b.tx_hi = b.tx_hi.min(hi);
                }
                (Arg::At(c), ValueRef::Text(t)) => {
                    let inclusive = matches!(c, Cmp::Eq | Cmp::Le | Cmp::Ge);
                    if matches!(c, Cmp::Eq | Cmp::Gt | Cmp::Ge) {
                        b.at_lo = tighter(b.at_lo.take(), (t.to_vec(), inclusive), true);
                    }
                    if matches!(c, Cmp::Eq | Cmp::Lt | Cmp::Le) {
                        b.at_hi = tighter(b.at_hi.take(), (t.to_vec(), inclusive), false);
                    }
                }
                // A value of another type: SQLite checks it (see the module's doc).
                _ => {}
            }
        }
        Ok(b)
    }

    /// True when no row can match.
    pub(crate) fn is_empty(&self) -> bool {
        self.tx_lo > self.tx_hi
            || self.keys.windows(2).any(|w| w[0] != w[1])
            || match (&self.at_lo, &self.at_hi) {
                (Some((lo, lo_in)), Some((hi, hi_in))) => {
                    lo > hi || (lo == hi && !(*lo_in && *hi_in))
                }
                _ => false,
            }
    }

    /// True when `tx` is within the bounds.
    pub(crate) fn tx_ok(&self, tx: i64) -> bool {
        self.tx_lo <= tx && tx <= self.tx_hi
    }

    /// True when some bound is on `at`.
    pub(crate) fn has_at(&self) -> bool {
        self.at_lo.is_some() || self.at_hi.is_some()
    }

    /// True when `at` is within the bounds (byte order: SQLite's BINARY collation).
    pub(crate) fn at_ok(&self, at: &[u8]) -> bool {
        let above = match &self.at_lo {
            Some((lo, true)) => at >= lo.as_slice(),
            Some((lo, false)) => at > lo.as_slice(),
            None => true,
        };
        let below = match &self.at_hi {
            Some((hi, true)) => at <= hi.as_slice(),
            Some((hi, false)) => at < hi.as_slice(),
            None => true,
        };
        above && below
    }
}

/// The tighter of two lower (`lower`) or upper bounds.
fn tighter(
    old: Option<(Vec<u8>, bool)>,
    new: (Vec<u8>, bool),
    lower: bool,
) -> Option<(Vec<u8>, bool)> {
    let Some(old) = old else {
        return Some(new);
    };
    let new_wins = match new.0.cmp(&old.0) {
        std::cmp::Ordering::Equal => !new.1,
        std::cmp::Ordering::Greater => lower,
        std::cmp::Ordering::Less => !lower,
    };
    Some(if new_wins { new } else { old })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip_through_the_index_string() {
        let plan = Plan {
            cols: 0x3ff,
            args: vec![
                Arg::Key,
                Arg::KeyGlob,
                Arg::Tx(Cmp::Le),
                Arg::At(Cmp::Ge),
                Arg::At(Cmp::Lt),
                Arg::Tx(Cmp::Gt),
                Arg::Tx(Cmp::Eq),
            ],
        };
        assert_eq!(Plan::decode(&plan.encode()), Some(plan));
        assert_eq!(
            Plan::decode("0"),
            Some(Plan {
                cols: 0,
                args: vec![]
            })
        );
        for bad in ["", "zz", "3;", "3;k<", "3;x=", "3;t=x"] {
            assert_eq!(Plan::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn bounds_keep_the_tighter_of_two() {
        let lo = |t: &str, i| Some((t.as_bytes().to_vec(), i));
        assert_eq!(
            tighter(lo("a", true), ("b".into(), true), true),
            lo("b", true)
        );
        assert_eq!(
            tighter(lo("b", true), ("a".into(), true), true),
            lo("b", true)
        );
        assert_eq!(
            tighter(lo("b", true), ("b".into(), false), true),
            lo("b", false)
        );
        assert_eq!(
            tighter(lo("b", true), ("a".into(), true), false),
            lo("a", true)
        );
        let b = Bounds {
            at_lo: lo("2026-09-01", true),
            at_hi: lo("2026-09-01", false),
            tx_hi: i64::MAX,
            ..Bounds::default()
        };
        assert!(b.is_empty());
        assert!(!b.at_ok(b"2026-09-01"));
    }
}
