"""The ``jsonschema`` profile against the official JSON Schema Test Suite, draft 2020-12.

One pytest case per suite test (id ``file/group/test``): the profile's verdict
(``validate_instance(...).ok``) must equal the suite's ``valid``.  The 27 files that
matter for tool schemas are the conformance gate (at least 99 % of their tests pass,
skips counted as failures); the next tier is reported as its own set.  The suite is the
copy python-jsonschema's source distribution carries, pinned in tools/corpora.py.
"""

from __future__ import annotations

import json

import pytest

from support import corpora
from toolform_rules.engine.verbs import validate_instance

DRAFT = corpora.json_schema_suite()

CORE_FILES = (
    "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "items", "prefixItems",
    "properties", "required", "additionalProperties", "minProperties", "maxProperties", "anyOf", "oneOf",
    "allOf", "ref", "defs", "default",
)
NEXT_FILES = ("not", "patternProperties", "propertyNames", "if-then-else", "dependentRequired", "contains",
              "boolean_schema")

_METASCHEMA = ("needs the draft 2020-12 meta-schema, a remote document "
               "(https://json-schema.org/draft/2020-12/schema) that is not in the suite's remotes/: "
               "only local references are supported (the loader raises LoaderError)")
_UNEVALUATED = ("unevaluatedProperties depends on annotations collected by adjacent keywords, "
                "which the profile does not implement")

#: Every skipped suite test, by id, with the reason.  Nothing else is skipped.
SKIPS: dict[str, str] = {
    "ref/remote ref, containing refs itself/remote ref valid": _METASCHEMA,
    "ref/remote ref, containing refs itself/remote ref invalid": _METASCHEMA,
    "defs/validate definition against metaschema/valid definition schema": _METASCHEMA,
    "defs/validate definition against metaschema/invalid definition schema": _METASCHEMA,
    "ref/ref creates new scope when adjacent to keywords/"
    "referenced subschema doesn't see annotations from properties": _UNEVALUATED,
    "not/collect annotations inside a 'not', even if collection is disabled/unevaluated property": _UNEVALUATED,
}


def load_cases(names: tuple[str, ...]) -> list[tuple[str, object, object, bool]]:
    """``(id, schema, data, valid)`` for every test of the named suite files."""
    cases = []
    for name in names:
        for group in json.loads((DRAFT / f"{name}.json").read_text(encoding="utf-8")):
            for test in group["tests"]:
                cases.append((f"{name}/{group['description']}/{test['description']}", group["schema"],
                              test["data"], test["valid"]))
    return cases


CORE = load_cases(CORE_FILES)
NEXT = load_cases(NEXT_FILES)


def _agrees(schema: object, data: object, valid: bool) -> bool:
    return validate_instance(data, schema).ok == valid


def _run(case_id: str, schema: object, data: object, valid: bool) -> None:
    if case_id in SKIPS:
        pytest.skip(SKIPS[case_id])
    assert _agrees(schema, data, valid), f"{case_id}: expected valid={valid}"


@pytest.mark.parametrize(("case_id", "schema", "data", "valid"), CORE, ids=[c[0] for c in CORE])
def test_core_suite(case_id: str, schema: object, data: object, valid: bool) -> None:
    _run(case_id, schema, data, valid)


@pytest.mark.parametrize(("case_id", "schema", "data", "valid"), NEXT, ids=[c[0] for c in NEXT])
def test_next_tier_suite(case_id: str, schema: object, data: object, valid: bool) -> None:
    _run(case_id, schema, data, valid)


def test_every_skip_names_a_suite_test() -> None:
    known = {c[0] for c in CORE + NEXT}
    assert set(SKIPS) <= known, sorted(set(SKIPS) - known)


def _pass_rate(cases: list) -> tuple[int, int]:
    """How many of ``cases`` pass: a skip, or an error while loading the schema, does not."""
    passed = 0
    for case_id, schema, data, valid in cases:
        if case_id in SKIPS:
            continue
        try:
            passed += _agrees(schema, data, valid)
        except Exception:
            continue
    return passed, len(cases)


def test_core_pass_rate_is_at_least_99_percent() -> None:
    passed, total = _pass_rate(CORE)
    assert total == 600, total  # the 27 tool-relevant files of the suite in jsonschema 4.26.0
    assert passed / total >= 0.99, f"{passed}/{total} core suite tests pass (skips count as failures)"


def test_next_tier_pass_rate() -> None:
    passed, total = _pass_rate(NEXT)
    assert passed / total >= 0.99, f"{passed}/{total} next-tier suite tests pass (skips count as failures)"


def test_a_reference_to_another_document_is_a_loader_error() -> None:
    from toolform_rules.errors import LoaderError

    with pytest.raises(LoaderError, match="only local references"):
        validate_instance({}, {"$ref": "https://json-schema.org/draft/2020-12/schema"})
    with pytest.raises(LoaderError, match="only local references"):  # relative to a base with no such schema
        validate_instance({}, {"$id": "http://example.com/a.json", "$ref": "b.json"})
