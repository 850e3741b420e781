"""hist_store.Repo: writes, reads, errors, threads."""

import json
import threading
import time
from datetime import date, datetime, timedelta, timezone

import pytest

import hist_store

BIG = 2**70 + 1  # beyond a double's 53 bits and a 64-bit integer


def test_set_show_history_blame_sql(repo):
    changes = repo.set("customer/1", "/plan", "pro", actor="user:maria", reason="upgrade")
    assert len(changes) == 1
    c = changes[0]
    assert {k: c[k] for k in ("tx", "actor", "reason", "key", "path", "op", "new")} == {
        "tx": 1,
        "actor": "user:maria",
        "reason": "upgrade",
        "key": "customer/1",
        "path": "",  # the document did not exist: one add of the whole document
        "op": "add",
        "new": {"plan": "pro"},
    }
    assert "old" not in c and c["at"].endswith("Z")
    # The same value again: nothing recorded.
    assert repo.set("customer/1", "/plan", "pro", actor="user:maria") == []
    repo.set("customer/1", "/seats", BIG, actor="job:sync")
    assert repo.show("customer/1") == {"plan": "pro", "seats": BIG}
    assert type(repo.show("customer/1")["seats"]) is int
    assert repo.show("customer/1", at=1) == {"plan": "pro"}
    assert repo.show("customer/1", at="@tx:1") == {"plan": "pro"}
    first = datetime.fromisoformat(c["at"].replace("Z", "+00:00"))
    assert repo.show("customer/1", at=first) == {"plan": "pro"}
    # A naive datetime is UTC.
    assert repo.show("customer/1", at=first.replace(tzinfo=None)) == {"plan": "pro"}
    assert repo.show("customer/1", at=first.astimezone(timezone(timedelta(hours=5)))) == {"plan": "pro"}
    with pytest.raises(hist_store.NotFoundError):
        repo.show("customer/1", at=date(2001, 1, 1))
    removed = repo.remove("customer/1", "/plan", actor="user:sam", reason="downgrade")
    assert [(r["op"], r["old"]) for r in removed] == [("remove", "pro")]
    history = repo.history("customer/1", "/plan")
    assert [(h["tx"], h["op"], h["actor"], h["change_path"]) for h in history] == [
        (1, "add", "user:maria", ""),
        (3, "remove", "user:sam", "/plan"),
    ]
    blame = repo.blame("customer/1")
    assert [(b["path"], b["value"], b["actor"], b["tx"]) for b in blame] == [("/seats", BIG, "job:sync", 2)]
    assert [b["path"] for b in repo.blame("customer/1", at=1)] == ["/plan"]
    assert repo.sql("SELECT key, count(*) AS n FROM changes GROUP BY key") == [{"key": "customer/1", "n": 3}]
    assert repo.sql("SELECT new FROM changes WHERE path = '/seats'") == [{"new": str(BIG)}]


def test_ingest_bytes_str_and_values(repo):
    feed = {"items": [{"id": 1, "price": 10.5}], "name": "acme", "big": BIG}
    first = repo.ingest("feed/acme", feed, actor="poller:acme")
    assert [(c["op"], c["path"]) for c in first] == [("add", "")]
    assert first[0]["new"] == feed
    # The same snapshot as bytes, as str, reordered: unchanged.
    assert repo.ingest("feed/acme", json.dumps(feed).encode(), actor="poller:acme") == []
    assert repo.ingest("feed/acme", '{"name":"acme","big":%d,"items":[{"price":10.50,"id":1}]}' % BIG, actor="poller:acme") == []
    assert repo.ingest("feed/acme", bytearray(json.dumps(feed).encode()), actor="poller:acme") == []
    changed = repo.ingest("feed/acme", b'{"items": [], "name": "acme", "big": 1}', actor="poller:acme", reason="poll")
    assert sorted((c["op"], c["path"]) for c in changed) == [("replace", "/big"), ("replace", "/items")]
    assert repo.show("feed/acme") == {"items": [], "name": "acme", "big": 1}


def test_errors_are_classified(repo, tmp_path):
    with pytest.raises(TypeError):
        repo.set("k", "/a", 1)  # actor= is required
    with pytest.raises(hist_store.UsageError) as e:
        repo.set("k", "/a", 1, actor=None)
    assert e.value.code == 2 and "actor" in str(e.value)
    with pytest.raises(hist_store.UsageError):
        repo.ingest("k", b"{}", actor="maria")
    with pytest.raises(hist_store.UsageError):
        repo.set("k", "a", 1, actor="user:x")  # a path starts with /
    with pytest.raises(hist_store.UsageError):
        repo.show("k", at="last tuesday-ish")
    with pytest.raises(hist_store.UsageError):
        repo.set("k", "/a", 1, actor="user:x", at=3)  # a write's at= is a time
    with pytest.raises(hist_store.Error) as e:
        repo.ingest("k", b'{"a": [1,', actor="user:x")
    assert e.value.code == 1 and "not valid JSON" in str(e.value)
    assert not isinstance(e.value, hist_store.UsageError)
    with pytest.raises(hist_store.Error):
        repo.set("k", "/a", float("nan"), actor="user:x")
    with pytest.raises(hist_store.NotFoundError) as e:
        repo.show("customer/404")
    assert str(e.value) == "customer/404 does not exist now" and e.value.code == 1
    with pytest.raises(hist_store.NotFoundError):
        repo.blame("customer/404")
    with pytest.raises(hist_store.ReadOnlyError) as e:
        repo.sql("DROP TABLE transactions")
    assert e.value.code == 1
    with pytest.raises(hist_store.NotFoundError):
        hist_store.Repo.open(tmp_path / "nowhere")
    with pytest.raises(hist_store.Error):
        hist_store.Repo.init(tmp_path / "repo")  # already there
    with pytest.raises(hist_store.Error):
        hist_store.Repo.open(tmp_path / "repo", identity=tmp_path / "key")
    repo.close()
    repo.close()
    with pytest.raises(hist_store.UsageError):
        repo.show("k")


def test_the_gil_is_released_while_hist_works(repo):
    """A long ingest in one thread leaves the other threads running: hist parses, diffs and
    commits a large snapshot without the GIL (only its small answer is built with it)."""
    items = {f"item-{i}": {"name": "x" * 20, "v": [i, i + 1]} for i in range(200_000)}
    repo.ingest("big", items, actor="job:load")
    items["item-7"]["name"] = "changed"
    doc = json.dumps(items).encode()
    done = threading.Event()

    paths = []

    def work():
        try:
            paths.extend(c["path"] for c in repo.ingest("big", doc, actor="job:load"))
        finally:
            done.set()

    ticks = []
    worker = threading.Thread(target=work)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    took = time.perf_counter() - start
    gaps = [b - a for a, b in zip([start] + ticks, ticks)]
    assert paths == ["/item-7/name"]
    assert took > 0.05, f"the ingest took {took:.3f}s: too short to tell"
    assert max(gaps) < took / 2, f"this thread stalled {max(gaps):.3f}s of {took:.3f}s"


def test_threads_writing_one_key_lose_nothing(repo, tmp_path):
    second = hist_store.Repo.open(tmp_path / "repo")
    errors = []

    def writer(n):
        handle = repo if n % 2 else second
        try:
            for i in range(20):
                handle.set("shared", f"/w{n}/n{i}", i, actor=f"job:writer-{n}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        try:
            repo.show("shared")
        except hist_store.NotFoundError:
            pass
    for t in threads:
        t.join()
    assert errors == []
    doc = second.show("shared")
    assert doc == {f"w{n}": {f"n{i}": i for i in range(20)} for n in range(6)}
    assert repo.sql("SELECT count(DISTINCT tx) AS n FROM changes")[0]["n"] == 120
    second.close()
