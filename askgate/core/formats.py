"""The string formats every dialect uses, implemented exactly (protocols.md §1.5, §3.3).

``jsonschema``'s own checkers skip ``uri`` without optional packages and accept any ``@`` as an email,
so askgate checks all of them itself, the same way everywhere: request validation, answer validation
and the A2UI mapping all call :func:`check_format`.
"""

from __future__ import annotations

import re
from datetime import date

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z", re.ASCII)
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z", re.ASCII
)
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_EMAIL = re.compile(rf"{_ATEXT}(?:\.{_ATEXT})*@{_LABEL}(?:\.{_LABEL})*\Z", re.ASCII)
# RFC 3986 absolute URI: scheme ":" hier-part [ "?" query ] [ "#" fragment ], no spaces or controls.
_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*:"
    r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*"
    r"(?:#(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?\Z",
    re.ASCII,
)
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
    """RFC 3339 date-time with a mandatory offset; leap second 60 allowed as RFC 3339 does."""
    m = _DATE_TIME.match(value)
    if not m:
        return False
    y, mo, d, hh, mm, ss, _frac, _zone, oh, om = m.groups()
    if not _real_date(y, mo, d) or int(hh) > 23 or int(mm) > 59 or int(ss) > 60:
        return False
    return oh is None or (int(oh) <= 23 and int(om) <= 59)


def is_email(value: str) -> bool:
    """Dot-atom local part, ``@``, hostname labels (single-label domains allowed)."""
    return len(value) <= 254 and _EMAIL.match(value) is not None


def is_uri(value: str) -> bool:
    """An absolute URI with a scheme; relative references fail."""
    return _URI.match(value) is not None


def is_uuid(value: str) -> bool:
    """The hyphenated 8-4-4-4-12 form."""
    return _UUID.match(value) is not None


_CHECKS = {"email": is_email, "uri": is_uri, "date": is_date, "date-time": is_date_time, "uuid": is_uuid}


def check_format(name: str, value: str) -> bool:
    """True when ``value`` satisfies format ``name``; unknown formats raise ``KeyError``."""
    return _CHECKS[name](value)
