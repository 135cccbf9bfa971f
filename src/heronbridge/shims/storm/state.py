"""The opt-in `state` for streamparse (pystorm) spouts and bolts, where streamparse code
imports it from (see shims/common/state.py):

    from heronbridge.shims.storm.state import StatefulMixin
"""

from ..common.state import StatefulMixin, after_save, before_save, is_stateful

__all__ = ["StatefulMixin", "after_save", "before_save", "is_stateful"]
