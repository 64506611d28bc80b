"""Build already-validated canonical models without re-validating them.

``BaseModel.model_construct`` still costs ~25 µs for an :class:`~askgate.core.model.Ask` (it walks
every field and copies defaults), which alone would eat the request-validation budget of issue #2.
The codecs only call :func:`build` after their hand-compiled checks passed, with values of the right
types, so filling ``__dict__`` directly (in declaration order, which is the serialisation order) is
equivalent and an order of magnitude cheaper.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_REQUIRED: Any = object()
_Plan = tuple[dict[str, Any], frozenset[str], frozenset[str]]
_PLANS: dict[type, _Plan] = {}
_new = object.__new__
# BaseModel's slot descriptors, called directly: cheaper than object.__setattr__ (which looks them up).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _plan(cls: type[BaseModel]) -> _Plan:
    template: dict[str, Any] = {}
    required: set[str] = set()
    fresh: set[str] = set()
    for name, field in cls.model_fields.items():
        if field.is_required():
            template[name] = _REQUIRED
            required.add(name)
        elif field.default_factory is not None or isinstance(field.default, (dict, list, set)):
            template[name] = None
            fresh.add(name)
        else:
            template[name] = field.default
    plan = _PLANS[cls] = (template, frozenset(required), frozenset(fresh))
    return plan


def build(cls: type[M], /, **values: Any) -> M:
    """An instance of ``cls`` holding ``values`` (already valid) and the defaults for the rest."""
    template, required, fresh = _PLANS.get(cls) or _plan(cls)
    data = template.copy()
    data.update(values)  # keeps the declaration order of the template
    keys = values.keys()
    if len(data) != len(template) or not keys >= required:
        raise TypeError(f"{cls.__name__}: unknown or missing fields in {sorted(keys)}")
    if fresh and not keys >= fresh:
        for name in fresh - keys:
            data[name] = copy.deepcopy(cls.__pydantic_fields__[name].get_default(call_default_factory=True))
    obj = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, set(keys))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


_COUNTS: dict[type, int] = {}
_ALL_SET: dict[type, set[str]] = {}


def _count(cls: type[BaseModel]) -> int:
    n = _COUNTS[cls] = len(cls.model_fields)  # the class property costs ~1 µs per access: cache it
    _ALL_SET[cls] = set(cls.model_fields)
    return n


def make(
    cls: type[M],
    data: dict[str, Any],
    *,
    extra: dict[str, Any] | None = None,
    fields_set: set[str] | None = None,
) -> M:
    """Like :func:`build`, for a hot path that passes *every* field, in declaration order, as a dict.

    ``extra`` holds the extra members of an ``extra="allow"`` model (``{}`` when there are none);
    ``fields_set`` defaults to every field (one set per class, shared: models built here are frozen,
    so nothing mutates it). The only check is the field count, which catches a field
    added to the model and not to the caller (the codec tests also round-trip built objects through
    ``model_validate``).
    """
    if len(data) != (_COUNTS.get(cls) or _count(cls)):
        raise TypeError(f"{cls.__name__} needs all {len(cls.model_fields)} fields, got {sorted(data)}")
    obj = _new(cls)
    _set_dict(obj, data)
    # With every field given, all instances share one "fields set". Safe for these frozen models:
    # pydantic only ever mutates the *copy* it makes in model_copy(update=...), never the original.
    _set_fields_set(obj, _ALL_SET[cls] if fields_set is None else fields_set)
    _set_extra(obj, extra)
    _set_private(obj, None)
    return obj
