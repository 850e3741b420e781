"""hist_store beside the other doors: the `hist` command and the Go package (through its
door program, bindings/go/cmd/hist-door), on one repository."""

import json

import pytest

import hist_store
from conftest import run


def test_an_open_handle_uses_a_rule_the_command_declared(tmp_path, hist_bin):
    """A service keeps its Repo open; meanwhile `hist rules` declares an array key: the
    next ingest through the open Repo diffs the array by that key."""
    with hist_store.Repo.init(tmp_path) as repo:
        repo.ingest("feed/acme", {"items": [{"id": 1, "price": 10}]}, actor="poller:acme")
        run(hist_bin, "-C", str(tmp_path), "rules", "array-key", "/items", "id", "--actor", "user:ops")
        changes = repo.ingest(
            "feed/acme", {"items": [{"id": 2, "price": 5}, {"id": 1, "price": 10}]}, actor="poller:acme"
        )
        assert [(c["op"], c["path"]) for c in changes] == [("add", "/items[id=2]")]


def test_one_history_three_doors(tmp_path, hist_bin, go_door):
    """Writes through Python, Go and the command, each read back through the other two:
    the same transactions, actors, values; fsck passes."""
    d = str(tmp_path)
    big = 2**64 + 7
    with hist_store.Repo.init(tmp_path) as repo:
        repo.set("customer/1", "/plan", "pro", actor="user:python", reason="from python")
        run(go_door, d, "set", "customer/1", "/seats", str(big), "user:go", "from go")
        run(hist_bin, "-C", d, "set", "customer/1", "/plan", '"team"', "--actor", "user:cli", "-m", "from cli")
        repo.ingest("feed/acme", b'{"price": 1.5, "sku": "a"}', actor="poller:python")
        run(go_door, d, "ingest", "feed/acme", '{"price": 2.5, "sku": "a"}', "poller:go", "")

        def rows(records):
            return [
                (r["tx"], r["actor"], r["reason"] or None, r["path"], r["op"], r.get("old"), r.get("new"))
                for r in records
            ]

        def ndjson(text):
            return [json.loads(line) for line in text.splitlines()]

        def histories(key, path):
            """The history of key at path through each door."""
            return {
                "python": rows(repo.history(key, path)),
                "cli": rows(ndjson(run(hist_bin, "-C", d, "history", key, path, "--json"))),
                "go": rows(ndjson(run(go_door, d, "history", key, path))),
            }

        plan = [
            (1, "user:python", "from python", "/plan", "add", None, "pro"),
            (3, "user:cli", "from cli", "/plan", "replace", "pro", "team"),
        ]
        seats = [(2, "user:go", "from go", "/seats", "add", None, big)]
        price = [
            (4, "poller:python", None, "/price", "add", None, 1.5),
            (5, "poller:go", None, "/price", "replace", 1.5, 2.5),
        ]
        for key, path, want in [("customer/1", "/plan", plan), ("customer/1", "/seats", seats), ("feed/acme", "/price", price)]:
            assert histories(key, path) == {"python": want, "cli": want, "go": want}, (key, path)
        # The documents, byte for byte where the doors give text.
        doc = {"plan": "team", "seats": big}
        assert repo.show("customer/1") == doc
        cli_text = run(hist_bin, "-C", d, "show", "customer/1", "--json").strip()
        assert json.loads(cli_text) == doc
        assert run(go_door, d, "show", "customer/1") == cli_text
        # Blame agrees.
        assert repo.blame("customer/1") == ndjson(run(hist_bin, "-C", d, "blame", "customer/1", "--json"))
    run(hist_bin, "-C", d, "fsck")


def test_an_identity_outside_the_repository_unlocks_personal_values(tmp_path, hist_bin):
    """`hist init --identity FILE` keeps keys.db's key outside: a Repo opened without it
    reads everything but personal values; identity= opens those too."""
    d = str(tmp_path / "repo")
    identity = tmp_path / "outside" / "id.txt"
    identity.parent.mkdir()
    run(hist_bin, "init", d, "--identity", str(identity))
    run(hist_bin, "-C", d, "rules", "personal", "/email", "--actor", "user:dpo")
    run(hist_bin, "-C", d, "--identity", str(identity), "set", "customer/1", "/email", '"ann@example.com"', "--actor", "user:ops")
    run(hist_bin, "-C", d, "set", "plain", "/n", "7", "--actor", "user:ops")
    with hist_store.Repo.open(d) as locked:
        assert locked.show("plain") == {"n": 7}
        with pytest.raises(hist_store.Error) as e:
            locked.show("customer/1")
        assert e.value.code == 1
    with hist_store.Repo.open(d, identity=identity) as unlocked:
        assert unlocked.show("customer/1") == {"email": "ann@example.com"}
    with pytest.raises(hist_store.Error) as e:
        hist_store.Repo.open(d, identity=tmp_path / "nowhere")
    assert e.value.code == 1 and "does not exist" in str(e.value)
