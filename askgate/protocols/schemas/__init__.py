"""JSON Schemas askgate ships: stand-ins for the seeds' unpublished ``$ref`` targets, and its own
response schemas.

- ``aqp-query-subject.schema.json``: askgate's stand-in for AQP ``query-subject.schema.json``.
- ``acs-provenance.schema.json``: askgate's schema for ACS ``provenance.json``.
- ``aqp-query-response.schema.json``: askgate's proposed AQP QueryResponse (protocols.md §3.4).

The stand-ins carry the URIs the seed ``$ref``s resolve to, so :func:`registry` lets ``jsonschema``
(tests, benchmarks) validate the seeds as published. The codecs never call a schema engine: they
implement these schemas by hand and read nothing from here at request time.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SUBJECT = "aqp-query-subject.schema.json"
PROVENANCE = "acs-provenance.schema.json"
AQP_RESPONSE = "aqp-query-response.schema.json"
STANDINS = (SUBJECT, PROVENANCE)


@cache
def _text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def load(name: str) -> dict[str, Any]:
    """A fresh copy of one shipped schema (callers may modify it)."""
    return json.loads(_text(name))


def registry() -> Any:
    """A ``referencing.Registry`` holding the stand-ins under the URIs the seeds resolve to."""
    from referencing import Registry, Resource

    return Registry().with_resources(
        (load(name)["$id"], Resource.from_contents(load(name))) for name in (*STANDINS, AQP_RESPONSE)
    )
