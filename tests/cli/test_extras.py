"""A verb whose optional part is not installed says which extra to install."""

from __future__ import annotations

import os
import subprocess

import pytest
from testkit import HERONBRIDGE

from heronbridge.cli import extras


def test_a_missing_module_names_the_extra(monkeypatch):
    monkeypatch.setitem(extras.EXTRAS, "conformance", ("json", "no_such_module_here"))
    with pytest.raises(extras.MissingExtra) as caught:
        extras.require("conformance", "heronbridge conform")
    assert str(caught.value) == ("heronbridge conform needs the 'conformance' extra, which is "
                                 "not installed (No module named 'no_such_module_here'): pip "
                                 "install 'heronbridge[conformance]'")


@pytest.mark.parametrize("verb", [["conform", "--project", "."], ["bench"]])
def test_a_verb_whose_extra_is_broken_underneath_names_it(tmp_path, verb):
    # py4j is found but cannot be imported, as when pyspark was installed without it.
    (tmp_path / "py4j").mkdir()
    (tmp_path / "py4j" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'py4j.java_gateway'\", "
        "name='py4j.java_gateway')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([HERONBRIDGE, *verb, "--home", str(tmp_path / "home")],
                          capture_output=True, text=True, env=env, timeout=60, check=False,
                          cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "needs the 'conformance' extra" in done.stderr
    assert "pip install 'heronbridge[conformance]'" in done.stderr
    assert "Traceback" not in done.stderr
