"""The docs cannot drift from the command line: every `heronbridge` command a tutorial, a
guide or the README shows parses with the CLI's own parser (a verb or flag it lacks fails
here), and every benchmark or script they tell users to run exists."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from heronbridge.cli import build_parser, verb_parsers

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
GENERATED = {ROOT / "docs" / "reference" / p for p in ("cli.md", "config.md", "codemod.md")}
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`(heronbridge [^`]+)`")


def commands(text: str) -> list[tuple[str, str]]:
    """(kind, command): `run` for lines of bash blocks (each `&&` part), `synopsis` for
    lines of text blocks and inline code, which show flags without real values."""
    found = []
    for lang, body in BLOCK.findall(text):
        # A synopsis continues on indented lines; a shell line after a backslash.
        for line in re.sub(r"\\?\n[ \t]+(?=\S)", " ", body).splitlines():
            for part in line.split("&&"):
                command = re.sub(r"^\S*/(?=heronbridge |python )", "", part.strip())
                if command.startswith(("heronbridge ", "python ")):
                    found.append(("run" if lang == "bash" else "synopsis", command))
    body = BLOCK.sub("", text)
    found += [("synopsis", c) for c in INLINE.findall(" ".join(body.split()))]
    return found


def problems(kind: str, command: str) -> list[str]:
    """What is wrong with a command as the docs show it: [] when nothing."""
    words = shlex.split(command, comments=True)
    if words[0] == "python":
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        if script.startswith(("benchmarks/", "scripts/")) and not (ROOT / script).is_file():
            return [f"{script} does not exist"]
        return []
    verbs = verb_parsers(build_parser())
    args = words[1:]
    verb = " ".join(args[:2]) if " ".join(args[:2]) in verbs else (args[:1] or [""])[0]
    if verb not in verbs:
        return [f"no verb {verb!r}"]
    if kind == "run":
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                build_parser().parse_args(args)
        except SystemExit:
            return [err.getvalue().strip().splitlines()[-1]]
        return []
    known = {s for a in verbs[verb]._actions for s in a.option_strings}
    flags = {re.split(r"[=\]]", w.strip("[]"))[0] for w in args if w.lstrip("[").startswith("-")}
    return [f"{verb} has no {flag}" for flag in sorted(flags - known) if flag not in ("-", "--")]


def shown() -> list[tuple[str, str, str]]:
    return [(str(page.relative_to(ROOT)), kind, command) for page in PAGES
            if page not in GENERATED for kind, command in commands(page.read_text())]


def test_the_tutorials_show_commands():
    pages = {page for page, _, command in shown() if command.startswith("heronbridge")}
    assert {f"docs/tutorials/{name}.md" for name in (
        "run-streamparse", "migrate-to-heronpy", "parity-with-storm", "throughput-and-latency",
        "many-hosts", "exactly-once")} <= pages
    assert "README.md" in pages


@pytest.mark.parametrize(("page", "kind", "command"), shown())
def test_every_command_the_docs_show_exists(page, kind, command):
    assert problems(kind, command) == [], f"{page}: {command}"


@pytest.mark.parametrize(("kind", "command"), [
    ("run", "heronbridge run --project examples/storm_topologies/wordcount --no-such-flag"),
    ("run", "heronbridge rebalance wordcount"),
    ("run", "heronbridge conform --tuples many"),
    ("synopsis", "heronbridge migrate PATH [--dry-run]"),
    ("run", "python benchmarks/no_such_benchmark.py"),
])
def test_a_command_the_cli_lacks_is_found(kind, command):
    assert problems(kind, command)


def test_commands_are_read_from_blocks_and_inline_code():
    text = ("Run `heronbridge kill NAME [--state URI]` then:\n\n```bash\n"
            "python3 -m venv .venv && .venv/bin/heronbridge list  # all\n```\n")
    assert commands(text) == [("run", "heronbridge list  # all"),
                              ("synopsis", "heronbridge kill NAME [--state URI]")]
    assert isinstance(build_parser(), argparse.ArgumentParser)
