"""The project's root exception. A leaf module: every layer's own root derives from it,
so the command line reports any of them, without a traceback, by catching one class."""


class HeronbridgeError(Exception):
    """Root of every error heronbridge raises on purpose."""
