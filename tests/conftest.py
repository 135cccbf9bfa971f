"""Shared fixtures: an isolated heronbridge home per test, and running topologies.
Helpers that tests import live in testkit.py: several conftest modules share the name
`conftest`, so importing from one by name picks whichever was loaded last."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from testkit import Running

from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import StateManager, open_statemgr


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    root = tmp_path / "hb"
    monkeypatch.setenv("HERONBRIDGE_HOME", str(root))
    return Home(root)


@pytest.fixture
def state(home: Home) -> StateManager:
    return open_statemgr(home.state_uri)


@pytest.fixture
def run_topology(home: Home, state: StateManager) -> Callable[[LogicalPlan], Running]:
    def start(plan: LogicalPlan) -> Running:
        return Running(plan, home, state)

    return start


@pytest.fixture
def run_project(home: Home, state: StateManager) -> Callable[..., Running]:
    """Run a streamparse project as `heronbridge run` would: run_project(path, name=...,
    options={...}, multilang=False)."""
    from heronbridge.compat.streamparse import load_project, topology_name

    def start(
        path: Path,
        name: str | None = None,
        options: dict | None = None,
        multilang: bool = False,
        env: str | None = None,
    ) -> Running:
        name = topology_name(path, name)
        project = load_project(
            path, name, env, options or {}, multilang, home.workdir(name) / "resources"
        )
        return Running(project.plan, home, state, project)

    return start


@pytest.fixture(scope="session")
def storm_home(tmp_path_factory):
    """One Storm install per session, resolved into a home of its own (Maven's local
    repository makes that quick after the first time): the conformance suite's and the
    Nimbus tests' (Storm's command classes)."""
    return tmp_path_factory.mktemp("hb-home")


@pytest.fixture(scope="session")
def storm_install(storm_home):
    from heronbridge.conformance.storm import fetch

    return fetch(storm_home)
