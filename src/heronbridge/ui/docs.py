"""The docs site as an installed heronbridge has it, for `heronbridge docs`: the Markdown
pages and images a wheel carries (ui/docs_site/, copied from the checkout's docs/ while
the wheel built, with mkdocs.yml for the order of the pages), or an editable install's
checkout docs/; each page rendered to HTML on request by markdown-it (the parser rich
already brings) and served on loopback. The Markdown, not mkdocs' built site: mkdocs is
only the `docs` extra, and its theme would add megabytes to the wheel."""

from __future__ import annotations

import html
import mimetypes
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

from heronbridge.errors import HeronbridgeError

PACKAGED = Path(__file__).resolve().with_name("docs_site")
CHECKOUT = Path(__file__).resolve().parents[3]
FILES = {".png", ".svg", ".jpg", ".jpeg", ".gif", ".css"}
NAV_LINE = re.compile(r"^(?P<indent>\s*)- (?P<title>[^:]+):\s*(?P<page>\S+\.md)?\s*$")
CUSTOM_ID = re.compile(r"\s*\{#(?P<id>[\w-]+)\}\s*$")


class DocsError(HeronbridgeError):
    """The docs cannot be found or a page named does not exist."""


@dataclass(frozen=True)
class Site:
    pages: Path  # the folder of the Markdown pages
    nav: list[tuple[int, str, str | None]]  # (depth, title, page) in mkdocs.yml's order

    def page(self, name: str) -> str:
        """A page by its path ("reference/cli.md", "reference/cli") or, when only one
        page has it, its file name ("cli")."""
        wanted = name.strip("/").removesuffix(".md")
        if not wanted:
            return "index.md"
        every = sorted(p.relative_to(self.pages).as_posix()
                       for p in self.pages.rglob("*.md"))
        found = [p for p in every if p.removesuffix(".md") == wanted] or \
            [p for p in every if p.removesuffix(".md").rsplit("/", 1)[-1] == wanted]
        if len(found) != 1:
            names = ", ".join(p.removesuffix(".md") for p in every)
            msg = (f"docs: expected one page named {name!r}, found {found or 'none'}; "
                   f"the pages: {names}")
            raise DocsError(msg)
        return found[0]


def site() -> Site:
    """The wheel's pages, else the checkout's (an editable install)."""
    for pages, nav in ((PACKAGED, PACKAGED / "mkdocs.yml"),
                       (CHECKOUT / "docs", CHECKOUT / "mkdocs.yml")):
        if nav.is_file() and (pages / "index.md").is_file():
            return Site(pages, read_nav(nav.read_text()))
    msg = (f"docs: expected the pages this heronbridge carries in {str(PACKAGED)!r}, found "
           "none (an install from a wheel carries them)")
    raise DocsError(msg)


def read_nav(mkdocs_yml: str) -> list[tuple[int, str, str | None]]:
    """mkdocs.yml's `nav:` entries: (depth, title, page or None for a section)."""
    lines = mkdocs_yml.split("\nnav:\n", 1)[1].splitlines() if "\nnav:\n" in mkdocs_yml else []
    out = []
    for line in lines:
        if line and not line[0].isspace():
            break
        match = NAV_LINE.match(line)
        if match:
            out.append((len(match["indent"]) // 4, match["title"].strip(), match["page"]))
    return out


def slug(text: str) -> str:
    """A heading's anchor as mkdocs' toc makes it."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def render(site: Site, page: str) -> str:
    """One page as an HTML document, the site's navigation beside it."""
    md = _parser()
    tokens = md.parse((site.pages / page).read_text())
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            custom = CUSTOM_ID.search(inline.content)
            if custom is not None:
                inline.content = inline.content[:custom.start()]
                last = inline.children[-1] if inline.children else None
                if last is not None and last.type == "text":
                    last.content = CUSTOM_ID.sub("", last.content)
            token.attrSet("id", custom["id"] if custom else slug(inline.content))
    body = md.renderer.render(tokens, md.options, {})
    depth = page.count("/")
    up = "../" * depth
    nav = []
    for level, title, target in site.nav:
        label = html.escape(title)
        if target is None:
            nav.append(f'<li class="section l{level}">{label}</li>')
        else:
            here = ' class="here"' if target == page else ""
            nav.append(f'<li class="l{level}"><a{here} href="{up}{html.escape(target)}">'
                       f"{label}</a></li>")
    title = next((t for _, t, p in site.nav if p == page), page)
    return PAGE.format(title=html.escape(title), nav="\n".join(nav), body=body)


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{title} - heronbridge</title>
<style>
body {{ margin: 0; font: 15px/1.55 system-ui, sans-serif; color: #1d1d1f; display: flex; }}
nav {{ width: 17rem; flex: none; padding: 1rem; background: #f4f5f7; min-height: 100vh;
       box-sizing: border-box; }}
nav ul {{ list-style: none; padding: 0; margin: 0; }}
nav li {{ margin: .15rem 0; }} nav li.section {{ margin-top: .8rem; font-weight: 600; }}
nav li.l1 {{ padding-left: .8rem; }} nav a {{ color: #24527a; text-decoration: none; }}
nav a.here {{ font-weight: 600; color: #000; }}
main {{ max-width: 56rem; padding: 1rem 2.5rem 4rem; overflow-x: auto; }}
code, pre {{ font: 13px/1.45 ui-monospace, monospace; background: #f4f5f7; }}
pre {{ padding: .7rem; overflow-x: auto; }} code {{ padding: 0 .2rem; }}
table {{ border-collapse: collapse; margin: 1rem 0; }}
th, td {{ border: 1px solid #d0d4da; padding: .25rem .5rem; vertical-align: top; }}
img {{ max-width: 100%; }}
</style></head>
<body><nav><ul>
{nav}
</ul></nav>
<main>
{body}
</main></body></html>
"""


class DocsServer:
    """The pages over HTTP on loopback: /PAGE.md rendered, images as they are."""

    def __init__(self, docs: Site, host: str = "127.0.0.1", port: int = 0) -> None:
        self.site = docs
        handler = type("Handler", (_Handler,), {"site": docs})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                       name="docs-server")

    @property
    def url(self) -> str:
        host = str(self.httpd.server_address[0])
        return f"http://{host}:{self.httpd.server_port}/"

    def start(self) -> DocsServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = unquote(urlsplit(self.path).path).lstrip("/") or "index.md"
        if path.endswith("/"):
            path += "index.md"
        root = self.site.pages.resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root) or not target.is_file() or \
                (target.suffix != ".md" and target.suffix not in FILES):
            self._send(404, "text/plain; charset=utf-8",
                       f"no such page: /{path}\n".encode())
            return
        if target.suffix == ".md":
            body = render(self.site, target.relative_to(root).as_posix()).encode()
            self._send(200, "text/html; charset=utf-8", body)
        else:
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            self._send(200, kind, target.read_bytes())

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - its signature
        pass
