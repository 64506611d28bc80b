"""A Python client for the askgate HTTP API (httpx): ``Client`` (blocking) and ``AsyncClient``.

``ask(...)`` hands an ask over in any dialect and waits for its outcome, returning the typed canonical
:class:`~askgate.core.model.Answer`; ``elicit``, ``query`` and ``approve`` build the A2A/MCP elicitation,
AQP and ACS documents for the common cases. Errors raise :class:`AskgateHTTPError` carrying the server's
RFC 9457 problem document.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from askgate.core.model import Answer, ApprovalDecision

DEFAULT_URL = "http://127.0.0.1:8765"
_POLL = 30.0  # one long-poll request waits at most this long; the client loops


class AskgateHTTPError(Exception):
    """A non-2xx answer from askgate; ``problem`` is the RFC 9457 document (``faults`` inside)."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status} {problem.get('code', '')}: {problem.get('detail') or problem.get('title', '')}")
        self.status = status
        self.problem = problem

    @property
    def code(self) -> str | None:
        return self.problem.get("code")

    @property
    def faults(self) -> list[dict[str, Any]]:
        return list(self.problem.get("faults", []))


class AskTimeout(Exception):
    """The client stopped waiting before the ask ended (the ask itself lives on in askgate)."""

    def __init__(self, view: dict[str, Any]) -> None:
        super().__init__(f"ask {view.get('id')} still {view.get('state')}")
        self.view = view


def answer_from_view(view: dict[str, Any]) -> Answer | None:
    """The typed canonical answer of an ask view (None while the ask is open)."""
    data = view.get("outcome")
    if data is None:
        return None
    data = dict(data)
    raw = data.pop("value", None)
    value: Any = raw
    if isinstance(raw, dict) and view.get("spec", {}).get("kind") == "approval":
        value = ApprovalDecision.model_validate(raw)
    elif isinstance(raw, dict):
        value = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    return Answer.model_validate(data).model_copy(update={"value": value})


# ---- documents for the helpers ---------------------------------------------------------------------


def elicitation_doc(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"message": message, "requestedSchema": schema}


def query_doc(prompt: str, *, format: str = "text", choices: list[str] | None = None,
              json_schema: dict[str, Any] | None = None, max_length: int | None = None, type: str = "custom",
              subject: Any = None, instructions: str | None = None, expires_in: float = 3600.0,
              timing: str = "immediate", consent_mode: str = "not_required", consent_scope: str | None = None,
              query_id: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"format": format}
    if choices is not None:
        response["choices"] = choices
    if json_schema is not None:
        response["jsonSchema"] = json_schema
    if max_length is not None:
        response["maxLength"] = max_length
    doc: dict[str, Any] = {
        "protocolVersion": "2026-07-30",
        "queryId": query_id or str(uuid.uuid4()),
        "type": type,
        "subject": subject if subject is not None else {},
        "prompt": prompt,
        "timing": timing,
        "consentMode": consent_mode,
        "response": response,
        "delivery": {"binding": "other"},
        "expiresAt": (datetime.now(UTC) + timedelta(seconds=expires_in)).isoformat().replace("+00:00", "Z"),
    }
    if instructions is not None:
        doc["instructions"] = instructions
    if consent_scope is not None:
        doc["consentScope"] = consent_scope
    return doc


def approval_doc(question: str, *, approver: str, approver_type: str = "human", options: list[str] | None = None,
                 timeout_seconds: int = 300, disposition: str = "deny", context: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"approver": {"type": approver_type, "id": approver}, "question": question,
                           "timeout_seconds": timeout_seconds, "timeout_disposition": disposition}
    if options:
        doc["options"] = options
    if context is not None:
        doc["context"] = context
    return doc


def _params(dialect: str | None, respondents: list[str] | None, rule: str | None, timeout: float | None,
            respondent_kind: str | None) -> list[tuple[str, str]]:
    params: list[tuple[str, str]] = []
    if dialect:
        params.append(("dialect", dialect))
    for r in respondents or ():
        params.append(("respondent", r))
    if respondent_kind:
        params.append(("respondent_kind", respondent_kind))
    if rule:
        params.append(("rule", rule))
    if timeout is not None:
        params.append(("timeout", str(timeout)))
    return params


def _check(resp: httpx.Response) -> dict[str, Any]:
    if resp.status_code >= 400:
        try:
            problem = resp.json()
        except ValueError:
            problem = {"title": resp.text[:200]}
        raise AskgateHTTPError(resp.status_code, problem if isinstance(problem, dict) else {"title": str(problem)})
    return resp.json()


def _headers(token: str | None) -> dict[str, str]:
    token = token or os.environ.get("ASKGATE_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


# ---- the async client -------------------------------------------------------------------------------


class AsyncClient:
    def __init__(self, base_url: str | None = None, token: str | None = None, *,
                 transport: httpx.AsyncBaseTransport | None = None, timeout: float = 60.0) -> None:
        self._http = httpx.AsyncClient(base_url=base_url or os.environ.get("ASKGATE_URL", DEFAULT_URL),
                                       headers=_headers(token), transport=transport,
                                       timeout=httpx.Timeout(timeout, read=_POLL + 30))

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def create(self, doc: Any, *, dialect: str | None = None, respondents: list[str] | None = None,
                     respondent_kind: str | None = None, rule: str | None = None, timeout: float | None = None,
                     idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return _check(await self._http.post("/v1/asks", json=doc, headers=headers,
                                            params=_params(dialect, respondents, rule, timeout, respondent_kind)))

    async def get(self, ask_id: str) -> dict[str, Any]:
        return _check(await self._http.get(f"/v1/asks/{ask_id}"))

    async def list(self, **filters: Any) -> dict[str, Any]:
        return _check(await self._http.get("/v1/asks", params={k: v for k, v in filters.items() if v is not None}))

    async def answer(self, ask_id: str, payload: Any, *, idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return _check(await self._http.post(f"/v1/asks/{ask_id}/answer", json=payload, headers=headers))

    async def withdraw(self, ask_id: str) -> dict[str, Any]:
        return _check(await self._http.post(f"/v1/asks/{ask_id}/withdraw"))

    async def signal(self, ask_id: str, signal: str) -> dict[str, Any]:
        return _check(await self._http.post(f"/v1/asks/{ask_id}/signal", json={"signal": signal}))

    async def audit(self, ask_id: str) -> dict[str, Any]:
        return _check(await self._http.get(f"/v1/asks/{ask_id}/audit"))

    async def wait(self, ask_id: str, timeout: float | None = None) -> dict[str, Any]:
        """Long-poll until the ask is terminal; AskTimeout after ``timeout`` seconds (None: forever)."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            step = _POLL if end is None else max(0.0, min(_POLL, end - time.monotonic()))
            view = _check(await self._http.get(f"/v1/asks/{ask_id}/wait", params={"timeout": step}))
            if view.get("terminal"):
                return view
            if end is not None and time.monotonic() >= end:
                raise AskTimeout(view)

    async def ask(self, doc: Any, *, dialect: str | None = None, respondents: list[str] | None = None,
                  respondent_kind: str | None = None, rule: str | None = None, timeout: float | None = None,
                  wait: float | None = None) -> Answer:
        """Create the ask and wait for its outcome; returns the typed canonical Answer."""
        view = await self.create(doc, dialect=dialect, respondents=respondents, respondent_kind=respondent_kind,
                                 rule=rule, timeout=timeout)
        final = view if view.get("terminal") else await self.wait(view["id"], wait)
        answer = answer_from_view(final)
        assert answer is not None
        return answer

    async def elicit(self, message: str, schema: dict[str, Any], *, respondent: str,
                     timeout: float | None = None) -> Answer:
        return await self.ask(elicitation_doc(message, schema), respondents=[respondent], timeout=timeout)

    async def query(self, prompt: str, *, respondent: str, **kwargs: Any) -> Answer:
        return await self.ask(query_doc(prompt, **kwargs), dialect="aqp", respondents=[respondent])

    async def approve(self, question: str, *, approver: str, **kwargs: Any) -> Answer:
        return await self.ask(approval_doc(question, approver=approver, **kwargs), dialect="acs")


# ---- the blocking client ----------------------------------------------------------------------------


class Client:
    def __init__(self, base_url: str | None = None, token: str | None = None, *,
                 transport: httpx.BaseTransport | None = None, timeout: float = 60.0) -> None:
        self._http = httpx.Client(base_url=base_url or os.environ.get("ASKGATE_URL", DEFAULT_URL),
                                  headers=_headers(token), transport=transport,
                                  timeout=httpx.Timeout(timeout, read=_POLL + 30))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def create(self, doc: Any, *, dialect: str | None = None, respondents: list[str] | None = None,
               respondent_kind: str | None = None, rule: str | None = None, timeout: float | None = None,
               idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return _check(self._http.post("/v1/asks", json=doc, headers=headers,
                                      params=_params(dialect, respondents, rule, timeout, respondent_kind)))

    def get(self, ask_id: str) -> dict[str, Any]:
        return _check(self._http.get(f"/v1/asks/{ask_id}"))

    def list(self, **filters: Any) -> dict[str, Any]:
        return _check(self._http.get("/v1/asks", params={k: v for k, v in filters.items() if v is not None}))

    def answer(self, ask_id: str, payload: Any, *, idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return _check(self._http.post(f"/v1/asks/{ask_id}/answer", json=payload, headers=headers))

    def withdraw(self, ask_id: str) -> dict[str, Any]:
        return _check(self._http.post(f"/v1/asks/{ask_id}/withdraw"))

    def signal(self, ask_id: str, signal: str) -> dict[str, Any]:
        return _check(self._http.post(f"/v1/asks/{ask_id}/signal", json={"signal": signal}))

    def audit(self, ask_id: str) -> dict[str, Any]:
        return _check(self._http.get(f"/v1/asks/{ask_id}/audit"))

    def wait(self, ask_id: str, timeout: float | None = None) -> dict[str, Any]:
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            step = _POLL if end is None else max(0.0, min(_POLL, end - time.monotonic()))
            view = _check(self._http.get(f"/v1/asks/{ask_id}/wait", params={"timeout": step}))
            if view.get("terminal"):
                return view
            if end is not None and time.monotonic() >= end:
                raise AskTimeout(view)

    def ask(self, doc: Any, *, dialect: str | None = None, respondents: list[str] | None = None,
            respondent_kind: str | None = None, rule: str | None = None, timeout: float | None = None,
            wait: float | None = None) -> Answer:
        view = self.create(doc, dialect=dialect, respondents=respondents, respondent_kind=respondent_kind,
                           rule=rule, timeout=timeout)
        final = view if view.get("terminal") else self.wait(view["id"], wait)
        answer = answer_from_view(final)
        assert answer is not None
        return answer

    def elicit(self, message: str, schema: dict[str, Any], *, respondent: str, timeout: float | None = None) -> Answer:
        return self.ask(elicitation_doc(message, schema), respondents=[respondent], timeout=timeout)

    def query(self, prompt: str, *, respondent: str, **kwargs: Any) -> Answer:
        return self.ask(query_doc(prompt, **kwargs), dialect="aqp", respondents=[respondent])

    def approve(self, question: str, *, approver: str, **kwargs: Any) -> Answer:
        return self.ask(approval_doc(question, approver=approver, **kwargs), dialect="acs")


__all__ = ["AskTimeout", "AskgateHTTPError", "AsyncClient", "Client", "answer_from_view", "approval_doc",
           "elicitation_doc", "query_doc"]
