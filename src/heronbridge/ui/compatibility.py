"""The compatibility page (`/compatibility`): the matrix docs/compatibility.md shows, from
the copy scripts/compatibility.py renders next to this module from the tests' results."""

from __future__ import annotations

import json
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

DATA = "compatibility.json"
VERDICTS = ("yes", "partly", "no", "not run", "no test", "n/a")
STYLE = ("td.v-yes{background:#cfeccf}td.v-partly{background:#ffd98a}"
         "td.v-no{background:#f26b5b}td.v-not-run,td.v-no-test,td.v-na{color:#777}"
         "table.matrix td,table.matrix th{padding:2px 8px;text-align:left}"
         "table.matrix small{display:block;color:#555}")


@cache
def matrix() -> dict[str, Any]:
    return json.loads(files(__package__).joinpath(DATA).read_text())


def page() -> bytes:
    sections = matrix()["sections"]
    counts = {v: 0 for v in VERDICTS}
    for section in sections:
        for row in section["rows"]:
            for cell in row["cells"].values():
                counts[cell["verdict"]] += 1
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    body = "".join(_section(s) for s in sections)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>heronbridge compatibility</title>"
            f"<link rel=stylesheet href='/static/ui.css'><style>{STYLE}</style></head><body>"
            f"<header><h1><a href='/'>heronbridge</a> › compatibility</h1>"
            f"<span class=where>cells: {summary}</span></header><main>"
            f"<p>Each cell is decided by the tests named in it: yes when every one passed, "
            f"partly when some did or they cover the feature in part, no when they fail; n/a "
            f"where the feature cannot exist, with why.</p>"
            f"{body}</main></body></html>").encode()


def _section(section: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in section["columns"])
    rows = "".join(
        f"<tr><th>{escape(row['name'])}</th>"
        + "".join(_cell(row["cells"][key]) for key in section["column_keys"]) + "</tr>"
        for row in section["rows"])
    return (f"<section id='{escape(section['key'])}'><h2>{escape(section['title'])}</h2>"
            f"<table class=matrix><thead><tr><th></th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></section>")


def _cell(cell: dict[str, str]) -> str:
    verdict = cell["verdict"]
    note = f": {escape(cell['note'])}" if cell["note"] else ""
    test = f"<small>{escape(cell['test'])}</small>" if cell["test"] else ""
    css = verdict.replace(" ", "-").replace("/", "")
    return f"<td class='v-{css}'>{escape(verdict)}{note}{test}</td>"
