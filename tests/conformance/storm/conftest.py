"""One Storm install for every Storm run of the session (resolved into a folder of its
own; Maven's local repository makes it quick), and what a run may leave behind."""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest


@pytest.fixture(scope="session")
def storm_install(tmp_path_factory):
    from heronbridge.conformance.storm import fetch

    return fetch(tmp_path_factory.mktemp("hb-home"))


@pytest.fixture
def storm_leftovers():
    return leftovers


def leftovers(run_dir: Path, pids: set[int] = frozenset()) -> list[str]:
    """Live processes of a Storm run: the JVM names the run folder on its command line,
    the components run in a folder under it; `pids`: the components' own, from traces."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status", "cwd"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        cmd = " ".join(proc.info["cmdline"] or [])
        if proc.pid in pids or str(run_dir) in cmd or str(run_dir) in (proc.info["cwd"] or ""):
            found.append(f"{proc.pid} {cmd[:160]}")
    return found
