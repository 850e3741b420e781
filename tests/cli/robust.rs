//! Helpers for the reliability tests (crash, concurrency, disk full, hostile input, tamper
//! evidence, garbage arguments): a seeded random generator and a full dump of a store.

use std::fmt::Write as _;
use std::path::Path;

/// A small seeded generator (splitmix64): the same seed gives the same run.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded by `HIST_TEST_SEED` when set, else by `default`. Prints the seed.
    pub fn from_env(test: &str, default: u64) -> Self {
        let seed = std::env::var("HIST_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default);
        eprintln!("{test}: seed {seed} (set HIST_TEST_SEED to change it)");
        Self(seed)
    }

    /// A generator with this seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The current state (a seed that continues this sequence).
    pub fn seed(&self) -> u64 {
        self.0
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Every row of every table of `.hist/hist.db`, plus the names of every file under
/// `.hist/` (except SQLite's own `-wal`/`-shm`): a change anywhere changes the dump.
pub fn full_dump(root: &Path) -> String {
    let hist = root.join(".hist");
    let conn = rusqlite::Connection::open_with_flags(
        hist.join("hist.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut out = String::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for table in tables {
        writeln!(out, "table {table}").unwrap();
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        let mut lines = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            let cells: Vec<String> = (0..n)
                .map(|i| format!("{:?}", row.get_ref(i).unwrap()))
                .collect();
            lines.push(cells.join("|"));
        }
        lines.sort();
        for line in lines {
            writeln!(out, "  {line}").unwrap();
        }
    }
    let mut files: Vec<String> = walkdir::WalkDir::new(&hist)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(&hist).unwrap().display().to_string())
        .filter(|name| !name.ends_with("-wal") && !name.ends_with("-shm"))
        .collect();
    files.sort();
    for f in files {
        writeln!(out, "file {f}").unwrap();
    }
    out
}

/// Asserts that stderr carries no panic, backtrace or debug dump.
#[track_caller]
pub fn assert_no_panic(what: &str, stderr: &str) {
    for bad in [
        "panicked",
        "RUST_BACKTRACE",
        "stack backtrace",
        "Error {",
        "Some(",
        "Os {",
        "SqliteFailure",
    ] {
        assert!(
            !stderr.contains(bad),
            "{what}: stderr contains {bad:?}:\n{stderr}"
        );
    }
}
