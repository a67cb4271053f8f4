"""How fast is ``validate_arguments``?  One process, run by hand:

    .venv/bin/python bench/validate.py              # plain-text tables
    .venv/bin/python bench/validate.py --markdown   # the same tables as Markdown (docs/performance.md)

Every case is validated by every competitor in this one process:

* toolform_rules ``validate_arguments`` under the ``sdk`` (default) and ``study`` profiles;
* the reference, ``toolform.sdk.validate_arguments`` (used as a black box);
* python-jsonschema, ``Draft202012Validator(schema)`` built once, ``list(v.iter_errors(args))``;
* fastjsonschema, ``fastjsonschema.compile(schema)`` once, ``validate(args)`` in try/except
  (it stops at the first error: on an invalid call it is timed to its first finding only);
* a hand-written Python function per tool doing the same checks directly: the floor.

Per-call times are the best of several ``timeit`` repeats after a warm-up, so compiling
(ours, the reference's, jsonschema's, fastjsonschema's) is excluded.  Compile times,
BFCL load+compile times and tracemalloc figures follow.  Nothing here asserts a time: the
targets are judged in docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import fastjsonschema
import jsonschema

from toolform_rules import Limits, builtin_rules, load_tools, sample_toolset, validate_arguments
from toolform_rules.engine.compiler import compile_tool
from toolform_rules.schema.names import canonical_name
from toolform_rules.samples import SAMPLE_TOOL_JSON

try:  # the reference SDK is a dev dependency; without it its columns read "n/a"
    from toolform.sdk import load_tools as ref_load_tools
    from toolform.sdk import sample_toolset as ref_sample_toolset
    from toolform.sdk import validate_arguments as ref_validate_arguments
except ImportError:  # pragma: no cover
    ref_load_tools = ref_sample_toolset = ref_validate_arguments = None

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import corpora  # noqa: E402  (tools/corpora.py: the pinned BFCL release, fetched by `make corpora`)

BFCL_MULTIPLE = corpora.folder(corpora.by_name("bfcl")) / "BFCL_v4_multiple.json"

# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------

SAMPLE_SCHEMA = SAMPLE_TOOL_JSON["parameters"]


def _closed_schema(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that lists its properties:
    the study closes such objects, a JSON Schema validator only when told to."""
    if isinstance(schema, dict):
        out = {k: _closed_schema(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_closed_schema(v) for v in schema]
    return schema


# What the JSON Schema validators get for the sample tool: the same schema, closed as the study reads it.
SAMPLE_SCHEMA_CLOSED = _closed_schema(SAMPLE_SCHEMA)
SAMPLE_VALID = {"counterparty": "Acme", "value": 1000, "term_months": 12, "auto_renew": False,
                "contract_details": {"contract_id": "c1", "status": "draft"}}
SAMPLE_INVALID = {"counterparty": "Acme", "value": -5, "term_months": "ten", "colour": "red"}  # the seed's

# A realistic tool schema: 32 properties (21 at the top, 11 nested), closed objects.
WORK_ITEM_TOOL = {
    "name": "create_work_item",
    "description": "Create a work item in the project tracker.",
    "parameters": {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 200, "description": "One-line title."},
            "summary": {"type": "string", "maxLength": 4000, "description": "What needs doing."},
            "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]},
            "status": {"type": "string", "enum": ["open", "in_progress", "blocked", "done"]},
            "assignee_email": {"type": "string", "minLength": 3, "maxLength": 254},
            "project_code": {"type": "string", "minLength": 4, "maxLength": 12},
            "currency": {"type": "string", "enum": ["USD", "EUR", "GBP", "JPY"]},
            "estimate_hours": {"type": "number", "minimum": 0, "maximum": 1000},
            "budget": {"type": "number", "minimum": 0, "maximum": 10000000},
            "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600},
            "story_points": {"type": "integer", "minimum": 0, "maximum": 100},
            "due_in_days": {"type": "integer", "minimum": 1, "maximum": 365},
            "retries": {"type": "integer", "minimum": 0, "maximum": 10},
            "billable": {"type": "boolean"},
            "confidential": {"type": "boolean"},
            "notify_watchers": {"type": "boolean"},
            "labels": {"type": "array", "maxItems": 10,
                       "items": {"type": "string", "minLength": 1, "maxLength": 32}},
            "watchers": {"type": "array", "maxItems": 20, "items": {"type": "string", "maxLength": 254}},
            "subtasks": {"type": "array", "maxItems": 50, "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 100},
                    "hours": {"type": "number", "minimum": 0, "maximum": 100},
                    "done": {"type": "boolean"},
                },
                "required": ["name"], "additionalProperties": False}},
            "location": {"type": "object", "properties": {
                "city": {"type": "string", "minLength": 1, "maxLength": 100},
                "country": {"type": "string", "minLength": 2, "maxLength": 2},
                "postal_code": {"type": "string", "maxLength": 10},
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "minimum": -180, "maximum": 180},
            }, "required": ["city", "country"], "additionalProperties": False},
            "customer": {"type": "object", "properties": {
                "customer_id": {"type": "string", "minLength": 1},
                "tier": {"type": "string", "enum": ["free", "pro", "enterprise"]},
                "seats": {"type": "integer", "minimum": 1, "maximum": 100000},
            }, "required": ["customer_id"], "additionalProperties": False},
        },
        "required": ["title", "priority", "estimate_hours", "location"],
        "additionalProperties": False,  # explicit, so JSON Schema validators close it as the study does
    },
}
WORK_ITEM_SCHEMA = WORK_ITEM_TOOL["parameters"]
WORK_ITEM_VALID = {
    "title": "Renew the Acme contract", "summary": "Draft the renewal and send it for review.",
    "priority": "high", "status": "open", "assignee_email": "kim@example.com", "project_code": "LEG-042",
    "currency": "EUR", "estimate_hours": 6.5, "budget": 12000, "timeout_seconds": 30.0,
    "story_points": 5, "due_in_days": 14, "retries": 3, "billable": True, "confidential": False,
    "notify_watchers": True, "labels": ["legal", "renewal", "acme"],
    "watchers": ["lee@example.com", "sam@example.com"],
    "subtasks": [{"name": "draft", "hours": 3, "done": False}, {"name": "review", "hours": 2.5},
                 {"name": "send", "done": False}],
    "location": {"city": "Berlin", "country": "DE", "postal_code": "10115", "lat": 52.52, "lon": 13.405},
    "customer": {"customer_id": "acme-1", "tier": "enterprise", "seats": 250},
}
# Five errors: an enum, a type, a nested array item's minimum, a nested required field, an unknown argument.
WORK_ITEM_INVALID = dict(WORK_ITEM_VALID, priority="critical", billable="yes", colour="red",
                         location={"city": "Berlin", "lat": 52.52},
                         subtasks=[{"name": "draft", "hours": 3}, {"name": "review", "hours": -2}])

# ---------------------------------------------------------------------------------------------
# The floor: hand-written checks with the sdk profile's semantics (closed objects, required at
# any depth, argument names resolved across naming conventions, a bool is not a number, an
# integral float is an integer, enums match ignoring case), returning the same messages.
# ---------------------------------------------------------------------------------------------

_M = object()  # "absent"


def _resolve(args: dict, keys: frozenset, canonical: dict, prefix: str, errors: list) -> dict:
    """``args`` with every key spelled as declared; unknown keys reported.  Returns ``args`` itself
    when every key is already a declared name (the common case: one C-level set test)."""
    if keys.issuperset(args):
        return args
    resolved = {}
    for key, value in args.items():
        name = key if key in keys else canonical.get(canonical_name(key)) if type(key) is str else None
        if name is None:
            errors.append(prefix + key)
        else:
            resolved[name] = value
    return resolved


def _closed(names):
    return frozenset(names), {canonical_name(n): n for n in names}


def _in_enum(value: Any, members: frozenset, folded: frozenset) -> bool:
    return value in members or (type(value) is str and value.lower() in folded)


_SAMPLE_KEYS = _closed(SAMPLE_SCHEMA["properties"])
_DETAIL_KEYS = _closed(["contract_id", "status"])
_STATUS = ["draft", "review", "signed", "expired"]
_STATUS_SET, _STATUS_FOLDED = frozenset(_STATUS), frozenset(s.lower() for s in _STATUS)


def hand_sample(args: Any) -> list[str]:
    """legal_draft_v3, checked directly."""
    errors: list[str] = []
    if type(args) is not dict:
        return [f"$: expected object, got {type(args).__name__}"]
    args = _resolve(args, *_SAMPLE_KEYS, "", errors)
    g = args.get
    v = g("counterparty", _M)
    if v is _M:
        errors.append("counterparty")
    elif type(v) is not str:
        errors.append(f"counterparty: expected string, got {type(v).__name__}")
    v = g("value", _M)
    if v is _M:
        errors.append("value")
    elif type(v) is not int and type(v) is not float:
        errors.append(f"value: expected number, got {type(v).__name__}")
    elif v < 0:
        errors.append(f"value: {v} < minimum 0")
    v = g("term_months", _M)
    if v is _M:
        errors.append("term_months")
    else:
        if type(v) is float and v.is_integer():
            v = int(v)
        if type(v) is not int:
            errors.append(f"term_months: expected integer, got {type(v).__name__}")
        elif v < 1:
            errors.append(f"term_months: {v} < minimum 1")
        elif v > 600:
            errors.append(f"term_months: {v} > maximum 600")
    v = g("auto_renew", _M)
    if v is not _M and type(v) is not bool:
        errors.append(f"auto_renew: expected boolean, got {type(v).__name__}")
    v = g("contract_details", _M)
    if v is not _M:
        if type(v) is not dict:
            errors.append(f"contract_details: expected object, got {type(v).__name__}")
        else:
            v = _resolve(v, *_DETAIL_KEYS, "contract_details.", errors)
            w = v.get("contract_id", _M)
            if w is not _M and type(w) is not str:
                errors.append(f"contract_details.contract_id: expected string, got {type(w).__name__}")
            w = v.get("status", _M)
            if w is not _M:
                if type(w) is not str:
                    errors.append(f"contract_details.status: expected string, got {type(w).__name__}")
                elif not _in_enum(w, _STATUS_SET, _STATUS_FOLDED):
                    errors.append(f"contract_details.status: {w!r} not in {_STATUS!r}")
    return errors


_WI = WORK_ITEM_SCHEMA["properties"]
_WI_KEYS = _closed(_WI)
_SUBTASK_KEYS = _closed(_WI["subtasks"]["items"]["properties"])
_LOCATION_KEYS = _closed(_WI["location"]["properties"])
_CUSTOMER_KEYS = _closed(_WI["customer"]["properties"])
_PRIORITY, _STATUSES, _CURRENCY = _WI["priority"]["enum"], _WI["status"]["enum"], _WI["currency"]["enum"]
_TIER = _WI["customer"]["properties"]["tier"]["enum"]
_PRIORITY_S, _PRIORITY_F = frozenset(_PRIORITY), frozenset(m.lower() for m in _PRIORITY)
_STATUSES_S, _STATUSES_F = frozenset(_STATUSES), frozenset(m.lower() for m in _STATUSES)
_CURRENCY_S, _CURRENCY_F = frozenset(_CURRENCY), frozenset(m.lower() for m in _CURRENCY)
_TIER_S, _TIER_F = frozenset(_TIER), frozenset(m.lower() for m in _TIER)


def hand_work_item(args: Any) -> list[str]:  # noqa: C901 (straight-line on purpose: it is the floor)
    """create_work_item, checked directly: every property written out."""
    errors: list[str] = []
    if type(args) is not dict:
        return [f"$: expected object, got {type(args).__name__}"]
    args = _resolve(args, *_WI_KEYS, "", errors)
    g = args.get
    # strings
    v = g("title", _M)
    if v is _M:
        errors.append("title")
    elif type(v) is not str:
        errors.append(f"title: expected string, got {type(v).__name__}")
    elif len(v) < 1:
        errors.append("title: shorter than 1")
    elif len(v) > 200:
        errors.append("title: longer than 200")
    v = g("summary", _M)
    if v is not _M:
        if type(v) is not str:
            errors.append(f"summary: expected string, got {type(v).__name__}")
        elif len(v) > 4000:
            errors.append("summary: longer than 4000")
    v = g("priority", _M)
    if v is _M:
        errors.append("priority")
    elif type(v) is not str:
        errors.append(f"priority: expected string, got {type(v).__name__}")
    elif not _in_enum(v, _PRIORITY_S, _PRIORITY_F):
        errors.append(f"priority: {v!r} not in {_PRIORITY!r}")
    v = g("status", _M)
    if v is not _M:
        if type(v) is not str:
            errors.append(f"status: expected string, got {type(v).__name__}")
        elif not _in_enum(v, _STATUSES_S, _STATUSES_F):
            errors.append(f"status: {v!r} not in {_STATUSES!r}")
    v = g("assignee_email", _M)
    if v is not _M:
        if type(v) is not str:
            errors.append(f"assignee_email: expected string, got {type(v).__name__}")
        elif len(v) < 3:
            errors.append("assignee_email: shorter than 3")
        elif len(v) > 254:
            errors.append("assignee_email: longer than 254")
    v = g("project_code", _M)
    if v is not _M:
        if type(v) is not str:
            errors.append(f"project_code: expected string, got {type(v).__name__}")
        elif len(v) < 4:
            errors.append("project_code: shorter than 4")
        elif len(v) > 12:
            errors.append("project_code: longer than 12")
    v = g("currency", _M)
    if v is not _M:
        if type(v) is not str:
            errors.append(f"currency: expected string, got {type(v).__name__}")
        elif not _in_enum(v, _CURRENCY_S, _CURRENCY_F):
            errors.append(f"currency: {v!r} not in {_CURRENCY!r}")
    # numbers
    v = g("estimate_hours", _M)
    if v is _M:
        errors.append("estimate_hours")
    elif type(v) is not int and type(v) is not float:
        errors.append(f"estimate_hours: expected number, got {type(v).__name__}")
    elif v < 0:
        errors.append(f"estimate_hours: {v} < minimum 0")
    elif v > 1000:
        errors.append(f"estimate_hours: {v} > maximum 1000")
    v = g("budget", _M)
    if v is not _M:
        if type(v) is not int and type(v) is not float:
            errors.append(f"budget: expected number, got {type(v).__name__}")
        elif v < 0:
            errors.append(f"budget: {v} < minimum 0")
        elif v > 10000000:
            errors.append(f"budget: {v} > maximum 10000000")
    v = g("timeout_seconds", _M)
    if v is not _M:
        if type(v) is not int and type(v) is not float:
            errors.append(f"timeout_seconds: expected number, got {type(v).__name__}")
        elif v <= 0:
            errors.append(f"timeout_seconds: {v} <= exclusive minimum 0")
        elif v > 3600:
            errors.append(f"timeout_seconds: {v} > maximum 3600")
    for name, lo, hi in (("story_points", 0, 100), ("due_in_days", 1, 365), ("retries", 0, 10)):
        v = g(name, _M)
        if v is not _M:
            if type(v) is float and v.is_integer():
                v = int(v)
            if type(v) is not int:
                errors.append(f"{name}: expected integer, got {type(v).__name__}")
            elif v < lo:
                errors.append(f"{name}: {v} < minimum {lo}")
            elif v > hi:
                errors.append(f"{name}: {v} > maximum {hi}")
    # booleans
    v = g("billable", _M)
    if v is not _M and type(v) is not bool:
        errors.append(f"billable: expected boolean, got {type(v).__name__}")
    v = g("confidential", _M)
    if v is not _M and type(v) is not bool:
        errors.append(f"confidential: expected boolean, got {type(v).__name__}")
    v = g("notify_watchers", _M)
    if v is not _M and type(v) is not bool:
        errors.append(f"notify_watchers: expected boolean, got {type(v).__name__}")
    # arrays of strings
    v = g("labels", _M)
    if v is not _M:
        if type(v) is not list:
            errors.append(f"labels: expected array, got {type(v).__name__}")
        else:
            if len(v) > 10:
                errors.append("labels: more than 10 items")
            for i, item in enumerate(v):
                if type(item) is not str:
                    errors.append(f"labels[{i}]: expected string, got {type(item).__name__}")
                elif len(item) < 1:
                    errors.append(f"labels[{i}]: shorter than 1")
                elif len(item) > 32:
                    errors.append(f"labels[{i}]: longer than 32")
    v = g("watchers", _M)
    if v is not _M:
        if type(v) is not list:
            errors.append(f"watchers: expected array, got {type(v).__name__}")
        else:
            if len(v) > 20:
                errors.append("watchers: more than 20 items")
            for i, item in enumerate(v):
                if type(item) is not str:
                    errors.append(f"watchers[{i}]: expected string, got {type(item).__name__}")
                elif len(item) > 254:
                    errors.append(f"watchers[{i}]: longer than 254")
    # an array of objects
    v = g("subtasks", _M)
    if v is not _M:
        if type(v) is not list:
            errors.append(f"subtasks: expected array, got {type(v).__name__}")
        else:
            if len(v) > 50:
                errors.append("subtasks: more than 50 items")
            for i, item in enumerate(v):
                if type(item) is not dict:
                    errors.append(f"subtasks[{i}]: expected object, got {type(item).__name__}")
                    continue
                item = _resolve(item, *_SUBTASK_KEYS, f"subtasks[{i}].", errors)
                w = item.get("name", _M)
                if w is _M:
                    errors.append(f"subtasks[{i}].name")
                elif type(w) is not str:
                    errors.append(f"subtasks[{i}].name: expected string, got {type(w).__name__}")
                elif len(w) < 1:
                    errors.append(f"subtasks[{i}].name: shorter than 1")
                elif len(w) > 100:
                    errors.append(f"subtasks[{i}].name: longer than 100")
                w = item.get("hours", _M)
                if w is not _M:
                    if type(w) is not int and type(w) is not float:
                        errors.append(f"subtasks[{i}].hours: expected number, got {type(w).__name__}")
                    elif w < 0:
                        errors.append(f"subtasks[{i}].hours: {w} < minimum 0")
                    elif w > 100:
                        errors.append(f"subtasks[{i}].hours: {w} > maximum 100")
                w = item.get("done", _M)
                if w is not _M and type(w) is not bool:
                    errors.append(f"subtasks[{i}].done: expected boolean, got {type(w).__name__}")
    # nested objects with their own required fields
    v = g("location", _M)
    if v is _M:
        errors.append("location")
    elif type(v) is not dict:
        errors.append(f"location: expected object, got {type(v).__name__}")
    else:
        v = _resolve(v, *_LOCATION_KEYS, "location.", errors)
        w = v.get("city", _M)
        if w is _M:
            errors.append("location.city")
        elif type(w) is not str:
            errors.append(f"location.city: expected string, got {type(w).__name__}")
        elif len(w) < 1:
            errors.append("location.city: shorter than 1")
        elif len(w) > 100:
            errors.append("location.city: longer than 100")
        w = v.get("country", _M)
        if w is _M:
            errors.append("location.country")
        elif type(w) is not str:
            errors.append(f"location.country: expected string, got {type(w).__name__}")
        elif len(w) < 2:
            errors.append("location.country: shorter than 2")
        elif len(w) > 2:
            errors.append("location.country: longer than 2")
        w = v.get("postal_code", _M)
        if w is not _M:
            if type(w) is not str:
                errors.append(f"location.postal_code: expected string, got {type(w).__name__}")
            elif len(w) > 10:
                errors.append("location.postal_code: longer than 10")
        for name, lo, hi in (("lat", -90, 90), ("lon", -180, 180)):
            w = v.get(name, _M)
            if w is not _M:
                if type(w) is not int and type(w) is not float:
                    errors.append(f"location.{name}: expected number, got {type(w).__name__}")
                elif w < lo:
                    errors.append(f"location.{name}: {w} < minimum {lo}")
                elif w > hi:
                    errors.append(f"location.{name}: {w} > maximum {hi}")
    v = g("customer", _M)
    if v is not _M:
        if type(v) is not dict:
            errors.append(f"customer: expected object, got {type(v).__name__}")
        else:
            v = _resolve(v, *_CUSTOMER_KEYS, "customer.", errors)
            w = v.get("customer_id", _M)
            if w is _M:
                errors.append("customer.customer_id")
            elif type(w) is not str:
                errors.append(f"customer.customer_id: expected string, got {type(w).__name__}")
            elif len(w) < 1:
                errors.append("customer.customer_id: shorter than 1")
            w = v.get("tier", _M)
            if w is not _M:
                if type(w) is not str:
                    errors.append(f"customer.tier: expected string, got {type(w).__name__}")
                elif not _in_enum(w, _TIER_S, _TIER_F):
                    errors.append(f"customer.tier: {w!r} not in {_TIER!r}")
            w = v.get("seats", _M)
            if w is not _M:
                if type(w) is float and w.is_integer():
                    w = int(w)
                if type(w) is not int:
                    errors.append(f"customer.seats: expected integer, got {type(w).__name__}")
                elif w < 1:
                    errors.append(f"customer.seats: {w} < minimum 1")
                elif w > 100000:
                    errors.append(f"customer.seats: {w} > maximum 100000")
    return errors


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------

COMPETITORS = ("ours sdk", "ours study", "reference", "jsonschema", "fastjsonschema", "hand-written")


class Timing:
    def __init__(self, runs: list[float]) -> None:
        self.best = min(runs)
        self.median = statistics.median(runs)


class Cell:
    """One statement to time: calibrated once, then run one repeat at a time."""

    def __init__(self, stmt: str, env: dict[str, Any], min_time: float) -> None:
        self.timer = timeit.Timer(stmt, globals=env)
        self.timer.timeit(200)  # warm up: caches, first-use compilation
        number, elapsed = 1, 0.0
        while elapsed < min_time / 5:  # calibrate on a fifth of the run time, then scale
            number *= 2
            elapsed = self.timer.timeit(number)
        self.number = max(1, int(number * min_time / elapsed))
        self.runs: list[float] = []

    def run_once(self) -> None:
        self.runs.append(self.timer.timeit(self.number) / self.number)


def time_cells(cells: list[Cell], repeat: int) -> list[Timing]:
    """Seconds per execution of each cell's statement: best (and median) of ``repeat`` runs.

    The repeats are interleaved (round robin over all cells), so a burst of noise on the
    machine spoils one repeat of many cells rather than every repeat of one cell.
    """
    for _ in range(repeat):
        for cell in cells:
            cell.run_once()
    return [Timing(cell.runs) for cell in cells]


def build_cases() -> list[dict[str, Any]]:
    ours_sample = sample_toolset()
    ours_work = load_tools(WORK_ITEM_TOOL)
    ref_sample = ref_sample_toolset() if ref_sample_toolset else None
    ref_work = ref_load_tools(WORK_ITEM_TOOL) if ref_load_tools else None
    sample_js = jsonschema.Draft202012Validator(SAMPLE_SCHEMA_CLOSED)
    sample_fjs = fastjsonschema.compile(SAMPLE_SCHEMA_CLOSED)
    work_js = jsonschema.Draft202012Validator(WORK_ITEM_SCHEMA)
    work_fjs = fastjsonschema.compile(WORK_ITEM_SCHEMA)
    cases = []
    for label, name, args, ours, ref, js, fjs, hand in [
        ("a. sample, valid (5 args)", "legal_draft_v3", SAMPLE_VALID, ours_sample, ref_sample,
         sample_js, sample_fjs, hand_sample),
        ("b. sample, seed's invalid (3 errors)", "legal_draft_v3", SAMPLE_INVALID, ours_sample, ref_sample,
         sample_js, sample_fjs, hand_sample),
        ("c1. 32-property, valid", "create_work_item", WORK_ITEM_VALID, ours_work, ref_work,
         work_js, work_fjs, hand_work_item),
        ("c2. 32-property, invalid (5 errors)", "create_work_item", WORK_ITEM_INVALID, ours_work, ref_work,
         work_js, work_fjs, hand_work_item),
    ]:
        call = {"name": name, "arguments": args}
        env = {"va": validate_arguments, "rva": ref_validate_arguments, "call": call, "ts": ours, "rts": ref,
               "it": js.iter_errors, "fjs": fjs, "FJSError": fastjsonschema.JsonSchemaException,
               "hand": hand, "args": args}
        stmts = {
            "ours sdk": "va(call, ts)",
            "ours study": "va(call, ts, profile='study')",
            "reference": "rva(call, rts)" if ref is not None else None,
            "jsonschema": "list(it(args))",
            "fastjsonschema": "try:\n    fjs(args)\nexcept FJSError:\n    pass",
            "hand-written": "hand(args)",
        }
        cases.append({"label": label, "call": call, "env": env, "stmts": stmts})
    return cases


def findings(case: dict[str, Any]) -> dict[str, str]:
    """How many errors each competitor reports on the case (all must agree, fastjsonschema aside)."""
    env = case["env"]
    out = {"ours sdk": str(env["va"](env["call"], env["ts"]).n_errors),
           "ours study": str(env["va"](env["call"], env["ts"], profile="study").n_errors),
           "jsonschema": str(len(list(env["it"](env["args"])))),
           "hand-written": str(len(env["hand"](env["args"])))}
    out["reference"] = (str(env["rva"](env["call"], env["rts"]).to_dict()["n_errors"])
                        if env["rts"] is not None else "n/a")
    try:
        env["fjs"](env["args"])
        out["fastjsonschema"] = "0"
    except fastjsonschema.JsonSchemaException:
        out["fastjsonschema"] = "1 (stops)"
    # the floor must say what we say, message for message
    ours = sorted(f.message for f in env["va"](env["call"], env["ts"]).findings)
    hand = sorted(env["hand"](env["args"]))
    if ours != hand:
        raise SystemExit(f"{case['label']}: the hand-written check disagrees with ours:\n  {ours}\n  {hand}")
    return out


def compile_figures(repeat: int) -> dict[str, Any]:
    rules = builtin_rules().profile_rules("sdk")
    limits = Limits()
    (tool,) = load_tools(WORK_ITEM_TOOL).tools
    out: dict[str, Any] = {}

    def best(fn: Callable[[], Any], number: int) -> float:
        return min(timeit.repeat(fn, repeat=repeat, number=number)) / number

    shared = builtin_rules().compiled  # compiled nodes shared between tools by content (compiler.SharedNodes)

    def cold(fn: Callable[[], Any], number: int) -> float:
        """The best time of ``fn`` with no node compiled before it: what a tool unlike any other costs."""
        runs = []
        for _ in range(repeat * number):
            shared.clear()
            t0 = time.perf_counter()
            fn()
            runs.append(time.perf_counter() - t0)
        return min(runs)

    compile_tool(tool, rules, limits)
    out["compile_work"] = cold(lambda: compile_tool(tool, rules, limits), 5)
    out["compile_work_shared"] = best(lambda: compile_tool(tool, rules, limits), 50)
    out["load_work"] = best(lambda: load_tools(WORK_ITEM_TOOL), 50)
    out["load_compile_work"] = cold(lambda: compile_tool(load_tools(WORK_ITEM_TOOL).tools[0], rules, limits), 5)
    (sample,) = load_tools(SAMPLE_TOOL_JSON).tools
    out["compile_sample"] = cold(lambda: compile_tool(sample, rules, limits), 20)
    out["jsonschema_build"] = best(lambda: jsonschema.Draft202012Validator(WORK_ITEM_SCHEMA), 200)
    out["fastjsonschema_compile"] = best(lambda: fastjsonschema.compile(WORK_ITEM_SCHEMA), 5)

    # every distinct function doc of BFCL_v4_multiple: load it alone, then compile it (best of 3 each)
    if BFCL_MULTIPLE.exists():
        docs: dict[str, Any] = {}
        with BFCL_MULTIPLE.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    for doc in json.loads(line)["function"]:
                        docs.setdefault(json.dumps(doc, sort_keys=True), doc)
        loads, compiles, totals = [], [], []
        for doc in docs.values():
            runs = []
            for _ in range(3):
                shared.clear()  # each tool compiled as if first: no node shared with another tool
                t0 = time.perf_counter()
                (bfcl_tool,) = load_tools(doc).tools
                t1 = time.perf_counter()
                compile_tool(bfcl_tool, rules, limits)
                t2 = time.perf_counter()
                runs.append((t1 - t0, t2 - t1))
            load_s, compile_s = min(r[0] for r in runs), min(r[1] for r in runs)
            loads.append(load_s)
            compiles.append(compile_s)
            totals.append(min(a + b for a, b in runs))
        out["bfcl"] = {"n": len(docs), "load": loads, "compile": compiles, "total": totals}

    # memory: compiling the 32-property tool, and one valid sample call
    gc.collect()
    tracemalloc.start()
    try:
        (fresh,) = load_tools(WORK_ITEM_TOOL).tools
        shared.clear()
        gc.collect()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        program = compile_tool(fresh, rules, limits)
        current, peak = tracemalloc.get_traced_memory()
        out["compile_peak"], out["compile_kept"] = peak - base, current - base
        del program

        tools = sample_toolset()
        call = {"name": "legal_draft_v3", "arguments": SAMPLE_VALID}
        for _ in range(100):
            validate_arguments(call, tools)
        gc.collect()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        validate_arguments(call, tools)
        current, peak = tracemalloc.get_traced_memory()
        out["call_peak"], out["call_kept"] = peak - base, current - base
        for _ in range(10_000):
            validate_arguments(call, tools)
        out["calls_kept"] = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return out


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

def _table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)])


def _us(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e6:.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.1f}×"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument("--repeat", type=int, default=15,
                        help="timeit repeats per cell, interleaved across cells; the best is shown (15)")
    parser.add_argument("--min-time", type=float, default=0.1, help="seconds per repeat (0.1)")
    opts = parser.parse_args(argv)
    md = opts.markdown

    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    cases = build_cases()
    counts = [findings(case) for case in cases]
    keys = [(i, name) for i, case in enumerate(cases) for name in COMPETITORS if case["stmts"][name] is not None]
    cells = [Cell(cases[i]["stmts"][name], cases[i]["env"], opts.min_time) for i, name in keys]
    timings = dict(zip(keys, time_cells(cells, opts.repeat)))
    results = [{name: (timings[(i, name)].best if (i, name) in timings else None) for name in COMPETITORS}
               for i in range(len(cases))]
    noise = [(t.median / t.best - 1, cases[i]["label"], name) for (i, name), t in timings.items()]
    figures = compile_figures(max(3, opts.repeat // 2))

    heading = (lambda text: f"\n### {text}\n") if md else (lambda text: f"\n{text}\n{'=' * len(text)}")
    print(("**Machine**: " if md else "machine: ")
          + f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs" + ("  " if md else ""))
    print(("**Run**: " if md else "run:     ") + f"{started.isoformat()}, "
          f"best of {opts.repeat} timeit repeats of ~{opts.min_time} s per cell, interleaved, after a warm-up"
          + ("  " if md else ""))
    print(("**Commit**: " if md else "commit:  ") + _commit() + ("  " if md else ""))
    print(("**Versions**: " if md else "versions: ") + _versions())

    print(heading("Per call (µs, lower is better)"))
    header = ["case", *COMPETITORS, "ref / ours", "jsonschema / ours", "ours / hand"]
    rows = []
    for case, row in zip(cases, results):
        ours = row["ours sdk"]
        rows.append([case["label"], *(_us(row[c]) + ("¹" if c == "fastjsonschema" and "invalid" in case["label"]
                                                     else "") for c in COMPETITORS),
                     _ratio(row["reference"], ours), _ratio(row["jsonschema"], ours), _ratio(ours, row["hand-written"])])
    print(_table(header, rows, md))
    print()
    notes = [
        "µs per call, best of the repeats. \"ours\" is toolform_rules.validate_arguments (profile sdk unless "
        "marked study); ratios use ours sdk. Ours and the reference are given the whole call "
        "({\"name\", \"arguments\"}) and a toolset, so they also resolve the tool's name; the others get "
        "the arguments only. Compilation (ours, the reference's, jsonschema's validator, "
        "fastjsonschema.compile) happens before timing; timeit turns the garbage collector off while it "
        "times. jsonschema and fastjsonschema get the sample schema with `additionalProperties: false` "
        "on its objects (the study closes them; JSON Schema does not unless told), so all find the same "
        "errors; the 32-property schema says it explicitly.",
        "¹ fastjsonschema is fail-fast: it has no way to collect all errors. It is timed as "
        "`try: validate(args) except JsonSchemaException: pass`, so on invalid calls the figure is the time "
        "to its FIRST error (including raising the exception), not to all errors: it is not comparable "
        "like for like with the other columns there.",
        "hand-written: a Python function per tool doing the same checks with the sdk profile's semantics "
        "(closed objects, required at any depth, names resolved across naming conventions, integral floats "
        "as integers, case-insensitive enums) and producing the same messages: the floor.",
    ]
    print("\n\n".join(notes) if md else "\n".join("  " + n for n in notes))

    # The targets of docs/performance.md: the worse of the valid nested call (a) and the seed's
    # invalid call (b), each ratio taken on the case where it is smallest.
    worst = [results[0], results[1]]
    worst_ours = max(row["ours sdk"] for row in worst)
    worst_ref = min(row["reference"] / row["ours sdk"] for row in worst if row["reference"] is not None) \
        if all(row["reference"] is not None for row in worst) else None
    worst_js = min(row["jsonschema"] / row["ours sdk"] for row in worst)
    print(heading("Targets: the worse of a. and b."))
    print(_table(["what", "measured", "target"], [
        ["seed's invalid call (b), ours sdk, all findings", f"{_us(results[1]['ours sdk'])} µs", "≤ 5 µs"],
        ["valid nested call (a), ours sdk", f"{_us(results[0]['ours sdk'])} µs", "≤ 2 µs"],
        ["the slower of a. and b.", f"{_us(worst_ours)} µs", ""],
        ["reference / ours, the smaller of a. and b.", "n/a" if worst_ref is None else f"{worst_ref:.1f}×", "≥ 8×"],
        ["jsonschema / ours, the smaller of a. and b.", f"{worst_js:.1f}×", "≥ 10×"],
    ], md))

    print(heading("Errors reported per call (a sanity check: every competitor sees the same errors)"))
    print(_table(["case", *COMPETITORS], [[c["label"], *(n[k] for k in COMPETITORS)]
                                        for c, n in zip(cases, counts)], md))

    print(heading("Compile and load (ours, profile sdk, default Limits)"))
    rows = [
        ["compile_tool, 32-property tool", f"{figures['compile_work'] * 1e3:.3f} ms"],
        ["compile_tool, 32-property tool again (every node shared: content keys and lookups)",
         f"{figures['compile_work_shared'] * 1e3:.3f} ms"],
        ["load_tools, 32-property tool", f"{figures['load_work'] * 1e3:.3f} ms"],
        ["load_tools + compile_tool, 32-property tool", f"{figures['load_compile_work'] * 1e3:.3f} ms"],
        ["compile_tool, sample tool", f"{figures['compile_sample'] * 1e3:.3f} ms"],
        ["(context) jsonschema Draft202012Validator(schema), 32-property (lazy: no work up front)", f"{figures['jsonschema_build'] * 1e3:.3f} ms"],
        ["(context) fastjsonschema.compile(schema), 32-property", f"{figures['fastjsonschema_compile'] * 1e3:.3f} ms"],
    ]
    bfcl = figures.get("bfcl")
    if bfcl:
        for key, what in (("load", "load_tools"), ("compile", "compile_tool"), ("total", "load + compile")):
            values = bfcl[key]
            rows.append([f"BFCL_v4_multiple, {bfcl['n']} distinct tools: {what} per tool",
                         f"mean {statistics.fmean(values) * 1e3:.3f} ms, max {max(values) * 1e3:.3f} ms"])
    else:
        rows.append(["BFCL_v4_multiple", f"not found at {BFCL_MULTIPLE}"])
    print(_table(["what", "time"], rows, md))
    if md:
        print()
    print(("" if md else "  ") + "compile times are the best of the repeats, each with no node compiled "
          "before it (the shared nodes cleared) unless marked \"again\"; BFCL figures are per tool, "
          "each tool the best of 3 (load and compile timed separately).")

    print(heading("Memory (tracemalloc)"))
    print(_table(["what", "bytes"], [
        ["peak while compiling the 32-property tool", f"{figures['compile_peak']:,}"],
        ["kept by its compiled program", f"{figures['compile_kept']:,}"],
        ["peak during one valid sample call (warm)", f"{figures['call_peak']:,}"],
        ["net change after that call", f"{figures['call_kept']:,}"],
        ["net change after 10,000 more valid sample calls", f"{figures['calls_kept']:,}"],
    ], md))

    worst = max(noise)
    if md:
        print()
    print(("" if md else "\n") + f"Noise: the median repeat was at most {worst[0] * 100:.1f}% slower than the best "
          f"(worst cell: {worst[1]} / {worst[2]}).")
    return 0


def _commit() -> str:
    """The checkout's commit, and whether the library's files differ from it (``git``, when there is one)."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "toolform_rules", "rules"],
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return head + (" with uncommitted changes to the library" if dirty else "")


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in ("toolform-rules", "toolform", "jsonschema", "fastjsonschema"):
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
