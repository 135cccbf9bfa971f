"""Known divergences: a failing verdict that the scenario explains becomes "known
divergence", with the scenario's reason; a declared divergence that explains nothing is
reported too, since it may hide the next real failure."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from ..scenario import CHOSEN, Divergence
from .results import FAIL, INFO, KNOWN, Verdict


def apply(verdicts: list[Verdict], divergences: Iterable[Divergence],
          checks_run: Iterable[str]) -> list[Verdict]:
    """Mark the failures each divergence covers (by check, and subject glob), in place,
    and append an info verdict per divergence of the analysis's checks that covered none.
    A divergence's `system` is shown with its reason; the verdicts do not say which system
    departed, so it does not narrow the match."""
    ran = set(checks_run)
    unused = []
    for divergence in divergences:
        if divergence.check not in CHOSEN:
            continue  # another part of the suite judges it (e.g. whether the runs finished)
        matched = False
        for verdict in verdicts:
            if verdict.verdict in (FAIL, KNOWN) and verdict.check == divergence.check and \
                    fnmatch.fnmatchcase(verdict.subject, divergence.subject):
                if verdict.verdict == FAIL:
                    verdict.verdict = KNOWN
                    verdict.detail = _reason(divergence) + (
                        f" (observed: {verdict.detail})" if verdict.detail else "")
                matched = True
        if not matched:
            why = ("its check did not run" if divergence.check not in ran
                   else "no failing verdict matches it")
            unused.append(Verdict(divergence.check, divergence.subject, "", "", INFO,
                                  f"declared divergence unused ({why}): "
                                  f"{_reason(divergence)}"))
    return verdicts + unused


def _reason(divergence: Divergence) -> str:
    return (f"{divergence.system} departs: {divergence.reason}" if divergence.system
            else divergence.reason)
