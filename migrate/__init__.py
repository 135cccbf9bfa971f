"""The libcst codemod from Storm-era Python (streamparse, pystorm, storm.py) to heronpy."""


class MigrateError(Exception):
    """Root of the errors the codemod raises."""
