"""Build already-validated canonical models without re-validating them.

``BaseModel.model_construct`` still costs ~25 µs for an :class:`~askgate.core.model.Ask` (it walks
every field and copies defaults), which alone would eat the request-validation budget of issue #2.
The codecs only call :func:`make` after their hand-compiled checks passed, with values of the right
types and every field given in declaration order (the serialisation order), so filling the instance
directly is equivalent and an order of magnitude cheaper.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
# BaseModel's slot descriptors, called directly: cheaper than object.__setattr__ (which looks them up).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
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
    """An instance of ``cls`` holding ``data``: *every* field, in declaration order, already valid.

    ``extra`` holds the extra members of an ``extra="allow"`` model (``{}`` when there are none);
    ``fields_set`` defaults to every field (one set per class, shared: models built here are frozen,
    and pydantic only ever mutates the *copy* it makes in ``model_copy(update=...)``). The only check
    is the field count, which catches a field added to the model and not to the caller (the codec
    tests also round-trip built objects through ``model_validate``).
    """
    if len(data) != (_COUNTS.get(cls) or _count(cls)):
        raise TypeError(f"{cls.__name__} needs all {len(cls.model_fields)} fields, got {sorted(data)}")
    obj = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, _ALL_SET[cls] if fields_set is None else fields_set)
    _set_extra(obj, extra)
    _set_private(obj, None)
    return obj
