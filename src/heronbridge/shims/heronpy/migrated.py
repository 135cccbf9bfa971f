"""What code migrated by `heronbridge migrate` calls besides heronpy.

pystorm gave every component Storm's conf and context as dicts (`self.storm_conf`,
`self.context`); `storm_conf` and `storm_context` rebuild them from heronpy's
TopologyContext as Storm (and heronbridge's Storm shim) shows them.

What heronpy cannot declare at all (a direct stream or grouping, a shell or Java
component, a Java custom grouping) the codemod rewrites to a declaration heronpy accepts,
so that the module still imports, and marks the class that holds it with `@unported`:
a topology that uses such a class (or is such a class) then refuses to load, with the
TODO marker's text, while the other topologies of the project run. `ShellBolt`,
`ShellSpout`, `JavaBolt` and `JavaSpout` take streamparse's `spec()` arguments for the
same reason (streamparse's arguments, in streamparse's order).
"""

from __future__ import annotations

from typing import Any

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.spout.spout import Spout

from . import HeronpyError

UNPORTED = "heronbridge_unported"  # the class attribute @unported sets: the reasons
_DEBUG = "topology.debug"


class Unported(HeronpyError):
    """A migrated topology uses a construct the codemod could only mark."""


def unported(*reasons: str) -> Any:
    """Class decorator: this class holds what heronpy cannot run, for these reasons (the
    TODO markers' texts). Subclasses inherit them."""

    def mark(cls: type) -> type:
        inherited = tuple(getattr(cls, UNPORTED, ()))
        setattr(cls, UNPORTED, inherited + tuple(r for r in reasons if r not in inherited))
        return cls

    return mark


def refuse_unported(where: str, cls: Any) -> None:
    """Raise if `cls` (a component class or a Topology) was marked @unported; `where`
    names the topology (and the component)."""
    reasons = getattr(cls, UNPORTED, ()) if isinstance(cls, type) else ()
    if reasons:
        name = f"{cls.__module__}.{cls.__qualname__}"
        msg = (f"{where}: expected what heronpy can run, received {name}, which the "
               f"codemod left marked: {'; '.join(reasons)}")
        raise Unported(msg)


# -- pystorm's conf and context -----------------------------------------------------------


def storm_conf(context: Any, spout: bool = False) -> dict[str, Any]:
    """pystorm's `storm_conf`: the component's conf as Storm merges it."""
    runtime = getattr(context, "runtime", None)
    if runtime is not None:  # heronbridge's context: the shim's own answer
        from heronbridge.shims.common.handshake import storm_conf as shim_conf

        return shim_conf(runtime, spout)
    conf = {_DEBUG: False, **context.get_cluster_config()}
    conf["topology.name"] = context.get_topology_name()
    return conf


def storm_context(context: Any) -> dict[str, Any]:
    """pystorm's `context`: Storm's TopologyContext as its multilang handshake sends it."""
    runtime = getattr(context, "runtime", None)
    if runtime is not None:
        from heronbridge.shims.common.handshake import storm_context as shim_context

        return shim_context(runtime)
    me, task = context.get_component_id(), context.get_task_id()
    return {"taskid": task, "componentid": me, "task->component": {str(task): me}}


# -- shell and Java components, declared but not run ---------------------------------------

_PYTHON_ONLY = "heronpy runs Python components only"


@unported(f"{_PYTHON_ONLY}: a ShellBolt needs porting to a Python Bolt")
class ShellBolt(Bolt):
    """streamparse's ShellBolt spec, declared for heronpy (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, command: str | None = None,
             script: str | None = None, inputs: Any = None, par: int | None = None,
             config: dict | None = None, outputs: Any = None) -> Any:
        return super().spec(name=name, inputs=inputs, par=par or 1, config=config,
                             optional_outputs=outputs)


@unported(f"{_PYTHON_ONLY}: a JavaBolt needs porting to a Python Bolt")
class JavaBolt(Bolt):
    """streamparse's JavaBolt spec, declared for heronpy (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, serialized_java: bytes | None = None,
             full_class_name: str | None = None, args_list: Any = None, inputs: Any = None,
             par: int | None = None, config: dict | None = None, outputs: Any = None) -> Any:
        return super().spec(name=name, inputs=inputs, par=par or 1, config=config,
                             optional_outputs=outputs)


@unported(f"{_PYTHON_ONLY}: a ShellSpout needs porting to a Python Spout")
class ShellSpout(Spout):
    """streamparse's ShellSpout spec, declared for heronpy (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, command: str | None = None,
             script: str | None = None, par: int | None = None, config: dict | None = None,
             outputs: Any = None) -> Any:
        return super().spec(name=name, par=par or 1, config=config, optional_outputs=outputs)


@unported(f"{_PYTHON_ONLY}: a JavaSpout needs porting to a Python Spout")
class JavaSpout(Spout):
    """streamparse's JavaSpout spec, declared for heronpy (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, serialized_java: bytes | None = None,
             full_class_name: str | None = None, args_list: Any = None,
             par: int | None = None, config: dict | None = None, outputs: Any = None) -> Any:
        return super().spec(name=name, par=par or 1, config=config, optional_outputs=outputs)


# -- components built on what runs on streamparse's API only ------------------------------

_STREAMPARSE_ONLY = "heronbridge's Kafka spout and bolt run on streamparse's API only"


@unported(f"{_STREAMPARSE_ONLY}: this spout needs porting to a heronpy Spout")
class UnportedSpout(Spout):
    """A spout of the tree built on a streamparse-only class (heronbridge.kafka), declared
    for heronpy with streamparse's spec() arguments (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, par: int | None = None,
             config: dict | None = None, outputs: Any = None) -> Any:
        return super().spec(name=name, par=par or 1, config=config, optional_outputs=outputs)


@unported(f"{_STREAMPARSE_ONLY}: this bolt needs porting to a heronpy Bolt")
class UnportedBolt(Bolt):
    """A bolt of the tree built on a streamparse-only class (heronbridge.kafka), declared
    for heronpy with streamparse's spec() arguments (it cannot run)."""

    @classmethod
    def spec(cls, name: str | None = None, inputs: Any = None, par: int | None = None,
             config: dict | None = None, outputs: Any = None) -> Any:
        return super().spec(name=name, inputs=inputs, par=par or 1, config=config,
                            optional_outputs=outputs)
