"""A task's process stays legible: its classes stay small, and a step's state (step.py)
is written by the step alone; its hosts call its methods."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "heronbridge"
INSTANCE = PACKAGE / "runtime" / "instance"
STEPS = {INSTANCE / name for name in ("step.py", "spout_step.py", "bolt_step.py")}


def own_attributes(cls: ast.ClassDef) -> set[str]:
    """What a class's methods set on `self`, and what its body declares."""
    names = {node.target.id for node in cls.body
             if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) \
                        and part.value.id == "self":
                    names.add(part.attr)
    return names


def instance_classes() -> dict[str, tuple[ast.ClassDef, set[str]]]:
    """Every class of runtime/instance, with its attributes and its bases' there."""
    classes = {cls.name: cls for path in sorted(INSTANCE.glob("*.py"))
               for cls in ast.parse(path.read_text()).body if isinstance(cls, ast.ClassDef)}

    def attributes(cls: ast.ClassDef) -> set[str]:
        inherited = [attributes(classes[base.id]) for base in cls.bases
                     if isinstance(base, ast.Name) and base.id in classes]
        return own_attributes(cls).union(*inherited)

    return {name: (cls, attributes(cls)) for name, cls in classes.items()}


def test_no_class_of_a_tasks_process_has_over_twenty_attributes_and_task_fifteen():
    sizes = {name: len(attrs) for name, (_, attrs) in instance_classes().items()}
    assert {name: n for name, n in sizes.items() if n > 20} == {}
    assert sizes["Task"] <= 15, sorted(instance_classes()["Task"][1])


def test_the_attribute_count_sees_inherited_and_declared_attributes():
    tree = ast.parse("class A:\n    x: int\n    def f(self):\n        self.y = self.z = 1\n"
                     "class B(A):\n    def g(self):\n        self.w += 1\n")
    a, b = (node for node in tree.body if isinstance(node, ast.ClassDef))
    assert own_attributes(a) == {"x", "y", "z"} and own_attributes(b) == {"w"}


def step_writes(path: Path, root: Path = PACKAGE) -> list[str]:
    """`...step.x = ...` (or `step.x[k] = ...`) outside the step's own modules."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            written = target
            while isinstance(written, ast.Subscript):
                written = written.value
            if not isinstance(written, ast.Attribute):
                continue
            owner = written.value
            name = owner.attr if isinstance(owner, ast.Attribute) else \
                owner.id if isinstance(owner, ast.Name) else ""
            if name.lstrip("_").endswith("step"):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(written)}")
    return found


def test_nothing_outside_the_step_writes_its_state():
    writes = [w for path in sorted(PACKAGE.rglob("*.py")) if path not in STEPS
              for w in step_writes(path)]
    assert writes == []


def test_the_write_check_sees_a_write_through_a_step(tmp_path):
    host = tmp_path / "host.py"
    host.write_text("def f(self, step):\n    step.active = True\n"
                    "    self._step.counts['x'] += 1\n    step.wait(0)\n")
    assert [w.split(": ")[1] for w in step_writes(host, tmp_path)] == \
        ["step.active", "self._step.counts"]
