"""bfcl_python_list: the Berkeley Function Calling Leaderboard's answer shape.

The syntax is :mod:`python_list_call`'s — ``[func1(a=1), func2(b=2)]`` — and so is the
reading (``grammars/bfcl_python_list.lark``, the same rules); the instructions are worded
the way BFCL's prompt asks for it (in our words).

>>> PROTOCOL.parse('[math.factorial(number=5)]').calls[0].name
'math.factorial'
"""

from __future__ import annotations

from typing import Any, Iterable

from ....schema.toolset import Toolset
from ..base import ProtocolInfo
from .shared import PythonLists
from .python_list_call import PythonListCall, PythonListValues


class BfclListValues(PythonListValues):
    """``bfcl_python_list.lark`` trees → lists of :class:`~.code_family.CallSyntax`."""


class BfclPythonList(PythonListCall):
    info = ProtocolInfo(
        id="bfcl_python_list",
        name="BFCL Python list",
        description="The Berkeley Function Calling Leaderboard's shape: [func1(param=value, ...), func2(...)].",
        parallel=True,
    )
    lists = PythonLists("bfcl_python_list", BfclListValues)

    def instructions(self, tools: Toolset | Iterable[Any] | None = None) -> str:
        return ("Answer only with the function calls, nothing else. To call one or more of the functions, "
                "write them as a bracketed list: [func_name1(param_a=value_a, param_b=value_b), "
                "func_name2(param=value)]. Do not add any other text to your answer.")


PROTOCOL = BfclPythonList()
