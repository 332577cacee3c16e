"""The ns-3 side of validation: the reference programs ``validation/ns3/*.cc``.

* :mod:`vtlab.ns3.program` finds the ``ns3`` wheel and builds and caches the programs
  (standard library only: ``validation/ns3/build.sh`` runs it as a script);
* :mod:`vtlab.ns3.process` launches and measures child processes and parses their
  JSON lines;
* :mod:`vtlab.ns3.cc` maps vtlab's congestion controls to ns-3 TypeIds
  (:func:`~vtlab.ns3.cc.ns3_type_id`);
* one argument translator per program, fed only from the resolved scenario:
  :mod:`vtlab.ns3.v2g` (the V2G cable and the charging station),
  :mod:`vtlab.ns3.wifi` (the 802.11 vehicular chain), :mod:`vtlab.ns3.iso15118`
  (request/response sessions) and :mod:`vtlab.ns3.lte` (ns-3's LTE module).

Nothing here compares or judges results; that is :mod:`vtlab.validation`.
"""
