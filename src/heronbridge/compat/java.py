"""streamparse's JavaSpout/JavaBolt specs as Java components of the plan, and where a
project's Java code is.

A spec's JavaObject (class name and `args_list`, which streamparse turned into Storm's
JavaObjectArgs: ints as longs, floats as doubles) becomes the component's
`heronbridge.java.component`, which the JVM task host reads and matches to a public
constructor as Storm's Thrift.instantiateJavaObject does. The project's Java code is
what `sparse submit` would ship: lein's jar in project.clj's :target-path (the
standalone one when there is one), and the jars of a folder named by an option.

A component Storm's TopologyBuilder made (`storm jar`) arrives as the bytes of a Java
serialized object: they are written to a file beside the topology's resources, as they
came, for the JVM task host to read; Python reads no more of them than the class name in
the stream's header.
"""

from __future__ import annotations

import base64
import re
import struct
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

from heronbridge.runtime.errors import where as located
from heronbridge.runtime.plan.java import (
    classpath,
    is_java_grouping,  # noqa: F401 - where compat finds it
)
from heronbridge.runtime.plan.tasks import TaskLayout
from heronbridge.runtime.scheduler import jvm

from . import CompatError

ARG_KINDS = (("int_arg", "int"), ("long_arg", "long"), ("string_arg", "string"),
             ("bool_arg", "bool"), ("binary_arg", "binary"), ("double_arg", "double"))
CLASS_PATH_PREFIX = "java:"  # the plan's class path of a Java component: java:<class name>
SERIALIZED_DIR = ".java-objects"  # in the resources: serialized components, one file each
# java.io.ObjectStreamConstants: STREAM_MAGIC, STREAM_VERSION, TC_OBJECT, TC_CLASSDESC
STREAM_HEADER = b"\xac\xed\x00\x05\x73\x72"


def java_object(where: str, obj: Any) -> dict[str, Any]:
    """The host's spec of a streamparse ComponentObject that holds a JavaObject."""
    if obj.java_object is None:
        msg = (f"{where}: expected a JavaObject (full_class_name and args_list), received a "
               "serialized Java object, which only Storm's own jar can carry")
        raise CompatError(msg)
    return object_spec(where, obj.java_object)


def object_spec(where: str, java: Any) -> dict[str, Any]:
    """The host's spec of a JavaObject (a component's, or a custom grouping's)."""
    args = []
    for i, arg in enumerate(java.args_list or []):
        for field, kind in ARG_KINDS:
            value = getattr(arg, field, None)
            if value is not None:
                if kind == "binary":
                    value = base64.b64encode(value).decode("ascii")
                args.append({kind: value})
                break
        else:
            msg = f"{where}: args_list[{i}] is an empty JavaObjectArg; expected one value"
            raise CompatError(msg)
    return {"class": java.full_class_name, "args": args}


def java_config(where: str, obj: Any, name: str | None = None, resources: Path | None = None,
                src: Path | None = None) -> tuple[str, dict[str, Any]]:
    """(class path, config entries) of a Java component. A serialized one is written to
    `src` (where the resources are now) as the file the tasks find under `resources`."""
    if obj.java_object is None and obj.serialized_java is not None and \
            name is not None and resources is not None and src is not None:
        return _serialized(where, obj.serialized_java, name, resources, src)
    spec = java_object(where, obj)
    return CLASS_PATH_PREFIX + spec["class"], {jvm.COMPONENT: spec}


def _serialized(where: str, data: bytes, name: str, resources: Path,
                src: Path) -> tuple[str, dict[str, Any]]:
    class_name, spec = serialized_spec(where, data, name, resources, src)
    return CLASS_PATH_PREFIX + class_name, {jvm.COMPONENT: spec}


def serialized_spec(where: str, data: bytes, name: str, resources: Path,
                    src: Path) -> tuple[str, dict[str, Any]]:
    """(class name, the host's spec) of a serialized Java object, written to
    `src`/SERIALIZED_DIR/`name`.ser as it came; the spec names it under `resources`."""
    class_name = serialized_class(data)
    if class_name is None:
        msg = (f"{where}: expected a Java serialized object (Storm's TopologyBuilder "
               f"serializes its spouts, bolts and custom groupings), received {len(data)} "
               f"bytes starting {data[:8].hex()!r}")
        raise CompatError(msg)
    file = f"{quote(name, safe='')}.ser"
    folder = src / SERIALIZED_DIR
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / file).write_bytes(data)
    return class_name, {"serialized": str(resources / SERIALIZED_DIR / file)}


def serialized_class(data: bytes) -> str | None:
    """The class named in a Java serialized object's header (a modified-UTF-8 string
    after TC_CLASSDESC), or None when `data` does not start as one."""
    if not data.startswith(STREAM_HEADER) or len(data) < len(STREAM_HEADER) + 2:
        return None
    (size,) = struct.unpack_from(">H", data, len(STREAM_HEADER))
    start = len(STREAM_HEADER) + 2
    raw = data[start:start + size]
    if len(raw) != size:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def project_jars(root: Path | None, jars: Path | None = None) -> list[Path]:
    """The jars of a project's Java code: lein's (its standalone jar when `lein uberjar`
    made one), then those in `jars`, by name."""
    found: list[Path] = []
    target = lein_target(root) if root is not None else None
    if target is not None and target.is_dir():
        built = sorted(target.glob("*.jar"))
        standalone = [j for j in built if j.name.endswith("-standalone.jar")]
        found += standalone or built
    if jars is not None:
        if not jars.is_dir():
            msg = f"expected a folder of the project's Java jars, received {str(jars)!r}"
            raise CompatError(msg)
        found += sorted(jars.glob("*.jar"))
    return found


def lein_target(root: Path) -> Path:
    """Where lein puts the project's jars: project.clj's :target-path (streamparse's
    projects say "_build"), else target/."""
    clj = root / "project.clj"
    text = clj.read_text(errors="replace") if clj.is_file() else ""
    found = re.search(r':target-path\s+"([^"]+)"', text)
    return root / (found.group(1) if found else "target")


def has_java(plan: Any) -> bool:
    """Whether the plan's tasks need Java: Java components, or Java custom groupings
    (which run in a JVM beside their sending task)."""
    return jvm.needs_jvm(plan)


def check_classes(plan: Any, jars: list[Path], root: Path | None,
                  given: Path | None) -> None:
    """Refuse, before anything starts, a Java component whose class none of the entries
    of its tasks' classpath holds (`jars`: the project's, searched first). An entry that
    cannot be read leaves the question to the JVM."""
    entries = [Path(e) for e in classpath(plan)]
    ordered = [*(e for e in entries if e in jars), *(e for e in entries if e not in jars)]
    layout = TaskLayout.of(plan)
    for name, spec in sorted(plan.components.items()):
        wanted = spec.config.get(jvm.COMPONENT, {}).get("class")
        if not wanted or _on_classpath(wanted, ordered):
            continue
        tasks = ", ".join(map(str, layout.component_tasks[name]))
        target = lein_target(root) if root is not None else None
        built = f"lein's folder {target} has none" if target is not None else "none"
        mine = ", ".join(j.name for j in jars) or built
        msg = (f"{located(plan.name, name)}, task{'s' if ',' in tasks else ''} {tasks}: "
               f"expected a class on the task's classpath, received {wanted!r}, which none "
               f"of its jars holds (the project's: {mine}; --java-jars: "
               f"{given if given is not None else 'not given'}; and Storm's); build the "
               "project's jar (`lein jar` writes it to "
               f"{target if target is not None else 'its target/ folder'}) or pass "
               "--java-jars DIR, a folder with the jar that holds it")
        raise CompatError(msg)


def _on_classpath(class_name: str, entries: list[Path]) -> bool:
    """Whether an entry holds the class, or one cannot be read (the JVM decides then)."""
    member = class_name.replace(".", "/") + ".class"
    for entry in entries:
        if entry.is_dir():
            if (entry / member).is_file():
                return True
            continue
        try:
            with zipfile.ZipFile(entry) as jar:
                jar.getinfo(member)
            return True
        except KeyError:
            continue
        except (OSError, zipfile.BadZipFile):
            return True
    return False
