"""The package's version, in one place: ``pyproject.toml`` reads it at build time, ``sleepcompact`` at import
(cheaper than asking ``importlib.metadata``)."""

__version__ = "0.2.0"
