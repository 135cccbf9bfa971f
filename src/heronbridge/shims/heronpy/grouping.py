"""heronpy custom groupings (ICustomGrouping) on the runtime's custom grouping.

The runtime builds one custom grouping per (emitting task, stream, subscriber) from an
import path, then calls `prepare(context, stream, target_tasks)` and `choose_tasks(values)`.
heronpy's grouping is a pickled ICustomGrouping (or the class path of one), which the
loader keeps in the source component's config under the subscriber and stream; the
target tasks tell which subscriber this is.
"""

from __future__ import annotations

import base64
import pickle
from typing import Any

from heronbridge.runtime.errors import where
from heronbridge.runtime.plan.logical import resolve_import_path

from . import HeronpyError, keys
from .config import component_view
from .context import HeronpyContext


class HeronpyGrouping:
    def prepare(self, context: Any, stream: str, target_tasks: list[int]) -> None:
        loc = where(context.topology_name, context.component_id, context.task_id)
        bolt = context.task_to_component[target_tasks[0]]
        try:
            blob = context.config[keys.CUSTOM_GROUPINGS][bolt][stream]
            grouping = pickle.loads(base64.b64decode(blob))  # noqa: S301 - the user's own
            if isinstance(grouping, str):  # heronpy's Grouping.custom("module.Class")
                grouping = resolve_import_path(grouping)()
        except Exception as exc:
            msg = (f"{loc}: cannot load the custom grouping of {bolt!r} on stream "
                   f"{stream!r}: {type(exc).__name__}: {exc}")
            raise HeronpyError(msg) from exc
        heron_context = HeronpyContext(context, component_view(context.config), loc)
        grouping.prepare(heron_context, context.component_id, stream, list(target_tasks))
        self.choose_tasks = grouping.choose_tasks  # type: ignore[method-assign]  # its own, per tuple

    def choose_tasks(self, values: list) -> list[int]:
        msg = "choose_tasks called before prepare"
        raise HeronpyError(msg)
