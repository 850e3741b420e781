//! `hist_store`: hist from Python. A thin module over the Rust library: a `Repo` class whose
//! methods release the GIL while the library works, answers as Python objects (the records
//! of `hist … --json`, made by `hist::records`), and errors as `hist_store.Error` subclasses
//! carrying the code the `hist` command exits with (1 a failure, 2 a usage error, 255 an
//! internal error).
#![allow(clippy::too_many_arguments)] // Python keyword arguments, one parameter each

use hist::canon::{self, Value};
use hist::model::Actor;
use hist::time::{Timestamp, When};
use hist::{DocPath, TxOptions, Txn};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Mutex;

pyo3::create_exception!(
    hist_store,
    Error,
    PyException,
    "An error from hist; `code` is what the hist command would exit with (1, 2 or 255)."
);
pyo3::create_exception!(
    hist_store,
    UsageError,
    Error,
    "Asked wrongly: an invalid actor, key, path or time (code 2)."
);
pyo3::create_exception!(
    hist_store,
    NotFoundError,
    Error,
    "No such document at that moment, or no repository there (code 1)."
);
pyo3::create_exception!(
    hist_store,
    ReadOnlyError,
    Error,
    "A query that would write, refused by Repo.sql (code 1)."
);
pyo3::create_exception!(
    hist_store,
    InternalError,
    Error,
    "A bug in hist (code 255)."
);

/// What went wrong on the Rust side, before it becomes a Python exception (made with the
/// GIL held).
enum Failure {
    Hist(hist::Error),
    Usage(String),
    Internal(String),
}

impl From<hist::Error> for Failure {
    fn from(e: hist::Error) -> Self {
        Self::Hist(e)
    }
}

impl Failure {
    fn into_err(self) -> PyErr {
        let (err, code) = match self {
            Failure::Usage(m) => (UsageError::new_err(m), 2),
            Failure::Internal(m) => (InternalError::new_err(m), 255),
            Failure::Hist(e) => {
                let code = e.class().code();
                let message = e.to_string();
                let err = match &e {
                    hist::Error::NoDocument { .. } | hist::Error::NotARepository(_) => {
                        NotFoundError::new_err(message)
                    }
                    hist::Error::Query(hist::QueryError::Refused(_) | hist::QueryError::Writes) => {
                        ReadOnlyError::new_err(message)
                    }
                    _ if code == 2 => UsageError::new_err(message),
                    _ => Error::new_err(message),
                };
                (err, code)
            }
        };
        Python::with_gil(|py| {
            // The code is an attribute of the exception; setting it cannot fail on a
            // fresh exception object, and if it did the exception would still be raised.
            let _ = err.value(py).setattr("code", code);
        });
        err
    }
}

type Answer<T> = Result<T, Failure>;

/// Runs `f` on the repository without the GIL, with panics caught.
fn run<T: Send>(
    py: Python<'_>,
    repo: &Repo,
    f: impl FnOnce(&mut hist::Repo) -> Answer<T> + Send,
) -> PyResult<T> {
    py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let mut guard = repo.inner.lock().map_err(|_| {
                Failure::Internal(
                    "this Repo is unusable after an internal error; open the repository again"
                        .to_owned(),
                )
            })?;
            let inner = guard
                .as_mut()
                .ok_or_else(|| Failure::Usage("the repository was closed".to_owned()))?;
            f(inner)
        }))
        .unwrap_or_else(|_| {
            Err(Failure::Internal(
                "internal error in hist; this is a bug: please report it".to_owned(),
            ))
        })
    })
    .map_err(Failure::into_err)
}

/// A hist repository.
#[pyclass(frozen, module = "hist_store")]
struct Repo {
    inner: Mutex<Option<hist::Repo>>,
}

#[pymethods]
impl Repo {
    /// Opens the repository whose `.hist` is in `dir` or the nearest directory above it.
    /// `identity` (an age identity file) or `passphrase` unlocks the personal values when
    /// `keys.db`'s key is kept outside the repository.
    #[staticmethod]
    #[pyo3(signature = (dir, identity = None, passphrase = None))]
    fn open(
        py: Python<'_>,
        dir: PathBuf,
        identity: Option<PathBuf>,
        passphrase: Option<String>,
    ) -> PyResult<Self> {
        let access = hist::shred::KeyAccess {
            identity,
            passphrase: passphrase.map(hist::shred::SecretString::from),
        };
        access.check().map_err(|e| Failure::from(e).into_err())?;
        let mut repo = py
            .allow_threads(|| hist::Repo::discover(&dir))
            .map_err(|e| Failure::from(e).into_err())?;
        repo.set_key_access(access);
        Ok(Self::new(repo))
    }

    /// Creates a repository (`.hist`) in `dir`, creating `dir` when missing, and opens it.
    #[staticmethod]
    fn init(py: Python<'_>, dir: PathBuf) -> PyResult<Self> {
        let repo = py
            .allow_threads(|| hist::Repo::init(&dir))
            .map_err(|e| Failure::from(e).into_err())?;
        Ok(Self::new(repo))
    }

    /// Writes `value` (any JSON value: dict, list, str, int, float, bool, None) at `path` of
    /// the document `key` ("" for the whole document); returns the changes recorded.
    #[pyo3(signature = (key, path, value, *, actor, reason = None, at = None))]
    fn set(
        &self,
        py: Python<'_>,
        key: String,
        path: String,
        value: &Bound<'_, PyAny>,
        actor: Option<String>,
        reason: Option<String>,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let opts = tx_options(actor, reason, at, "write").map_err(Failure::into_err)?;
        let text = dumps(value)?;
        let out = run(py, self, move |repo| {
            let path = DocPath::parse(&path).map_err(hist::Error::from)?;
            let value = canon::parse_str(&text).map_err(|source| hist::Error::Json {
                what: "the value".to_owned(),
                source,
            })?;
            write(repo, opts, |txn| txn.set(&key, &path, value).map(drop))
        })?;
        values_to_py(py, &out)
    }

    /// Removes the value at `path` of the document `key` ("" removes the whole document).
    #[pyo3(signature = (key, path = String::new(), *, actor, reason = None, at = None))]
    fn remove(
        &self,
        py: Python<'_>,
        key: String,
        path: String,
        actor: Option<String>,
        reason: Option<String>,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let opts = tx_options(actor, reason, at, "write").map_err(Failure::into_err)?;
        let out = run(py, self, move |repo| {
            let path = DocPath::parse(&path).map_err(hist::Error::from)?;
            write(repo, opts, |txn| txn.remove(&key, &path).map(drop))
        })?;
        values_to_py(py, &out)
    }

    /// Records a whole snapshot of the document `key`: `doc` is JSON text (bytes or str), or a
    /// value (a dict, a list…) serialized with `json.dumps`. Returns the changes from the
    /// last snapshot: none when it is unchanged.
    #[pyo3(signature = (key, doc, *, actor, reason = None, at = None))]
    fn ingest(
        &self,
        py: Python<'_>,
        key: String,
        doc: &Bound<'_, PyAny>,
        actor: Option<String>,
        reason: Option<String>,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let opts = tx_options(actor, reason, at, "ingest").map_err(Failure::into_err)?;
        let out = if let Ok(bytes) = doc.downcast::<PyBytes>() {
            // Read in place, without a copy: the GIL is released while the bytes (immutable)
            // are read, and `doc` keeps them alive.
            let bytes = bytes.as_bytes();
            run(py, self, move |repo| ingest(repo, opts, &key, bytes))?
        } else {
            let text: Vec<u8> = if let Ok(s) = doc.downcast::<PyString>() {
                s.to_str()?.as_bytes().to_vec()
            } else if let Ok(b) = doc.downcast::<PyByteArray>() {
                b.to_vec()
            } else {
                dumps(doc)?.into_bytes()
            };
            run(py, self, move |repo| ingest(repo, opts, &key, &text))?
        };
        values_to_py(py, &out)
    }

    /// The document `key` now, or as of `at`: a `datetime` (naive means UTC), a `date`,
    /// a WHEN string (`"@2026-08-01"`, `"@tx:42"`) or a transaction id (int). Raises
    /// `NotFoundError` when it is absent then.
    #[pyo3(signature = (key, at = None))]
    fn show(
        &self,
        py: Python<'_>,
        key: String,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyObject> {
        let when = when(at).map_err(Failure::into_err)?;
        let value = run(py, self, move |repo| {
            let text = match when {
                Some(w) => repo.as_of_text(&key, w)?.text,
                None => repo.current_text(&key)?,
            };
            let text = text.ok_or(hist::Error::NoDocument { key, when })?;
            canon::parse_str(&text).map_err(|e| {
                Failure::Internal(format!("the library answered with invalid JSON: {e}"))
            })
        })?;
        to_py(py, &value)
    }

    /// Every change that altered the value at `path` of `key`, oldest first, following
    /// renames back: dicts with `tx, at, actor, reason, key, path, op, old, new, change_path`.
    #[pyo3(signature = (key, path = String::new()))]
    fn history(&self, py: Python<'_>, key: String, path: String) -> PyResult<Py<PyList>> {
        let records = run(py, self, move |repo| {
            let path = DocPath::parse(&path).map_err(hist::Error::from)?;
            let entries = repo.history(&key, &path)?;
            Ok(entries
                .iter()
                .map(|e| hist::records::history_entry(&key, e))
                .collect::<Vec<_>>())
        })?;
        values_to_py(py, &records)
    }

    /// Every leaf of `key` (now, or as of `at`, as in `show`) with the change that last set
    /// it: dicts with `key, path, value, tx, at, actor, reason, op, change_path`.
    #[pyo3(signature = (key, at = None))]
    fn blame(
        &self,
        py: Python<'_>,
        key: String,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let when = when(at).map_err(Failure::into_err)?;
        let records = run(py, self, move |repo| {
            let blame = repo.blame(&key, when, None)?;
            if !blame.document {
                return Err(hist::Error::NoDocument { key, when }.into());
            }
            Ok(blame
                .leaves
                .iter()
                .map(|l| hist::records::blame_leaf(&key, l))
                .collect::<Vec<_>>())
        })?;
        values_to_py(py, &records)
    }

    /// Runs a read-only SQL query over the views `changes`, `transactions`, `current` and
    /// `checks`; rows as dicts. A query that would write raises `ReadOnlyError`.
    fn sql(&self, py: Python<'_>, query: String) -> PyResult<Py<PyList>> {
        let rows = run(py, self, move |repo| {
            let result = repo.query_readonly(&query)?;
            Ok(result
                .rows
                .iter()
                .map(|row| hist::records::sql_row(&result.columns, row))
                .collect::<Vec<_>>())
        })?;
        values_to_py(py, &rows)
    }

    /// Closes the repository; later calls raise `UsageError`. Closing twice is harmless.
    fn close(&self, py: Python<'_>) {
        py.allow_threads(|| {
            if let Ok(mut guard) = self.inner.lock() {
                guard.take();
            }
        });
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }
}

impl Repo {
    fn new(repo: hist::Repo) -> Self {
        Self {
            inner: Mutex::new(Some(repo)),
        }
    }
}

/// The options of a write: the actor is checked first, before anything else is done.
fn tx_options(
    actor: Option<String>,
    reason: Option<String>,
    at: Option<&Bound<'_, PyAny>>,
    kind: &str,
) -> Answer<TxOptions> {
    let actor = actor.ok_or_else(|| {
        Failure::Usage(
            "a write needs an actor, as kind:name (user:maria, job:nightly): actor=None".to_owned(),
        )
    })?;
    let actor = Actor::parse(&actor).map_err(hist::Error::from)?;
    let at = match when(at)? {
        None => None,
        Some(When::At(ts)) => Some(ts),
        Some(When::Tx(_)) => {
            return Err(Failure::Usage(
                "at= takes a time for a write, not a transaction".to_owned(),
            ));
        }
    };
    // The clock is read here, as the CLI reads it: the library never does.
    let now = Timestamp::from_datetime(std::time::SystemTime::now().into());
    Ok(TxOptions::new(actor, kind, now).reason(reason).at(at))
}

/// A moment given as `at=`: None (now), a transaction id, a WHEN string, a `datetime`
/// (naive: UTC) or a `date`.
fn when(at: Option<&Bound<'_, PyAny>>) -> Answer<Option<When>> {
    let Some(at) = at.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    let bad = || {
        Failure::Usage(format!(
            "at= takes a datetime, a date, a WHEN string (\"@2026-08-01\", \"@tx:42\") or a \
             transaction id, not {}",
            at.get_type()
                .name()
                .map_or_else(|_| "this".to_owned(), |n| n.to_string())
        ))
    };
    if at.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    if at.is_instance_of::<PyInt>() {
        let tx: i64 = at.extract().map_err(|_| bad())?;
        return Ok(Some(When::Tx(tx)));
    }
    let text = if let Ok(s) = at.downcast::<PyString>() {
        s.to_str().map_err(|_| bad())?.to_owned()
    } else if at.hasattr("isoformat").unwrap_or(false) {
        let mut text: String = at
            .call_method0("isoformat")
            .and_then(|t| t.extract())
            .map_err(|_| bad())?;
        // A naive datetime is UTC, as a time without an offset is everywhere in hist.
        let naive = at.hasattr("utcoffset").unwrap_or(false)
            && at
                .call_method0("utcoffset")
                .map(|o| o.is_none())
                .unwrap_or(false);
        if naive {
            text.push('Z');
        }
        text
    } else {
        return Err(bad());
    };
    Ok(Some(When::parse(&text).map_err(hist::Error::from)?))
}

/// Commits a write and answers with what it recorded: the records of `hist … --json`,
/// parsed here, without the GIL.
fn write(
    repo: &mut hist::Repo,
    opts: TxOptions,
    f: impl FnOnce(&mut Txn<'_>) -> hist::Result<()>,
) -> Answer<Vec<Value>> {
    let mut txn = repo.begin(opts)?;
    f(&mut txn)?;
    let text = hist::records::written(&txn.commit()?);
    text.lines()
        .map(canon::parse_str)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::Internal(format!("the library answered with invalid JSON: {e}")))
}

fn ingest(repo: &mut hist::Repo, opts: TxOptions, key: &str, bytes: &[u8]) -> Answer<Vec<Value>> {
    write(repo, opts, |txn| txn.put_json(key, bytes).map(drop))
}

/// `json.dumps(value)`, refusing NaN and infinities (which JSON has not).
fn dumps(value: &Bound<'_, PyAny>) -> PyResult<String> {
    static DUMPS: GILOnceCell<PyObject> = GILOnceCell::new();
    let py = value.py();
    let dumps = DUMPS.get_or_try_init(py, || -> PyResult<PyObject> {
        Ok(py.import("json")?.getattr("dumps")?.unbind())
    })?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    kwargs.set_item("ensure_ascii", false)?;
    dumps
        .bind(py)
        .call((value,), Some(&kwargs))
        .and_then(|s| s.extract())
        .map_err(|e| {
            let err = Error::new_err(format!("the value cannot be written as JSON: {e}"));
            let _ = err.value(py).setattr("code", 1);
            err
        })
}

fn values_to_py(py: Python<'_>, values: &[Value]) -> PyResult<Py<PyList>> {
    let items = values
        .iter()
        .map(|v| to_py(py, v))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

/// A JSON value as a Python object; integers of any size exactly (an `int`).
fn to_py(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Number(n) => {
            let text = n.as_str();
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if text.contains(['.', 'e', 'E']) {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN))
                    .into_any()
                    .unbind()
            } else {
                // Beyond 64 bits: Python's int() reads the digits exactly.
                py.get_type::<PyInt>().call1((text,))?.unbind()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any().unbind(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

/// hist from Python: `hist_store.Repo.open(dir)`, then `set`, `remove`, `ingest`, `show`,
/// `history`, `blame` and `sql`.
#[pymodule]
fn hist_store(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Repo>()?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}
