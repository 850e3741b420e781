"""hist, the history-first JSON document store, from Python.

Every write names who made it (``actor="kind:name"``) and keeps the old value, so any
document can be read as of any moment, any field's history listed and any field blamed.
Integers of any size come back exactly, as ``int``.
"""

from datetime import date, datetime
from os import PathLike
from typing import Any, Dict, List, Optional, Union

JSON = Any
"""A JSON value as Python holds it: dict, list, str, int, float, bool or None."""

Record = Dict[str, Any]
"""One record, as ``hist ... --json`` prints it (a change, a history entry, a blame leaf, a row)."""

When = Union[datetime, date, str, int]
"""A moment: a datetime (naive means UTC), a date (its midnight, UTC), a WHEN string
("@2026-08-01", "@2026-08-01T16:40:00Z", "@tx:42") or a transaction id."""

StrPath = Union[str, "PathLike[str]"]

class Error(Exception):
    """An error from hist."""

    code: int
    """What the hist command would exit with: 1 a failure, 2 a usage error, 255 a bug."""

class UsageError(Error):
    """Asked wrongly: an invalid actor, key, path or time (code 2)."""

class NotFoundError(Error):
    """No such document at that moment, or no repository there (code 1)."""

class ReadOnlyError(Error):
    """A query that would write, refused by Repo.sql (code 1)."""

class InternalError(Error):
    """A bug in hist (code 255)."""

class Repo:
    """An open repository. Safe to share between threads (calls take turns); the GIL is
    released while hist works. Use it as a context manager to close it."""

    @staticmethod
    def open(
        dir: StrPath, identity: Optional[StrPath] = None, passphrase: Optional[str] = None
    ) -> "Repo":
        """Opens the repository whose .hist is in dir or the nearest directory above it.

        identity (an age identity file) or passphrase unlocks the personal values when
        keys.db's key is kept outside the repository; without it everything else works."""
    @staticmethod
    def init(dir: StrPath) -> "Repo":
        """Creates a repository (.hist) in dir and opens it."""
    def set(
        self,
        key: str,
        path: str,
        value: JSON,
        *,
        actor: str,
        reason: Optional[str] = None,
        at: Optional[When] = None,
    ) -> List[Record]:
        """Writes value at path ("" for the whole document); returns the changes recorded."""
    def remove(
        self,
        key: str,
        path: str = "",
        *,
        actor: str,
        reason: Optional[str] = None,
        at: Optional[When] = None,
    ) -> List[Record]:
        """Removes the value at path ("" removes the whole document)."""
    def ingest(
        self,
        key: str,
        doc: Union[bytes, bytearray, str, JSON],
        *,
        actor: str,
        reason: Optional[str] = None,
        at: Optional[When] = None,
    ) -> List[Record]:
        """Records a whole snapshot (JSON text as bytes or str, or a value); returns the
        changes from the last one, [] when it is unchanged."""
    def show(self, key: str, at: Optional[When] = None) -> JSON:
        """The document now or as of at; raises NotFoundError when it is absent then."""
    def history(self, key: str, path: str = "") -> List[Record]:
        """Every change that altered the value at path, oldest first."""
    def blame(self, key: str, at: Optional[When] = None) -> List[Record]:
        """Every leaf with the change that last set it."""
    def sql(self, query: str) -> List[Record]:
        """A read-only SQL query; rows as dicts. Raises ReadOnlyError for a write."""
    def close(self) -> None:
        """Closes the repository; later calls raise UsageError."""
    def __enter__(self) -> "Repo": ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...
