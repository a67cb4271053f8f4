"""Tools whose parameters are structured: TypedDict, dataclasses (nested, recursive), pydantic, dict, set, tuple."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, Required, TypedDict

from pydantic import BaseModel, Field


class Address(TypedDict):
    street: str
    city: str
    postcode: NotRequired[str]


class Filters(TypedDict, total=False):
    colour: str
    size: Required[int]


@dataclass
class Point:
    x: float
    y: float = 0.0


@dataclass
class Route:
    start: Point
    stops: list[Point] = field(default_factory=list)
    name: str = "route"


@dataclass
class TreeNode:
    label: str
    children: list[TreeNode] = field(default_factory=list)


class Order(BaseModel):
    """An order of one product."""

    product: str
    quantity: int = Field(ge=1)


def ship(address: Address, filters: Filters | None = None) -> str:
    """Ship to an address.

    Args:
        address: Where to ship.
        filters: Which parcels.
    """
    return address["city"]


def plan_route(route: Route) -> float:
    """Plan a route."""
    return 0.0


def label_tree(tree: TreeNode) -> int:
    """Count a tree's labels."""
    return 1


def place_order(order: Order, note: str = "") -> str:
    """Place an order."""
    return order.product


def tally(counts: dict[str, int], seen: set[str], pair: tuple[int, str], rest: tuple[float, ...] = (1.0, 2.0)) -> int:
    """Add the counts."""
    return sum(counts.values())
