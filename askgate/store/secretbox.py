"""Credentials at rest: sealed with Fernet so a database file or dump never shows them in clear.

The key comes from the operator (``ASKGATE_SECRET_KEY``) or, failing that, is generated once and kept in
the database's key/value table so every process on one database shares it. That protects against
secrets leaking through listings, logs, dumps of the ask tables and freed SQLite pages; an attacker with
the whole database and no operator key still wins, which is why the operator key is recommended.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken


def key_from_passphrase(passphrase: str) -> bytes:
    return base64.urlsafe_b64encode(hashlib.sha256(passphrase.encode()).digest())


class SecretBox:
    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    @staticmethod
    def new_key() -> bytes:
        return Fernet.generate_key()

    def seal(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def open(self, sealed: str) -> str | None:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            return None
