"""The compatibility page: the packaged matrix (what docs/compatibility.md shows), served."""

from __future__ import annotations

import urllib.request
from html import escape

from heronbridge.runtime.statemgr import open_statemgr
from heronbridge.ui import compatibility
from heronbridge.ui.server import UIServer
from heronbridge.ui.tracker import Tracker


def test_the_page_shows_every_row_and_cell_of_the_packaged_matrix(tmp_path):
    server = UIServer(Tracker(open_statemgr(str(tmp_path / "state"))), port=0).start()
    try:
        with urllib.request.urlopen(server.url + "compatibility", timeout=10) as reply:
            status, page = reply.status, reply.read().decode()
    finally:
        server.close()
    assert status == 200
    sections = compatibility.matrix()["sections"]
    rows = [r for s in sections for r in s["rows"]]
    assert all(escape(s["title"]) in page for s in sections)
    gaps = compatibility.not_yet(compatibility.matrix())
    # What does not work yet first: a row for each such cell, with why and its test.
    first = page.index("What does not work yet")
    assert first < page.index(escape(sections[0]["title"]))
    assert page.count("<tr><td>") == len(gaps) and all(
        f"<td>{escape(c['feature'])}</td><td>{escape(c['column'])}</td>" in page
        for c in gaps)
    assert escape(compatibility.summary(compatibility.matrix())) in page
    assert page.count("<tr><th>") == 1 + len(sections) + len(rows)  # a head row each
    assert page.count("<td class='v-") == sum(len(r["cells"]) for r in rows) + len(gaps)
    for row in rows:
        for cell in row["cells"].values():
            assert cell["verdict"] in compatibility.VERDICTS
            assert escape(cell["test"]) in page  # on hover, in the cell's title
