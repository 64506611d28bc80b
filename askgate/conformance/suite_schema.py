"""askgate's definition of the A2UI conformance-suite file format, as a Draft 2020-12 JSON Schema.

Why in code: askgate must run without the read-only ``../shared`` folder next to it, and shared files
are never copied into the repository. So the format is written down here as askgate's own definition;
``tests/conformance/test_suite_schema.py`` loads ``../shared/seeds/a2ui-conformance.schema.json`` at test
time and asserts this dict is equal to it, so the two can never drift apart unnoticed.

Note what the format does NOT constrain, and the runner therefore checks itself: a case-level
``expect_error`` (regex string or ``{category, message}``), ``steps``, ``payload`` and any extra keys
(additional properties are allowed).
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator


def _schema_or_path(path_description: str, inline_description: str) -> dict[str, Any]:
    return {
        "oneOf": [
            {"type": "string", "description": path_description},
            {"type": "object", "description": inline_description},
        ]
    }


def _one_of_required(a: str, b: str) -> list[dict[str, Any]]:
    return [{"required": [a]}, {"required": [b]}]


def _needs_step_list(key: str) -> dict[str, Any]:
    return {
        "required": [key, "catalog"],
        "properties": {"catalog": {"required": ["s2c_schema", "catalog_schema"]}},
    }


SUITE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://a2ui.org/agent_sdks/conformance/conformance_schema.json",
    "title": "A2UI Conformance Test Suite Schema",
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Unique name of the test case."},
            "description": {
                "type": "string",
                "description": "Optional description of what the test verifies.",
            },
            "catalog": {
                "type": "object",
                "description": "Catalog configuration for the test.",
                "properties": {
                    "version": {"type": "string", "enum": ["0.8", "0.9"], "description": "Protocol version."},
                    "s2c_schema": _schema_or_path(
                        "Path to simplified schema file.", "Inlined schema object."
                    ),
                    "catalog_schema": _schema_or_path("Path to catalog file.", "Inlined catalog object."),
                    "common_types_schema": _schema_or_path(
                        "Path to common types schema file.", "Inlined common types schema object."
                    ),
                },
                "required": ["version"],
            },
            "process_chunk": {
                "type": "array",
                "description": "Steps for parser tests.",
                "items": {
                    "type": "object",
                    "properties": {
                        "input": {"type": "string", "description": "Chunk of data to feed to process_chunk."},
                        "expect": {
                            "type": "array",
                            "description": "Expected output parts.",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "text": {"type": "string"},
                                    "a2ui": {"type": "array", "items": {"type": "object"}},
                                },
                            },
                        },
                        "expect_error": {
                            "type": "string",
                            "description": "Expected error message (regex) if this step should fail.",
                        },
                    },
                    "required": ["input"],
                    "oneOf": _one_of_required("expect", "expect_error"),
                },
            },
            "validate": {
                "type": "array",
                "description": "Steps for validator tests.",
                "items": {
                    "type": "object",
                    "properties": {
                        "payload": {
                            "oneOf": [
                                {"type": "object"},
                                {"type": "array", "items": {"type": "object"}},
                            ],
                            "description": "Payload to validate (single message or list of messages).",
                        },
                        "expect_error": {
                            "type": "string",
                            "description": "Expected error message (regex) if validation should fail.",
                        },
                    },
                    "required": ["payload"],
                },
            },
            "action": {
                "type": "string",
                "description": "Action for general conformance tests (e.g., prune, render, select_catalog).",
            },
            "args": {"type": "object", "description": "Arguments for the action."},
            "expect": {"description": "Expected output for the action."},
            "expect_contains": {
                "type": "array",
                "items": {"type": "string"},
                "description": "List of substrings expected in the output.",
            },
            "expect_output": {"type": "string", "description": "Expected raw string output."},
            "input": {"type": "string", "description": "Input for single-step tests."},
        },
        "required": ["name"],
        "anyOf": [
            _needs_step_list("process_chunk"),
            _needs_step_list("validate"),
            {"required": ["action"]},
            {"required": ["input"], "oneOf": _one_of_required("expect", "expect_error")},
        ],
    },
}

Draft202012Validator.check_schema(SUITE_SCHEMA)

#: A compiled validator for suite files (the format has no ``format`` keywords, so no format checker).
SUITE_VALIDATOR = Draft202012Validator(SUITE_SCHEMA)
