"""What a wheel carries beyond the package's own files (pyproject.toml has the rest):
the JVM task host's jar, built by Maven from jvm/ while the wheel builds (with its
tests; a checkout's jar built before from the same sources and tested is reused), and the
docs site's pages, which `heronbridge docs` serves. An editable install carries neither:
it builds the jar on first use and serves the checkout's docs/."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        sys.path.insert(0, str(ROOT / "src"))
        from heronbridge.jvm import build  # standard library only

        package = Path(self.build_lib) / "heronbridge"
        jar = build.ensure(ROOT, tests=True, say=print)
        shutil.copyfile(jar, package / "jvm" / build.JAR)
        docs = package / "ui" / "docs_site"
        shutil.rmtree(docs, ignore_errors=True)
        shutil.copytree(ROOT / "docs", docs,
                        ignore=lambda folder, names: [n for n in names
                                                      if n.startswith((".", "__"))])
        shutil.copyfile(ROOT / "mkdocs.yml", docs / "mkdocs.yml")


setup(cmdclass={"build_py": BuildPy})
