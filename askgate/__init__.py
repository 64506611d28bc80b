"""askgate: one broker for every way an AI agent stops to ask."""

from askgate.errors import AskgateError, Fault

__all__ = ["AskgateError", "Fault", "__version__"]
__version__ = "0.1.0"
