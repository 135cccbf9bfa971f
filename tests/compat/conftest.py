"""heronpy is installed apart (`pip install --no-deps heronpy==0.20.5`, tox's tests env
does it); where it is not, the heronpy tests are not collected rather than failing to
import."""

import importlib.util

import heronbridge.compat.heronpy  # noqa: F401 - the import hook heronpy needs

if importlib.util.find_spec("heronpy") is None:
    collect_ignore_glob = ["heronpy/*", "test_projects.py"]
