use super::{CliError, Env, OutputOpts, Ui, WriteOpts};
use clap::{Args, Subcommand};
use hist::canon::Value;
use hist::path::PathPattern;
use hist::rules::{RuleKind, check_glob};

/// List or declare rules: array keys, sets, personal paths, retention
///
/// Every change to the rules is a logged transaction. Rules say how arrays are diffed:
/// `array-key /items id` matches elements of /items by their `id` (an insert at the top is
/// one add, not a change to every element); `set /tags` ignores order; every other array is
/// one opaque value. `[*]` in a pattern matches any element; `""` is a document that is
/// itself an array.
///
/// Retention rules say how long the changes at or below a pattern are kept in full detail
/// (forever by default); `hist gc` applies them.
///
/// Examples:
///   hist rules array-key /items id --keys 'feed/*' --actor user:sam
///   hist rules array-key /prefixes ip_prefix,service,region --actor user:sam
///   hist rules set /tags --actor user:sam
///   hist rules personal /email --keys 'customer/*' --actor user:dpo
///   hist rules retention '/items[*]/price' --keep 90d --then daily --actor user:sam
///   hist rules
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub action: Option<RulesAction>,
    #[command(flatten)]
    pub output: OutputOpts,
}

/// What to do with the rules.
#[derive(Debug, Subcommand)]
#[allow(missing_docs)] // Each action's help is its Args struct's doc comment.
pub enum RulesAction {
    ArrayKey(ArrayKeyArgs),
    Set(SetRuleArgs),
    Personal(super::rules_personal::PersonalRuleArgs),
    Rm(RmRuleArgs),
    Retention(RetentionArgs),
}

/// Say how long changes at or below PATTERN are kept in full detail
///
/// Declare a retention rule: keep the changes at or below PATTERN forever (the default), or
/// for a window after which `hist gc` compacts them to one change per day or hour, or drops
/// them (folds them into one change carrying their net effect).
///
/// A change recorded above PATTERN (a whole item or document written at once) is not
/// covered. When several retention rules cover a change, the longest pattern wins.
///
/// Example:
///   hist rules retention '/items[*]/price' --keep 90d --then daily --actor user:sam
///   hist rules retention '/items[*]/name' --forever --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
#[command(group(clap::ArgGroup::new("policy").required(true).args(["forever", "keep"])))]
pub struct RetentionArgs {
    /// The path pattern (`/items[*]/price`, `""` for whole documents).
    #[arg(allow_hyphen_values = true)]
    pub pattern: String,
    /// Keep every change forever (the default for every path).
    #[arg(long)]
    pub forever: bool,
    /// Keep changes in full detail for this long: a number and s, m, h, d or w (90d, 12h).
    #[arg(long, value_name = "DURATION")]
    pub keep: Option<String>,
    /// What becomes of older changes: one per day, one per hour, or drop (default).
    #[arg(long, requires = "keep", value_parser = ["daily", "hourly", "drop"])]
    pub then: Option<String>,
    /// Only for keys matching this glob.
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// Match the elements of arrays at PATTERN by key fields
///
/// An element is then addressed as /items[id=88] (or [ip="1.2.3.4",port=80] for a composite
/// key), and an insert at the top of the list is one add. Order within a keyed array is not
/// history. Declare the rule before the first snapshot that holds the array.
///
/// Examples:
///   hist rules array-key /items id --actor user:sam
///   hist rules array-key '/items[*]/variants' sku --keys 'feed/*' --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct ArrayKeyArgs {
    /// The array's path pattern (`/items`, `/items[*]/variants`, `""` for a root array).
    #[arg(allow_hyphen_values = true)]
    pub pattern: String,
    /// The key field, or several separated by commas (a composite key).
    pub fields: String,
    /// Only for keys matching this glob.
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// Treat arrays at PATTERN as sets: order never matters
///
/// Elements are then added and removed one by one, addressed as /tags[="red"]; a reordered
/// list is unchanged.
///
/// Examples:
///   hist rules set /tags --actor user:sam
///   hist rules set '/items[*]/tags' --keys 'feed/*' --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct SetRuleArgs {
    /// The array's path pattern.
    #[arg(allow_hyphen_values = true)]
    pub pattern: String,
    /// Only for keys matching this glob.
    #[arg(long, value_name = "GLOB")]
    pub keys: Option<String>,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// Remove a rule by its id (as `hist rules` lists it)
///
/// The removal is a logged transaction; changes recorded under the rule stay as they are.
///
/// Examples:
///   hist rules rm 2 --actor user:sam
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct RmRuleArgs {
    /// The rule's id.
    pub id: i64,
    #[command(flatten)]
    pub write: WriteOpts,
}

pub fn cmd_rules(ui: &mut Ui, env: &Env, args: &RulesArgs) -> Result<(), CliError> {
    let Some(action) = &args.action else {
        let repo = env.repo()?;
        for rule in repo.rules().iter() {
            if args.output.json {
                ui.json(&Value::from_iter([
                    ("id", Value::from(rule.id)),
                    ("tx", Value::from(rule.tx)),
                    ("kind", Value::from(rule.kind.name())),
                    ("pattern", Value::from(rule.pattern.to_string())),
                    ("keys", Value::from(rule.keys.clone())),
                    ("spec", rule.kind.spec()),
                ]))?;
            } else {
                ui.line(format!("{:>4}  {rule}", rule.id))?;
            }
        }
        return Ok(());
    };
    let (write, pattern, keys, kind) = match action {
        RulesAction::ArrayKey(a) => {
            let fields: Vec<String> = a.fields.split(',').map(|f| f.trim().to_owned()).collect();
            if fields.iter().any(String::is_empty) {
                return Err(CliError::usage(format!(
                    "{:?} is not a list of key fields",
                    a.fields
                )));
            }
            (&a.write, &a.pattern, &a.keys, RuleKind::ArrayKey(fields))
        }
        RulesAction::Set(a) => (&a.write, &a.pattern, &a.keys, RuleKind::Set),
        RulesAction::Personal(a) => (&a.write, &a.pattern, &a.keys, a.kind()?),
        RulesAction::Retention(a) => (&a.write, &a.pattern, &a.keys, retention_kind(a)?),
        RulesAction::Rm(a) => {
            let opts = env.tx_options(&a.write, "rules")?;
            let mut repo = env.repo()?;
            let mut txn = repo.begin(
                opts.clone()
                    .reason(opts.reason.or(Some(format!("remove rule {}", a.id)))),
            )?;
            txn.remove_rule(a.id)?;
            let commit = txn.commit()?;
            return ui.line(format!(
                "removed rule {} (tx {})",
                a.id,
                commit.tx.map_or(0, |t| t.id)
            ));
        }
    };
    let opts = env.tx_options(write, "rules")?;
    let pattern = PathPattern::parse(if pattern == "\"\"" { "" } else { pattern })?;
    if let Some(glob) = keys {
        check_glob(glob).map_err(|e| CliError::usage(format!("--keys {glob:?}: {e}")))?;
    }
    let mut repo = env.repo()?;
    let mut txn = repo.begin(opts)?;
    txn.add_rule(&pattern, keys.as_deref(), &kind)?;
    let commit = txn.commit()?;
    let rule = repo
        .rules()
        .last()
        .map(ToString::to_string)
        .unwrap_or_default();
    ui.line(format!(
        "added rule: {rule} (tx {})",
        commit.tx.map_or(0, |t| t.id)
    ))
}

fn retention_kind(a: &RetentionArgs) -> Result<RuleKind, CliError> {
    use hist::retention::{Retention, Then, parse_duration};
    let policy = match &a.keep {
        None => Retention::Forever,
        Some(keep) => Retention::Keep {
            seconds: parse_duration(keep).map_err(|e| CliError::usage(format!("--keep: {e}")))?,
            then: a
                .then
                .as_deref()
                .map_or(Some(Then::Drop), Then::parse)
                .ok_or_else(|| CliError::usage("--then takes daily, hourly or drop"))?,
        },
    };
    Ok(RuleKind::Retention(policy))
}
