"""The poller in bindings/python/README.md runs, with the fetch mocked."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_poller_runs(tmp_path, capsys, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    poller = next(b for b in blocks if "def poll(" in b)
    assert len(poller.splitlines()) <= 30, "the README's poller is meant to be short"
    monkeypatch.chdir(tmp_path)
    import hist_store

    hist_store.Repo.init(tmp_path).close()
    namespace = {"__name__": "readme"}
    exec(compile(poller, str(README), "exec"), namespace)
    feeds = iter([b'{"price": 10, "sku": "a"}', b'{"price": 10, "sku": "a"}', b'{"price": 12, "sku": "a"}'])
    namespace["fetch"] = lambda url: next(feeds)
    repo = hist_store.Repo.open(tmp_path)
    for _ in range(3):
        namespace["poll"](repo, "feed/acme", "https://api.example.com/feed")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tx 1 add (document): {\"price\": 10, \"sku\": \"a\"}"
    assert out[1] == "unchanged"
    assert out[2] == "tx 2 replace /price: 10 -> 12"
