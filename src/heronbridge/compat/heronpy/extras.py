"""Kept importable for code written or migrated before the heronpy host moved: this name
is the module heronbridge.shims.heronpy.extras itself (the same classes and functions)."""

import sys

from heronbridge.shims.heronpy import extras

sys.modules[__name__] = extras
