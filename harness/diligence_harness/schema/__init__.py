"""The published JSON Schema of the evidence bundle, and a small validator for it.

`evidence-1.schema.json` (Draft 2020-12) is the contract with the web app, which
serves the same file. The harness must not depend on `jsonschema`, so this
module implements the subset of keywords that schema uses; the tests check
bundles with both this validator and the real `jsonschema` package.
"""

import json
import re
from importlib import resources

SCHEMA_NAME = "evidence-1.schema.json"
SUPPORTED_KEYWORDS = {
    "$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "type", "required",
    "properties", "additionalProperties", "items", "prefixItems", "enum", "const", "minimum",
    "maximum", "minItems", "maxItems", "minLength", "pattern", "anyOf", "examples", "default",
}  # fmt: skip


def load_schema() -> dict:
    """Read the schema from the package (works from a wheel, a checkout or the zipapp)."""
    text = resources.files(__name__).joinpath(SCHEMA_NAME).read_text(encoding="utf-8")
    return json.loads(text)


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(document: object, schema: dict | None = None) -> list[str]:
    """Errors as 'path: message' strings; an empty list means the document is valid."""
    root = schema or load_schema()
    errors: list[str] = []
    _check(document, root, root, "$", errors)
    return errors


def _resolve(root: dict, ref: str) -> dict:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, got {ref}")
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _check(value: object, schema: dict | bool, root: dict, path: str, errors: list[str]) -> None:
    if schema is True:
        return
    if schema is False:
        errors.append(f"{path}: not allowed")
        return
    if "$ref" in schema:
        _check(value, _resolve(root, schema["$ref"]), root, path, errors)
    if "type" in schema and not _type_ok(value, schema["type"]):
        errors.append(f"{path}: expected {schema['type']}, got {type(value).__name__}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: must be {schema['const']!r}")
    options = schema.get("anyOf")
    if options and all(_errors_for(value, option, root, path) for option in options):
        errors.append(f"{path}: matches none of anyOf")
    _check_scalar(value, schema, path, errors)
    if isinstance(value, dict):
        _check_object(value, schema, root, path, errors)
    if isinstance(value, list):
        _check_array(value, schema, root, path, errors)


def _errors_for(value: object, schema: dict, root: dict, path: str) -> list[str]:
    found: list[str] = []
    _check(value, schema, root, path, found)
    return found


def _type_ok(value: object, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    return any(_TYPES[name](value) for name in names)


def _check_scalar(value: object, schema: dict, path: str, errors: list[str]) -> None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} < minimum {schema['minimum']}")
    if number and "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: does not match {schema['pattern']}")


def _check_object(value: dict, schema: dict, root: dict, path: str, errors: list[str]) -> None:
    for name in schema.get("required", []):
        if name not in value:
            errors.append(f"{path}: missing required {name!r}")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            _check(item, properties[name], root, f"{path}.{name}", errors)
        elif extra is not True:
            _check(item, extra, root, f"{path}.{name}", errors)


def _check_array(value: list, schema: dict, root: dict, path: str, errors: list[str]) -> None:
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items")
    prefix = schema.get("prefixItems", [])
    for index, item in enumerate(value):
        if index < len(prefix):
            _check(item, prefix[index], root, f"{path}[{index}]", errors)
        elif "items" in schema:
            _check(item, schema["items"], root, f"{path}[{index}]", errors)
