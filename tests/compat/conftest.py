"""heronpy is installed apart (`pip install --no-deps heronpy==0.20.5`, tox's tests env
does it); where it is not, the heronpy tests are not collected rather than failing to
import."""

from heronbridge.compat.heronpy import heronpy_installed

if not heronpy_installed():
    collect_ignore_glob = ["heronpy_compat/*", "test_projects.py"]
