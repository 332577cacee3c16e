"""Congestion controls and their ns-3 counterparts. The map from a vtlab congestion
control to the ns-3 TypeId it is validated against lives in the core's registry
(each controller's descriptor, ``ns3_type_id``); this module only reads it."""

from __future__ import annotations

from functools import cache

from vtlab import _core

__all__ = ["ns3_ccs", "ns3_type_id"]


@cache
def _type_ids() -> dict[str, str]:
    """vtlab name -> ns-3 TypeId (without ``ns3::``), in registry order."""
    return {c["name"]: c["ns3_type_id"] for c in _core.congestion_controls() if c["ns3_type_id"]}


def ns3_type_id(cc: str) -> str | None:
    """The ns-3 TypeId (without ``ns3::``) of vtlab's congestion control ``cc``, or
    None when ns-3 has no counterpart.

    >>> ns3_type_id("westwood-plus"), ns3_type_id("westwood")
    ('TcpWestwoodPlus', None)
    """
    return _type_ids().get(cc)


def ns3_ccs() -> tuple[str, ...]:
    """Every vtlab congestion control with an ns-3 counterpart, in registry order."""
    return tuple(_type_ids())
