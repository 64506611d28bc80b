"""Operator settings for the wire edges, from the environment and into an outbound policy."""

from __future__ import annotations

import ipaddress

import pytest

from askgate.server.settings import Settings
from askgate.server.wire import outbound_policy


def test_wire_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKGATE_OUTBOUND_ALLOW", "10.0.0.0/8, hooks.internal ,")
    monkeypatch.setenv("ASKGATE_OUTBOUND_ALLOW_HTTP_LOOPBACK", "1")
    monkeypatch.setenv("ASKGATE_WEBHOOK_SECRETS", "svc=s3cret=with=equals,*=fallback")
    monkeypatch.setenv("ASKGATE_APPROVER_IDENTITIES", "mtls:approver.ops=agent:ops,principal:bot=agent:ops")
    s = Settings.from_env(port=9)
    assert s.outbound_allow == ("10.0.0.0/8", "hooks.internal") and s.outbound_allow_http_loopback
    assert s.webhook_secrets == (("svc", "s3cret=with=equals"), ("*", "fallback"))
    assert s.approver_identities == (("mtls:approver.ops", "agent:ops"), ("principal:bot", "agent:ops"))
    policy = outbound_policy(s)
    assert policy.host_allowed("HOOKS.internal") and policy.address_allowed(ipaddress.ip_address("10.2.3.4"))
    assert not policy.address_allowed(ipaddress.ip_address("192.168.0.1"))


def test_defaults_allow_nothing_private(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ASKGATE_OUTBOUND_ALLOW", "ASKGATE_WEBHOOK_SECRETS", "ASKGATE_APPROVER_IDENTITIES"):
        monkeypatch.delenv(name, raising=False)
    policy = outbound_policy(Settings.from_env())
    assert not policy.address_allowed(ipaddress.ip_address("127.0.0.1"))
    assert not policy.allow_http_loopback and policy.ssl_context is None
