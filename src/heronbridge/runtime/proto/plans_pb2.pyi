from heronbridge.runtime.proto import topology_pb2 as _topology_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InstancePlan(_message.Message):
    __slots__ = ("component", "task_id", "component_index")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    component: str
    task_id: int
    component_index: int
    def __init__(self, component: _Optional[str] = ..., task_id: _Optional[int] = ..., component_index: _Optional[int] = ...) -> None: ...

class ContainerPlan(_message.Message):
    __slots__ = ("id", "instances")
    ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    id: int
    instances: _containers.RepeatedCompositeFieldContainer[InstancePlan]
    def __init__(self, id: _Optional[int] = ..., instances: _Optional[_Iterable[_Union[InstancePlan, _Mapping]]] = ...) -> None: ...

class PackingPlan(_message.Message):
    __slots__ = ("id", "containers")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    id: str
    containers: _containers.RepeatedCompositeFieldContainer[ContainerPlan]
    def __init__(self, id: _Optional[str] = ..., containers: _Optional[_Iterable[_Union[ContainerPlan, _Mapping]]] = ...) -> None: ...

class StreamManagerInfo(_message.Message):
    __slots__ = ("id", "container", "host", "data_port", "pid")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    DATA_PORT_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    id: str
    container: int
    host: str
    data_port: int
    pid: int
    def __init__(self, id: _Optional[str] = ..., container: _Optional[int] = ..., host: _Optional[str] = ..., data_port: _Optional[int] = ..., pid: _Optional[int] = ...) -> None: ...

class InstanceInfo(_message.Message):
    __slots__ = ("task_id", "component", "component_index", "stmgr_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    component: str
    component_index: int
    stmgr_id: str
    def __init__(self, task_id: _Optional[int] = ..., component: _Optional[str] = ..., component_index: _Optional[int] = ..., stmgr_id: _Optional[str] = ...) -> None: ...

class PhysicalPlan(_message.Message):
    __slots__ = ("topology", "stmgrs", "instances", "packing_id")
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    STMGRS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    PACKING_ID_FIELD_NUMBER: _ClassVar[int]
    topology: _topology_pb2.Topology
    stmgrs: _containers.RepeatedCompositeFieldContainer[StreamManagerInfo]
    instances: _containers.RepeatedCompositeFieldContainer[InstanceInfo]
    packing_id: str
    def __init__(self, topology: _Optional[_Union[_topology_pb2.Topology, _Mapping]] = ..., stmgrs: _Optional[_Iterable[_Union[StreamManagerInfo, _Mapping]]] = ..., instances: _Optional[_Iterable[_Union[InstanceInfo, _Mapping]]] = ..., packing_id: _Optional[str] = ...) -> None: ...

class ExecutionState(_message.Message):
    __slots__ = ("topology_name", "topology_id", "submission_time", "submission_user", "cluster", "environ", "release_version")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_TIME_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_USER_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    ENVIRON_FIELD_NUMBER: _ClassVar[int]
    RELEASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    submission_time: int
    submission_user: str
    cluster: str
    environ: str
    release_version: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., submission_time: _Optional[int] = ..., submission_user: _Optional[str] = ..., cluster: _Optional[str] = ..., environ: _Optional[str] = ..., release_version: _Optional[str] = ...) -> None: ...

class TopologyMasterLocation(_message.Message):
    __slots__ = ("topology_name", "topology_id", "host", "server_port")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    SERVER_PORT_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    host: str
    server_port: int
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., host: _Optional[str] = ..., server_port: _Optional[int] = ...) -> None: ...

class SchedulerLocation(_message.Message):
    __slots__ = ("topology_name", "pid", "working_dir", "host")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIR_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    pid: int
    working_dir: str
    host: str
    def __init__(self, topology_name: _Optional[str] = ..., pid: _Optional[int] = ..., working_dir: _Optional[str] = ..., host: _Optional[str] = ...) -> None: ...
