from heronbridge.runtime.proto import plans_pb2 as _plans_pb2
from heronbridge.runtime.proto import topology_pb2 as _topology_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskFile(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_LOG: _ClassVar[TaskFile]
    SAMPLED_EVENTS: _ClassVar[TaskFile]
TASK_LOG: TaskFile
SAMPLED_EVENTS: TaskFile

class Status(_message.Message):
    __slots__ = ("ok", "message")
    OK_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    message: str
    def __init__(self, ok: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class RegisterInstanceRequest(_message.Message):
    __slots__ = ("topology_id", "task_id", "pid")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    task_id: int
    pid: int
    def __init__(self, topology_id: _Optional[str] = ..., task_id: _Optional[int] = ..., pid: _Optional[int] = ...) -> None: ...

class RegisterInstanceResponse(_message.Message):
    __slots__ = ("status", "pplan")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    status: Status
    pplan: _plans_pb2.PhysicalPlan
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., pplan: _Optional[_Union[_plans_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class RegisterStreamManagerRequest(_message.Message):
    __slots__ = ("topology_id", "stmgr", "task_ids")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    stmgr: _plans_pb2.StreamManagerInfo
    task_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, topology_id: _Optional[str] = ..., stmgr: _Optional[_Union[_plans_pb2.StreamManagerInfo, _Mapping]] = ..., task_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class RegisterStreamManagerResponse(_message.Message):
    __slots__ = ("status", "pplan")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    status: Status
    pplan: _plans_pb2.PhysicalPlan
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., pplan: _Optional[_Union[_plans_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class StreamManagerHeartbeat(_message.Message):
    __slots__ = ("stmgr_id", "time_ms", "instances_ready", "packing_id", "paused", "trees_pending")
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_READY_FIELD_NUMBER: _ClassVar[int]
    PACKING_ID_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    TREES_PENDING_FIELD_NUMBER: _ClassVar[int]
    stmgr_id: str
    time_ms: int
    instances_ready: bool
    packing_id: str
    paused: bool
    trees_pending: int
    def __init__(self, stmgr_id: _Optional[str] = ..., time_ms: _Optional[int] = ..., instances_ready: _Optional[bool] = ..., packing_id: _Optional[str] = ..., paused: _Optional[bool] = ..., trees_pending: _Optional[int] = ...) -> None: ...

class NewPhysicalPlan(_message.Message):
    __slots__ = ("pplan",)
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    pplan: _plans_pb2.PhysicalPlan
    def __init__(self, pplan: _Optional[_Union[_plans_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class TopologyStateChange(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: _topology_pb2.TopologyState
    def __init__(self, state: _Optional[_Union[_topology_pb2.TopologyState, str]] = ...) -> None: ...

class StreamManagerHello(_message.Message):
    __slots__ = ("topology_id", "stmgr_id")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    stmgr_id: str
    def __init__(self, topology_id: _Optional[str] = ..., stmgr_id: _Optional[str] = ...) -> None: ...

class BackPressureNotice(_message.Message):
    __slots__ = ("stmgr_id", "active")
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    stmgr_id: str
    active: bool
    def __init__(self, stmgr_id: _Optional[str] = ..., active: _Optional[bool] = ...) -> None: ...

class ControllerRequest(_message.Message):
    __slots__ = ("topology_name", "set_state", "metrics", "update", "restart", "log_level", "sampling")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    SET_STATE_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    RESTART_FIELD_NUMBER: _ClassVar[int]
    LOG_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    set_state: _topology_pb2.TopologyState
    metrics: MetricsQuery
    update: UpdateRequest
    restart: RestartTask
    log_level: LogLevel
    sampling: Sampling
    def __init__(self, topology_name: _Optional[str] = ..., set_state: _Optional[_Union[_topology_pb2.TopologyState, str]] = ..., metrics: _Optional[_Union[MetricsQuery, _Mapping]] = ..., update: _Optional[_Union[UpdateRequest, _Mapping]] = ..., restart: _Optional[_Union[RestartTask, _Mapping]] = ..., log_level: _Optional[_Union[LogLevel, _Mapping]] = ..., sampling: _Optional[_Union[Sampling, _Mapping]] = ...) -> None: ...

class Sampling(_message.Message):
    __slots__ = ("component", "percent")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    PERCENT_FIELD_NUMBER: _ClassVar[int]
    component: str
    percent: float
    def __init__(self, component: _Optional[str] = ..., percent: _Optional[float] = ...) -> None: ...

class SamplingPlan(_message.Message):
    __slots__ = ("percent",)
    class PercentEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    PERCENT_FIELD_NUMBER: _ClassVar[int]
    percent: _containers.ScalarMap[str, float]
    def __init__(self, percent: _Optional[_Mapping[str, float]] = ...) -> None: ...

class LogLevel(_message.Message):
    __slots__ = ("component", "logger", "level", "timeout_secs")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    LOGGER_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECS_FIELD_NUMBER: _ClassVar[int]
    component: str
    logger: str
    level: str
    timeout_secs: int
    def __init__(self, component: _Optional[str] = ..., logger: _Optional[str] = ..., level: _Optional[str] = ..., timeout_secs: _Optional[int] = ...) -> None: ...

class ProfileRequest(_message.Message):
    __slots__ = ("task_id", "kind", "seconds")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    kind: str
    seconds: int
    def __init__(self, task_id: _Optional[int] = ..., kind: _Optional[str] = ..., seconds: _Optional[int] = ...) -> None: ...

class ProfileResponse(_message.Message):
    __slots__ = ("status", "pid", "body")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    status: Status
    pid: int
    body: bytes
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., pid: _Optional[int] = ..., body: _Optional[bytes] = ...) -> None: ...

class LogRequest(_message.Message):
    __slots__ = ("cursors", "max_bytes", "file")
    CURSORS_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    cursors: _containers.RepeatedCompositeFieldContainer[LogCursor]
    max_bytes: int
    file: TaskFile
    def __init__(self, cursors: _Optional[_Iterable[_Union[LogCursor, _Mapping]]] = ..., max_bytes: _Optional[int] = ..., file: _Optional[_Union[TaskFile, str]] = ...) -> None: ...

class LogCursor(_message.Message):
    __slots__ = ("task_id", "offset")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    offset: int
    def __init__(self, task_id: _Optional[int] = ..., offset: _Optional[int] = ...) -> None: ...

class LogResponse(_message.Message):
    __slots__ = ("status", "chunks")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    status: Status
    chunks: _containers.RepeatedCompositeFieldContainer[LogChunk]
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., chunks: _Optional[_Iterable[_Union[LogChunk, _Mapping]]] = ...) -> None: ...

class LogChunk(_message.Message):
    __slots__ = ("task_id", "offset", "data", "missing")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    offset: int
    data: bytes
    missing: bool
    def __init__(self, task_id: _Optional[int] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ..., missing: _Optional[bool] = ...) -> None: ...

class ControllerResponse(_message.Message):
    __slots__ = ("status", "metrics", "state", "update")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    status: Status
    metrics: MetricsReport
    state: _topology_pb2.TopologyState
    update: UpdateReport
    def __init__(self, status: _Optional[_Union[Status, _Mapping]] = ..., metrics: _Optional[_Union[MetricsReport, _Mapping]] = ..., state: _Optional[_Union[_topology_pb2.TopologyState, str]] = ..., update: _Optional[_Union[UpdateReport, _Mapping]] = ...) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("parallelism", "containers", "dry_run", "reason")
    class ParallelismEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    parallelism: _containers.ScalarMap[str, int]
    containers: int
    dry_run: bool
    reason: str
    def __init__(self, parallelism: _Optional[_Mapping[str, int]] = ..., containers: _Optional[int] = ..., dry_run: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class UpdateReport(_message.Message):
    __slots__ = ("old_packing_id", "new_packing_id", "paused_secs", "drain_secs", "trees_in_flight", "started_tasks", "stopped_tasks", "added_containers", "removed_containers", "packing")
    OLD_PACKING_ID_FIELD_NUMBER: _ClassVar[int]
    NEW_PACKING_ID_FIELD_NUMBER: _ClassVar[int]
    PAUSED_SECS_FIELD_NUMBER: _ClassVar[int]
    DRAIN_SECS_FIELD_NUMBER: _ClassVar[int]
    TREES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    STARTED_TASKS_FIELD_NUMBER: _ClassVar[int]
    STOPPED_TASKS_FIELD_NUMBER: _ClassVar[int]
    ADDED_CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    PACKING_FIELD_NUMBER: _ClassVar[int]
    old_packing_id: str
    new_packing_id: str
    paused_secs: float
    drain_secs: float
    trees_in_flight: int
    started_tasks: _containers.RepeatedScalarFieldContainer[int]
    stopped_tasks: _containers.RepeatedScalarFieldContainer[int]
    added_containers: _containers.RepeatedScalarFieldContainer[int]
    removed_containers: _containers.RepeatedScalarFieldContainer[int]
    packing: _plans_pb2.PackingPlan
    def __init__(self, old_packing_id: _Optional[str] = ..., new_packing_id: _Optional[str] = ..., paused_secs: _Optional[float] = ..., drain_secs: _Optional[float] = ..., trees_in_flight: _Optional[int] = ..., started_tasks: _Optional[_Iterable[int]] = ..., stopped_tasks: _Optional[_Iterable[int]] = ..., added_containers: _Optional[_Iterable[int]] = ..., removed_containers: _Optional[_Iterable[int]] = ..., packing: _Optional[_Union[_plans_pb2.PackingPlan, _Mapping]] = ...) -> None: ...

class RestartTask(_message.Message):
    __slots__ = ("task_id", "reason")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    reason: str
    def __init__(self, task_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Histogram(_message.Message):
    __slots__ = ("counts",)
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, counts: _Optional[_Iterable[int]] = ...) -> None: ...

class ExceptionRecord(_message.Message):
    __slots__ = ("class_name", "message", "stacktrace", "first_ms", "last_ms", "count")
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STACKTRACE_FIELD_NUMBER: _ClassVar[int]
    FIRST_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_MS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    class_name: str
    message: str
    stacktrace: str
    first_ms: int
    last_ms: int
    count: int
    def __init__(self, class_name: _Optional[str] = ..., message: _Optional[str] = ..., stacktrace: _Optional[str] = ..., first_ms: _Optional[int] = ..., last_ms: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class TaskMetrics(_message.Message):
    __slots__ = ("component", "task_id", "container", "timestamp_ms", "incarnation", "counters", "gauges", "histograms", "exceptions")
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class GaugesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class HistogramsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Histogram
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Histogram, _Mapping]] = ...) -> None: ...
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_MS_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    GAUGES_FIELD_NUMBER: _ClassVar[int]
    HISTOGRAMS_FIELD_NUMBER: _ClassVar[int]
    EXCEPTIONS_FIELD_NUMBER: _ClassVar[int]
    component: str
    task_id: int
    container: int
    timestamp_ms: int
    incarnation: int
    counters: _containers.ScalarMap[str, float]
    gauges: _containers.ScalarMap[str, float]
    histograms: _containers.MessageMap[str, Histogram]
    exceptions: _containers.RepeatedCompositeFieldContainer[ExceptionRecord]
    def __init__(self, component: _Optional[str] = ..., task_id: _Optional[int] = ..., container: _Optional[int] = ..., timestamp_ms: _Optional[int] = ..., incarnation: _Optional[int] = ..., counters: _Optional[_Mapping[str, float]] = ..., gauges: _Optional[_Mapping[str, float]] = ..., histograms: _Optional[_Mapping[str, Histogram]] = ..., exceptions: _Optional[_Iterable[_Union[ExceptionRecord, _Mapping]]] = ...) -> None: ...

class MetricsPublish(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskMetrics]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskMetrics, _Mapping]]] = ...) -> None: ...

class MetricsQuery(_message.Message):
    __slots__ = ("component",)
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    component: str
    def __init__(self, component: _Optional[str] = ...) -> None: ...

class MetricsReport(_message.Message):
    __slots__ = ("tasks", "all_ready", "sampling")
    class SamplingEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ALL_READY_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskMetrics]
    all_ready: bool
    sampling: _containers.ScalarMap[str, float]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskMetrics, _Mapping]]] = ..., all_ready: _Optional[bool] = ..., sampling: _Optional[_Mapping[str, float]] = ...) -> None: ...

class RegisterMetricsPublisher(_message.Message):
    __slots__ = ("topology_id", "component", "task_id")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    component: str
    task_id: int
    def __init__(self, topology_id: _Optional[str] = ..., component: _Optional[str] = ..., task_id: _Optional[int] = ...) -> None: ...

class StartCheckpoint(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class InstanceStateStored(_message.Message):
    __slots__ = ("checkpoint_id", "task_id", "state_bytes", "save_secs", "given_up")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SAVE_SECS_FIELD_NUMBER: _ClassVar[int]
    GIVEN_UP_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    task_id: int
    state_bytes: int
    save_secs: float
    given_up: bool
    def __init__(self, checkpoint_id: _Optional[str] = ..., task_id: _Optional[int] = ..., state_bytes: _Optional[int] = ..., save_secs: _Optional[float] = ..., given_up: _Optional[bool] = ...) -> None: ...

class RestoreState(_message.Message):
    __slots__ = ("checkpoint_id", "txid")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    txid: int
    def __init__(self, checkpoint_id: _Optional[str] = ..., txid: _Optional[int] = ...) -> None: ...

class InstanceRestored(_message.Message):
    __slots__ = ("txid", "task_id", "ok", "message")
    TXID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    txid: int
    task_id: int
    ok: bool
    message: str
    def __init__(self, txid: _Optional[int] = ..., task_id: _Optional[int] = ..., ok: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class StreamManagerRestored(_message.Message):
    __slots__ = ("stmgr_id", "txid", "ok", "message")
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    TXID_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    stmgr_id: str
    txid: int
    ok: bool
    message: str
    def __init__(self, stmgr_id: _Optional[str] = ..., txid: _Optional[int] = ..., ok: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class StartProcessing(_message.Message):
    __slots__ = ("txid",)
    TXID_FIELD_NUMBER: _ClassVar[int]
    txid: int
    def __init__(self, txid: _Optional[int] = ...) -> None: ...

class ResumeFrom(_message.Message):
    __slots__ = ("txid",)
    TXID_FIELD_NUMBER: _ClassVar[int]
    txid: int
    def __init__(self, txid: _Optional[int] = ...) -> None: ...

class ResetTopologyState(_message.Message):
    __slots__ = ("stmgr_id", "reason")
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    stmgr_id: str
    reason: str
    def __init__(self, stmgr_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ConsistentCheckpoints(_message.Message):
    __slots__ = ("checkpoint_ids",)
    CHECKPOINT_IDS_FIELD_NUMBER: _ClassVar[int]
    checkpoint_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, checkpoint_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class InstanceStarted(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    def __init__(self, task_id: _Optional[int] = ...) -> None: ...
