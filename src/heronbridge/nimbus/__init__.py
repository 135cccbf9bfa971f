"""Nimbus's Thrift service, so that `sparse submit/list/kill` and Storm's own command
classes deploy and operate topologies on heronbridge unchanged.

The wire contract is Storm 2.8's (storm-client's IDL), declared in `nimbus.thrift`
beside this file: a server on it serves streamparse's older copy of the IDL too.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from types import ModuleType

from heronbridge.errors import HeronbridgeError

STORM_VERSION = "2.8.3"  # the Storm release whose Nimbus API this serves


class NimbusError(HeronbridgeError):
    """Root of the errors of the Nimbus endpoint (serving, submitting through it)."""


@cache
def idl() -> ModuleType:
    """The Thrift module of `nimbus.thrift` (structs, exceptions and the service)."""
    import thriftpy2

    path = files(__package__).joinpath("nimbus.thrift")
    with path.open() as f:
        return thriftpy2.load_fp(f, module_name="heronbridge_nimbus_thrift")
