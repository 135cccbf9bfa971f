"""The command line's two consoles and its `-o KEY=VALUE` options."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

from ..errors import HeronbridgeError

# Errors and status never wrap (logs get grepped); tables use a wide page off a terminal.
console = Console(stderr=True, soft_wrap=True)
out = Console(width=None if sys.stdout.isatty() else 200)


def parse_option(text: str) -> tuple[str, Any]:
    """`-o key=value`: the value is read as JSON when it parses, else kept as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        msg = f"-o expects KEY=VALUE, received {text!r}"
        raise HeronbridgeError(msg)
    try:
        return key, json.loads(raw)
    except json.JSONDecodeError:
        return key, raw


def parse_options(texts: list[str] | None) -> dict[str, Any]:
    return dict(parse_option(t) for t in texts or [])
