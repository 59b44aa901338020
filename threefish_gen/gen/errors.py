"""The one exception type the command line turns into a one-line error (exit 2)."""


class GenError(Exception):
    """Bad input or an impossible request: reported as one line, never a traceback."""
