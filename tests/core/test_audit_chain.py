"""The audit chain: ACS ContextEntry hashing (protocols.md §4.6), verification, and no credentials."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from pydantic import SecretStr

from askgate.core.audit import chain_entry, entries_for, entry_hash, verify_chain
from askgate.core.lifecycle import ConsentReply, Respond, apply
from tests.core.lifecycle_support import ALICE, T0, aqp_ask, at, opened, text

# ------------------------------------------------------------------------------ hand-made test vector
# Built from the spec's words, not from askgate's code: JCS written out by hand (keys sorted by UTF-16
# code units, 10.0 printed as 10, non-ASCII as raw UTF-8), SHA-256 from hashlib, and the second entry
# chained with the RAW 32 bytes of the first hash.

E1_JCS = (b'{"entry_id":"e-1","prompt":"Ship it?","step_id":"ask-1","step_type":"ask",'
          b'"timestamp":"2026-08-02T10:00:00Z"}')
E1_HASH = hashlib.sha256(E1_JCS).hexdigest()
# "\U0001F600" is D83D DE00 in UTF-16 and sorts BEFORE "\uFF21" (code point order would put it after).
E2_JCS = ('{"entry_id":"e-2","n":10,"ok":true,"step_id":"ask-1","step_type":"answer",'
          '"timestamp":"2026-08-02T10:00:05Z","\U0001F600":"caf\u00e9","\uFF21":[]}').encode("utf-8")
E2_HASH = hashlib.sha256(E2_JCS + bytes.fromhex(E1_HASH)).hexdigest()


def test_two_entry_chain_matches_the_hand_computed_vector() -> None:
    e1 = chain_entry(entry_id="e-1", step_id="ask-1", step_type="ask", timestamp="2026-08-02T10:00:00Z",
                     data={"prompt": "Ship it?"}, previous_hash=None)
    e2 = chain_entry(entry_id="e-2", step_id="ask-1", step_type="answer", timestamp="2026-08-02T10:00:05Z",
                     data={"\uFF21": [], "ok": True, "n": 10.0, "\U0001F600": "caf\u00e9"},
                     previous_hash=e1["entry_hash"])
    assert e1["entry_hash"] == E1_HASH
    assert "previous_hash" not in e1  # absent, not null
    assert e2["previous_hash"] == E1_HASH
    assert e2["entry_hash"] == E2_HASH
    # chaining the hex TEXT instead of the raw bytes would give something else
    assert hashlib.sha256(E2_JCS + E1_HASH.encode()).hexdigest() != E2_HASH
    assert verify_chain([e1, e2]).ok and verify_chain([e1, e2]).head == E2_HASH


def test_null_or_absent_previous_hash_on_the_first_entry_hash_alike() -> None:
    e = {"entry_id": "e-1", "step_id": "ask-1", "step_type": "ask", "timestamp": "2026-08-02T10:00:00Z",
         "prompt": "Ship it?"}
    assert entry_hash(e, None) == E1_HASH
    assert entry_hash({**e, "previous_hash": None, "entry_hash": "00" * 32}, None) == E1_HASH
    assert verify_chain([{**e, "previous_hash": None, "entry_hash": E1_HASH}]).ok


def test_none_data_members_are_omitted() -> None:
    e = chain_entry(entry_id="e-1", step_id="ask-1", step_type="ask", timestamp="2026-08-02T10:00:00Z",
                    data={"prompt": "Ship it?", "details": None}, previous_hash=None)
    assert "details" not in e and e["entry_hash"] == E1_HASH


def test_reserved_members_and_secrets_are_refused() -> None:
    with pytest.raises(ValueError):
        chain_entry(entry_id="e", step_id="s", step_type="t", timestamp=None, data={"entry_hash": "x"},
                    previous_hash=None)
    with pytest.raises(ValueError):
        chain_entry(entry_id="e", step_id="s", step_type="t", timestamp=None,
                    data={"delivery": {"authorization": SecretStr("tok")}}, previous_hash=None)
    with pytest.raises(ValueError):
        chain_entry(entry_id="e", step_id="s", step_type="t", timestamp=None, previous_hash="ABC")


def _chain(n: int = 4) -> list[dict]:
    out: list[dict] = []
    head = None
    for i in range(n):
        e = chain_entry(entry_id=f"e-{i}", step_id="ask-1", step_type="ask" if i == 0 else "vote",
                        timestamp=f"2026-08-02T10:00:0{i}Z", data={"i": i}, previous_hash=head)
        out.append(e)
        head = e["entry_hash"]
    return out


def _tamper(chain: list[dict], i: int, how: str) -> list[dict]:
    c = copy.deepcopy(chain)
    if how == "content":
        c[i]["i"] = 99
    elif how == "hash":
        c[i]["entry_hash"] = "0" * 64
    elif how == "link":
        c[i]["previous_hash"] = "f" * 64
    elif how == "drop-link":
        c[i].pop("previous_hash", None)
    elif how == "missing-id":
        del c[i]["step_id"]
    elif how == "upper-hash":
        c[i]["entry_hash"] = c[i]["entry_hash"].upper()
    elif how == "not-object":
        c[i] = ["not", "an", "entry"]
    elif how == "big-int":
        c[i]["i"] = 2**60
    return c


@pytest.mark.parametrize("how", ["content", "hash", "link", "drop-link", "missing-id", "upper-hash",
                                 "not-object", "big-int"])
@pytest.mark.parametrize("i", [1, 2, 3])
def test_verify_names_the_first_broken_entry(how: str, i: int) -> None:
    result = verify_chain(_tamper(_chain(), i, how))
    assert not result.ok and result.first_bad == i and result.reason


def test_verify_first_entry_rules_and_anchor() -> None:
    chain = _chain()
    assert verify_chain(chain).ok
    bad = verify_chain(_tamper(chain, 0, "content"))
    assert (bad.ok, bad.first_bad) == (False, 0)
    # a segment verifies only against its anchor
    assert not verify_chain(chain[2:]).ok and verify_chain(chain[2:]).first_bad == 0
    assert verify_chain(chain[2:], anchor=chain[1]["entry_hash"]).ok
    assert verify_chain(chain[2:], anchor="a" * 64).first_bad == 0
    # a removed or reordered entry breaks the link after it
    assert verify_chain(chain[:1] + chain[2:]).first_bad == 1
    assert verify_chain([chain[0], chain[2], chain[1], chain[3]]).first_bad == 1
    assert verify_chain([]).ok


def test_entries_for_chains_lifecycle_events_per_ask_and_per_session() -> None:
    from tests.core.lifecycle_support import acs_ask

    ask_chain: list[dict] = []
    session_chain: list[dict] = []
    for ask_id in ("ask-a", "ask-b"):
        from askgate.core.lifecycle import Routing, open_ask

        proposal = _allow_session().value.intent_extension  # type: ignore[union-attr]
        t = open_ask(acs_ask(extension=proposal), ask_id=ask_id, routing=Routing.single(ALICE), now=T0)
        t2 = apply(t.record, Respond(ALICE, _allow_session()), now=at(1))
        head = None
        mine: list[dict] = []
        for tr in (t, t2):
            new = entries_for(tr.audit, previous_hash=head)
            mine += new
            head = new[-1]["entry_hash"]
            shead = session_chain[-1]["entry_hash"] if session_chain else None
            session_chain += entries_for([e for e in tr.audit if e.session_id == "sess-1"], previous_hash=shead)
        ask_chain.append(mine)
        assert verify_chain(mine).ok
        ids = [e["entry_id"] for e in mine]
        assert len(ids) == len(set(ids))
        assert all(e["request_hash"] == "ab" * 32 for e in mine)
        ext = [e for e in mine if e["step_type"] == "intent_extension"]
        assert len(ext) == 1 and ext[0]["entry_id"] == "req-7/intent_extension" and ext[0]["step_id"] == "step-19"
    assert verify_chain(session_chain).ok
    assert len(session_chain) == sum(len(c) for c in ask_chain)
    assert {e["ask_id"] for e in session_chain} == {"ask-a", "ask-b"}


def _allow_session():
    from askgate.core.model import Answer, ApprovalDecision, Capability, IntentExtension

    return Answer(outcome="accept", value=ApprovalDecision(decision="allow", intent_extension=IntentExtension(
        capabilities=(Capability(tool="git", operation="push"),), scope="session")))


def test_no_credential_ever_enters_the_chain() -> None:
    secret = "Bearer s3cr3t-token-7f1c"
    endpoint = "https://deliver:pw-HIDDEN-9@hooks.example.com/aqp?sig=QUERYTOKEN-42"
    ask = aqp_ask(consent="ask_once", scope="scope:team-feedback", authorization=secret, endpoint=endpoint)
    t1 = opened(ask, ALICE)
    t2 = apply(t1.record, ConsentReply(ALICE.id, True), now=at(1))
    t3 = apply(t2.record, Respond(ALICE, text("all good")), now=at(2))
    events = [*t1.audit, *t2.audit, *t3.audit]
    assert events[0].data["delivery"] == {"binding": "https", "endpoint_host": "hooks.example.com",
                                          "authorization_present": True}
    entries = entries_for(events, previous_hash=None)
    assert verify_chain(entries).ok
    dumped = json.dumps(entries) + repr(events)
    for needle in ("s3cr3t", "pw-HIDDEN", "QUERYTOKEN", secret):
        assert needle not in dumped
