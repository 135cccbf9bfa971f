"""`heronbridge docs`: the docs site this install carries (here, an editable install's
checkout docs/), every page rendered with the anchors --help links name, images served,
nothing outside the pages."""

from __future__ import annotations

import http.client
import subprocess

import pytest
from testkit import HERONBRIDGE

from heronbridge.cli import DOCS_PAGE, build_parser, docs_anchor, verb_parsers
from heronbridge.ui.docs import DocsError, DocsServer, read_nav, site


@pytest.fixture(scope="module")
def server():
    docs = DocsServer(site()).start()
    yield docs
    docs.close()


def get(server: DocsServer, path: str) -> tuple[int, str, bytes]:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


def test_every_page_of_the_navigation_exists_and_renders(server):
    docs = site()
    pages = [page for _, _, page in docs.nav if page]
    assert pages[0] == "index.md" and "reference/cli.md" in pages and len(pages) > 20
    for page in pages:
        status, kind, body = get(server, f"/{page}")
        assert status == 200 and kind.startswith("text/html"), page
        assert b"<nav>" in body and b'class="here"' in body, page


def test_every_help_link_names_a_page_and_an_anchor_that_exist(server):
    status, _, body = get(server, f"/{DOCS_PAGE}.md")
    assert status == 200
    text = body.decode()
    assert "{#" not in text  # a heading's own anchor becomes its id, not text
    for command in verb_parsers(build_parser()):
        assert f'id="{docs_anchor(command)}"' in text, command
    # A heading without its own anchor gets mkdocs' slug.
    status, _, body = get(server, "/tutorials/run-streamparse.md")
    assert status == 200 and b' id="' in body


def test_images_are_served_and_nothing_outside_the_pages(server):
    status, kind, body = get(server, "/screenshots/ui-1-running.png")
    assert status == 200 and kind == "image/png" and body.startswith(b"\x89PNG")
    for outside in ("/../pyproject.toml", "/%2e%2e/pyproject.toml", "/../mkdocs.yml",
                    "/nope.md"):
        assert get(server, outside)[0] == 404, outside


def test_a_page_is_found_by_path_or_by_a_name_only_it_has():
    docs = site()
    assert docs.page("reference/cli") == docs.page("cli") == "reference/cli.md"
    assert docs.page("") == "index.md"
    with pytest.raises(DocsError, match=r"expected one page named 'clie', found none; the "
                                        r"pages: .*reference/cli"):
        docs.page("clie")


def test_the_navigation_is_mkdocs_yml_s():
    nav = read_nav("site_name: x\nnav:\n  - Home: index.md\n  - Tutorials:\n"
                   "      - Run it: tutorials/run.md\n  - Benchmarks: benchmarks.md\n"
                   "extra: 1\n  - Not: nav.md\n")
    assert nav == [(0, "Home", "index.md"), (0, "Tutorials", None),
                   (1, "Run it", "tutorials/run.md"), (0, "Benchmarks", "benchmarks.md")]


@pytest.mark.compat("cli/heronbridge docs")
@pytest.mark.integration
def test_the_verb_prints_a_page_in_the_terminal():
    done = subprocess.run([HERONBRIDGE, "docs", "reference/cli", "--text"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "heronbridge run" in done.stdout and "{#heronbridge-run}" not in done.stdout
