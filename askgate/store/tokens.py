"""API tokens: high-entropy random strings, stored only as their SHA-256 (no salt needed at 256 bits)."""

from __future__ import annotations

import hashlib
import secrets

ROLES = ("asker", "respondent", "admin")
PREFIX = "agk_"


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
