"""The topology jar: src/ under resources/, the scenario's input files laid over it."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from heronbridge.conformance.storm import StormError
from heronbridge.conformance.storm.resources_jar import build_resources_jar


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "bolts" / "__pycache__").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "bolts" / "__init__.py").write_text("")
    (root / "bolts" / "count.py").write_text("X = 1\n")
    (root / "bolts" / "__pycache__" / "count.cpython-311.pyc").write_bytes(b"\0")
    (root / "data" / "words.txt").write_text("original\n")
    return root


def test_src_goes_under_resources_with_folder_entries(src, tmp_path):
    jar = build_resources_jar(src, {}, tmp_path / "t.jar")
    with zipfile.ZipFile(jar) as z:
        names = set(z.namelist())
        assert z.read("resources/bolts/count.py") == b"X = 1\n"
    assert {"resources/", "resources/bolts/", "resources/data/"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert all(n.startswith("resources/") for n in names)


def test_input_files_replace_and_add(src, tmp_path):
    words = tmp_path / "mine.txt"
    words.write_text("replaced\n")
    extra = tmp_path / "extra.csv"
    extra.write_text("a,b\n")
    jar = build_resources_jar(src, {"data/words.txt": words, "inputs/new/extra.csv": extra},
                              tmp_path / "t.jar")
    with zipfile.ZipFile(jar) as z:
        assert z.read("resources/data/words.txt") == b"replaced\n"
        assert z.read("resources/inputs/new/extra.csv") == b"a,b\n"
        assert {"resources/inputs/", "resources/inputs/new/"} <= set(z.namelist())
        assert len([n for n in z.namelist() if n == "resources/data/words.txt"]) == 1


@pytest.mark.parametrize("rel", ["../outside.txt", "/etc/passwd", "data/../../x"])
def test_input_files_must_stay_inside_src(src, tmp_path, rel):
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(StormError, match="inside the project's src/"):
        build_resources_jar(src, {rel: f}, tmp_path / "t.jar")


def test_a_missing_input_file_is_named(src, tmp_path):
    with pytest.raises(StormError, match=r"input file 'data/w.txt': expected a file at"):
        build_resources_jar(src, {"data/w.txt": tmp_path / "nope.txt"}, tmp_path / "t.jar")
