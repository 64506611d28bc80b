"""Wiring of the outbound edges into the broker: the outbound policy and the broker plugins built from
:class:`~askgate.server.settings.Settings` (push delivery of AQP answers, service webhooks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from askgate.broker.plugins import BrokerPlugin
from askgate.core.model import Respondent
from askgate.channels.outbound import OutboundPolicy
from askgate.server.settings import Settings

if TYPE_CHECKING:
    from askgate.broker import Broker
    from askgate.store import Store


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


def make_broker(settings: Settings, store: Store) -> Broker:
    """The broker ``askgate serve`` and :func:`askgate.server.app.create_app` run: one recipe for both."""
    from askgate.broker import Broker

    return Broker(store, allow_http_callbacks=settings.allow_http_callbacks, scheduler=settings.scheduler,
                  plugins=wire_plugins(settings), directory=respondent_directory(settings))


def respondent_directory(settings: Settings) -> dict[str, Respondent]:
    from askgate.broker.directory import parse_directory

    return parse_directory(settings.respondent_directory)
