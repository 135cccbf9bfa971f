"""A streamparse project's virtualenv (virtualenvs/NAME.txt): built once, cached under the
home, reused; bad input named by topology and file, nothing partly built left behind.

The requirements here install wheels this test writes (`--no-index --find-links`): no
package index is reached.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from heronbridge.compat import virtualenvs
from heronbridge.compat.streamparse import load_project, read_project
from heronbridge.runtime.scheduler import environments as envs
from heronbridge.runtime.scheduler import requirements as reqs

EXAMPLE = Path(__file__).parents[2] / "examples" / "virtualenvs" / "semver2"


def wheel(folder: Path, name: str, version: str, tag: str = "py3-none-any",
          module: str | None = None, requires: tuple[str, ...] = ()) -> Path:
    """A wheel of a one-module package whose `__version__` is `version`."""
    module = module or name.replace("-", "_")
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    needs = "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{module}/__init__.py": f"__version__ = {version!r}\n",
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                 f"{needs}",
             f"{dist}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              f"Tag: {tag}\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name.replace('-', '_')}-{version}-{tag}.whl"
    with zipfile.ZipFile(target, "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
    return target


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    wheel(folder, "hbpin", "1.0")
    wheel(folder, "hbpin", "2.0")
    wheel(folder, "cloudpickle", "2.0.0")  # heronbridge needs cloudpickle>=3
    return folder


def project(tmp_path: Path, requirements: str, **env: object) -> Path:
    """The semver2 example with these requirements and environment settings."""
    root = tmp_path / "semver2"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "virtualenvs" / "semver2.txt").write_text(requirements)
    config = json.loads((root / "config.json").read_text())
    config["envs"]["prod"].update(env)
    (root / "config.json").write_text(json.dumps(config))
    return root


def uses_hbpin(root: Path) -> Path:
    """The project's components import hbpin (from these wheels) instead of semver."""
    for name in ("pins.py", "spouts/versions.py", "bolts/report.py"):
        path = root / "src" / name
        path.write_text(path.read_text().replace("import semver", "import hbpin as semver"))
    return root


def offline(wheels: Path, *lines: str) -> str:
    return "\n".join(["streamparse", "--no-index", f"--find-links {wheels}", *lines]) + "\n"


def prepare(root: Path, home: Path, options: dict | None = None, rebuild: bool = False):
    said: list[str] = []
    env = virtualenvs.prepare(read_project(root), home, options or {}, said.append, rebuild)
    return env, "\n".join(said)


def run(python: str, code: str) -> str:
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                          cwd="/").stdout.strip()


def entries(home: Path) -> list[str]:
    cache = home / "virtualenvs"
    return sorted(p.name for p in cache.iterdir() if p.is_dir() and p.name != "by-name") \
        if cache.is_dir() else []


def test_a_virtualenv_is_built_once_then_reused_and_its_pins_win(tmp_path, wheels):
    wheel(wheels, "texttable", "99.0")  # in heronbridge's environment too (streamparse's)
    root = project(tmp_path, offline(wheels, "hbpin==1.0", "texttable==99.0"))
    home = tmp_path / "home"
    env, said = prepare(root, home)
    assert env.environment is not None and env.environment.built
    assert "building its virtualenv from" in said and "semver2.txt" in said, said
    assert "+ hbpin==1.0" in said, said  # the installer's own progress
    python = env.python
    assert python == env.environment.python and Path(python).parent.parent.parent == \
        home / "virtualenvs"
    versions = run(python, "import hbpin, importlib.metadata as m, heronbridge.runtime.instance"
                           "; print(hbpin.__version__, m.version('texttable'))")
    assert versions == "1.0 99.0"  # heronbridge importable; the user's pin first
    assert stat.S_IMODE((home / "virtualenvs").stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(python).parent.parent.stat().st_mode) == 0o700
    assert (home / "virtualenvs" / "by-name" / "semver2").resolve() == \
        Path(python).parent.parent.resolve()

    again, said = prepare(root, home)
    assert not again.environment.built and again.python == python
    assert "reusing its virtualenv" in said and "building" not in said, said

    rebuilt, said = prepare(root, home, rebuild=True)
    assert rebuilt.environment.built and "asked to rebuild" in said, said


def test_two_pins_of_one_library_get_two_environments(tmp_path, wheels):
    home = tmp_path / "home"
    one, _ = prepare(project(tmp_path / "a", offline(wheels, "hbpin==1.0")), home)
    two, _ = prepare(project(tmp_path / "b", offline(wheels, "hbpin==2.0")), home)
    assert one.python != two.python
    assert run(one.python, "import hbpin; print(hbpin.__version__)") == "1.0"
    assert run(two.python, "import hbpin; print(hbpin.__version__)") == "2.0"


def test_the_loader_imports_components_with_the_topologys_own_packages(tmp_path, wheels):
    root = uses_hbpin(project(tmp_path, offline(wheels, "hbpin==2.0")))
    env, _ = prepare(root, tmp_path / "home")
    with pytest.raises(Exception, match="hbpin"):  # not in heronbridge's environment
        load_project(root, "semver2")
    plan = load_project(root, "semver2", python=env.python).plan
    assert plan.config[envs.TASK_PYTHON] == env.python


def test_a_pin_that_breaks_the_runtime_is_refused_naming_the_package(tmp_path, wheels):
    root = project(tmp_path, offline(wheels, "cloudpickle==2.0.0"))
    home = tmp_path / "home"
    with pytest.raises(envs.EnvironmentBuildError,
                       match=r"topology 'semver2': .*semver2\.txt installs what would break "
                             r"its tasks: cloudpickle 2\.0\.0 .*needs cloudpickle>=3"):
        prepare(root, home)
    assert entries(home) == []  # nothing partly built left behind


def test_a_requirement_that_does_not_resolve_is_named_with_its_file(tmp_path, wheels):
    root = project(tmp_path, offline(wheels, "hbpin==7.0"))
    home = tmp_path / "home"
    with pytest.raises(envs.EnvironmentBuildError,
                       match=r"topology 'semver2': .*virtualenvs/semver2\.txt cannot be "
                             r"installed: .*hbpin"):
        prepare(root, home)
    assert entries(home) == []


def test_an_interpreter_that_does_not_match_is_refused_before_building(tmp_path):
    fake = tmp_path / "python3.9"
    fake.write_text("#!/bin/sh\necho '{\"version\": \"3.9.18\", \"tag\": "
                    "\"cpython-39-x86_64-linux-gnu\", \"platform\": \"linux-x86_64\"}'\n")
    fake.chmod(0o755)
    home = tmp_path / "home"
    root = project(tmp_path, "hbpin==1.0\n", virtualenv_flags=f"-p {fake}")
    with pytest.raises(virtualenvs.VirtualenvError,
                       match=r"topology 'semver2': .*config\.json.*virtualenv_flags.*names "
                             r".*python3\.9 \(Python 3\.9\.18.*expected an interpreter of that "
                             r"version"):
        prepare(root, home)
    root = project(tmp_path / "x", "hbpin==1.0\n", virtualenv_flags="--relocatable")
    with pytest.raises(virtualenvs.VirtualenvError, match="'--relocatable'; expected only"):
        prepare(root, home)
    root = project(tmp_path / "y", "hbpin==1.0\n", virtualenv_flags="-p no-such-python-31")
    with pytest.raises(virtualenvs.VirtualenvError, match="'no-such-python-31', which is not "
                                                          "found"):
        prepare(root, home)
    assert entries(home) == []


def test_what_heronbridge_already_has_builds_nothing_and_use_virtualenv_false_too(tmp_path):
    home = tmp_path / "home"
    env, said = prepare(project(tmp_path, "streamparse\nheronbridge\n"), home)
    assert env.python is None
    assert "asks for nothing heronbridge's environment lacks (streamparse (" in said, said
    env, said = prepare(project(tmp_path / "off", "hbpin==1.0\n", use_virtualenv=False), home)
    assert env.python is None and said == ""
    assert entries(home) == []


def test_an_interrupted_build_is_removed_saying_so(tmp_path, wheels):
    root = project(tmp_path, offline(wheels, "hbpin==1.0"))
    home = tmp_path / "home"
    env, _ = prepare(root, home)
    entry = Path(env.python).parent.parent
    (entry / envs.MARKER).unlink()  # as a build killed before its end leaves it
    again, said = prepare(root, home)
    assert again.environment.built and "(an interrupted build)" in said, said
    assert run(again.python, "import hbpin; print(hbpin.__version__)") == "1.0"


def test_a_cache_entry_others_can_write_is_not_trusted(tmp_path, wheels):
    root = project(tmp_path, offline(wheels, "hbpin==1.0"))
    home = tmp_path / "home"
    env, _ = prepare(root, home)
    entry = Path(env.python).parent.parent
    os.chmod(entry, 0o777)
    with pytest.raises(envs.EnvironmentBuildError, match=r"is not trusted: .* is writable by "
                                                         r"others \(mode 777\)"):
        prepare(root, home)
    os.chmod(entry, 0o700)
    os.chmod(entry / envs.MARKER, 0o666)
    with pytest.raises(envs.EnvironmentBuildError, match="is not trusted"):
        prepare(root, home)


def test_install_virtualenv_false_uses_the_named_environment_or_says_why(tmp_path, wheels):
    home = tmp_path / "home"
    root = project(tmp_path, offline(wheels, "hbpin==1.0"), install_virtualenv=False)
    with pytest.raises(virtualenvs.VirtualenvError,
                       match=r"sets install_virtualenv false, so its tasks run in the "
                             r"virtualenv named 'semver2' .*which is missing"):
        prepare(root, home)
    built, _ = prepare(project(tmp_path / "b", offline(wheels, "hbpin==1.0")), home)
    env, said = prepare(root, home)
    assert env.python is not None and Path(env.python).resolve() == \
        Path(built.python).resolve()
    assert "install_virtualenv is false" in said
    named = project(tmp_path / "n", offline(wheels, "hbpin==2.0"), virtualenv_name="pins")
    env, _ = prepare(named, home)
    assert (home / "virtualenvs" / "by-name" / "pins").resolve() == \
        Path(env.python).parent.parent.resolve()


def test_wheels_for_another_platform_are_refused_naming_the_topology(tmp_path):
    shipped = tmp_path / "shipped"
    wheel(shipped, "hbpin", "1.0", tag="cp311-cp311-win_amd64")
    spec = envs.Spec("topology 'semver2'", "virtualenvs/semver2.txt", ("hbpin==1.0",),
                     envs.this_interpreter())
    cache = envs.Cache(tmp_path / "home" / "virtualenvs")
    with pytest.raises(envs.EnvironmentBuildError,
                       match=r"topology 'semver2': virtualenvs/semver2\.txt cannot be "
                             r"installed from the wheels shipped with it"):
        cache.install_offline(spec, shipped, lambda _line: None)
    assert entries(tmp_path / "home") == []
    wheel(shipped, "hbpin", "1.0")
    env = cache.install_offline(spec, shipped, lambda _line: None)
    assert env.built and run(env.python, "import hbpin; print(hbpin.__version__)") == "1.0"


def test_the_spark_package_ships_the_environment_as_wheels_a_host_installs_offline(
        tmp_path, wheels):
    from heronbridge.runtime.scheduler.package import (
        ENVIRONMENT,
        MANIFEST,
        build,
        environment_of,
    )

    root = uses_hbpin(project(tmp_path, offline(wheels, "hbpin==2.0")))
    env, _ = prepare(root, tmp_path / "home")
    plan = load_project(root, "semver2", python=env.python).plan
    workdir = tmp_path / "submitted"
    (workdir / "resources").mkdir(parents=True)
    package = build(plan, "semver2-1", workdir, tmp_path / "package.tar.gz")
    copy = tmp_path / "unpacked"
    with tarfile.open(package) as tar:
        tar.extractall(copy, filter="data")
    shipped = environment_of(copy)
    assert json.loads((copy / MANIFEST).read_text())["environment"] == shipped
    assert shipped["root"] == str(Path(env.python).parent.parent)
    assert shipped["requirements"] == ["hbpin==2.0"]
    assert [p.name for p in (copy / ENVIRONMENT).iterdir()] == ["hbpin-2.0-py3-none-any.whl"]

    said: list[str] = []
    host = envs.install_shipped(shipped, copy / ENVIRONMENT, "topology 'semver2'",
                                tmp_path / "host" / "virtualenvs", said.append)
    assert host.built and run(host.python, "import hbpin; print(hbpin.__version__)") == "2.0"
    again = envs.install_shipped(shipped, copy / ENVIRONMENT, "topology 'semver2'",
                                 tmp_path / "host" / "virtualenvs", said.append)
    assert not again.built and again.root == host.root  # cached on the host by content
    assert "reusing its virtualenv" in said[-1]

    other = {**shipped, "interpreter": {**shipped["interpreter"], "version": "3.9.18",
                                        "tag": "cpython-39-x86_64-linux-gnu"}}
    with pytest.raises(envs.EnvironmentBuildError,
                       match=r"topology 'semver2': .*semver2\.txt was built for Python 3\.9\.18"
                             r" .*expected the same Python on every host"):
        envs.install_shipped(other, copy / ENVIRONMENT, "topology 'semver2'",
                             tmp_path / "other" / "virtualenvs", said.append)


# -- what heronbridge provides, what cannot be built, and what the tasks import ----------


@pytest.mark.parametrize("line", [
    "git+git://github.com/srujun/streamparse.git#egg=streamparse",  # a course's, as found
    "streamparse==3.16.0",
    "streamparse[all] >= 3.0 ; python_version >= '3'",
    "-e git+https://github.com/Parsely/streamparse.git@v3.16.0#egg=streamparse",
    "git+https://github.com/Parsely/pystorm.git@master",
    "streamparse @ git+https://github.com/Parsely/streamparse.git",
    "https://files.example.invalid/packages/streamparse-3.16.0.tar.gz",
    "https://github.com/Parsely/streamparse/archive/refs/tags/v3.16.0.zip",
    "./vendor/pystorm",
    "-e ../streamparse",
    "/opt/wheels/pystorm-3.1.4-py3-none-any.whl",
    "PyStorm==3.1.0 --hash=sha256:0123456789abcdef",
])
def test_streamparse_and_pystorm_in_any_form_are_heronbridges_own(tmp_path, line):
    home = tmp_path / "home"
    root = project(tmp_path, f"# streamparse # always required for streamparse projects\n"
                             f"{line}\n")
    env, said = prepare(root, home)
    assert env.python is None and entries(home) == []  # nothing built, nothing run by pip
    [told] = said.splitlines()
    assert f"{line} (line 2: heronbridge's own " in told, told
    assert "asks for nothing heronbridge's environment lacks" in told, told


def test_what_heronbridge_provides_is_not_installed_beside_what_must_be(tmp_path, wheels):
    root = project(tmp_path, offline(wheels, "hbpin==1.0",
                                     "git+git://github.com/srujun/streamparse.git"
                                     "#egg=streamparse", "pystorm==3.0.0"))
    env, said = prepare(root, tmp_path / "home")
    told = [line for line in said.splitlines() if "heronbridge provides its tasks itself" in line]
    assert len(told) == 1 and "line 5: heronbridge's own streamparse" in told[0] and \
        "pystorm==3.0.0 (line 6: heronbridge's own pystorm" in told[0], said
    assert "streamparse (line 1" in told[0]  # the quickstart's plain `streamparse` too
    assert envs.frozen(Path(env.python).parent.parent) == ["hbpin==1.0"]


def test_a_line_that_cannot_be_built_is_named_with_how_to_run_without_it(tmp_path, wheels):
    home = tmp_path / "home"
    for line, said, other in (
            ("git+git://example.invalid/lib.git#egg=lib", "Unsupported Git URL", "hbpin==1.0"),
            ("hbpin==7.0", "hbpin", "streamparse>=3")):
        root = project(tmp_path / line.split(":")[0], offline(wheels, line, other))
        with pytest.raises(envs.EnvironmentBuildError) as raised:
            prepare(root, home)
        text = str(raised.value)
        assert re.search(r"topology 'semver2': .*virtualenvs/semver2\.txt cannot be installed: "
                         rf"line 4, `{re.escape(line)}`: .*{said}", text), text
        assert "pass -o use_virtualenv=false" in text, text
        assert entries(home) == []
    root = project(tmp_path / "off", offline(wheels, "git+git://example.invalid/lib.git"),
                   use_virtualenv=False)
    env, said = prepare(root, home)
    assert env.python is None  # the way round it works


def test_a_pin_of_what_the_tasks_do_not_import_is_the_projects_own(tmp_path, wheels):
    # pykafka pins kazoo==2.5.0; heronbridge needs kazoo>=2.10, but only where the state
    # manager runs: the stream manager and the master, never a task.
    wheel(wheels, "kazoo", "2.5.0")
    wheel(wheels, "pykafka", "2.8.0", requires=("kazoo==2.5.0",))
    root = project(tmp_path, offline(wheels, "pykafka==2.8.0"))
    env, _ = prepare(root, tmp_path / "home")
    assert run(env.python, "import kazoo, pykafka, heronbridge.runtime.instance.__main__, "
                           "heronbridge.shims.storm.lean; print(kazoo.__version__)") == "2.5.0"


def test_a_pin_that_breaks_the_tasks_is_refused_before_anything_is_installed(tmp_path, wheels):
    wheel(wheels, "msgpack", "0.6.2")  # heronbridge's frames need msgpack>=1.0
    wheel(wheels, "oldclient", "1.0", requires=("msgpack==0.6.2",))
    root = project(tmp_path, offline(wheels, "hbpin==1.0", "oldclient==1.0"))
    home, said = tmp_path / "home", []
    with pytest.raises(envs.EnvironmentBuildError) as raised:
        virtualenvs.prepare(read_project(root), home, {}, said.append)
    text = str(raised.value)
    assert re.search(r"semver2\.txt installs what would break its tasks: msgpack 0\.6\.2 \(the "
                     r"tasks run heronbridge: heronbridge needs msgpack>=1\.0; required by "
                     r"oldclient\)", text), text
    assert "-o use_virtualenv=false" in text
    assert not [line for line in said if "+ hbpin" in line or "Installed" in line], said
    assert entries(home) == []


def test_requirement_lines_are_numbered_as_the_file_numbers_them():
    text = "# a comment\n\nhbpin==1.0  # why\nfoo \\\n  >= 2\n--no-index\n"
    assert reqs.lines(text) == [(3, "hbpin==1.0"), (4, "foo   >= 2"), (6, "--no-index")]
    assert reqs.name_of("--no-index") is None and reqs.name_of("foo   >= 2") == "foo"
