"""Build already-validated pydantic models without a second validation pass.

Codecs check a document once, by hand-compiled rules, and then build the canonical models. Pydantic's
``model_construct`` still deep-copies every default and walks every field, which dominated request
parsing; :func:`construct` does the same job from a per-class table of defaults computed once.
Only use it for data that has already been checked against the model's constraints.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__
_DEFAULTS: dict[type, tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]] = {}


def _defaults(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]:
    found = _DEFAULTS.get(cls)
    if found is None:
        values: dict[str, Any] = {}
        mutable: list[str] = []
        for name, info in cls.model_fields.items():
            if info.is_required():
                continue
            values[name] = info.get_default(call_default_factory=True)
            if isinstance(values[name], (dict, list, set)):
                mutable.append(name)
        found = _DEFAULTS[cls] = (values, tuple(mutable), tuple(cls.model_fields))
    return found


def construct(cls: type[M], **values: Any) -> M:
    """``cls.model_construct(**values)`` for trusted data, without per-call default copying.

    Mutable defaults (``{}``/``[]``) are still copied per instance; immutable ones are shared.
    """
    defaults, mutable, order = _DEFAULTS.get(cls) or _defaults(cls)
    data = {name: values[name] if name in values else defaults[name] for name in order}  # field order, as pydantic
    for name in mutable:
        if name not in values:
            data[name] = type(defaults[name])()
    obj = cls.__new__(cls)
    _set(obj, "__dict__", data)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
