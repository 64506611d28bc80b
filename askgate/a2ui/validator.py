"""A2UI payload validator: JSON Schema plus the integrity rules, per protocols.md §5.8 "Validator".

Error messages are the ``jsonschema`` library's, verbatim (the conformance suite's regexes are written
against them), and which error is reported first follows the upstream reference's algorithm. Speed comes
from doing the expensive work once per catalog and from a fast path:

* schemas are bundled, registries built and validators compiled once, when the validator is built, and a
  catalog caches its validator (:meth:`A2uiCatalog.validator`);
* a payload is first checked with ``jsonschema-rs`` (compiled Rust, same schemas, same registry, formats
  off like ``jsonschema``'s default). Only when it says "invalid" does the validator ask ``jsonschema``
  for the errors, and ``jsonschema``'s verdict is the one that counts: if it finds nothing, the payload
  passes. A schema ``jsonschema-rs`` cannot compile simply disables the fast path.

The differential tests (tests/a2ui/test_validator_oracle.py) hold verdicts and messages equal to the
reference SDK's on the suite payloads and on generated ones.
"""

from __future__ import annotations

import contextvars
import copy
import posixpath
from typing import Any, Callable, Iterable

import jsonschema
import jsonschema_rs
import referencing
import referencing.exceptions
from referencing.jsonschema import DRAFT202012

from askgate.a2ui.catalog import A2uiCatalog
from askgate.a2ui.errors import CompileError, ValidationError
from askgate.a2ui.integrity import (
    RefIndex,
    check_components,
    check_limits_and_paths,
    component_ref_fields,
    find_root_id,
    limits_ok,
)

__all__ = ["A2uiValidator", "DRAFT_2020_12", "BASE_SCHEMA_URL", "SCHEMA_STEP_BUDGET", "TOO_COSTLY"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
BASE_SCHEMA_URL = "https://a2ui.org/"

_MESSAGE_DEFS = {
    "createSurface": "CreateSurfaceMessage",
    "updateDataModel": "UpdateDataModelMessage",
    "deleteSurface": "DeleteSurfaceMessage",
}

# What jsonschema may raise for a broken schema (bad $ref, invalid keyword value) rather than a verdict.
_SCHEMA_FAULTS: tuple[type[BaseException], ...] = (
    referencing.exceptions.Unresolvable,
    referencing.exceptions.NoSuchResource,
    jsonschema.exceptions.SchemaError,
    jsonschema.exceptions.UnknownType,
    jsonschema.exceptions._WrappedReferencingError,  # noqa: SLF001 - what jsonschema raises for bad $refs
    RecursionError,
    TypeError,
    KeyError,
)


# ---- a bounded error report ----------------------------------------------------------------------
#
# Some schema/payload pairs make jsonschema's error collection exponential: in the v0.9 basic catalog every
# function-call argument may itself be any function call, so five nested calls to unknown functions cost
# minutes (the reference SDK hangs the same way). jsonschema-rs settles the verdict at once; only the
# *explanation* needs jsonschema, so it runs on a budget of keyword evaluations and, past it, the payload is
# rejected with TOO_COSTLY instead of an explanation.

SCHEMA_STEP_BUDGET = 20_000
TOO_COSTLY = (f"Validation failed: the payload does not match the schema, and explaining why would take more "
              f"than {SCHEMA_STEP_BUDGET} schema steps")
_BUDGET: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("a2ui_schema_budget", default=None)


class _OverBudget(Exception):
    """Raised inside jsonschema when the current error report used up its budget."""


def _metered(keyword: Callable[..., Any]) -> Callable[..., Any]:
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        left = _BUDGET.get()
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise _OverBudget
        return keyword(validator, value, instance, schema)

    return run


# Same keywords, same messages; each keyword evaluation is counted against the current budget.
_MeteredDraft202012 = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {name: _metered(fn) for name, fn in jsonschema.Draft202012Validator.VALIDATORS.items()},
)


def _offline(uri: str) -> Any:
    """Never fetch schemas over the network: an unknown $ref disables the fast path instead."""
    raise ValueError(f"not retrieving {uri}")


def _sibling(uri: str, name: str) -> str:
    return posixpath.join(posixpath.dirname(uri), name)


def _inject(schema: Any, sources: dict[str, Any]) -> Any:
    """Copy of ``schema`` where each open node (``additionalProperties: true``) stored under a key named in
    ``sources`` gets those properties and is closed. v0.8 uses it to put the catalog's components and styles
    into the generic s2c schema's ``component`` and ``styles`` slots."""
    if isinstance(schema, list):
        return [_inject(item, sources) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(value, dict) and value.get("additionalProperties") is True and key in sources:
            node = dict(value)
            node["additionalProperties"] = False
            node["properties"] = {**node.get("properties", {}), **sources[key]}
            out[key] = node
        else:
            out[key] = _inject(value, sources)
    return out


def _short_message(message: str) -> str:
    """v0.9 keeps only the parenthesised part of "Additional/Unevaluated properties" messages."""
    if (
        ("Unevaluated properties are not allowed" in message or "Additional properties are not allowed" in message)
        and "(" in message
        and ")" in message
    ):
        return message[message.find("(") + 1 : message.rfind(")")]
    return message


def _pointer_token(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1").replace("%", "%25").replace("#", "%23")


class _Compiled:
    """One schema compiled twice: ``jsonschema-rs`` for the verdict, ``jsonschema`` (lazily) for messages."""

    __slots__ = ("schema", "_registry", "_rs", "_py", "_rs_tried", "_rs_registry")

    def __init__(self, schema: dict[str, Any], registry: referencing.Registry, rs_registry: Any) -> None:
        self.schema = schema
        self._registry = registry
        self._rs_registry = rs_registry
        self._rs: Any = None
        self._rs_tried = False
        self._py: Any = None

    def _fast(self) -> Any:
        if not self._rs_tried:
            self._rs_tried = True
            if self._rs_registry is not None:
                try:
                    self._rs = jsonschema_rs.Draft202012Validator(
                        self.schema, registry=self._rs_registry, validate_formats=False, retriever=_offline
                    )
                except Exception:  # noqa: BLE001 - any compile problem just disables the fast path
                    self._rs = None
        return self._rs

    def errors(self, instance: Any) -> list[jsonschema.ValidationError]:
        if self._py is None:
            self._py = _MeteredDraft202012(self.schema, registry=self._registry)
        token = _BUDGET.set([SCHEMA_STEP_BUDGET]) if _BUDGET.get() is None else None
        try:
            return list(self._py.iter_errors(instance))
        except _OverBudget:
            raise ValidationError(TOO_COSTLY) from None
        except _SCHEMA_FAULTS as exc:
            raise CompileError(f"A2UI schema cannot be used: {exc}") from exc
        finally:
            if token is not None:
                _BUDGET.reset(token)

    def is_valid(self, instance: Any) -> bool:
        fast = self._fast()
        if fast is not None:
            try:
                if fast.is_valid(instance):
                    return True
            except Exception:  # noqa: BLE001 - e.g. a value jsonschema-rs cannot represent; ask jsonschema
                pass
        return not self.errors(instance)


class A2uiValidator:
    """Validates A2UI server-to-client messages (one message or a list) against one catalog.

    :meth:`validate` returns ``None`` or raises :class:`~askgate.a2ui.errors.ValidationError` (schema),
    :class:`~askgate.a2ui.errors.IntegrityError` (graph rules, path syntax) or
    :class:`~askgate.a2ui.errors.RecursionError` (depth limits). Building it raises
    :class:`~askgate.a2ui.errors.CompileError` for an empty s2c schema and
    :class:`~askgate.a2ui.errors.CatalogError` for a v0.9 catalog without ``catalogId``.

    ``fast=False`` turns the compiled fast paths off (``jsonschema`` and the Python walks decide alone);
    verdicts and messages are the same either way, which the tests check.
    """

    def __init__(self, catalog: A2uiCatalog, *, fast: bool = True) -> None:
        self.catalog = catalog
        self.version = catalog.version
        self.fast = fast  # False: jsonschema and the Python walks decide everything (the differential baseline)
        s2c = catalog.s2c_schema
        if not s2c:
            raise CompileError("A2UI schema is empty")
        self._ref_index = RefIndex(component_ref_fields(self.version, s2c, catalog.catalog_schema))
        base = s2c.get("$id", BASE_SCHEMA_URL) if isinstance(s2c, dict) else BASE_SCHEMA_URL
        if not isinstance(base, str):
            base = BASE_SCHEMA_URL
        common = catalog.common_types_schema if catalog.common_types_schema is not None else {}
        resources: list[tuple[str, Any]] = [(_sibling(base, "common_types.json"), common)]
        if self.version == "0.8":
            sources: dict[str, Any] = {}
            cat = catalog.catalog_schema
            if cat:
                if "components" in cat:
                    sources["component"] = cat["components"]
                if "styles" in cat:
                    sources["styles"] = cat["styles"]
            root_schema = _inject(copy.deepcopy(s2c), sources)
            resources.append(("common_types.json", common))
        else:
            root_schema = copy.deepcopy(s2c)
            catalog_uri = _sibling(base, "catalog.json")
            resources += [
                (catalog_uri, catalog.catalog_schema),
                ("catalog.json", catalog.catalog_schema),
                ("common_types.json", common),
            ]
            # Registered under its catalogId too; like the reference, a v0.9 catalog must have one.
            cid = catalog.require_catalog_id() if "catalogId" not in (catalog.catalog_schema or {}) else (
                catalog.catalog_schema["catalogId"]
            )
            if isinstance(cid, str) and cid and cid != catalog_uri:
                resources.append((cid, catalog.catalog_schema))
        self._registry = self._python_registry(resources)
        self._rs_registry = self._rust_registry(resources) if fast else None
        wrapped = {"type": "array", "items": root_schema, "$schema": DRAFT_2020_12}
        self._whole = _Compiled(wrapped, self._registry, self._rs_registry)
        self._defs: dict[str, _Compiled | None] = {}
        self._components: dict[str, _Compiled] = {}

    # ---- compilation ------------------------------------------------------------------------------

    @staticmethod
    def _python_registry(resources: Iterable[tuple[str, Any]]) -> referencing.Registry:
        try:
            pairs = [(uri, referencing.Resource.from_contents(s, default_specification=DRAFT202012))
                     for uri, s in resources]
            return referencing.Registry().with_resources(pairs)
        except Exception as exc:  # noqa: BLE001 - unusable catalog contents
            raise CompileError(f"A2UI schema cannot be registered: {exc}") from exc

    @staticmethod
    def _rust_registry(resources: Iterable[tuple[str, Any]]) -> Any:
        # jsonschema-rs resolves a relative $ref of a schema without $id against "json-schema:///", so the
        # bare names are registered under that base too. Later entries must not override earlier ones
        # (python's Registry keeps the last; both sides register identical contents per name anyway).
        seen: dict[str, Any] = {}
        for uri, schema in resources:
            if not isinstance(schema, (dict, bool)):
                return None
            seen[uri] = schema
            if "://" not in uri:
                seen["json-schema:///" + uri] = schema
        try:
            return jsonschema_rs.Registry(list(seen.items()), draft=jsonschema_rs.Draft202012, retriever=_offline)
        except Exception:  # noqa: BLE001 - no fast path, jsonschema alone decides
            return None

    def _message_def(self, name: str) -> _Compiled:
        if name not in self._defs:
            defs = self.catalog.s2c_schema.get("$defs", {}) if isinstance(self.catalog.s2c_schema, dict) else {}
            sub = defs.get(name) if isinstance(defs, dict) else None
            self._defs[name] = _Compiled(sub, self._registry, self._rs_registry) if sub else None
        compiled = self._defs[name]
        if compiled is None:
            raise CompileError(f"Definition {name} not found in schema")
        return compiled

    def _component(self, comp_type: str) -> _Compiled:
        compiled = self._components.get(comp_type)
        if compiled is None:
            schema = {"$schema": DRAFT_2020_12, "$ref": f"catalog.json#/components/{_pointer_token(comp_type)}"}
            compiled = _Compiled(schema, self._registry, self._rs_registry)
            self._components[comp_type] = compiled
        return compiled

    # ---- validation -------------------------------------------------------------------------------

    def validate(self, payload: dict[str, Any] | list[Any], *, strict_integrity: bool = True) -> None:
        """Validate one message or a list of messages; raise on the first failing rule (§5.8).

        ``strict_integrity=False`` is the lenient mode for synthesized partial updates: a missing root,
        dangling references and orphans are tolerated even when the payload has a start message.
        """
        messages = payload if isinstance(payload, list) else [payload]
        token = _BUDGET.set([SCHEMA_STEP_BUDGET])  # one budget for every explanation of this payload
        try:
            if self.version == "0.9":
                self._schema_v09(messages)
            else:
                self._schema_v08(messages)
        finally:
            _BUDGET.reset(token)
        self._integrity(messages, strict_integrity)

    def is_valid_partial(self, payload: dict[str, Any] | list[Any]) -> bool:
        """Lenient check for synthesized partial updates (see :meth:`validate`)."""
        try:
            self.validate(payload, strict_integrity=False)
        except ValueError:
            return False
        return True

    def _schema_v08(self, messages: list[Any]) -> None:
        if self._whole.is_valid(messages):
            return
        errors = self._whole.errors(messages)
        if not errors:
            return
        first = errors[0]
        text = f"Validation failed: {first.message}"
        if first.context:
            text += "\nContext failures:" + "".join(f"\n  - {sub.message}" for sub in first.context)
        raise ValidationError(text)

    def _schema_v09(self, messages: list[Any]) -> None:
        # Fast pass: every check below, answered by booleans only.
        if all(self._message_ok(m) for m in messages):
            return
        problems: list[str] = []
        for idx, message in enumerate(messages):
            problems.extend(self._message_problems(idx, message))
        if problems:
            raise ValidationError("Validation failed:\n" + "\n".join(f"  - {p}" for p in problems))

    def _message_ok(self, message: Any) -> bool:
        if not isinstance(message, dict):
            return False
        if "createSurface" in message:
            return self._message_def("CreateSurfaceMessage").is_valid(message)
        if "updateComponents" in message:
            if message.get("version") != "v0.9":
                return False
            uc = message["updateComponents"]
            if not isinstance(uc, dict) or not isinstance(uc.get("surfaceId"), str):
                return False
            comps = uc.get("components")
            if not isinstance(comps, list):
                return False
            catalog = self.catalog.catalog_schema
            if not catalog or "components" not in catalog:
                return not comps
            known = catalog["components"]
            if not isinstance(known, dict):
                return not comps
            for comp in comps:
                if not isinstance(comp, dict):
                    return False
                kind = comp.get("component")
                if not kind or not isinstance(kind, str) or not known.get(kind):
                    return False
                if not self._component(kind).is_valid(comp):
                    return False
            return True
        for key, name in _MESSAGE_DEFS.items():
            if key in message:
                return self._message_def(name).is_valid(message)
        return False

    def _message_problems(self, idx: int, message: Any) -> list[str]:
        where = f"messages[{idx}]"
        if not isinstance(message, dict):
            return [f"{where}: Is not an object"]
        if "createSurface" in message:
            return self._formatted(self._message_def("CreateSurfaceMessage"), message, where)
        if "updateComponents" in message:
            return self._update_components_problems(message, where)
        for key, name in _MESSAGE_DEFS.items():
            if key in message:
                return self._formatted(self._message_def(name), message, where)
        return [f"{where}: Unknown message type with keys {list(message.keys())}"]

    @staticmethod
    def _formatted(compiled: _Compiled, instance: Any, where: str) -> list[str]:
        if compiled.is_valid(instance):
            return []
        out = []
        for err in compiled.errors(instance):
            sub = ".".join(str(p) for p in err.path)
            out.append(f"{where}.{sub}: {_short_message(err.message)}" if sub else
                       f"{where}: {_short_message(err.message)}")
        return out

    def _update_components_problems(self, message: dict[str, Any], where: str) -> list[str]:
        problems: list[str] = []
        if message.get("version") != "v0.9":
            problems.append(f"{where}: Invalid version, expected 'v0.9'")
        uc = message.get("updateComponents")
        if not isinstance(uc, dict):
            problems.append(f"{where}: Expected updateComponents to be an object")
            return problems
        if not isinstance(uc.get("surfaceId"), str):
            problems.append(f"{where}.updateComponents: Invalid or missing surfaceId")
        comps = uc.get("components")
        if not isinstance(comps, list):
            problems.append(f"{where}.updateComponents: Expected components to be an array")
            return problems
        catalog = self.catalog.catalog_schema
        for idx, comp in enumerate(comps):
            cid = comp.get("id") if isinstance(comp, dict) else None
            at = (f"{where}.updateComponents.components[id='{cid}']" if cid
                  else f"{where}.updateComponents.components[{idx}]")
            if not isinstance(comp, dict):
                problems.append(f"{at}: Component is not an object")
                continue
            kind = comp.get("component")
            if not kind:
                problems.append(f"{at}: Missing 'component' field")
                continue
            if not catalog or "components" not in catalog:
                problems.append(f"{at}: Catalog schema or components missing")
                continue
            known = catalog["components"]
            if not isinstance(kind, str) or not isinstance(known, dict) or not known.get(kind):
                problems.append(f"{at}: Unknown component: {kind}")
                continue
            problems.extend(self._formatted(self._component(kind), comp, at))
        return problems

    def _integrity(self, messages: list[Any], strict: bool) -> None:
        # The limits walk is skipped only when the compiled check proves no message breaks a limit, so the
        # per-message order of reported errors is unchanged.
        walk = not (self.fast and limits_ok(messages))
        update_key = "updateComponents" if self.version == "0.9" else "surfaceUpdate"
        for message in messages:
            if not isinstance(message, dict):
                continue
            update = message.get(update_key)
            if isinstance(update, dict):
                comps = update.get("components")
                if comps and isinstance(comps, list):
                    root = find_root_id(messages, update.get("surfaceId"))
                    check_components(root, comps, self._ref_index, strict=strict)
            if walk:
                check_limits_and_paths(message)

