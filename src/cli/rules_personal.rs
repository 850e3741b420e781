//! `hist rules personal`: declare personal paths.

use super::{CliError, WriteOpts};
use clap::Args;
use hist::DocPath;
use hist::rules::RuleKind;

/// Mark values at PATTERN as personal data, erasable with `hist forget`
///
/// Declare personal data: values at PATTERN are stored encrypted with their subject's own
/// key (in `.hist/keys.db`), read back transparently, and erased for good by
/// `hist forget SUBJECT`. The subject is the document key, or the value (a string or a
/// number) at --subject-from in the same document.
///
/// Declare it before the first write that touches those paths: a rule over values already
/// in the log in plaintext is refused, since the log is append-only.
///
/// Example:
///   hist rules personal /email --keys 'customer/*' --actor user:dpo
///   hist rules personal '/contacts[*]/phone' --subject-from /customer_id --actor user:dpo
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct PersonalRuleArgs {
    /// The path pattern of the personal values (`/email`, `/contacts[*]/phone`).
    #[arg(allow_hyphen_values = true)]
    pub pattern: String,
    /// Only for keys matching this glob.
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    /// Read the subject from this path of the document (default: the document key).
    #[arg(long, value_name = "PATH", allow_hyphen_values = true)]
    pub subject_from: Option<String>,
    #[command(flatten)]
    pub write: WriteOpts,
}

impl PersonalRuleArgs {
    /// The rule this declares.
    pub fn kind(&self) -> Result<RuleKind, CliError> {
        let subject_from = match self.subject_from.as_deref() {
            None => None,
            Some(text) => {
                let path = DocPath::parse(text)?;
                if path.is_root() {
                    return Err(CliError::usage(
                        "--subject-from needs a path inside the document, such as /customer_id",
                    ));
                }
                Some(path)
            }
        };
        Ok(RuleKind::Personal { subject_from })
    }
}
