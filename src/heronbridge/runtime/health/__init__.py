"""The health manager (Dhalion's detect, diagnose, resolve), one per topology, on by
default: sensors read the metrics the topology master gathers, detectors turn them into
symptoms, diagnosers into a diagnosis, and resolvers act (scale up through an update,
restart a slow instance) or deliberately do nothing (data skew under fields grouping),
each decision written to the topology's action log."""

from .config import HealthConfig
from .diagnosis import Diagnosis, diagnose
from .sensors import ComponentView, Window

__all__ = ["ComponentView", "Diagnosis", "HealthConfig", "Window", "diagnose"]
