"""Orchestration: store + pure lifecycle + codecs; deadlines, waiters and outcome callbacks."""

from askgate.broker.broker import Broker, Created, Idempotency, body_hash, utcnow
from askgate.broker.errors import BrokerError

__all__ = ["Broker", "BrokerError", "Created", "Idempotency", "body_hash", "utcnow"]
