"""Kept importable for code written or migrated before the heronpy host moved: this name
is the module heronbridge.shims.heronpy.sink itself (the same classes and functions)."""

import sys

from heronbridge.shims.heronpy import sink

sys.modules[__name__] = sink
