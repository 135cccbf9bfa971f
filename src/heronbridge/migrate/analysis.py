"""The first pass: what every module of the tree defines, before any file is rewritten.

A bolt may subclass a bolt of another module, which subclasses streamparse's `Bolt`
through an alias; a topology in `topologies/` names classes from `src/`. So the whole
tree is read first (with `ast`: fast, and only imports, classes and topology specs are
needed) into an `Index`, and every class is classified by the qualified names of its
bases, resolved through each module's imports, never by how they are spelled.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# What a class is, by the library class it derives from.
BOLT = "Bolt"
BATCHING_BOLT = "BatchingBolt"
TICKLESS_BATCHING_BOLT = "TicklessBatchingBolt"
SPOUT = "Spout"
RELIABLE_SPOUT = "ReliableSpout"
TOPOLOGY = "Topology"
STORM_BASIC_BOLT = "storm.BasicBolt"  # Storm's storm.py: acks and anchors for you
STORM_BOLT = "storm.Bolt"
STORM_SPOUT = "storm.Spout"

BOLTS = {BOLT, BATCHING_BOLT, TICKLESS_BATCHING_BOLT, STORM_BASIC_BOLT, STORM_BOLT}
SPOUTS = {SPOUT, RELIABLE_SPOUT, STORM_SPOUT}
COMPONENTS = BOLTS | SPOUTS
STORM_PY = {STORM_BASIC_BOLT, STORM_BOLT, STORM_SPOUT}

LIBRARIES = ("streamparse", "pystorm")  # streamparse re-exports pystorm's classes
_LIBRARY_CLASSES = {BOLT, BATCHING_BOLT, TICKLESS_BATCHING_BOLT, SPOUT, RELIABLE_SPOUT,
                    TOPOLOGY}
_STORM_PY_CLASSES = {"BasicBolt": STORM_BASIC_BOLT, "Bolt": STORM_BOLT, "Spout": STORM_SPOUT}

AUTO_FLAGS = ("auto_ack", "auto_anchor", "auto_fail")
CHAINED = ("initialize", "process")  # methods whose super() chains the hierarchy plan follows


def library_symbol(qualified: str) -> str | None:
    """The class a qualified name denotes in streamparse, pystorm or storm.py, if any:
    `streamparse.storm.bolt.Bolt` and `pystorm.Bolt` are both `Bolt`."""
    parts = qualified.split(".")
    if len(parts) < 2:
        return None
    if parts[0] in LIBRARIES:
        return parts[-1] if parts[-1] in _LIBRARY_CLASSES else None
    if parts[0] == "storm" and len(parts) == 2:
        return _STORM_PY_CLASSES.get(parts[1])
    return None


def is_library(qualified: str) -> bool:
    return qualified.split(".", maxsplit=1)[0] in (*LIBRARIES, "storm")


@dataclass
class Forward:
    """A call passing a method on to the same method of a class after this one:
    `super().m(...)` (`after` is None), `super(C, self).m(...)` (`after` is C) or
    `Base.m(self, ...)` (`explicit` is Base); names qualified."""

    after: str | None = None
    explicit: str | None = None


@dataclass
class MethodInfo:
    """What the hierarchy plan needs of an `initialize` or `process`."""

    params: list[str]  # positional parameters after self
    varargs: str | None = None
    kwargs: str | None = None
    other: bool = False  # keyword-only parameters (heronpy passes none)
    forwards: list[Forward] = field(default_factory=list)
    forwards_first: bool = False  # nothing before its first forward reads the component
    context_used: bool = False  # its context parameter is used, not only passed on


@dataclass
class ClassInfo:
    module: str
    path: str  # the module's file
    name: str
    line: int
    bases: list[str]  # qualified names, as resolved in the module
    outputs: dict[str, list[str]] | None = None  # stream -> fields, if declared here
    flags: dict[str, bool] = field(default_factory=dict)  # auto_ack & co, if set here
    attributes: dict[str, str] = field(default_factory=dict)  # par, config: source text
    methods: set[str] = field(default_factory=set)
    chained: dict[str, MethodInfo] = field(default_factory=dict)  # CHAINED methods defined
    specs: dict[str, Spec] = field(default_factory=dict)  # a Topology's components

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass
class Spec:
    """One `X = SomeBolt.spec(...)` line of a Topology class."""

    variable: str
    component: str  # the class's qualified name, or "" for ShellBolt/JavaBolt specs
    inputs: list[tuple[str, str]]  # (source spec variable, stream)
    outputs: dict[str, list[str]] | None = None  # a shell or Java spec's `outputs=`


@dataclass
class ModuleInfo:
    name: str  # dotted, from the root the tree was given as
    path: str
    imports: dict[str, str]  # local name -> qualified name
    classes: dict[str, ClassInfo]
    uses_library: bool  # imports streamparse, pystorm or storm.py

    def resolve(self, dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        if head in self.imports:
            base = self.imports[head]
            return f"{base}.{rest}" if rest else base
        if head in self.classes:
            return f"{self.name}.{dotted}"
        return dotted


@dataclass
class Index:
    """Every module of the tree, and what each class is."""

    modules: dict[str, ModuleInfo] = field(default_factory=dict)  # by path
    # Every attribute name the tree reads as a value (not called), on any object:
    # migrated components set those pystorm set (helpers often read them from a
    # component they are given).
    attributes_read: set[str] = field(default_factory=set)
    _by_module: dict[str, list[ModuleInfo]] = field(default_factory=dict)
    _kinds: dict[str, str | None] = field(default_factory=dict)
    _inputs: dict[str, list[list[str]] | None] | None = None
    _plan: Any = None  # hierarchy.Plan, made once by hierarchy.plan_of

    def add(self, module: ModuleInfo) -> None:
        self.modules[module.path] = module
        parts = module.name.split(".")
        for i in range(len(parts)):  # `src.bolts.x` is imported as `bolts.x` with src/ on path
            self._by_module.setdefault(".".join(parts[i:]), []).append(module)

    def find_class(self, qualified: str, near: str = "", depth: int = 0) -> ClassInfo | None:
        """The tree's class a qualified name denotes, following re-exports."""
        module_name, _, name = qualified.rpartition(".")
        if not module_name or depth > 8:
            return None
        candidates = self._by_module.get(module_name, [])
        # Of modules with the same dotted tail, the one nearest the importer wins.
        for module in sorted(candidates, key=lambda m: -_shared_prefix(m.path, near)):
            if name in module.classes:
                return module.classes[name]
            if name in module.imports:
                found = self.find_class(module.imports[name], module.path, depth + 1)
                if found is not None:
                    return found
        return None

    def kind(self, info: ClassInfo) -> str | None:
        """BOLT, SPOUT, TOPOLOGY ... if the class derives from one, else None."""
        key = info.qualified
        if key in self._kinds:
            return self._kinds[key]
        self._kinds[key] = None  # a cycle of bases resolves to nothing
        result = None
        for base in info.bases:
            result = self.base_kind(base, info.path)
            if result is not None:
                break
        self._kinds[key] = result
        return result

    def base_kind(self, qualified: str, near: str = "") -> str | None:
        symbol = library_symbol(qualified)
        if symbol is not None:
            return symbol
        found = self.find_class(qualified, near)
        return self.kind(found) if found is not None else None

    def lineage(self, info: ClassInfo) -> list[ClassInfo]:
        """The class and its ancestors in the tree, nearest first."""
        seen, order, queue = set(), [], [info]
        while queue:
            current = queue.pop(0)
            if current.qualified in seen:
                continue
            seen.add(current.qualified)
            order.append(current)
            for base in current.bases:
                found = self.find_class(base, current.path)
                if found is not None:
                    queue.append(found)
        return order

    def flag(self, info: ClassInfo, name: str) -> bool:
        """auto_ack, auto_anchor or auto_fail as the class has it (pystorm: True)."""
        for ancestor in self.lineage(info):
            if name in ancestor.flags:
                return ancestor.flags[name]
        return True

    def outputs(self, info: ClassInfo) -> dict[str, list[str]]:
        for ancestor in self.lineage(info):
            if ancestor.outputs is not None:
                return ancestor.outputs
        return {}

    def has_method(self, info: ClassInfo, name: str) -> bool:
        return any(name in ancestor.methods for ancestor in self.lineage(info))

    def input_fields(self, info: ClassInfo) -> list[list[str]] | None:
        """The fields of every stream the topologies of the tree feed this bolt class
        (or its subclasses) with; None when no topology of the tree uses it, or one
        feeds it from a stream whose fields the tree does not declare."""
        if self._inputs is None:
            self._inputs = self._gather_inputs()
        return self._inputs.get(info.qualified)

    def _gather_inputs(self) -> dict[str, list[list[str]] | None]:
        """One pass over every topology of the tree (not one per field access)."""
        inputs: dict[str, list[list[str]] | None] = {}
        for module in self.modules.values():
            for topology in module.classes.values():
                for spec in topology.specs.values():
                    component = self.find_class(spec.component, module.path)
                    if component is None:
                        continue
                    found: list[list[str]] = []
                    for source_var, stream in spec.inputs:
                        declared = self._declared(topology, source_var, module.path)
                        if declared is None or stream not in declared:
                            break
                        found.append(declared[stream])
                    fields = found if len(found) == len(spec.inputs) else None
                    for ancestor in self.lineage(component):
                        known = inputs.setdefault(ancestor.qualified, [])
                        inputs[ancestor.qualified] = None if known is None or fields is None \
                            else known + fields
        return inputs

    def _declared(self, topology: ClassInfo, variable: str,
                  near: str) -> dict[str, list[str]] | None:
        source = topology.specs.get(variable)
        if source is None:
            return None
        source_class = self.find_class(source.component, near)
        return self.outputs(source_class) if source_class is not None else source.outputs

    def prepare(self) -> Index:
        """Resolve what every rule asks for, once, before the tree is split among
        worker processes."""
        for module in self.modules.values():
            self.kinds_in(module)
        self.input_fields(ClassInfo("", "", "", 0, []))
        return self

    def kinds_in(self, module: ModuleInfo) -> set[str | None]:
        return {self.kind(c) for c in module.classes.values()}

    def class_at(self, path: str, name: str) -> ClassInfo | None:
        module = self.modules.get(path)
        return module.classes.get(name) if module else None


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(Path(a).parts, Path(b).parts, strict=False):
        if x != y:
            break
        n += 1
    return n


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or path.stem


def read_module(path: Path, root: Path, source: str) -> tuple[ModuleInfo, set[str]]:
    """One module's imports and classes, and the attribute names it reads.
    Raises SyntaxError for a file that does not parse."""
    tree = ast.parse(source, filename=str(path))
    name = module_name(path, root)
    is_package = path.name == "__init__.py"
    imports: dict[str, str] = {}
    nodes = list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    imports[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, name, is_package)
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base \
                        else alias.name
    module = ModuleInfo(name, str(path), imports, {},
                        any(is_library(q) for q in imports.values()))
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            module.classes[node.name] = _class(node, module, source)
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}  # x.debug(...) is a call
    read = {n.attr for n in nodes if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load) and id(n) not in called}
    return module, read


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _class(node: ast.ClassDef, module: ModuleInfo, source: str) -> ClassInfo:
    bases = [module.resolve(d) for d in map(_dotted, node.bases) if d]
    info = ClassInfo(module.name, module.path, node.name, node.lineno, bases)
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            info.methods.add(statement.name)
            if statement.name in CHAINED:
                info.chained[statement.name] = _method(statement, info, module)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            continue
        target, value = statement.targets[0].id, statement.value
        if target == "outputs":
            info.outputs = _outputs(value, module)
        elif target in AUTO_FLAGS and isinstance(value, ast.Constant):
            info.flags[target] = bool(value.value)
        elif target in ("par", "config"):
            info.attributes[target] = ast.get_source_segment(source, value) or \
                ast.unparse(value)
        elif isinstance(value, ast.Call):
            spec = _spec(target, value, module)
            if spec is not None:
                info.specs[target] = spec
    return info


def _method(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ClassInfo,
            module: ModuleInfo) -> MethodInfo:
    args = node.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    me = positional[0] if positional else "self"
    info = MethodInfo(positional[1:], args.vararg.arg if args.vararg else None,
                      args.kwarg.arg if args.kwarg else None, bool(args.kwonlyargs))
    passed: set[int] = set()  # ids of the Name nodes a forward passes on as they are
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    first = True
    for statement in body:
        calls = [n for n in ast.walk(statement) if isinstance(n, ast.Call)]
        for call in calls:
            forward = _forward(call, node.name, me, owner, module)
            if forward is None:
                continue
            info.forwards.append(forward)
            passed |= {id(a.value if isinstance(a, ast.Starred) else a) for a in call.args}
            passed |= {id(k.value) for k in call.keywords}
            if first and isinstance(statement, ast.Expr) and statement.value is call:
                info.forwards_first = True
        first = first and not info.forwards and _harmless(statement, me, positional[1:])
    context = positional[2] if len(positional) > 2 else None
    info.context_used = context is not None and any(
        isinstance(n, ast.Name) and n.id == context and id(n) not in passed
        for n in ast.walk(node))
    return info


def _forward(call: ast.Call, method: str, me: str, owner: ClassInfo,
             module: ModuleInfo) -> Forward | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == method):
        return None
    target = func.value
    if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and \
            target.func.id == "super":
        if not target.args:
            return Forward()
        named = _dotted(target.args[0])
        return Forward(after=owner.qualified if named in (None, owner.name)
                       else module.resolve(named))
    named = _dotted(target)
    if named and named != me and call.args and isinstance(call.args[0], ast.Name) and \
            call.args[0].id == me:
        return Forward(explicit=module.resolve(named))
    return None


def _harmless(statement: ast.stmt, me: str, params: list[str]) -> bool:
    """Whether a statement before a forward leaves the component's attributes alone:
    it reads none of `self`'s, calls none of its methods, hands `self` to nothing and
    does not use the parameters."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == me:
            if not isinstance(node.ctx, ast.Store):
                return False
        elif isinstance(node, ast.Name) and node.id in params:
            return False
        elif isinstance(node, ast.Call):
            if any(isinstance(a, ast.Name) and a.id == me for a in
                   [*node.args, *(k.value for k in node.keywords)]):
                return False
    return True


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _outputs(value: ast.expr, module: ModuleInfo) -> dict[str, list[str]] | None:
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    streams: dict[str, list[str]] = {}
    for item in value.elts:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            streams.setdefault("default", []).append(item.value)
        elif isinstance(item, ast.Call):
            args = {k.arg: k.value for k in item.keywords if k.arg}
            fields = args.get("fields", item.args[0] if item.args else None)
            name = args.get("name", item.args[1] if len(item.args) > 1 else None)
            stream = name.value if isinstance(name, ast.Constant) else "default"
            if isinstance(fields, (ast.List, ast.Tuple)):
                streams[str(stream)] = [str(e.value) for e in fields.elts
                                        if isinstance(e, ast.Constant)]
        else:
            return None
    return streams


def _spec(target: str, call: ast.Call, module: ModuleInfo) -> Spec | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "spec"):
        return None
    owner = _dotted(func.value)
    if owner is None:
        return None
    qualified = module.resolve(owner)
    component = "" if library_symbol(qualified) is None and is_library(qualified) \
        else qualified
    inputs: list[tuple[str, str]] = []
    args = {k.arg: k.value for k in call.keywords if k.arg}
    given = args.get("inputs", call.args[1] if len(call.args) > 1 else None)
    items: list[ast.expr] = []
    if isinstance(given, ast.Dict):
        items = [k for k in given.keys if k is not None]
    elif isinstance(given, (ast.List, ast.Tuple)):
        items = list(given.elts)
    elif given is not None:
        items = [given]
    for item in items:
        if isinstance(item, ast.Name):
            inputs.append((item.id, "default"))
        elif isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name) \
                and isinstance(item.slice, ast.Constant):
            inputs.append((item.value.id, str(item.slice.value)))
    outputs = _outputs(args["outputs"], module) if "outputs" in args else None
    return Spec(target, component, inputs, outputs)


def build_index(files: list[tuple[Path, str]], root: Path) -> tuple[Index, dict[str, str]]:
    """The index of `files` ((path, source) pairs under `root`), and the files that do
    not parse, with why."""
    index, broken = Index(), {}
    for path, source in files:
        try:
            module, read = read_module(path, root, source)
        except (SyntaxError, ValueError) as exc:
            broken[str(path)] = f"{type(exc).__name__}: {exc}"
            continue
        index.add(module)
        index.attributes_read |= read
    return index, broken
