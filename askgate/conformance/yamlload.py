"""Reading suite files: UTF-8 YAML whose values are JSON data.

Suites describe JSON documents, so three YAML 1.1 conveniences of PyYAML's ``SafeLoader`` would corrupt
them silently, and this loader turns them off:

- ``2026-01-01T00:00:00Z`` unquoted would become a ``datetime`` (not JSON): timestamps stay strings;
- ``yes``/``no``/``on``/``off`` would become booleans (an enum ``[yes, no]`` would turn into
  ``[true, false]``): only ``true``/``false`` (any case, as YAML 1.2 core) are booleans;
- a repeated mapping key would silently keep the last value: it is an error.

Everything else (numbers, ``null``, flow JSON, block scalars) is PyYAML's safe loading.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

__all__ = ["SuiteYamlError", "load_yaml_file", "load_yaml_text"]


class SuiteYamlError(ValueError):
    """The suite file is not readable UTF-8 YAML (or repeats a key)."""


class _SuiteLoader(yaml.SafeLoader):
    pass


# Drop the YAML 1.1 bool and timestamp resolvers, then add YAML 1.2 core booleans back.
_SuiteLoader.yaml_implicit_resolvers = {
    first: [
        (tag, rx)
        for tag, rx in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SuiteLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_bool(loader: yaml.SafeLoader, node: yaml.Node) -> bool:
    return loader.construct_scalar(node).lower() == "true"  # type: ignore[arg-type, union-attr]


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "found an unhashable key",
                key_node.start_mark,
            ) from None
        if key in out:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_SuiteLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_SuiteLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_text(text: str) -> Any:
    """Parse one YAML document of JSON-like data (see module docstring)."""
    try:
        return yaml.load(text, Loader=_SuiteLoader)
    except yaml.YAMLError as exc:
        raise SuiteYamlError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise SuiteYamlError("not valid YAML: nested too deeply") from None


def load_yaml_file(path: Path) -> Any:
    """Read ``path`` as UTF-8 (a BOM is tolerated) and parse it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SuiteYamlError(f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SuiteYamlError(f"not UTF-8 at byte {exc.start}") from None
    return load_yaml_text(text)
