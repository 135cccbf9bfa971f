from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GroupingKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GROUPING_UNSPECIFIED: _ClassVar[GroupingKind]
    SHUFFLE: _ClassVar[GroupingKind]
    FIELDS: _ClassVar[GroupingKind]
    ALL: _ClassVar[GroupingKind]
    GLOBAL: _ClassVar[GroupingKind]
    NONE: _ClassVar[GroupingKind]
    DIRECT: _ClassVar[GroupingKind]
    LOCAL_OR_SHUFFLE: _ClassVar[GroupingKind]
    PARTIAL_KEY: _ClassVar[GroupingKind]
    CUSTOM: _ClassVar[GroupingKind]

class ComponentKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPONENT_UNSPECIFIED: _ClassVar[ComponentKind]
    SPOUT: _ClassVar[ComponentKind]
    BOLT: _ClassVar[ComponentKind]

class TopologyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATE_UNSPECIFIED: _ClassVar[TopologyState]
    RUNNING: _ClassVar[TopologyState]
    PAUSED: _ClassVar[TopologyState]
    KILLED: _ClassVar[TopologyState]
GROUPING_UNSPECIFIED: GroupingKind
SHUFFLE: GroupingKind
FIELDS: GroupingKind
ALL: GroupingKind
GLOBAL: GroupingKind
NONE: GroupingKind
DIRECT: GroupingKind
LOCAL_OR_SHUFFLE: GroupingKind
PARTIAL_KEY: GroupingKind
CUSTOM: GroupingKind
COMPONENT_UNSPECIFIED: ComponentKind
SPOUT: ComponentKind
BOLT: ComponentKind
STATE_UNSPECIFIED: TopologyState
RUNNING: TopologyState
PAUSED: TopologyState
KILLED: TopologyState

class StreamDecl(_message.Message):
    __slots__ = ("name", "fields", "direct")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    DIRECT_FIELD_NUMBER: _ClassVar[int]
    name: str
    fields: _containers.RepeatedScalarFieldContainer[str]
    direct: bool
    def __init__(self, name: _Optional[str] = ..., fields: _Optional[_Iterable[str]] = ..., direct: _Optional[bool] = ...) -> None: ...

class InputDecl(_message.Message):
    __slots__ = ("component", "stream", "grouping", "fields", "custom")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    GROUPING_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    component: str
    stream: str
    grouping: GroupingKind
    fields: _containers.RepeatedScalarFieldContainer[str]
    custom: str
    def __init__(self, component: _Optional[str] = ..., stream: _Optional[str] = ..., grouping: _Optional[_Union[GroupingKind, str]] = ..., fields: _Optional[_Iterable[str]] = ..., custom: _Optional[str] = ...) -> None: ...

class ComponentDecl(_message.Message):
    __slots__ = ("name", "kind", "class_path", "parallelism", "outputs", "inputs", "config_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CLASS_PATH_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: ComponentKind
    class_path: str
    parallelism: int
    outputs: _containers.RepeatedCompositeFieldContainer[StreamDecl]
    inputs: _containers.RepeatedCompositeFieldContainer[InputDecl]
    config_json: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[ComponentKind, str]] = ..., class_path: _Optional[str] = ..., parallelism: _Optional[int] = ..., outputs: _Optional[_Iterable[_Union[StreamDecl, _Mapping]]] = ..., inputs: _Optional[_Iterable[_Union[InputDecl, _Mapping]]] = ..., config_json: _Optional[str] = ...) -> None: ...

class ReservedComponent(_message.Message):
    __slots__ = ("name", "tasks")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    tasks: int
    def __init__(self, name: _Optional[str] = ..., tasks: _Optional[int] = ...) -> None: ...

class Topology(_message.Message):
    __slots__ = ("id", "name", "components", "config_json", "python_path", "reserved", "state")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    PYTHON_PATH_FIELD_NUMBER: _ClassVar[int]
    RESERVED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    components: _containers.RepeatedCompositeFieldContainer[ComponentDecl]
    config_json: str
    python_path: _containers.RepeatedScalarFieldContainer[str]
    reserved: _containers.RepeatedCompositeFieldContainer[ReservedComponent]
    state: TopologyState
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., components: _Optional[_Iterable[_Union[ComponentDecl, _Mapping]]] = ..., config_json: _Optional[str] = ..., python_path: _Optional[_Iterable[str]] = ..., reserved: _Optional[_Iterable[_Union[ReservedComponent, _Mapping]]] = ..., state: _Optional[_Union[TopologyState, str]] = ...) -> None: ...
