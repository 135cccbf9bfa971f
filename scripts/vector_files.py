"""The command line the vector scripts share: write the vectors file, or with --check
only say whether the checked-in one is stale (exit 1), as the tests ask."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def main(out: Path, text: Callable[[], str], description: str,
         argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="only report a stale file")
    if parser.parse_args(argv).check:
        if not out.is_file() or out.read_text() != text():
            print(f"stale: {out}")
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text())
    return 0
