"""Build the JVM task host (jvm/, a Maven project): `mvn package`, which runs its tests,
into jvm/target/heronbridge-jvm-host.jar; print the jar's path.

Run: python scripts/build_jvm_host.py [--skip-tests] [--vectors PATH]

Maven resolves storm-client, protobuf, msgpack and protoc itself from Maven Central.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POM = ROOT / "jvm" / "pom.xml"
JAR = ROOT / "jvm" / "target" / "heronbridge-jvm-host.jar"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--vectors", help="the link protocol's test vectors (default: the "
                        "runtime's own, src/heronbridge/runtime/wire/protocol_vectors.json)")
    args = parser.parse_args()
    mvn = shutil.which("mvn")
    if mvn is None:
        print("building the JVM task host needs Apache Maven: expected `mvn` on PATH, found none "
              "(python scripts/debian_packages.py maven openjdk-17-jdk-headless)", file=sys.stderr)
        return 2
    command = [mvn, "-B", "-ntp", "-Dstyle.color=never", "-f", str(POM), "package"]
    if args.skip_tests:
        command.append("-DskipTests")
    if args.vectors:
        command.append(f"-Dheronbridge.vectors={Path(args.vectors).resolve()}")
    done = subprocess.run(command, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0 or not JAR.is_file():
        print(f"building the JVM task host failed (exit code {done.returncode}): "
              f"{' '.join(command)}", file=sys.stderr)
        return done.returncode or 1
    print(JAR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
