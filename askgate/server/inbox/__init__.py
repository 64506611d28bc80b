"""The web inbox (issue #6): respondents see and answer asks, each rendered from its A2UI surface."""

from askgate.server.inbox.routes import build_router, mount_inbox

__all__ = ["build_router", "mount_inbox"]
