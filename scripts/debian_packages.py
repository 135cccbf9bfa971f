"""Install Debian packages the tests need, when they are missing: `python
scripts/debian_packages.py PACKAGE...` (uses sudo unless run as root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def missing(packages: list[str]) -> list[str]:
    out = []
    for package in packages:
        status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                                capture_output=True, text=True, check=False)
        if "install ok installed" not in status.stdout:
            out.append(package)
    return out


def main(packages: list[str]) -> int:
    if not shutil.which("dpkg-query"):
        print(f"not a Debian system: install {' '.join(packages)} yourself", file=sys.stderr)
        return 1
    needed = missing(packages)
    if not needed:
        return 0
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"installing Debian packages: {' '.join(needed)}", file=sys.stderr)
    for command in (["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends", *needed]):
        done = subprocess.run([*sudo, *command], env=env, check=False)
        if done.returncode:
            print(f"{' '.join(command)} failed with exit code {done.returncode}",
                  file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
