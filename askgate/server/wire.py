"""Wiring of the outbound edges into the broker: the outbound policy and the broker plugins built from
:class:`~askgate.server.settings.Settings` (push delivery of AQP answers, service webhooks)."""

from __future__ import annotations

from askgate.broker.plugins import BrokerPlugin
from askgate.core.model import Respondent
from askgate.channels.outbound import OutboundPolicy
from askgate.server.settings import Settings


def outbound_policy(settings: Settings) -> OutboundPolicy:
    return OutboundPolicy.from_settings(settings.outbound_allow,
                                        allow_http_loopback=settings.outbound_allow_http_loopback,
                                        ca_file=settings.outbound_ca_file, client_cert=settings.outbound_client_cert,
                                        client_key=settings.outbound_client_key)


def wire_plugins(settings: Settings) -> list[BrokerPlugin]:
    from askgate.broker.push import PushDelivery
    from askgate.channels.webhooks import ServiceWebhooks

    policy = outbound_policy(settings)
    return [PushDelivery(policy), ServiceWebhooks(policy, dict(settings.webhook_secrets))]


def respondent_directory(settings: Settings) -> dict[str, Respondent]:
    from askgate.broker.directory import parse_directory

    return parse_directory(settings.respondent_directory)
