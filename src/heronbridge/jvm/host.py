"""The JVM task host's jar, which every Java task (and a Python task's Java custom
groupings) runs in: in an installed wheel it sits beside this module, built by Maven
while the wheel built; in an editable install it is built from the checkout's jvm/ on
first use (with a progress line), and again when those sources change."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from . import JvmError, build

PACKAGE = Path(__file__).resolve().parent.parent  # heronbridge
PACKAGED = Path(__file__).resolve().with_name(build.JAR)


def host_jar(log: Callable[[str], None] | None = None) -> Path:
    """The jar: the wheel's, else this checkout's (built now if it is missing or stale);
    `log` hears the progress line of a build."""
    if PACKAGED.is_file():
        return PACKAGED
    checkout = build.checkout_of(PACKAGE)
    if checkout is None:
        msg = (f"Java components run in the JVM task host: expected its jar at "
               f"{str(PACKAGED)!r}, found none (this heronbridge was installed without "
               "it: install a wheel built with Maven and Java 17, e.g. `pip wheel .` in a "
               "checkout, or install the checkout in editable mode, which builds it)")
        raise JvmError(msg)
    return build.ensure(checkout, tests=False, say=log or _say)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
