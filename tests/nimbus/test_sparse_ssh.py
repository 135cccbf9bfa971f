"""sparse's commands that act on the workers over SSH (fabric), against a word count that
heronbridge nimbus runs: `tail`, `remove_logs` and `update_virtualenv` log in to each
worker Nimbus lists and run shell commands there. heronbridge serves no SSH and lays no
Storm log folders out: `heronbridge logs` reads a topology's task logs, and each topology
ships its own virtualenv. The tests say what a user would see work, and fail."""

from __future__ import annotations

import json

import pytest
from nimbuskit import running_nimbus, sparse, wordcount_project
from testkit import read_jsonl, wait_until

from heronbridge.nimbus.submit import write_jar

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("sparse-ssh")]

NO_SSH = ("sparse runs it on each worker over SSH (fabric); heronbridge serves no SSH: "
          "`heronbridge logs` reads task logs, topologies ship their own virtualenvs")


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """The word count submitted by sparse and counting; its project's env `workers` asks
    Nimbus for the workers, as a Storm user's does."""
    folder = tmp_path_factory.mktemp("sparse-ssh")
    with running_nimbus(folder / "home", folder / "nimbus.log") as nimbus:
        out = folder / "out"
        project = wordcount_project(folder, nimbus.port, out)
        config = json.loads((project / "config.json").read_text())
        config["envs"]["workers"] = {
            **{k: v for k, v in config["envs"]["test"].items() if k != "workers"},
            "use_virtualenv": True, "virtualenv_root": str(folder / "virtualenvs")}
        (project / "config.json").write_text(json.dumps(config, indent=2))
        jar = write_jar(project / "src", folder / "wordcount.jar")
        done = sparse(project, "submit", "-e", "test", "-n", "wordcount", "-j", str(jar))
        assert done.returncode == 0, done.stdout + done.stderr + nimbus.output()
        wait_until(lambda: read_jsonl(out), 60, "counts", on_timeout=nimbus.output)
        yield nimbus, project, folder


def task_logs(nimbus) -> list:
    return sorted((nimbus.home / "topologies" / "wordcount" / "current").glob(
        "container-*/logs/task-*-count_bolt.log"))


@pytest.mark.compat("sparse/sparse tail")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_tail_prints_the_task_logs(running):
    nimbus, project, _ = running
    done = sparse(project, "tail", "-e", "workers", "-n", "wordcount", timeout=60)
    last = task_logs(nimbus)[0].read_text().splitlines()[-1]
    assert done.returncode == 0 and last in done.stdout, done.stdout + done.stderr


@pytest.mark.compat("sparse/sparse remove_logs")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_remove_logs_removes_the_task_logs(running):
    nimbus, project, _ = running
    before = task_logs(nimbus)
    done = sparse(project, "remove_logs", "-e", "workers", "-n", "wordcount", timeout=60)
    assert done.returncode == 0 and before and not task_logs(nimbus), \
        done.stdout + done.stderr


@pytest.mark.compat("sparse/sparse update_virtualenv")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=NO_SSH)
def test_sparse_update_virtualenv_builds_it_on_the_workers(running):
    _, project, folder = running
    done = sparse(project, "update_virtualenv", "-e", "workers", "-n", "wordcount",
                  timeout=120)
    assert done.returncode == 0 and (folder / "virtualenvs" / "wordcount" / "bin" /
                                     "python").exists(), done.stdout + done.stderr
