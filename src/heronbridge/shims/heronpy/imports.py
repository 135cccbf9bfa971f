"""Importing heronpy 0.20.5 under today's protobuf and setuptools.

heronpy ships two things current Python stacks refuse: `heronpy/proto/*_pb2.py` written
by protoc 3.16, which build descriptors directly (protobuf >= 4 forbids it), and
`__init__.py` files that only declare a pkg_resources namespace (setuptools dropped
pkg_resources). A finder on `sys.meta_path` loads both differently, leaving every other
heronpy module as shipped:

- a `_pb2` module is built as modern protoc output builds it: its FileDescriptorProto
  (the `serialized_pb` bytes in the shipped file, read with `ast`) goes into the default
  descriptor pool, after the files it depends on, and the message and enum classes come
  from protobuf's builder, so they use the fast (upb) backend like the runtime's own;
- a package whose `__init__.py` is only the namespace declaration becomes a plain package;
- the Streamlet API's modules that cannot run as shipped are repaired once they have
  run (streamlet.py).
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal import builder

ROOT = "heronpy"
PROTO_PACKAGE = "heronpy.proto."
STREAMLET_PACKAGE = "heronpy.streamlet."


class HeronpyFinder(importlib.abc.MetaPathFinder):
    """Finds heronpy's modules where they are installed; loads its `_pb2` modules and
    namespace-only packages itself."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.has_location:
            return spec
        if fullname.startswith(PROTO_PACKAGE) and fullname.endswith("_pb2"):
            spec.loader = Pb2Loader(spec.origin)
        elif spec.submodule_search_locations is not None:
            doc = namespace_only(Path(spec.origin))
            if doc is None or isinstance(doc, str):
                spec.loader = PlainPackageLoader(doc)
        elif fullname.startswith(STREAMLET_PACKAGE):
            from . import streamlet

            if fullname in streamlet.REPAIRED:
                spec.loader = RepairingLoader(spec.loader, streamlet.repair)
        return spec


class PlainPackageLoader(importlib.abc.Loader):
    """A package with nothing in it but its docstring."""

    def __init__(self, doc: str | None) -> None:
        self.doc = doc

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__doc__ = self.doc


class RepairingLoader(importlib.abc.Loader):
    """A module as shipped, then repaired (see streamlet.py)."""

    def __init__(self, loader: Any, repair: Any) -> None:
        self.loader = loader
        self.repair = repair

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.repair(module)


class Pb2Loader(importlib.abc.Loader):
    """An old-style generated module, rebuilt from the descriptor bytes it carries."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        data = serialized_descriptor(Path(self.origin))
        proto = descriptor_pb2.FileDescriptorProto.FromString(data)
        for dependency in proto.dependency:
            importlib.import_module(dependency_module(dependency))
        pool = descriptor_pool.Default()
        try:
            file_descriptor = pool.FindFileByName(proto.name)
        except KeyError:
            file_descriptor = pool.AddSerializedFile(data)
        namespace = module.__dict__
        namespace["DESCRIPTOR"] = file_descriptor
        builder.BuildMessageAndEnumDescriptors(file_descriptor, namespace)
        builder.BuildTopDescriptorsAndMessages(file_descriptor, module.__name__, namespace)


def serialized_descriptor(path: Path) -> bytes:
    """The `serialized_pb=b'...'` argument of the module's FileDescriptor(...) call."""
    tree = ast.parse(path.read_bytes(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "serialized_pb":
                    return ast.literal_eval(keyword.value)
    msg = f"{str(path)!r}: expected protoc output with a serialized_pb descriptor, found none"
    raise ImportError(msg)


def dependency_module(proto_file: str) -> str:
    """The module of a dependency: heronpy's files import each other by bare name
    (`common.proto` -> heronpy.proto.common_pb2); well-known types live in protobuf."""
    stem = proto_file.removesuffix(".proto")
    if stem.startswith("google/protobuf/"):
        return stem.replace("/", ".") + "_pb2"
    return PROTO_PACKAGE + stem.replace("/", ".") + "_pb2"


def namespace_only(init: Path) -> str | None | bool:
    """The docstring of an `__init__.py` holding only a pkg_resources namespace
    declaration (None when it has none); False when it holds anything else."""
    try:
        body = ast.parse(init.read_bytes(), str(init)).body
    except (OSError, SyntaxError):
        return False
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body[0].value.value
        body = body[1:]
    if len(body) == 1 and _declares_namespace(body[0]):
        return doc
    return False


def _declares_namespace(statement: ast.stmt) -> bool:
    """`__import__('pkg_resources').declare_namespace(__name__)`"""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    func = statement.value.func
    if not isinstance(func, ast.Attribute) or func.attr != "declare_namespace":
        return False
    inner = func.value
    return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) \
        and inner.func.id == "__import__" and len(inner.args) == 1 \
        and isinstance(inner.args[0], ast.Constant) and inner.args[0].value == "pkg_resources"


def install() -> None:
    """Put the finder first on sys.meta_path (once)."""
    if not any(isinstance(f, HeronpyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, HeronpyFinder())
