"""askgate's A2A Agent Card: HTTP+JSON and JSON-RPC interfaces, bearer auth, and the optional
``elicitation/v1`` extension (protocols.md §1.2). Built per request so the URLs name the host the
caller reached."""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from askgate.protocols.a2a_carriage import EXTENSION_URI

REST_PATH = "/a2a"
RPC_PATH = "/a2a/rpc"


def agent_card(base_url: str, *, version: str = "0.1.0") -> AgentCard:
    base = base_url.rstrip("/")
    return AgentCard(
        name="askgate",
        description="A broker for asks: send it a question for a person, agent or service and get the checked "
                    "answer back; or answer the asks offered to you.",
        version=version,
        supported_interfaces=[
            AgentInterface(url=base + REST_PATH, protocol_binding=TransportProtocol.HTTP_JSON.value,
                           protocol_version=PROTOCOL_VERSION_1_0),
            AgentInterface(url=base + RPC_PATH, protocol_binding=TransportProtocol.JSONRPC.value,
                           protocol_version=PROTOCOL_VERSION_1_0),
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=False,
            extensions=[AgentExtension(
                uri=EXTENSION_URI, required=False,
                description="Typed elicitation: input-required status messages carry an elicitation/v1 data part "
                            "with the flat requestedSchema; answers carry {action, content}.")],
        ),
        security_schemes={"bearer": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(
            scheme="bearer", description="an askgate API token"))},
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(id="ask", name="Ask a respondent",
                       description="Send an elicitation/v1 request (or any askgate dialect document in an "
                                   "askgate/ask data part) addressed to respondents; the task completes with "
                                   "the checked answer.",
                       tags=["ask", "elicitation", "approval"]),
            AgentSkill(id="answer", name="Answer asks offered to you",
                       description="Send any message: the task enters input-required with the next ask "
                                   "offered to you; your next message on that task is the answer.",
                       tags=["answer", "elicitation"]),
        ],
    )
