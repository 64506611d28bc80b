"""Broker plugins: the wire edges (push delivery, webhooks, agent respondents) hook the broker here.

A plugin sees every committed transition (:meth:`BrokerPlugin.after_commit`, run after the commit, so
nothing is sent for a change that was not saved), may add rows in the transaction that makes an ask
terminal (:meth:`BrokerPlugin.on_terminal`, returning True to keep the ask's sealed credentials for a
push that is still to come), and starts and stops with the broker (re-driving durable work on start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askgate.broker.broker import Broker
    from askgate.core.lifecycle import AskRecord, Transition
    from askgate.store import Tx


class BrokerPlugin:
    """Base class with no-op hooks; subclasses override what they need."""

    async def start(self, broker: Broker) -> None:
        """Called once the broker runs (after deadlines due at start-up were settled)."""

    async def stop(self) -> None:
        """Called before the broker stops; cancel background work."""

    async def on_terminal(self, tx: Tx, record: AskRecord) -> bool:
        """Inside the transaction that makes ``record`` terminal. True: keep its credentials."""
        return False

    def after_commit(self, tr: Transition) -> None:
        """After a transition was committed (any transition, terminal or not)."""

    def describe(self) -> dict[str, Any]:
        return {"plugin": type(self).__name__}
