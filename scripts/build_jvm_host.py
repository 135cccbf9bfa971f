"""Build the JVM task host (jvm/, a Maven project): `mvn package`, which runs its tests,
into jvm/target/heronbridge-jvm-host.jar; print the jar's path. A wheel's build does the
same (setup.py), and an editable install on first use (without the tests).

Run: python scripts/build_jvm_host.py [--skip-tests] [--vectors PATH]

Maven resolves storm-client, protobuf, msgpack and protoc itself from Maven Central.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from heronbridge.jvm import JvmError, build  # noqa: E402 - this checkout's, not an installed one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--vectors", type=Path,
                        help="the link protocol's test vectors (default: the runtime's own, "
                             "src/heronbridge/runtime/wire/protocol_vectors.json)")
    args = parser.parse_args()
    try:
        jar = build.build(ROOT, not args.skip_tests, lambda line: print(line, file=sys.stderr),
                          args.vectors)
    except JvmError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())
