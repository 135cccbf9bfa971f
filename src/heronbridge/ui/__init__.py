"""`heronbridge ui`: one server for every topology a state manager knows.

It is a tracker: it reads the state manager's nodes and asks each topology master for
its metrics (through `runtime.control`), keeps a bounded history of them, and serves
Heron's tracker API, Storm UI's REST API v1, Prometheus `/metrics` and a web page.
"""

from heronbridge.errors import HeronbridgeError


class UIError(HeronbridgeError):
    """Root of every error the UI server raises."""


class NotFound(UIError):
    """A topology, component, task or file the request names does not exist."""


class BadRequest(UIError):
    """A request whose parameters cannot be served."""


class Forbidden(UIError):
    """A request without the token the server asks for."""
