"""The reference implementation (PyPI ``toolform`` 0.0.1), used as a black-box oracle only.

Tests import it through this module; the package itself never does.
"""

from __future__ import annotations

import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from toolform.ir import ToolCall as RefCall
    from toolform.ir import normalize_call as ref_normalize_call
    from toolform.ir import validate_call as ref_validate_call_ir
    from toolform.sdk import load_tools as _ref_load_tools
    from toolform.sdk import sample_toolset as ref_sample_toolset
    from toolform.sdk import validate_arguments as ref_validate_arguments


def ref_load_tools(tools: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _ref_load_tools(tools)


def ref_validate_call(call: dict, ref_toolset: Any) -> dict:
    """The study's validator (``toolform.ir.validate_call``) on the named tool of a reference toolset."""
    return ref_validate_call_ir(RefCall(call["name"], call["arguments"]), ref_toolset.get(call["name"])).to_dict()


def ref_normalize(call: dict, ref_toolset: Any, strictness: str) -> dict:
    return ref_normalize_call(RefCall(call["name"], call["arguments"]), ref_toolset.get(call["name"]),
                              strictness=strictness).arguments


__all__ = ["RefCall", "ref_load_tools", "ref_normalize", "ref_sample_toolset", "ref_validate_arguments",
           "ref_validate_call"]
