"""Build already-validated pydantic models without a second validation pass.

Codecs check a document once, by hand-compiled rules, and then build the canonical models. Pydantic's
``model_construct`` still deep-copies every default and walks every field, which dominated request
parsing; :func:`construct` does the same job from a per-class template computed once.
Only use it for data that has already been checked against the model's constraints.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from askgate.core.model import Option as _Option

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__
_new = object.__new__
_REQUIRED = object()
_TEMPLATES: dict[type, tuple[dict[str, Any], tuple[str, ...]]] = {}


def _template(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """All fields in declaration order (required ones as a placeholder) and the mutable defaults."""
    found = _TEMPLATES.get(cls)
    if found is None:
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
    obj = cls.__new__(cls)
    _set(obj, "__dict__", data)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def option(value: str, label: str | None) -> Any:
    """A checked :class:`~askgate.core.model.Option` (the most frequent model by far: one per enum value)."""
    obj = _new(_Option)
    _set(obj, "__dict__", {"value": value, "label": label})
    _set(obj, "__pydantic_fields_set__", {"value", "label"})
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
