"""Write tests/durations.json (which tests/conftest.py orders xdist's work units by) from
the output of a CI run whose pytest runs had --durations=30:
`python tests/durations.py TOX_LOG`."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"([\d.]+)s (?:call|setup|teardown)\s+(.+)$")
AT_LEAST = 3.0  # seconds: shorter tests count as the conftest's UNKNOWN_SECS


def main(log: str) -> None:
    seconds: dict[str, float] = defaultdict(float)
    for line in Path(log).read_text(errors="replace").splitlines():
        found = LINE.match(line)
        if found:
            seconds[found.group(2).split("@")[0]] += float(found.group(1))
    table = {k: round(v) for k, v in sorted(seconds.items()) if v >= AT_LEAST}
    Path(__file__).with_name("durations.json").write_text(json.dumps(table, indent=0) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
