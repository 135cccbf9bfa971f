"""The migrate tutorial's `heronbridge migrate` commands, run as it shows them on a copy of
the word count project: print a diff, write the migration and its report, then find
nothing left to change."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from heronbridge.cli import main

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorials" / "migrate-to-heronpy.md"
COPY = "/tmp/wordcount-heronpy"


def test_the_tutorial_migrates_its_copy_and_a_second_run_finds_nothing(tmp_path, capsys):
    block = re.search(r"```bash\n(.*?)```", TUTORIAL.read_text(), re.S).group(1)
    lines = block.splitlines()
    source, target = shlex.split(lines[0])[-2:]
    assert lines[0].startswith("cp -r ") and target == COPY
    shutil.copytree(ROOT / source, tmp_path / "wordcount-heronpy",
                    ignore=shutil.ignore_patterns("__pycache__", "_build", "_resources"))
    migrates = [line for line in lines if line.startswith("heronbridge migrate ")]
    assert [shlex.split(line)[3] for line in migrates] == ["--diff", "--report", "--check"]
    before = (tmp_path / "wordcount-heronpy" / "src" / "bolts" / "wordcount.py").read_text()
    codes = []
    for line in migrates:
        argv = [w.replace("/tmp/", f"{tmp_path}/") for w in shlex.split(line)[1:]]
        codes.append(main(argv))
        if "--diff" in argv:
            assert "+++ b/" in capsys.readouterr().out
    assert codes == [0, 0, 0]
    after = (tmp_path / "wordcount-heronpy" / "src" / "bolts" / "wordcount.py").read_text()
    assert after != before and "heronpy" in after
    report = json.loads((tmp_path / "wordcount-migrate.json").read_text())
    assert report
