"""streamparse's own `sparse` against `heronbridge nimbus`, as a user runs it with an env
whose `nimbus` names the endpoint: submit (a prebuilt jar, `-j`), the word count counts,
`sparse list` shows it, `sparse kill` stops it and leaves no process behind."""

from __future__ import annotations

import pytest
from nimbuskit import (
    AGAIN,
    READS,
    leftovers,
    reads_agree,
    sparse,
    submit_again_and_kill,
    table_rows,
    wordcount_project,
    words_in_text,
)
from testkit import read_jsonl, wait_until

from heronbridge.nimbus.submit import write_jar
from heronbridge.runtime.scheduler import Home
from heronbridge.runtime.statemgr import TOPOLOGIES

pytestmark = pytest.mark.integration


def counted(out) -> int:
    return sum(len(records) for records in read_jsonl(out).values())


@pytest.mark.compat("sparse/sparse submit", "sparse/sparse list", "sparse/sparse kill",
                    "nimbus/beginFileUpload", "nimbus/uploadChunk", "nimbus/finishFileUpload",
                    "nimbus/submitTopology", "nimbus/killTopologyWithOpts",
                    "nimbus/getClusterInfo", "nimbus/isTopologyNameAllowed", *READS, *AGAIN)
def test_sparse_submit_list_kill(nimbus, tmp_path):
    out = tmp_path / "out"
    project = wordcount_project(tmp_path, nimbus.port, out)
    # What `sparse jar` builds (its lein step packs src/ under resources/), prebuilt.
    jar = write_jar(project / "src", tmp_path / "wordcount.jar")

    done = sparse(project, "submit", "-e", "test", "-n", "wordcount", "-j", str(jar))
    assert done.returncode == 0, done.stdout + done.stderr + nimbus.output()
    assert "Submitting wordcount topology to nimbus...done" in done.stdout, done.stdout

    total = words_in_text()
    wait_until(lambda: counted(out) == total, 90, f"the word count to count {total} words",
               on_timeout=nimbus.output)
    assert {name.split("-")[0] for name in read_jsonl(out)} == {"count_bolt"}
    assert len(read_jsonl(out)) == 2  # par=2: two tasks counted

    listed = sparse(project, "list", "-e", "test")
    assert listed.returncode == 0, listed.stderr
    rows = table_rows(listed.stdout)
    assert [(r["name"], r["status"], r["num_workers"]) for r in rows] == \
        [("wordcount", "ACTIVE", "1")], listed.stdout
    assert rows[0]["id"].startswith("wordcount-")

    kept = reads_agree(nimbus.port, "wordcount", {"word_spout", "count_bolt"})
    submit_again_and_kill(nimbus.port, kept, "wordcount-again", jar)

    # The name is taken while it runs: sparse asks isTopologyNameAllowed and says so.
    again = sparse(project, "submit", "-e", "test", "-n", "wordcount", "-j", str(jar))
    assert again.returncode != 0
    assert "Nimbus says wordcount is an invalid name" in again.stderr, again.stderr

    killed = sparse(project, "kill", "-e", "test", "-n", "wordcount", "--wait", "1")
    assert killed.returncode == 0, killed.stdout + killed.stderr
    wait_until(lambda: "No topologies found." in sparse(project, "list", "-e", "test").stdout,
               60, "sparse list to show no topology", on_timeout=nimbus.output)
    wait_until(lambda: not leftovers(nimbus.home, {nimbus.process.pid}), 30,
               "no process of the topology left", on_timeout=lambda: "\n".join(
                   leftovers(nimbus.home, {nimbus.process.pid})))
    state = Home(nimbus.home).open_statemgr()
    try:
        assert state.names(TOPOLOGIES) == []
    finally:
        state.close()
    assert counted(out) == total  # nothing counted twice after the kill
