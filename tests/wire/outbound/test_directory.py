"""The operator's respondent directory: ids named without an endpoint become the configured agents and
services; what an asker spelled out itself is kept."""

from __future__ import annotations

import pytest

from askgate.broker.directory import parse_directory, resolve
from askgate.core.model import Respondent
from askgate.core.routing import EscalationStep, Routing
from askgate.server.settings import Settings

DIRECTORY = parse_directory([("bot", "agent", "https://bot.example/a2a"), ("svc", "service", "https://svc.example/h"),
                             ("ops", "human", "")])


def test_named_ids_are_filled_in_everywhere_in_the_routing() -> None:
    routing = Routing(respondents=(Respondent(kind="human", id="bot"), Respondent(kind="human", id="alice")),
                      escalation=(EscalationStep(30, (Respondent(kind="human", id="svc"),)),))
    out = resolve(routing, DIRECTORY)
    assert out.respondents[0] == Respondent(kind="agent", id="bot", endpoint="https://bot.example/a2a")
    assert out.respondents[1] == Respondent(kind="human", id="alice")
    assert out.escalation[0].respondents[0] == Respondent(kind="service", id="svc", endpoint="https://svc.example/h")
    assert out.rule == routing.rule and out.escalation[0].after_seconds == 30


def test_an_askers_own_endpoint_is_kept_and_an_empty_directory_changes_nothing() -> None:
    mine = Respondent(kind="agent", id="bot", endpoint="https://elsewhere.example/", auth_method="mtls")
    routing = Routing(respondents=(mine,))
    assert resolve(routing, DIRECTORY).respondents == (mine,)
    assert resolve(routing, {}) is routing
    assert parse_directory([("ops", "human", "")])["ops"].endpoint is None


def test_directory_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKGATE_RESPONDENTS", "bot=agent@https://bot.example/a2a,svc=service@https://svc.example/h")
    s = Settings.from_env()
    assert s.respondent_directory == (("bot", "agent", "https://bot.example/a2a"),
                                      ("svc", "service", "https://svc.example/h"))
