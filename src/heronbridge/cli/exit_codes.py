"""What `heronbridge`'s exit code tells a script or a CI job, as `sparse`'s and `storm`'s
users check theirs: one table, which `run --help` shows and the CLI reference lists."""

from __future__ import annotations

import textwrap

from heronbridge.runtime.failures import STAYED_UP_SECS

OK = 0
ERROR = 1  # said on stderr; main() returns it for every HeronbridgeError
USAGE = 2  # argparse's own
TOPOLOGY_FAILED = 3

# (code, the verbs it applies to, what it means), in the order the reference lists them.
TABLE = [
    (OK, "every verb", "done"),
    (OK, "`run`", "the topology ran until `-t`, Ctrl-C or `kill`, and every task stayed up "
                  "(one that crashed came back and ran on)"),
    (ERROR, "every verb", "an error, said on stderr with the topology, component and task, "
                          "what was expected and what was received: a project, topology or "
                          "option that is wrong, a topology that could not start (`run`, "
                          "`submit`: a task died 3 times before it started)"),
    (ERROR, "`conform`", "a check failed"),
    (ERROR, "`migrate --check`", "a file would change"),
    (USAGE, "every verb", "the command line is wrong (its usage is printed)"),
    (USAGE, "`migrate`", "some files could not be migrated, the others were (3: that, and "
                         "`--check` found changes)"),
    (TOPOLOGY_FAILED, "`run`", "the topology ran, but user code kept raising and a task never "
                               f"stayed up (it crashed and none of its runs lasted "
                               f"{STAYED_UP_SECS:.0f} s); each such task is named on stderr"),
]


def epilog(verb: str) -> str:
    """The exit codes a verb's --help lists: for each code, what it means for this verb
    when the table says, else for every verb."""
    meanings: dict[int, str] = {}
    for code, verbs, meaning in TABLE:
        if verbs == f"`{verb}`" or (verbs == "every verb" and code not in meanings):
            meanings[code] = meaning
    rows = sorted(meanings.items())
    return "exit codes:\n" + "\n".join(
        textwrap.fill(meaning.replace("`", ""), 88, initial_indent=f"  {code}  ",
                      subsequent_indent="     ") for code, meaning in rows)


def markdown() -> str:
    return "| code | verbs | meaning |\n|---|---|---|\n" + "".join(
        f"| {code} | {verbs} | {meaning} |\n" for code, verbs, meaning in TABLE)
