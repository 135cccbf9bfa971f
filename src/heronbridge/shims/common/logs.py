"""Where a component's log files go, and how its log lines reach its task's log.

A streamparse project's config.json names a log folder (its env's `log.path`, which sparse
passes as `pystorm.log.path`): pystorm opens a rotating file there for each component,
and dies if it cannot. The folder exists on the project's Storm workers, rarely on the
machine trying the project here. So the loader checks it before anything starts,
creating it only where its parent exists (see `unusable`); when it cannot be used, the
plan marks it (`keys.LOG_FALLBACK`) and each task gives its components its own log
folder instead, with the same file names, level, size and backups. A task checks
again what the loader could not (a relative path is relative to the component's working
folder, and created there).

Without a log path pystorm sends each record to Storm already formatted (its own prefix,
`pystorm.log.format`): the task log gets those lines as they come, with no second prefix.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from heronbridge.runtime.config import LOG_BACKUP_COUNT, LOG_MAX_BYTES
from heronbridge.runtime.logfiles import LOG_DIR_ENV

from . import keys

PATH = "pystorm.log.path"
FILE = "pystorm.log.file"
LEVEL = "pystorm.log.level"
MAX_BYTES = "pystorm.log.max_bytes"
BACKUP_COUNT = "pystorm.log.backup_count"
FORMAT = "pystorm.log.format"

# pystorm's defaults (pystorm/component.py), for the components it does not set up.
DEFAULT_FILE = "pystorm_{topology_name}_{component_name}_{task_id}_{pid}.log"
DEFAULT_MAX_BYTES = 1_000_000
DEFAULT_BACKUP_COUNT = 10
FILE_FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
STORM_FORMAT = "%(asctime)s - %(name)s - %(message)s"  # records sent to Storm
LEVELS = {"critical": logging.CRITICAL, "error": logging.ERROR, "warning": logging.WARNING,
          "warn": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG,
          "trace": logging.DEBUG}

log = logging.getLogger("heronbridge.storm.logs")


def unusable(folder: str | Path, nested: bool = False) -> str | None:
    """Why log files cannot be written in `folder` (None when they can), after creating
    it if it is missing and may be created: a folder a project names on its Storm
    workers (`/var/log/storm/streamparse`, `/Users/...`) is created here only where its
    parent exists, and never at the file system's root, so that running a project (as
    root, say) leaves no folders about the machine. `nested`: a folder inside the task's
    own working folder, created with any missing parents."""
    path = Path(folder)
    try:
        if nested:
            path.mkdir(parents=True, exist_ok=True)
        elif not path.is_dir():
            if not path.parent.exists():
                return f"its parent folder {str(path.parent)!r} does not exist here"
            if path.parent == Path(path.anchor):
                return "it would be a new folder at the file system's root"
            path.mkdir(exist_ok=True)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(folder, os.W_OK | os.X_OK):
        return "not writable"
    return None


def check_plan(plan: Any) -> list[tuple[str, str]]:
    """Check the absolute log paths a plan configures (topology-wide or a component's
    own); mark each one that cannot be used. Returns (path, why) for those. The size and
    backups given for the log files (`log.max_bytes`, `log.backup_count` in config.json)
    apply to the task logs too, unless the runtime's own keys say otherwise."""
    refused: dict[str, str] = {}
    for config in (plan.config, *(c.config for c in plan.components.values())):
        for ours, runtime_key, least in ((MAX_BYTES, LOG_MAX_BYTES, 1024),
                                         (BACKUP_COUNT, LOG_BACKUP_COUNT, 1)):
            value = config.get(ours)
            if isinstance(value, int) and value >= least:  # 0: pystorm's "never rotate"
                config.setdefault(runtime_key, value)
        path = config.get(PATH)
        if not isinstance(path, str) or not os.path.isabs(path):
            continue
        if path not in refused:
            why = unusable(path)
            if why is None:
                continue
            refused[path] = why
        config[keys.LOG_FALLBACK] = path
    return list(refused.items())


def task_log_dir() -> Path:
    """The folder of this task's own log (logs/task-ID-COMPONENT.log), as its executor
    says; else where its stderr goes if that is a file; else the working folder."""
    told = os.environ.get(LOG_DIR_ENV)
    if told:
        return Path(told)
    try:
        target = Path(os.readlink(f"/proc/self/fd/{sys.stderr.fileno()}"))
    except (OSError, ValueError, AttributeError):
        return Path.cwd()
    return target.parent if target.is_file() else Path.cwd()


def log_folder(config: dict[str, Any], cwd: str, where: str) -> str | None:
    """The folder a component's log files go to (None: it has none, pystorm sends its
    records to Storm). `cwd`: the component's working folder."""
    path = config.get(PATH)
    if not path:
        return None
    return _folder(str(path), config.get(keys.LOG_FALLBACK) == path, cwd, where)


@functools.cache  # a task's hosts may ask twice (a traced heronpy component): warn once
def _folder(path: str, refused: bool, cwd: str, where: str) -> str:
    if refused:  # the loader warned, naming this folder
        return str(task_log_dir())
    why = unusable(os.path.join(cwd, path), nested=not os.path.isabs(path))
    if why is None:
        return path
    folder = task_log_dir()
    log.warning("%s: the log path %r (%s) cannot be used here: %s; the component's log "
                "files go to %s instead", where, path, PATH, why, folder)
    return str(folder)


def level(config: dict[str, Any]) -> int:
    """pystorm's reading of the log level: `pystorm.log.level`, DEBUG under topology.debug."""
    if config.get("topology.debug"):
        return logging.DEBUG
    return LEVELS.get(str(config.get(LEVEL, "info")).lower(), logging.INFO)


def file_handler(config: dict[str, Any], folder: str, topology: str, component: str,
                 task: int) -> logging.Handler:
    """A rotating log file as pystorm opens one: its name, size, backups and format."""
    name = str(config.get(FILE) or DEFAULT_FILE).format(
        topology_name=topology, component_name=component, task_id=task, pid=os.getpid())
    handler = RotatingFileHandler(os.path.join(folder, name),
                                  maxBytes=int(config.get(MAX_BYTES, DEFAULT_MAX_BYTES)),
                                  backupCount=int(config.get(BACKUP_COUNT,
                                                             DEFAULT_BACKUP_COUNT)))
    handler.setFormatter(logging.Formatter(config.get(FORMAT) or FILE_FORMAT))
    handler.setLevel(level(config))
    return handler


def pystorm_lines() -> Callable[[int, Any], None]:
    """How a pystorm component's log messages reach the task log: as pystorm formatted
    them, whatever their level (pystorm kept those its level asks for), each one line on
    stderr, with no second pass through logging (a component may log every tuple). An
    instance's stderr is its pipe to the executor, buffered and flushed once a turn
    (runtime/instance/__main__.py)."""
    def write(level: int, message: Any) -> None:
        try:
            sys.stderr.write(f"{message}\n")
        except (OSError, ValueError):  # the pipe has gone: as logging, the task goes on
            pass

    return write


def prefixed_log(component: Any) -> Callable[..., None]:
    """A pystorm component's `log()`, which sends its message bare (Storm's worker log
    prefixes it), with the prefix pystorm gives the records it sends to Storm."""
    send = component.log

    def log_message(message: Any, level: str | None = None) -> None:
        conf = component.storm_conf or {}
        name = component.logger.name if component.logger is not None else "pystorm"
        record = logging.LogRecord(name, LEVELS.get(level or "info", logging.INFO), "", 0,
                                   "%s", (message,), None)
        send(logging.Formatter(conf.get(FORMAT) or STORM_FORMAT).format(record), level)

    return log_message
