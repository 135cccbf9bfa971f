"""Kept importable for code written or migrated before the heronpy host moved: this name
is the module heronbridge.shims.heronpy.migrated itself (the same classes and functions)."""

import sys

from heronbridge.shims.heronpy import migrated

sys.modules[__name__] = migrated
