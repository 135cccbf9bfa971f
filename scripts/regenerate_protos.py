"""Regenerate src/heronbridge/runtime/proto/*_pb2.py (and their type stubs, *_pb2.pyi) from
the .proto files next to them.

Run: python scripts/regenerate_protos.py          (rewrites the committed modules)
     python scripts/regenerate_protos.py --check  (exit 1 if they are stale)

Needs grpcio-tools at the version pinned in pyproject.toml's `proto` extra, because the
generated text depends on protoc's version.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent.parent / "src" / "heronbridge" / "runtime" / "proto"
PACKAGE = Path("heronbridge") / "runtime" / "proto"


def generate(out_dir: Path) -> dict[str, str]:
    """Run protoc over the .proto files; return {module file name: text}."""
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pkg = root / PACKAGE
        pkg.mkdir(parents=True)
        protos = sorted(PROTO_DIR.glob("*.proto"))
        for proto in protos:
            shutil.copy(proto, pkg / proto.name)
        include = Path(protoc.__file__).parent / "_proto"
        args = ["protoc", f"-I{root}", f"-I{include}", f"--python_out={root}", f"--pyi_out={root}",
                *[str(PACKAGE / p.name) for p in protos]]
        if protoc.main(args) != 0:
            msg = f"protoc failed on {[p.name for p in protos]}"
            raise SystemExit(msg)
        result = {}
        for module in sorted([*pkg.glob("*_pb2.py"), *pkg.glob("*_pb2.pyi")]):
            result[module.name] = module.read_text()
            if out_dir is not None:
                (out_dir / module.name).write_text(result[module.name])
        return result


def stale_modules() -> list[str]:
    """Names of committed modules that differ from freshly generated ones."""
    fresh = generate(None)
    committed = {p.name for p in [*PROTO_DIR.glob("*_pb2.py"), *PROTO_DIR.glob("*_pb2.pyi")]}
    stale = [n for n, text in fresh.items()
             if not (PROTO_DIR / n).exists() or (PROTO_DIR / n).read_text() != text]
    return sorted(stale + [n for n in committed if n not in fresh])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale modules")
    args = parser.parse_args()
    if args.check:
        stale = stale_modules()
        for name in stale:
            print(f"stale: src/heronbridge/runtime/proto/{name}")
        return 1 if stale else 0
    generate(PROTO_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
