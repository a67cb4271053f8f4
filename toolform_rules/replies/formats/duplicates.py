"""Keys written twice in a call's JSON: found as values are read, by :mod:`~toolform_rules.replies.formats.values`,
whose names are lent here to the modules that import them from this one."""

from __future__ import annotations

from .values import Repeats, in_call_object, keys_twice, may_repeat, noted, places, repair, reread, where

__all__ = ["Repeats", "in_call_object", "keys_twice", "may_repeat", "noted", "places", "repair", "reread", "where"]
