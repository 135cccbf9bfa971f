"""The compatibility matrix as a reader sees it, from the copy scripts/compatibility.py
renders next to this module from the tests' results: what does not work yet first (each
"no" and "partly" cell, and any no test decides, with why), then each section's table of
short marks, the deciding test on hover. The UI serves it at `/compatibility`;
docs/compatibility.md is rendered from the same functions."""

from __future__ import annotations

import json
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

DATA = "compatibility.json"
VERDICTS = ("yes", "partly", "no", "not run", "no test", "n/a")
NOT_YET = ("no", "partly", "not run", "no test")  # what the first list names
STYLE = ("td.v-yes{background:#cfeccf}td.v-partly{background:#ffd98a}"
         "td.v-no{background:#f26b5b}td.v-not-run,td.v-no-test,td.v-na{color:#777}"
         "table.matrix td,table.matrix th{padding:2px 8px;text-align:left}"
         "table.matrix td[title]{cursor:help}")


@cache
def matrix() -> dict[str, Any]:
    return json.loads(files(__package__).joinpath(DATA).read_text())


def counts(data: dict[str, Any]) -> dict[str, int]:
    """How many cells have each verdict (every verdict, in VERDICTS' order)."""
    found = dict.fromkeys(VERDICTS, 0)
    for section in data["sections"]:
        for row in section["rows"]:
            for cell in row["cells"].values():
                found[cell["verdict"]] += 1
    return found


def summary(data: dict[str, Any]) -> str:
    """'412 cells: 371 yes, 29 partly, 12 no, ...' (verdicts no cell has left out)."""
    found = counts(data)
    return f"{sum(found.values())} cells: " + ", ".join(
        f"{n} {verdict}" for verdict, n in found.items() if n)


def not_yet(data: dict[str, Any]) -> list[dict[str, str]]:
    """Every cell that does not fully work yet: section, feature, column, verdict, why,
    and the test that decides it; "no" first, then "partly", then the rest."""
    found = []
    for section in data["sections"]:
        for row in section["rows"]:
            for key, heading in zip(section["column_keys"], section["columns"], strict=True):
                cell = row["cells"][key]
                if cell["verdict"] in NOT_YET:
                    found.append({"section": section["title"], "feature": row["name"],
                                  "column": heading, "verdict": cell["verdict"],
                                  "why": cell["note"], "test": cell["test"]})
    return sorted(found, key=lambda c: NOT_YET.index(c["verdict"]))


def hover(cell: dict[str, str]) -> str:
    """What a cell's mark stands on: its note (the reason for n/a, what is missing for
    partly) and the test that decides it."""
    return "; ".join(part for part in (cell["note"], cell["test"] and
                                       f"decided by {cell['test']}") if part)


def page() -> bytes:
    data = matrix()
    gaps = "".join(
        f"<tr><td>{escape(c['section'])}</td><td>{escape(c['feature'])}</td>"
        f"<td>{escape(c['column'])}</td><td class='v-{_css(c['verdict'])}'>"
        f"{escape(c['verdict'])}</td><td>{escape(c['why'])}</td>"
        f"<td><small>{escape(c['test'])}</small></td></tr>" for c in not_yet(data))
    body = "".join(_section(s) for s in data["sections"])
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>heronbridge compatibility</title>"
            f"<link rel=stylesheet href='/static/ui.css'><style>{STYLE}</style></head><body>"
            f"<header><h1><a href='/'>heronbridge</a> › compatibility</h1>"
            f"<span class=where>{escape(summary(data))}</span></header><main>"
            f"<p>Each cell is decided by the tests that name it: yes when every one passed, "
            f"partly when some did or they cover the feature in part, no when they fail; "
            f"n/a where the feature cannot exist. Hover a cell for its test and why.</p>"
            f"<section id='not-yet'><h2>What does not work yet</h2>"
            f"<table class=matrix><thead><tr><th>section</th><th>feature</th><th>on</th>"
            f"<th></th><th>why</th><th>decided by</th></tr></thead><tbody>{gaps}</tbody>"
            f"</table></section>{body}</main></body></html>").encode()


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
    title = hover(cell)
    attribute = f" title='{escape(title)}'" if title else ""
    return f"<td class='v-{_css(cell['verdict'])}'{attribute}>{escape(cell['verdict'])}</td>"


def _css(verdict: str) -> str:
    return verdict.replace(" ", "-").replace("/", "")
