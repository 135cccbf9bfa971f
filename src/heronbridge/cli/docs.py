"""`heronbridge docs [PAGE]`: the docs site this heronbridge carries, served on loopback
(or one page printed in the terminal), so every --help's link opens from a pip install."""

from __future__ import annotations

import argparse
import re
import signal
import threading
from typing import Any

from .options import Parents
from .terminal import console, out

CUSTOM_ID = re.compile(r"[ \t]*\{#[\w-]+\}[ \t]*$", re.M)  # a heading's own anchor


def add_verb(verbs: Any, parents: Parents) -> None:
    docs = verbs.add_parser(
        "docs", help="serve the docs this heronbridge carries, on loopback",
        description="Serve the docs site this heronbridge carries (tutorials, how-to guides, "
                    "reference, the compatibility matrix) on 127.0.0.1 and print the address "
                    "of PAGE; Ctrl-C stops it. PAGE is a page's path (reference/cli, "
                    "tutorials/run-streamparse) or its name when one page has it (cli), with "
                    "an optional #anchor, as every --help's last line gives it.")
    docs.add_argument("page", nargs="?", default="", metavar="PAGE",
                      help="the page to print the address of (default: the home page)")
    docs.add_argument("--port", type=int, default=0,
                      help="port on 127.0.0.1 (default: a free one)")
    docs.add_argument("--text", action="store_true",
                      help="print PAGE in the terminal instead of serving the site")
    docs.set_defaults(func=cmd_docs)


def cmd_docs(args: argparse.Namespace) -> int:
    from rich.markdown import Markdown

    from heronbridge.ui.docs import DocsServer, site

    docs = site()
    name, _, anchor = args.page.partition("#")
    page = docs.page(name)
    if args.text:
        text = CUSTOM_ID.sub("", (docs.pages / page).read_text())
        out.print(Markdown(text))
        return 0
    server = DocsServer(docs, port=args.port).start()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    console.print(f"heronbridge docs: {server.url}{page}{'#' + anchor if anchor else ''} "
                  f"(Ctrl-C stops it)", markup=False, highlight=False)
    try:
        stop.wait()
    finally:
        server.close()
    return 0
