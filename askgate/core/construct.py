"""Build already-validated canonical models without re-validating them.

The codecs check a document once, by hand-compiled rules, and only then build the canonical models.
Pydantic's ``BaseModel.model_construct`` still walks every field and copies defaults (~25 µs for an
:class:`~askgate.core.model.Ask`), which alone would eat the request-validation budget of issue #2, so
these helpers fill the instance directly: one dict for ``__dict__`` plus the three pydantic slots.

- :func:`make`: every field given, in declaration order (the serialisation order); the cheapest.
- :func:`construct`: ``model_construct(**values)`` semantics (omitted fields take their defaults,
  ``model_fields_set`` is the given names) from a per-class template computed once.
- :func:`option`: the most frequent model by far (one per enum value).

Only for data already checked against the model's constraints. Models built here are frozen, so a
fields set may be shared between instances (pydantic only ever mutates the *copy* it makes in
``model_copy(update=...)``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from askgate.core.model import Option

M = TypeVar("M", bound=BaseModel)
_new = object.__new__
# BaseModel's slot descriptors, called directly: cheaper than object.__setattr__ (which looks them up).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_COUNTS: dict[type, tuple[int, set[str]]] = {}  # field count and the (shared) set of every field
_REQUIRED: Any = object()
_TEMPLATES: dict[type, tuple[dict[str, Any], tuple[str, ...]]] = {}


def _count(cls: type[BaseModel]) -> tuple[int, set[str]]:
    found = _COUNTS[cls] = (len(cls.model_fields), set(cls.model_fields))  # the class property is slow
    return found


def template(cls: type[BaseModel], **fixed: Any) -> dict[str, Any]:
    """Every field of ``cls`` in declaration order: ``fixed`` values, else defaults, else a placeholder.

    For a hot path that builds many instances with :func:`make`: copying a prepared dict and setting
    the varying members is several times cheaper than a literal naming every field. The caller must
    overwrite each required field and each mutable default (``{}``, ``[]``: never shared between
    instances) it did not fix; a placeholder left in fails any ``model_dump``.
    """
    unknown = set(fixed) - set(cls.model_fields)
    if unknown:
        raise TypeError(f"{cls.__name__} has no fields {sorted(unknown)}")
    base, mutable = _TEMPLATES.get(cls) or _template(cls)
    out = base.copy()
    for name in mutable:
        out[name] = _REQUIRED
    out.update(fixed)
    return out


def make(
    cls: type[M],
    data: dict[str, Any],
    extra: dict[str, Any] | None = None,
    fields_set: set[str] | None = None,
) -> M:
    """An instance of ``cls`` holding ``data``: *every* field, in declaration order, already valid.

    ``extra`` holds the extra members of an ``extra="allow"`` model (``{}`` when there are none);
    ``fields_set`` defaults to every field (one set per class, shared). The only check is the field
    count, which catches a field added to the model and not to the caller (the codec tests also
    round-trip built objects through ``model_validate``).
    """
    try:
        n, every = _COUNTS[cls]
    except KeyError:
        n, every = _count(cls)
    if len(data) != n:
        raise TypeError(f"{cls.__name__} needs all {n} fields, got {sorted(data)}")
    obj = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, every if fields_set is None else fields_set)
    _set_extra(obj, extra)
    _set_private(obj, None)
    return obj


def _template(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """All fields in declaration order (required ones as a placeholder) and the mutable defaults."""
    template: dict[str, Any] = {}
    mutable: list[str] = []
    for name, info in cls.model_fields.items():
        if info.is_required():
            template[name] = _REQUIRED
            continue
        template[name] = info.get_default(call_default_factory=True)
        if isinstance(template[name], (dict, list, set)):
            mutable.append(name)
    found = _TEMPLATES[cls] = (template, tuple(mutable))
    return found


def construct(cls: type[M], **values: Any) -> M:
    """``cls.model_construct(**values)`` for trusted data, without per-call default copying.

    Field order is the model's (updating a copied template keeps key order). Mutable defaults
    (``{}``/``[]``) are still fresh per instance; immutable ones are shared.
    """
    template, mutable = _TEMPLATES.get(cls) or _template(cls)
    data = template.copy()
    data.update(values)
    for name in mutable:
        if name not in values:
            data[name] = type(template[name])()
    obj = _new(cls)
    _set_dict(obj, data)
    _set_fields_set(obj, set(values))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


_OPTION_SET = {"value", "label"}


def option(value: str, label: str | None) -> Option:
    """A checked :class:`~askgate.core.model.Option`."""
    obj = _new(Option)
    _set_dict(obj, {"value": value, "label": label})
    _set_fields_set(obj, _OPTION_SET)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj
