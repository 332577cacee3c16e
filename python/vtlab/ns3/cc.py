"""Congestion controls and their ns-3 counterparts: the one place that maps a vtlab
congestion-control name to an ns-3 TypeId (:func:`ns3_type_id`)."""

from __future__ import annotations

__all__ = ["ns3_ccs", "ns3_type_id"]

#: vtlab congestion-control name -> ns-3 TypeId (without the ``ns3::`` prefix), for
#: every algorithm both implement, in report order.  Read through :func:`ns3_type_id`
#: and :func:`ns3_ccs` only.
_TYPE_IDS: dict[str, str] = {
    "newreno": "TcpNewReno",
    "hybla": "TcpHybla",
    "highspeed": "TcpHighSpeed",
    "htcp": "TcpHtcp",
    "vegas": "TcpVegas",
    "scalable": "TcpScalable",
    "veno": "TcpVeno",
    "bic": "TcpBic",
    "illinois": "TcpIllinois",
    "westwood-plus": "TcpWestwoodPlus",
    "cubic": "TcpCubic",
    "yeah": "TcpYeah",
    "bbr": "TcpBbr",
}


def ns3_type_id(cc: str) -> str | None:
    """The ns-3 TypeId (without ``ns3::``) of vtlab's congestion control ``cc``, or
    None when ns-3 has no counterpart.

    >>> ns3_type_id("westwood-plus"), ns3_type_id("westwood")
    ('TcpWestwoodPlus', None)
    """
    return _TYPE_IDS.get(cc)


def ns3_ccs() -> tuple[str, ...]:
    """Every vtlab congestion control with an ns-3 counterpart, in report order."""
    return tuple(_TYPE_IDS)
