"""askgate's A2A agent (a2a-sdk): the Agent Card at ``/.well-known/agent-card.json``, HTTP+JSON at
``/a2a`` and JSON-RPC at ``/a2a/rpc``, every A2A call authenticated with an askgate bearer token.
See docs/wire.md "A2A"."""

from askgate.server.a2a.endpoint import mount_a2a

__all__ = ["mount_a2a"]
