"""The string formats every dialect uses, implemented exactly (protocols.md §1.5, §3.3).

``jsonschema``'s own checkers skip ``uri`` without optional packages and accept any ``@`` as an email,
so askgate checks all of them itself, the same way everywhere: request validation, answer validation
and the A2UI mapping all call :func:`check_format`.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import date

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII
)
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"{_ATEXT}(?:\.{_ATEXT})*@{_LABEL}(?:\.{_LABEL})*\Z", re.ASCII)
# RFC 3986 absolute URI (section 3 / appendix A): scheme ":" hier-part [ "?" query ] [ "#" fragment ].
# hier-part is "//" authority path-abempty, or path-absolute (never starting "//"), path-rootless or empty;
# a port is digits only; an IP-literal's content is checked separately (IPv6 or IPvFuture).
_PCT = r"%[0-9A-Fa-f]{2}"
_SUB = r"A-Za-z0-9\-._~!$&'()*+,;="
_PCHAR = rf"(?:[{_SUB}:@]|{_PCT})"
_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:"
    r"(?:"
    rf"//(?:(?:[{_SUB}:]|{_PCT})*@)?(?:\[(?P<literal>[^\]/?#@]*)\]|(?:[{_SUB}]|{_PCT})*)(?::[0-9]*)?(?:/{_PCHAR}*)*"
    rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"
    rf"|{_PCHAR}+(?:/{_PCHAR}*)*"
    r"|)"
    rf"(?:\?(?:{_PCHAR}|[/?])*)?"
    rf"(?:#(?:{_PCHAR}|[/?])*)?\Z",
    re.ASCII,
)
# The common case, a plain http(s) URL: a strict subset of the grammar above, checked much faster.
_PLAIN_HTTP = re.compile(
    r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*)?\Z", re.ASCII
).match
_IPV_FUTURE = re.compile(rf"[vV][0-9A-Fa-f]+\.[{_SUB}:]+\Z", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII)

FORMATS = ("email", "uri", "date", "date-time", "uuid")


def _real_date(y: str, m: str, d: str) -> bool:
    try:
        date(int(y), int(m), int(d))
    except ValueError:
        return False
    return True


def is_date(value: str) -> bool:
    """``YYYY-MM-DD`` naming a real calendar day (2023-02-29 fails, 2024-02-29 passes)."""
    m = _DATE.match(value)
    return bool(m) and _real_date(*m.groups())


def is_date_time(value: str) -> bool:
    """RFC 3339 date-time with a mandatory offset; second <= 59 (protocols.md §1.5: no leap second)."""
    m = _DATE_TIME.match(value)
    if not m:
        return False
    y, mo, d, hh, mm, ss, _frac, _zone, oh, om = m.groups()
    if not _real_date(y, mo, d) or int(hh) > 23 or int(mm) > 59 or int(ss) > 59:
        return False
    return oh is None or (int(oh) <= 23 and int(om) <= 59)


def is_email(value: str) -> bool:
    """Dot-atom local part, ``@``, hostname labels (single-label domains allowed)."""
    return len(value) <= 254 and _EMAIL.match(value) is not None


def _ip_literal(text: str) -> bool:
    if _IPV_FUTURE.match(text):
        return True
    if "%" in text or not text.isascii():  # no zone ids in URIs (RFC 6874 is not RFC 3986)
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def is_uri(value: str) -> bool:
    """An absolute URI with a scheme (RFC 3986 grammar); relative references fail."""
    if _PLAIN_HTTP(value):
        return True
    m = _URI.match(value)
    if m is None:
        return False
    literal = m.group("literal")
    return literal is None or _ip_literal(literal)


def is_uuid(value: str) -> bool:
    """The hyphenated 8-4-4-4-12 form."""
    return _UUID.match(value) is not None


_CHECKS = {"email": is_email, "uri": is_uri, "date": is_date, "date-time": is_date_time, "uuid": is_uuid}


def check_format(name: str, value: str) -> bool:
    """True when ``value`` satisfies format ``name``; unknown formats raise ``KeyError``."""
    return _CHECKS[name](value)
