"""askgate: one broker for every way an AI agent stops to ask."""

from askgate.errors import AskgateError, Fault
from askgate.client import AsyncClient, Client

__all__ = ["AskgateError", "AsyncClient", "Client", "Fault", "__version__"]
__version__ = "0.1.0"
