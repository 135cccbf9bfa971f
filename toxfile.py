"""tox's inline plugin: where each env's minutes went, printed after every env and as one
table when tox ends, so a change that costs CI minutes shows in the log of that change.

CI's budget for the whole suite is 30 minutes on two cores (tox.ini's header)."""

from __future__ import annotations

import atexit
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tox.plugin import impl

if TYPE_CHECKING:
    from tox.execute.api import Outcome
    from tox.tox_env.api import ToxEnv

BUDGET_SECS = 30 * 60
STARTED = time.monotonic()


@dataclass
class EnvTimes:
    first_seen: float
    commands_started: float | None = None
    ended: float | None = None
    steps: list[tuple[str, float, int]] = field(default_factory=list)  # (command, s, code)


ENVS: dict[str, EnvTimes] = {}


def _times(tox_env: ToxEnv) -> EnvTimes:
    return ENVS.setdefault(tox_env.name, EnvTimes(time.monotonic()))


def _short(cmd: list[str]) -> str:
    """A command as a reader recognises it: the program and its first arguments."""
    words = [w.rsplit("/", 1)[-1] if i == 0 else w for i, w in enumerate(cmd)]
    text = " ".join(words)
    return text if len(text) <= 70 else text[:67] + "..."


@impl
def tox_on_install(tox_env: ToxEnv, arguments: object, section: str, of_type: str) -> None:
    _times(tox_env)


@impl
def tox_before_run_commands(tox_env: ToxEnv) -> None:
    _times(tox_env).commands_started = time.monotonic()


@impl
def tox_after_run_commands(tox_env: ToxEnv, exit_code: int, outcomes: list[Outcome]) -> None:
    times = _times(tox_env)
    times.ended = time.monotonic()
    times.steps = [(_short(list(o.cmd)), o.elapsed, o.exit_code) for o in outcomes]
    print(f"[times] {tox_env.name}: {_env_line(times)}", flush=True)


def _env_line(times: EnvTimes) -> str:
    total = (times.ended or time.monotonic()) - times.first_seen
    install = (times.commands_started or times.first_seen) - times.first_seen
    steps = ", ".join(f"{secs:.0f} s {cmd!r}" + ("" if code == 0 else f" (exit {code})")
                      for cmd, secs, code in times.steps)
    return f"{total:.0f} s: install {install:.0f} s; {steps}"


def _summary() -> None:
    if not ENVS:
        return
    wall = time.monotonic() - STARTED
    width = max(len(name) for name in ENVS)
    lines = ["", "[times] where the suite's minutes went:"]
    for name, times in ENVS.items():
        if times.ended is None:  # the wheel's build env: counted in the first env's install
            continue
        total = (times.ended or time.monotonic()) - times.first_seen
        lines.append(f"[times]   {name:<{width}}  {total:7.0f} s  {total / 60:5.1f} min")
    over = "over" if wall > BUDGET_SECS else "within"
    lines.append(f"[times]   {'all':<{width}}  {wall:7.0f} s  {wall / 60:5.1f} min "
                 f"({over} the {BUDGET_SECS // 60}-minute budget)")
    print("\n".join(lines), flush=True)


atexit.register(_summary)
