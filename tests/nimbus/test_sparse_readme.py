"""The docs' `sparse submit -e heronbridge -n wordcount`, `sparse list` and `sparse kill`
(docs/how-to/sparse-and-storm.md), on the word count example exactly as it ships (its
project.clj built by lein from Maven Central), with the environment the guide tells the
user to add."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from nimbuskit import ROOT, WORDCOUNT, leftovers, sparse, table_rows
from testkit import wait_until

from heronbridge.runtime import control
from heronbridge.runtime.scheduler import Home

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

README = (ROOT / "docs" / "how-to" / "sparse-and-storm.md").read_text()


def readme_env() -> dict:
    """The environment block the guide shows for config.json."""
    section = README[README.index("# Keep your sparse and storm commands"):]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    return json.loads("{" + block + "}")["envs"]


def said(command: str) -> bool:
    return command in " ".join(README.split())


def test_the_readme_sparse_commands_on_the_example_as_shipped(nimbus, tmp_path):
    if shutil.which("lein") is None:
        pytest.fail("sparse submit builds its jar with Leiningen: expected `lein` on PATH "
                    "(tox's conformance env installs Debian's leiningen)")
    project = tmp_path / "wordcount"
    shutil.copytree(WORDCOUNT, project, ignore=shutil.ignore_patterns(
        "__pycache__", "_build", "_resources"))
    assert (project / "project.clj").read_bytes() == (WORDCOUNT / "project.clj").read_bytes()
    config = json.loads((project / "config.json").read_text())
    config["envs"].update(readme_env())  # as the README says: add an environment
    (project / "config.json").write_text(json.dumps(config, indent=2))
    # The README's nimbus is 127.0.0.1:6627; the test's endpoint has a port of its own,
    # given the way sparse lets a deploy job override it.
    nimbus_at = {"STREAMPARSE_NIMBUS": f"127.0.0.1:{nimbus.port}"}

    for command in ("sparse submit -e heronbridge -n wordcount", "sparse list -e heronbridge",
                    "sparse kill -e heronbridge -n wordcount"):
        assert said(command), f"the guide no longer says {command!r}"
    done = sparse(project, "submit", "-e", "heronbridge", "-n", "wordcount", timeout=600,
                  **nimbus_at)
    assert done.returncode == 0, done.stdout + done.stderr + nimbus.output()
    assert re.search(r"JAR created: .*wordcount-0\.0\.1-SNAPSHOT\.jar", done.stdout), done.stdout
    assert "Submitting wordcount topology to nimbus...done" in done.stdout, done.stdout

    listed = sparse(project, "list", "-e", "heronbridge", **nimbus_at)
    assert listed.returncode == 0, listed.stderr
    assert [(r["name"], r["status"]) for r in table_rows(listed.stdout)] == \
        [("wordcount", "ACTIVE")], listed.stdout
    state = Home(nimbus.home).open_statemgr()
    try:
        wait_until(lambda: sum(t.counters.get("execute-count", 0) for t in control.metrics(
            state, "wordcount").tasks if t.component == "count_bolt") > 0, 90,
            "the counting bolt to count words", on_timeout=nimbus.output)
    finally:
        state.close()

    killed = sparse(project, "kill", "-e", "heronbridge", "-n", "wordcount", "--wait", "1",
                    **nimbus_at)
    assert killed.returncode == 0, killed.stdout + killed.stderr
    wait_until(lambda: "No topologies found." in sparse(
        project, "list", "-e", "heronbridge", **nimbus_at).stdout, 60,
        "sparse list to show no topology", on_timeout=nimbus.output)
    wait_until(lambda: not leftovers(nimbus.home, {nimbus.process.pid}), 30,
               "no process of the topology left")
