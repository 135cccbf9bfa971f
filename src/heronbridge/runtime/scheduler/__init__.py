"""Schedulers: `local` runs a topology's containers as processes on this host."""

from ..procfs import pid_alive
from .home import Home, default_home, default_state
from .local import Supervisor, running_scheduler, submit_plan

__all__ = ["Home", "Supervisor", "default_home", "default_state", "pid_alive",
           "running_scheduler", "submit_plan"]
