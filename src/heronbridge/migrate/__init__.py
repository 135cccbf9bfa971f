"""The libcst codemod from Storm-era Python (streamparse, pystorm, storm.py) to heronpy."""


from heronbridge.errors import HeronbridgeError


class MigrateError(HeronbridgeError):
    """Root of the errors the codemod raises."""
