//! `hist sql`: read-only SQL over the views `changes`, `transactions`, `current`,
//! `checks` (the store runs it: [`crate::store`]).

use crate::error::Result;
use crate::repo::Repo;
pub use crate::store::{QueryResult, SqlValue};

impl Repo {
    /// Runs one read-only query. Anything that would write, attach, change a pragma that
    /// matters or load an extension is refused ([`crate::QueryError`]).
    pub fn query_readonly(&self, query: &str) -> Result<QueryResult> {
        self.store.query_readonly(query)
    }
}
