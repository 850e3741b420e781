//! Listing documents: the keys that exist now or at a past moment, each with the
//! transaction that last changed it (`hist ls`).

use crate::error::Result;
use crate::model::TxInfo;
use crate::repo::Repo;
use crate::time::When;

/// Which keys [`Repo::ls`] lists.
#[derive(Clone, Debug, Default)]
pub struct LsFilter {
    /// Only keys matching this glob (`*` also matches `/`, as in `--keys` everywhere).
    pub keys: Option<String>,
}

/// A key that holds a document, with its last change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedKey {
    /// The key.
    pub key: String,
    /// The transaction of the key's last change (up to the moment asked about).
    pub tx: TxInfo,
}

impl Repo {
    /// The keys that hold a document now (`when`: `None`) or right after `when`, sorted,
    /// each with the transaction that last changed it by then.
    pub fn ls(&self, filter: &LsFilter, when: Option<When>) -> Result<Vec<ListedKey>> {
        let matcher = filter
            .keys
            .as_deref()
            .map(crate::rules::key_matcher)
            .transpose()?;
        let found = self.snapshot(|| match when {
            None => self.store.listed_now(),
            Some(when) => match self.store.resolve(when)? {
                Some(bound) => self.store.listed_at(bound),
                None => Ok(Vec::new()),
            },
        })?;
        Ok(found
            .into_iter()
            .filter(|(key, _)| matcher.as_ref().is_none_or(|m| m.is_match(key)))
            .map(|(key, tx)| ListedKey { key, tx })
            .collect())
    }
}
