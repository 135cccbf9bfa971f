"""Shared fixtures: an isolated heronbridge home per test, and running topologies.
Helpers that tests import live in testkit.py: several conftest modules share the name
`conftest`, so importing from one by name picks whichever was loaded last."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from testkit import Running

from heronbridge.runtime.plan.logical import LogicalPlan
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import StateManager, open_statemgr


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--none-is-ok", action="store_true",
                     help="exit 0 when the selection holds no test (tox's `solo` runs, "
                          "which a -k subset may leave empty)")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and \
            session.config.getoption("--none-is-ok"):
        session.exitstatus = pytest.ExitCode.OK


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of a module that share a module- or class-scoped fixture form one
    xdist group: under `--dist loadgroup` they run on one worker, in their order, so the
    fixture is set up once and its shared state is seen in the order the module expects."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group"):
            continue  # a group named by the test itself stands
        for name in info.names_closure:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope in ("module", "class", "package"):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
                break
    longest_units_first(items)


# Seconds each slow test took in a full CI run (setup, call and teardown; tests under 3 s
# left out): `python tests/durations.py TOX_LOG` writes it from the runs' --durations=30.
DURATIONS = Path(__file__).with_name("durations.json")
UNKNOWN_SECS = 1.0  # a test not in the table


def longest_units_first(items: list[pytest.Item]) -> None:
    """Under xdist, the longest work units first (a group's tests together, in their
    order): a worker that draws a long unit last leaves the other idle until it
    ends. tox passes --no-loadscope-reorder, so xdist keeps this order rather than
    putting the units with the most tests first."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})  # as xdist names them
        units.setdefault("_".join(groups) or item.nodeid, []).append(item)

    def cost(unit: list[pytest.Item]) -> float:
        return sum(seconds.get(i.nodeid.split("@")[0], UNKNOWN_SECS) for i in unit)

    items[:] = [i for unit in sorted(units.values(), key=cost, reverse=True) for i in unit]


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
    Nimbus tests' (Storm's command classes). Under xdist the workers share it (the base
    folder they have in common): the install's lock makes one resolve it, the others
    wait and reuse it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "hb-home"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("hb-home")


@pytest.fixture(scope="session")
def storm_install(storm_home):
    from heronbridge.conformance.storm import fetch

    return fetch(storm_home)


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark session per session (per xdist worker), for every analysis
    (starting Spark costs about ten seconds, far more under load): the conformance
    suite's and the Nimbus tests'. Imported here only: the tests env has no pyspark."""
    from heronbridge.conformance.analysis import session

    made = session("local[2]")
    yield made
    made.stop()
