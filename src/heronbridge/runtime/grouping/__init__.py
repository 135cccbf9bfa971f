"""Storm's groupings: which task of a subscriber receives each tuple."""

from .routers import NOWHERE, OutBuffer, Target, combine, make_router

__all__ = ["NOWHERE", "OutBuffer", "Target", "combine", "make_router"]
