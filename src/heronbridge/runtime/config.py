"""Topology configuration keys the runtime reads, declared once each, and a typed view.

Each key is one `Key` in KEYS: its name, type, default, minimum, what it means and its
Storm or Heron counterpart; `TopologyConfig.read` checks and converts a topology's (or a
component's merged) config by that table, and `reference()` renders it as the docs'
configuration reference (docs/reference/config.md). Keys that Heron and Storm share keep
their `topology.*` names; knobs that only this runtime has live under `heronbridge.*`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from .errors import ConfigError, where

ATMOST_ONCE = "ATMOST_ONCE"
ATLEAST_ONCE = "ATLEAST_ONCE"
EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"  # checkpoints and rollback (runtime/checkpoint)
MODES = (ATMOST_ONCE, ATLEAST_ONCE, EFFECTIVELY_ONCE)
SERIALIZERS = ("msgpack", "json", "pickle")

# Types, as the table and the errors name them.
FLAG = "flag"  # true or false (also "true"/"false")
INT = "int"
NUMBER = "number"  # an int or a float (also as a string)
TEXT = "text"
CHOICE = "choice"


@dataclass(frozen=True)
class Key:
    name: str
    type: str
    default: Any
    doc: str
    counterpart: str = ""  # the Storm or Heron key it stands for, if any
    minimum: float | None = None
    expects: str = ""  # what an error says was expected
    field: str = ""  # the TopologyConfig field it fills ("" when read apart)
    per: float = 1.0  # field = value / per (milliseconds to seconds: 1000)
    nullable: bool = False  # null (None) is a value: "none" in the table
    choices: tuple[str, ...] = ()
    shown: str = ""  # the default as the table shows it, when not the value itself


KEYS: dict[str, Key] = {}


def key(name: str, type: str, default: Any, doc: str, **more: Any) -> str:  # noqa: A002
    """Declare a key; returns its name (the module constant)."""
    KEYS[name] = Key(name, type, default, doc, **more)
    return name


RELIABILITY_MODE = key(
    "topology.reliability.mode", CHOICE, ATMOST_ONCE,
    "`ATLEAST_ONCE`: XOR acking; `EFFECTIVELY_ONCE`: checkpoints and rollback",
    counterpart="Heron's; Storm: `topology.acker.executors` 0 or more", choices=MODES,
    field="reliability",
    # Storm acks unless its ackers are set to 0: so does a project loaded from Storm's side.
    shown="`ATLEAST_ONCE` for a streamparse project or a Storm topology (Storm acks unless "
          "`topology.acker.executors` is 0); `ATMOST_ONCE` for a heronpy or runtime "
          "topology (Heron's default)")
# Effectively-once: Heron's keys (Heron spells the interval `...interval.seconds`; both are
# read), then where checkpoints are stored, how many consistent ones are kept, and how
# much a task buffers while its input markers align before it gives that checkpoint up.
CHECKPOINT_INTERVAL_SECS = key(
    "topology.stateful.checkpoint.interval.secs", NUMBER, 300,
    "between checkpoints (Heron's `...interval.seconds` is read too)",
    counterpart="Heron's `topology.stateful.checkpoint.interval.seconds`", minimum=0.001,
    expects="seconds > 0", field="checkpoint_interval_secs")
CHECKPOINT_INTERVAL_HERON = "topology.stateful.checkpoint.interval.seconds"
START_CLEAN = key(
    "topology.stateful.start.clean", FLAG, False,
    "at submit, forget the topology's checkpoints: start from empty state",
    counterpart="Heron's", field="start_clean")
CHECKPOINT_ROOT = key(
    "heronbridge.checkpoint.root", TEXT, "~/.herondata/checkpoints",
    "where state is saved (shared by every host when there are several)",
    expects="a folder path", field="checkpoint_root")
CHECKPOINTS_KEPT = key(
    "heronbridge.checkpoint.kept", INT, 5, "consistent checkpoints kept", minimum=1,
    expects="an integer >= 1", field="checkpoints_kept")
CHECKPOINT_BUFFER_BYTES = key(
    "heronbridge.checkpoint.buffer.bytes", INT, 100 << 20,
    "held by a task while its input markers align before it gives that checkpoint up",
    counterpart="Heron's `heron.streammgr.stateful.buffer.size.mb`", minimum=0,
    expects="an integer >= 0 (bytes)", field="checkpoint_buffer_bytes", shown="100 MiB")
MESSAGE_TIMEOUT_SECS = key(
    "topology.message.timeout.secs", NUMBER, 30, "a tree not completed in time fails",
    counterpart="Storm's and Heron's", minimum=0.001, expects="seconds > 0",
    field="message_timeout_secs")
ENABLE_MESSAGE_TIMEOUTS = key(
    "topology.enable.message.timeouts", FLAG, True, "", counterpart="Storm's and Heron's",
    field="message_timeouts")
MAX_SPOUT_PENDING = key(
    "topology.max.spout.pending", INT, None, "tracked tuples in flight per spout task",
    counterpart="Storm's and Heron's", minimum=1, expects="an integer >= 1 or null",
    nullable=True, field="max_spout_pending")
TICK_TUPLE_FREQ_SECS = key(
    "topology.tick.tuple.freq.secs", NUMBER, None,
    "tick tuples to bolts (`__system`/`__tick`)", counterpart="Storm's and Heron's",
    minimum=0.001, expects="seconds > 0 or null", nullable=True, field="tick_freq_secs")
MULTILANG_WAKE_SECS = key(
    "heronbridge.multilang.wake.secs", NUMBER, None,
    "a multilang bolt holding input tuples it has neither acked nor failed gets a tick "
    "tuple this often (acked, each, before the next) until it holds none: its "
    "`process_tick` serves what it waits for, as a Kafka producer's delivery reports "
    "(in-process, the component's `wake()` does)", minimum=0.001,
    expects="seconds > 0 or null", nullable=True, field="multilang_wake_secs")
CONTAINERS = key(
    "topology.stmgrs", INT, 1, "containers", counterpart="Heron's; Storm: `topology.workers`",
    minimum=1, expects="an integer >= 1", field="containers")
DEBUG = key("topology.debug", FLAG, False, "debug logging in every task",
            counterpart="Storm's and Heron's", field="debug")
SERIALIZER = key("heronbridge.serializer", CHOICE, "msgpack",
                 "how tuple values travel (`json`: as Storm's multilang shows them)",
                 choices=SERIALIZERS, field="serializer")
BACKPRESSURE_HIGH_BYTES = key(
    "heronbridge.backpressure.high.watermark.bytes", INT, 4 << 20,
    "unsent bytes that start backpressure",
    counterpart="Heron's `heron.streammgr.network.backpressure.highwatermark.mb`",
    minimum=1024, expects="an integer >= 1024", field="bp_high_bytes", shown="4 MiB")
BACKPRESSURE_LOW_BYTES = key(
    "heronbridge.backpressure.low.watermark.bytes", INT, 1 << 20, "and that end it",
    counterpart="Heron's `heron.streammgr.network.backpressure.lowwatermark.mb`",
    minimum=0, expects="an integer >= 0", field="bp_low_bytes", shown="1 MiB")
HELD_MAX_BYTES = key(
    "heronbridge.held.max.bytes", INT, 16 << 20,
    "frames a stream manager holds for tasks that are down (see [When a process dies]"
    "(#when-a-process-dies)); 0: hold none, their trees fail at their timeout", minimum=0,
    expects="an integer >= 0 (bytes)", field="held_max_bytes", shown="16 MiB")
METRICS_INTERVAL_SECS = key(
    "heronbridge.metrics.interval.secs", NUMBER, 1.0, "how often every process reports",
    minimum=0.01,
    expects="seconds > 0", field="metrics_interval_secs")
HEARTBEAT_INTERVAL_SECS = key(
    "heronbridge.heartbeat.interval.secs", NUMBER, 2.0,
    "a stream manager's heartbeat to the topology master",
    counterpart="Heron's `heron.streammgr.tmanager.heartbeat.interval.sec`", minimum=0.01,
    expects="seconds > 0", field="heartbeat_interval_secs")
XOR_BUCKETS = key(
    "heronbridge.acking.buckets", INT, 3,
    "rotating buckets of tracked trees: a tree expires between the timeout and "
    "timeout x n/(n-1)", counterpart="Heron's `heron.streammgr.xormgr.rotatingmap.nbuckets`",
    minimum=2, expects="an integer >= 2", field="xor_buckets")
SPOUT_BURST = key(
    "heronbridge.spout.burst", INT, 1024, "`next_tuple` calls in one burst, at most",
    minimum=1, expects="an integer >= 1", field="spout_burst")
# A spout's burst of next_tuple calls, and a bolt's run of execute calls, end after this
# long or (spouts) this many bytes emitted, and what they emitted is sent.
EMIT_BATCH_MS = key(
    "heronbridge.emit.batch.time.ms", NUMBER, 5.0, "a spout's burst ends after this long",
    counterpart="Heron's `heron.instance.emit.batch.time.ms`", minimum=0.001,
    expects="milliseconds > 0", field="emit_batch_secs", per=1000)
EMIT_BATCH_BYTES = key(
    "heronbridge.emit.batch.size.bytes", INT, 32 << 10, "or after about this many bytes",
    counterpart="Heron's `heron.instance.emit.batch.size.bytes`", minimum=1,
    expects="an integer >= 1 (bytes)", field="emit_batch_bytes", shown="32 KiB")
EXECUTE_BATCH_MS = key(
    "heronbridge.execute.batch.time.ms", NUMBER, 5.0,
    "a bolt sends what a long input batch produced this often",
    counterpart="Heron's `heron.instance.execute.batch.time.ms`", minimum=0.001,
    expects="milliseconds > 0", field="execute_batch_secs", per=1000)
# Without topology.max.spout.pending, a spout keeps about this much latency in flight
# (runtime/instance/window.py); 0: no limit, as Storm without max.spout.pending.
LATENCY_TARGET_MS = key(
    "heronbridge.spout.latency.target.ms", NUMBER, 20.0,
    "without `topology.max.spout.pending`, a spout keeps about this much latency in "
    "flight; 0: no limit", minimum=0, expects="milliseconds >= 0",
    field="latency_target_secs", per=1000)
RESTART_BACKOFF_SECS = key(
    "heronbridge.restart.backoff.secs", NUMBER, 0.5,
    "first wait before a dead process restarts (see [When a process dies]"
    "(#when-a-process-dies))", minimum=0, expects="seconds >= 0",
    field="restart_backoff_secs")
SCHEDULER_ORPHAN_SECS = key(
    "heronbridge.scheduler.orphan.secs", NUMBER, 600,
    "a topology's scheduler that cannot reach the state manager this long stops the "
    "topology by itself (nobody could reach it to kill it); null: never", minimum=1,
    expects="seconds >= 1 or null", nullable=True, field="scheduler_orphan_secs")
LOG_MAX_BYTES = key(
    "heronbridge.log.max.bytes", INT, 10 << 20,
    "a process log or `metrics.jsonl` rotates past this size (a streamparse env's "
    "`log.max_bytes` sets it)", counterpart="pystorm's `log.max_bytes`", minimum=1024,
    expects="an integer >= 1024 (bytes)", field="log_max_bytes", shown="10 MiB")
LOG_BACKUP_COUNT = key(
    "heronbridge.log.backup.count", INT, 5, "rotated files kept (`log.backup_count`)",
    counterpart="pystorm's `log.backup_count`", minimum=1, expects="an integer >= 1",
    field="log_backup_count")
HOST = key(
    "heronbridge.host", TEXT, None,
    "address stream managers and the master listen on (`$HERONBRIDGE_HOST` wins)",
    nullable=True, shown="127.0.0.1")
# PEM files: this host's certificate and key, and the CA that signed every host's; all
# three turn TLS on for TCP links.
TLS_CERT = key("heronbridge.tls.cert", TEXT, None,
               "PEM files: all three turn on mutual TLS for TCP links", nullable=True)
TLS_KEY = key("heronbridge.tls.key", TEXT, None, "this host's key (with `.cert`, `.ca`)",
              nullable=True)
TLS_CA = key("heronbridge.tls.ca", TEXT, None, "the CA that signed every host's certificate",
             nullable=True)
TLS_KEYS = (TLS_CERT, TLS_KEY, TLS_CA)

DEFAULTS: dict[str, Any] = {k.name: k.default for k in KEYS.values()}


def _expect(conf: dict, k: Key, loc: str) -> Any:
    value = conf.get(k.name, k.default)
    if value is None and k.nullable:
        return None
    kinds: tuple[type, ...] = {INT: (int,), NUMBER: (int, float), TEXT: (str,)}[k.type]
    if isinstance(value, str) and int in kinds:
        # Storm and Heron configs arrive as strings from CLIs and YAML as often as not.
        try:
            value = float(value) if float in kinds and "." in value else int(value)
        except ValueError:
            pass
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok or (k.minimum is not None and value < k.minimum):
        msg = f"{loc}: config {k.name!r} expects {k.expects}, received {value!r}"
        raise ConfigError(msg)
    return value / k.per if k.per != 1.0 else value


def _flag(conf: dict, k: Key, loc: str) -> bool:
    value = conf.get(k.name, k.default)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        msg = f"{loc}: config {k.name!r} expects true or false, received {value!r}"
        raise ConfigError(msg)
    return value


def _choice(conf: dict, k: Key, loc: str) -> str:
    value = conf.get(k.name, k.default)
    if value not in k.choices:
        msg = f"{loc}: config {k.name!r} expects one of {k.choices}, received {value!r}"
        raise ConfigError(msg)
    return value


READERS = {FLAG: _flag, CHOICE: _choice, INT: _expect, NUMBER: _expect, TEXT: _expect}


@dataclass(frozen=True)
class TopologyConfig:
    """The runtime's reading of one topology's (or one component's merged) config."""

    reliability: str
    message_timeout_secs: float
    message_timeouts: bool
    max_spout_pending: int | None
    tick_freq_secs: float | None
    multilang_wake_secs: float | None
    containers: int
    debug: bool
    serializer: str
    bp_high_bytes: int
    bp_low_bytes: int
    held_max_bytes: int
    metrics_interval_secs: float
    heartbeat_interval_secs: float
    xor_buckets: int
    spout_burst: int
    emit_batch_secs: float
    emit_batch_bytes: int
    execute_batch_secs: float
    latency_target_secs: float
    restart_backoff_secs: float
    scheduler_orphan_secs: float | None
    log_max_bytes: int
    log_backup_count: int
    host: str | None
    tls: tuple[str, str, str] | None  # (cert, key, ca)
    checkpoint_interval_secs: float
    start_clean: bool
    checkpoint_root: str
    checkpoints_kept: int
    checkpoint_buffer_bytes: int

    @property
    def acking(self) -> bool:
        return self.reliability == ATLEAST_ONCE

    @property
    def stateful(self) -> bool:
        return self.reliability == EFFECTIVELY_ONCE

    @classmethod
    def read(cls, conf: dict, topology: str, component: str | None = None) -> TopologyConfig:
        loc = where(topology, component)
        if CHECKPOINT_INTERVAL_HERON in conf and CHECKPOINT_INTERVAL_SECS not in conf:
            conf = {**conf, CHECKPOINT_INTERVAL_SECS: conf[CHECKPOINT_INTERVAL_HERON]}
        values = {k.field: READERS[k.type](conf, k, loc) for k in KEYS.values() if k.field}
        high, low = values["bp_high_bytes"], values["bp_low_bytes"]
        if low >= high:
            msg = (f"{loc}: config {BACKPRESSURE_LOW_BYTES!r} expects a value below "
                   f"{BACKPRESSURE_HIGH_BYTES!r} ({high}), received {low}")
            raise ConfigError(msg)
        host = conf.get(HOST)
        if host is not None and (not isinstance(host, str) or not host.strip()):
            msg = f"{loc}: config {HOST!r} expects an address or host name, received {host!r}"
            raise ConfigError(msg)
        tls = tuple(conf.get(k) for k in TLS_KEYS)
        if any(v is not None for v in tls) and not all(isinstance(v, str) and v for v in tls):
            msg = (f"{loc}: configs {', '.join(map(repr, TLS_KEYS))} expect three PEM file "
                   f"paths together, received {dict(zip(TLS_KEYS, tls, strict=True))}")
            raise ConfigError(msg)
        return cls(**values, host=host,
                   tls=cast("tuple[str, str, str]", tls) if tls[0] is not None else None)


def _shown(k: Key) -> str:
    if k.shown:
        return k.shown
    if k.default is None:
        return "none"
    if isinstance(k.default, bool):
        return str(k.default).lower()
    if isinstance(k.default, str):
        return f"`{k.default}`"
    return f"{k.default:g}" if isinstance(k.default, float) else str(k.default)


def reference() -> str:
    """The configuration reference (Markdown): one row per key, in declaration order."""
    rows = ["| key | type | default | minimum | meaning | Storm / Heron |",
            "|---|---|---|---|---|---|"]
    for k in KEYS.values():
        kind = "/".join(f"`{c}`" for c in k.choices) if k.choices else k.type
        minimum = "" if k.minimum is None else f"{k.minimum:g}"
        rows.append(f"| `{k.name}` | {kind} | {_shown(k)} | {minimum} | {k.doc} | "
                    f"{k.counterpart} |")
    return "\n".join(rows) + "\n"
