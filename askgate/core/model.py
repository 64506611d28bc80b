"""The canonical Ask and Answer every dialect normalises onto (protocols.md §6).

Codecs in ``askgate.protocols`` turn a dialect's document into an :class:`Ask` and an :class:`Answer`
back into the dialect's response. Everything between (routing, deadlines, consent, rendering, audit)
sees only these types, so a new dialect is one new codec.

Form field names are data, never attribute names: a field called ``__proto__`` or ``model_config`` is
an ordinary string in :attr:`FormSpec.fields` and an ordinary key in an answer's content.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Dialect(StrEnum):
    """How an ask arrived, and so how its answer must leave."""

    A2A_ELICITATION = "a2a-elicitation"
    MCP_ELICITATION = "mcp-elicitation"
    AQP = "aqp"
    ACS = "acs"
    CANONICAL = "canonical"


# --------------------------------------------------------------------------------------------------
# Answer specification: what a valid answer looks like.
# --------------------------------------------------------------------------------------------------

StringFormat = Literal["email", "uri", "date", "date-time"]


class Option(_Model):
    """One choice: the value sent on the wire and the label a person reads."""

    value: str
    label: str | None = None


class _FieldBase(_Model):
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


class StringField(_FieldBase):
    """Free text, optionally bounded and formatted. Lengths count code points."""

    kind: Literal["string"] = "string"
    min_length: int | None = None
    max_length: int | None = None
    format: StringFormat | None = None
    pattern: str | None = None  # MCP 2025-11-25 only; a conservative ECMA/Python common subset
    default: str | None = None


class NumberField(_FieldBase):
    """Any finite number (never a boolean), inclusive bounds."""

    kind: Literal["number"] = "number"
    minimum: float | int | None = None
    maximum: float | int | None = None
    default: float | int | None = None


class IntegerField(_FieldBase):
    """A whole number (``1.0`` counts), inclusive bounds."""

    kind: Literal["integer"] = "integer"
    minimum: int | None = None
    maximum: int | None = None
    default: int | None = None


class BooleanField(_FieldBase):
    kind: Literal["boolean"] = "boolean"
    default: bool | None = None


class ChoiceField(_FieldBase):
    """Exactly one of ``options`` (string ``enum``, ``enumNames`` labels, or MCP titled ``oneOf``).

    ``titled`` records that the asker used MCP's titled ``oneOf`` form, so it is echoed back the same way.
    """

    kind: Literal["choice"] = "choice"
    options: tuple[Option, ...]
    default: str | None = None
    titled: bool = False


class MultiChoiceField(_FieldBase):
    """A list of distinct values from ``options`` (MCP 2025-11-25 multi-select)."""

    kind: Literal["multi_choice"] = "multi_choice"
    options: tuple[Option, ...]
    min_items: int | None = None
    max_items: int | None = None
    default: tuple[str, ...] | None = None
    titled: bool = False


FormField = Annotated[
    Union[StringField, NumberField, IntegerField, BooleanField, ChoiceField, MultiChoiceField],
    Field(discriminator="kind"),
]


class FormSpec(_Model):
    """A flat typed form. An empty form is a confirm / decline dialog."""

    kind: Literal["form"] = "form"
    fields: tuple[FormField, ...] = ()

    def field(self, name: str) -> FormField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None


class TextSpec(_Model):
    """Free text of ``min_length`` .. ``max_length`` code points (AQP ``text``)."""

    kind: Literal["text"] = "text"
    min_length: int = 1
    max_length: int = 16000


class ChoiceSpec(_Model):
    """One string out of ``choices``, matched exactly (AQP ``choice``)."""

    kind: Literal["choice"] = "choice"
    choices: tuple[str, ...]


class YesNoSpec(_Model):
    """``true`` or ``false`` (AQP ``boolean``)."""

    kind: Literal["yes_no"] = "yes_no"


class NumberSpec(_Model):
    """A finite number, not a boolean (AQP ``number``)."""

    kind: Literal["number"] = "number"
    minimum: float | int | None = None
    maximum: float | int | None = None


class Capability(_Model):
    """An ACS capability tuple (an ``Intent.parsed`` entry); every member optional."""

    model_config = ConfigDict(extra="allow", frozen=True)
    tool: str | None = None
    operation: str | None = None
    resource: str | None = None


class IntentExtension(_Model):
    """A proposed (or granted) widening of an ACS session intent."""

    capabilities: tuple[Capability, ...]
    scope: Literal["this_request", "session"]
    provenance: dict[str, Any] | None = None


class ApprovalSpec(_Model):
    """Allow or deny, optionally naming one of ``options`` (ACS ASK).

    If ``options`` is non-empty an ``allow`` must name exactly one of them and a ``deny`` may name one.
    """

    kind: Literal["approval"] = "approval"
    options: tuple[str, ...] = ()
    intent_extension: IntentExtension | None = None


AnswerSpec = Annotated[
    Union[FormSpec, TextSpec, ChoiceSpec, YesNoSpec, NumberSpec, ApprovalSpec],
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------------------------------
# Who answers, by when, under which consent and timing, and where the answer goes.
# --------------------------------------------------------------------------------------------------


class Respondent(_Model):
    """A person, agent or service that may answer. ``id`` is the stable identity answers must come from."""

    kind: Literal["human", "agent", "service"]
    id: str
    endpoint: str | None = None
    auth_method: Literal["bearer", "mtls"] | None = None
    display_name: str | None = None


OnTimeout = Literal["cancel", "expire", "allow", "deny"]


class Deadline(_Model):
    """When an ask ends unanswered, and how.

    ``expires_at`` is absolute (AQP ``expiresAt``); ``timeout_seconds`` runs from the moment the
    broker accepts the ask (ACS). The broker settles the ask at the earlier of the two with
    ``on_timeout``: ``cancel`` (elicitation), ``expire`` (AQP) or an ACS ``allow`` / ``deny``.
    """

    expires_at: datetime | None = None
    timeout_seconds: float | None = None
    on_timeout: OnTimeout = "cancel"


class Consent(_Model):
    """AQP consent: whether the respondent must agree before seeing the ask, and what is remembered."""

    mode: Literal["not_required", "ask_once", "ask_always"] = "not_required"
    scope: str | None = None
    data_policy: str | None = None


Timing = Literal["immediate", "after_outcome_known", "after_task_complete", "deferred"]


class Delivery(_Model):
    """Where the answer goes. ``reply`` means: back on the channel the ask came in on.

    ``authorization`` is a credential: a :class:`SecretStr` so it never prints, and the store keeps it
    apart from the ask and drops it once the ask is terminal.
    """

    binding: Literal["reply", "https", "mcp", "a2a", "other"] = "reply"
    endpoint: str | None = None
    authorization: SecretStr | None = None
    operation: str | None = None


class Ask(_Model):
    """One question to one respondent (or a set of them), in canonical form."""

    id: str | None = None
    dialect: Dialect
    dialect_version: str | None = None
    external_id: str | None = None
    purpose: str | None = None  # AQP ``type`` (feedback, approval, ...); ``approval`` for ACS, ``elicitation``
    prompt: str
    details: str | None = None  # AQP ``instructions`` / ACS ``context``
    subject: Any = None  # AQP ``subject``: opaque display data
    spec: AnswerSpec
    respondent: Respondent | None = None
    deadline: Deadline = Deadline()
    consent: Consent = Consent()
    timing: Timing = "immediate"
    delivery: Delivery = Delivery()
    asker: str | None = None
    session_id: str | None = None  # ACS session (intent and chain); A2A contextId
    binding: dict[str, Any] = {}  # ACS binding context: agent_id, step_id, request_id, method, request_hash, reasoning
    notes: tuple[str, ...] = ()  # accepted-but-ignored input, recorded in the audit chain
    original: Any = None  # the dialect document exactly as received


# --------------------------------------------------------------------------------------------------
# Answers.
# --------------------------------------------------------------------------------------------------

Outcome = Literal["accept", "decline", "cancel", "timed_out", "expired"]
Scalar = Union[bool, int, float, str]
FormValue = Union[Scalar, tuple[str, ...]]


class ApprovalDecision(_Model):
    """An ACS decision: by an approver, or by the timeout disposition."""

    decision: Literal["allow", "deny"]
    reasoning: str | None = None
    selected_option: str | None = None
    intent_extension: IntentExtension | None = None
    decided_by: Literal["approver", "timeout"] = "approver"


class Answer(_Model):
    """The one terminal answer to an ask.

    ``value`` depends on the spec: a ``dict`` of field name to value for a form; a ``str`` for text and
    choice; a ``bool`` for yes/no; a number; an :class:`ApprovalDecision` for an approval. It is
    ``None`` unless the outcome is ``accept`` — except for an approval settled by its timeout
    disposition, where ``value`` holds the decision with ``decided_by="timeout"``.
    """

    outcome: Outcome
    value: ApprovalDecision | dict[str, FormValue] | bool | int | float | str | None = None
    respondent: Respondent | None = None
    answered_at: datetime | None = None
    reason: str | None = None
    consent_basis: Literal["not_required", "granted_now", "stored_grant"] | None = None
