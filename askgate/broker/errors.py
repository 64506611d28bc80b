"""Broker refusals, shaped so the HTTP edge can turn each into an RFC 9457 problem document."""

from __future__ import annotations

from typing import Any

from askgate.errors import AskgateError, Fault


class BrokerError(Exception):
    """A request the broker refuses: HTTP ``status``, a short ``code``, the faults, and extra members.

    ``extra`` becomes additional members of the problem document (e.g. the winning ``outcome`` of a
    lost answer race). Messages never contain credentials.
    """

    def __init__(self, status: int, code: str, title: str, *, detail: str | None = None,
                 faults: list[Fault] | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail or title)
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.faults = faults or []
        self.extra = extra or {}

    @classmethod
    def from_askgate(cls, exc: AskgateError, *, status: int | None = None) -> BrokerError:
        code = exc.code
        if status is None:
            status = {"not_json": 400, "unknown_dialect": 422, "unsupported": 422}.get(code, 422)
        return cls(status, code, exc.summary, detail=exc.summary, faults=list(exc.faults))


def not_found(what: str = "ask") -> BrokerError:
    return BrokerError(404, "not_found", f"no such {what}")


def forbidden(detail: str) -> BrokerError:
    return BrokerError(403, "forbidden", "forbidden", detail=detail)
