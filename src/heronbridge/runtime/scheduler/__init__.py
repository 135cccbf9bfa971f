"""Schedulers: `local` runs a topology's containers as processes on this host."""

from ..procfs import pid_alive
from .local import (
    Home,
    Supervisor,
    default_home,
    default_state,
    running_scheduler,
    submit_plan,
)

__all__ = ["Home", "Supervisor", "default_home", "default_state", "pid_alive",
           "running_scheduler", "submit_plan"]
