"""Started first in a component's process under the tracing proxy (this folder leads its
PYTHONPATH): seeds its random numbers as the proxy asked (see trace/seed.py), then hands
over to the next `sitecustomize` on the path, if there is one."""

import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_value = os.environ.pop("HERONBRIDGE_TRACE_SEED", None)
if _value is not None:
    try:
        from heronbridge.conformance.trace.seed import boot
    except ImportError:  # an interpreter without heronbridge: the component runs unseeded
        pass
    else:
        boot(int(_value))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["sitecustomize"]
try:
    importlib.import_module("sitecustomize")
except ImportError:
    pass
