"""Topology configuration keys the runtime reads, their defaults, and a typed view.

Keys that Heron and Storm share keep their `topology.*` names; knobs that only this
runtime has live under `heronbridge.*`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, where

RELIABILITY_MODE = "topology.reliability.mode"
ATMOST_ONCE = "ATMOST_ONCE"
ATLEAST_ONCE = "ATLEAST_ONCE"
EFFECTIVELY_ONCE = "EFFECTIVELY_ONCE"  # checkpoints and rollback (runtime/checkpoint)
MODES = (ATMOST_ONCE, ATLEAST_ONCE, EFFECTIVELY_ONCE)
MESSAGE_TIMEOUT_SECS = "topology.message.timeout.secs"
ENABLE_MESSAGE_TIMEOUTS = "topology.enable.message.timeouts"
MAX_SPOUT_PENDING = "topology.max.spout.pending"
TICK_TUPLE_FREQ_SECS = "topology.tick.tuple.freq.secs"
CONTAINERS = "topology.stmgrs"
DEBUG = "topology.debug"
SERIALIZER = "heronbridge.serializer"
BACKPRESSURE_HIGH_BYTES = "heronbridge.backpressure.high.watermark.bytes"
BACKPRESSURE_LOW_BYTES = "heronbridge.backpressure.low.watermark.bytes"
# Frames a stream manager holds for tasks that are down, at most (stream_manager/
# undelivered.py); 0: hold none, their trees fail at their timeout.
HELD_MAX_BYTES = "heronbridge.held.max.bytes"
METRICS_INTERVAL_SECS = "heronbridge.metrics.interval.secs"
HEARTBEAT_INTERVAL_SECS = "heronbridge.heartbeat.interval.secs"
XOR_BUCKETS = "heronbridge.acking.buckets"
SPOUT_BURST = "heronbridge.spout.burst"
# Heron's heron.instance.emit.batch.time.ms / .size.bytes and execute.batch.time.ms: a
# spout's burst of next_tuple calls, and a bolt's run of execute calls, end after this
# long or (spouts) this many bytes emitted, and what they emitted is sent.
EMIT_BATCH_MS = "heronbridge.emit.batch.time.ms"
EMIT_BATCH_BYTES = "heronbridge.emit.batch.size.bytes"
EXECUTE_BATCH_MS = "heronbridge.execute.batch.time.ms"
# Without topology.max.spout.pending, a spout keeps about this much latency in flight
# (runtime/instance/window.py); 0: no limit, as Storm without max.spout.pending.
LATENCY_TARGET_MS = "heronbridge.spout.latency.target.ms"
RESTART_BACKOFF_SECS = "heronbridge.restart.backoff.secs"
LOG_MAX_BYTES = "heronbridge.log.max.bytes"  # a process log (and metrics.jsonl) rotates past
LOG_BACKUP_COUNT = "heronbridge.log.backup.count"  # this size, keeping this many old files
HOST = "heronbridge.host"  # the address stream managers and the master listen on
TLS_CERT = "heronbridge.tls.cert"  # PEM files: this host's certificate and key, and the CA
TLS_KEY = "heronbridge.tls.key"  # that signed every host's; all three turn TLS on for
TLS_CA = "heronbridge.tls.ca"  # TCP links
TLS_KEYS = (TLS_CERT, TLS_KEY, TLS_CA)

# Effectively-once: Heron's keys (Heron spells the interval `...interval.seconds`; both are
# read), then where checkpoints are stored, how many consistent ones are kept, and how
# much a task buffers while its input markers align before it gives that checkpoint up
# (Heron's heron.streammgr.stateful.buffer.size.mb).
CHECKPOINT_INTERVAL_SECS = "topology.stateful.checkpoint.interval.secs"
CHECKPOINT_INTERVAL_HERON = "topology.stateful.checkpoint.interval.seconds"
START_CLEAN = "topology.stateful.start.clean"
CHECKPOINT_ROOT = "heronbridge.checkpoint.root"
CHECKPOINTS_KEPT = "heronbridge.checkpoint.kept"
CHECKPOINT_BUFFER_BYTES = "heronbridge.checkpoint.buffer.bytes"

SERIALIZERS = ("msgpack", "json", "pickle")

DEFAULTS: dict[str, Any] = {
    RELIABILITY_MODE: ATMOST_ONCE,
    MESSAGE_TIMEOUT_SECS: 30,
    ENABLE_MESSAGE_TIMEOUTS: True,
    MAX_SPOUT_PENDING: None,
    TICK_TUPLE_FREQ_SECS: None,
    CONTAINERS: 1,
    DEBUG: False,
    SERIALIZER: "msgpack",
    BACKPRESSURE_HIGH_BYTES: 4 << 20,
    BACKPRESSURE_LOW_BYTES: 1 << 20,
    HELD_MAX_BYTES: 16 << 20,
    METRICS_INTERVAL_SECS: 1.0,
    HEARTBEAT_INTERVAL_SECS: 2.0,
    XOR_BUCKETS: 3,
    SPOUT_BURST: 1024,
    EMIT_BATCH_MS: 5.0,
    EMIT_BATCH_BYTES: 32 << 10,
    EXECUTE_BATCH_MS: 5.0,
    LATENCY_TARGET_MS: 20.0,
    RESTART_BACKOFF_SECS: 0.5,
    LOG_MAX_BYTES: 10 << 20,
    LOG_BACKUP_COUNT: 5,
    HOST: None,
    TLS_CERT: None,
    TLS_KEY: None,
    TLS_CA: None,
    CHECKPOINT_INTERVAL_SECS: 300,
    START_CLEAN: False,
    CHECKPOINT_ROOT: "~/.herondata/checkpoints",
    CHECKPOINTS_KEPT: 5,
    CHECKPOINT_BUFFER_BYTES: 100 << 20,
}


def _expect(conf: dict, key: str, kinds: tuple[type, ...], what: str, loc: str,
            minimum: float | None = None, allow_none: bool = False) -> Any:
    value = conf.get(key, DEFAULTS.get(key))
    if value is None and allow_none:
        return None
    if isinstance(value, str) and int in kinds:
        # Storm and Heron configs arrive as strings from CLIs and YAML as often as not.
        try:
            value = float(value) if float in kinds and "." in value else int(value)
        except ValueError:
            pass
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok or (minimum is not None and value < minimum):
        msg = f"{loc}: config {key!r} expects {what}, received {value!r}"
        raise ConfigError(msg)
    return value


def _flag(conf: dict, key: str, loc: str) -> bool:
    value = conf.get(key, DEFAULTS[key])
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        msg = f"{loc}: config {key!r} expects true or false, received {value!r}"
        raise ConfigError(msg)
    return value


@dataclass(frozen=True)
class TopologyConfig:
    """The runtime's reading of one topology's (or one component's merged) config."""

    reliability: str
    message_timeout_secs: float
    message_timeouts: bool
    max_spout_pending: int | None
    tick_freq_secs: float | None
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
        mode = conf.get(RELIABILITY_MODE, DEFAULTS[RELIABILITY_MODE])
        if mode not in MODES:
            msg = f"{loc}: config {RELIABILITY_MODE!r} expects one of {MODES}, received {mode!r}"
            raise ConfigError(msg)
        serializer = conf.get(SERIALIZER, DEFAULTS[SERIALIZER])
        if serializer not in SERIALIZERS:
            msg = (f"{loc}: config {SERIALIZER!r} expects one of {SERIALIZERS}, "
                   f"received {serializer!r}")
            raise ConfigError(msg)
        num = (int, float)
        high = _expect(conf, BACKPRESSURE_HIGH_BYTES, (int,), "an integer >= 1024", loc, 1024)
        low = _expect(conf, BACKPRESSURE_LOW_BYTES, (int,), "an integer >= 0", loc, 0)
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
        return cls(
            reliability=mode,
            message_timeout_secs=_expect(conf, MESSAGE_TIMEOUT_SECS, num, "seconds > 0", loc,
                                         0.001),
            message_timeouts=_flag(conf, ENABLE_MESSAGE_TIMEOUTS, loc),
            max_spout_pending=_expect(conf, MAX_SPOUT_PENDING, (int,), "an integer >= 1 or null",
                                      loc, 1, allow_none=True),
            tick_freq_secs=_expect(conf, TICK_TUPLE_FREQ_SECS, num, "seconds > 0 or null", loc,
                                   0.001, allow_none=True),
            containers=_expect(conf, CONTAINERS, (int,), "an integer >= 1", loc, 1),
            debug=_flag(conf, DEBUG, loc),
            serializer=serializer,
            bp_high_bytes=high,
            bp_low_bytes=low,
            held_max_bytes=_expect(conf, HELD_MAX_BYTES, (int,), "an integer >= 0 (bytes)", loc, 0),
            metrics_interval_secs=_expect(conf, METRICS_INTERVAL_SECS, num, "seconds > 0", loc,
                                          0.01),
            heartbeat_interval_secs=_expect(conf, HEARTBEAT_INTERVAL_SECS, num, "seconds > 0", loc,
                                            0.01),
            xor_buckets=_expect(conf, XOR_BUCKETS, (int,), "an integer >= 2", loc, 2),
            spout_burst=_expect(conf, SPOUT_BURST, (int,), "an integer >= 1", loc, 1),
            emit_batch_secs=_expect(conf, EMIT_BATCH_MS, num, "milliseconds > 0", loc,
                                    0.001) / 1000,
            emit_batch_bytes=_expect(conf, EMIT_BATCH_BYTES, (int,), "an integer >= 1 (bytes)",
                                     loc, 1),
            execute_batch_secs=_expect(conf, EXECUTE_BATCH_MS, num, "milliseconds > 0", loc,
                                       0.001) / 1000,
            latency_target_secs=_expect(conf, LATENCY_TARGET_MS, num, "milliseconds >= 0", loc,
                                        0) / 1000,
            restart_backoff_secs=_expect(conf, RESTART_BACKOFF_SECS, num, "seconds >= 0", loc, 0),
            log_max_bytes=_expect(conf, LOG_MAX_BYTES, (int,), "an integer >= 1024 (bytes)", loc,
                                  1024),
            log_backup_count=_expect(conf, LOG_BACKUP_COUNT, (int,), "an integer >= 1", loc, 1),
            host=host,
            tls=tls if tls[0] is not None else None,
            checkpoint_interval_secs=_expect(
                {CHECKPOINT_INTERVAL_SECS: conf[CHECKPOINT_INTERVAL_HERON]}
                if CHECKPOINT_INTERVAL_HERON in conf and CHECKPOINT_INTERVAL_SECS not in conf
                else conf, CHECKPOINT_INTERVAL_SECS, num, "seconds > 0", loc, 0.001),
            start_clean=_flag(conf, START_CLEAN, loc),
            checkpoint_root=_expect(conf, CHECKPOINT_ROOT, (str,), "a folder path", loc),
            checkpoints_kept=_expect(conf, CHECKPOINTS_KEPT, (int,), "an integer >= 1", loc, 1),
            checkpoint_buffer_bytes=_expect(conf, CHECKPOINT_BUFFER_BYTES, (int,),
                                            "an integer >= 0 (bytes)", loc, 0),
        )
