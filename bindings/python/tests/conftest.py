"""Shared fixtures. The doors other than Python (the `hist` command, the Go door program)
come from the environment: HIST_BIN and HIST_GO_DOOR. Without them the tests that need them
are skipped, unless HIST_REQUIRE_DOORS=1 (as .ci/run sets), which makes that a failure."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import hist_store

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def repo(tmp_path):
    with hist_store.Repo.init(tmp_path / "repo") as r:
        yield r


def _door(env_name, fallback):
    path = os.environ.get(env_name) or (str(fallback) if fallback and Path(fallback).is_file() else None)
    if path is None or shutil.which(path) is None and not Path(path).is_file():
        if os.environ.get("HIST_REQUIRE_DOORS") == "1":
            pytest.fail(f"{env_name} is not set (or not a program), and HIST_REQUIRE_DOORS=1")
        pytest.skip(f"{env_name} is not set")
    return path


@pytest.fixture
def hist_bin():
    """The `hist` command."""
    return _door("HIST_BIN", REPO_ROOT / "target" / "debug" / "hist")


@pytest.fixture
def go_door():
    """The Go door program (bindings/go/cmd/hist-door)."""
    return _door("HIST_GO_DOOR", None)


def run(*args, input=None):
    """Runs a program; its stdout (it must succeed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIST_")}
    done = subprocess.run(args, input=input, capture_output=True, env=env, check=False)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr.decode()}"
    return done.stdout.decode()
