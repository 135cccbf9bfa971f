"""heronbridge's pytest plugin (registered as a `pytest11` entry point, so pytest loads it
wherever heronbridge is installed).

Fixtures:
- `complete_topology`: heronbridge.testing.complete_topology, each run in the test's own
  temporary folder; with `--on-storm`, the run is Apache Storm's (local mode, through
  the conformance suite: Java and the `conformance` extra), and the same assertions
  then check what Storm did;
- `simulated_topology`: opens a SimulatedTopology (closed after the test);
- `isolate`: opens one component on its own (closed after the test);
- `on_storm`: whether `--on-storm` was given.

It also registers the `compat` marker, with which a test names the compatibility-matrix
cells it decides (heronbridge.testing.matrix).

The module imports nothing heavy: every suite that has heronbridge installed loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from . import matrix

STORM_FLAG = "--on-storm"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("heronbridge", "heronbridge topology tests")
    group.addoption(STORM_FLAG, action="store_true", default=False,
                    help="run the complete_topology fixture's topologies on Apache Storm "
                         "2.8 (local mode, resolved with Maven on first use; needs Java and "
                         "heronbridge's conformance extra) instead of in memory")
    group.addoption("--storm-timeout", type=float, default=300.0,
                    help="seconds a topology may take on Storm (default 300)")
    matrix.addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    matrix.configure(config)


@pytest.fixture
def on_storm(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption(STORM_FLAG))


@pytest.fixture
def complete_topology(request: pytest.FixtureRequest, tmp_path: Any,
                      on_storm: bool) -> Callable[..., Any]:
    """complete_topology(project_or_plan, name=None, mocked_sources=..., config=...,
    env=None, seconds=0.0) -> Result, in memory or (--on-storm) on Storm."""
    runs = iter(range(1, 1_000_000))

    def run(source: Any, name: str | None = None, **options: Any) -> Any:
        workdir = tmp_path / f"topology-{next(runs)}"
        workdir.mkdir()
        if on_storm:
            from heronbridge.testing.on_storm import complete_on_storm

            return complete_on_storm(source, name, workdir=workdir,
                                     timeout=request.config.getoption("--storm-timeout"),
                                     **options)
        from heronbridge.testing import complete_topology as complete

        return complete(source, name, workdir=workdir, **options)

    return run


def _opened(tmp_path: Any, kind: str, make: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """A fixture's opener of `make(...)` objects, each in a folder of its own, all closed
    after the test."""
    opened: list[Any] = []

    def open_one(*args: Any, **options: Any) -> Any:
        workdir = tmp_path / f"{kind}-{len(opened) + 1}"
        workdir.mkdir()
        opened.append(make(*args, workdir=workdir, **options))
        return opened[-1]

    yield open_one
    for one in reversed(opened):
        one.close()


@pytest.fixture
def simulated_topology(tmp_path: Any) -> Iterator[Callable[..., Any]]:
    """simulated_topology(project_or_plan, name=None, mocked_sources=..., config=...)
    -> SimulatedTopology, closed after the test."""
    from heronbridge.testing import SimulatedTopology

    yield from _opened(tmp_path, "simulated", SimulatedTopology)


@pytest.fixture
def isolate(tmp_path: Any) -> Iterator[Callable[..., Any]]:
    """isolate(project_or_plan, component, name=None, config=..., task_index=0)
    -> Isolated, closed after the test."""
    from heronbridge.testing import Isolated

    yield from _opened(tmp_path, "isolated", Isolated)
