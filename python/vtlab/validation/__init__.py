"""Validation of vtlab against ns-3: one case protocol, one run cache, one verdict
module and one report skeleton, with one small module per validation family.

* :mod:`vtlab.validation.protocol`: what a family declares (:class:`Family`) and the
  driver that runs, caches, compares and reports it (:func:`validate`);
* :mod:`vtlab.validation.cache`: ``runs.jsonl`` and the stored ns-3 runs;
* :mod:`vtlab.validation.runner`: running cases in threads or on a Dask cluster;
* :mod:`vtlab.validation.verdict`: confidence intervals, Fieller ratio intervals,
  paired differences, verdicts and rank agreement (on :mod:`vtlab.stats`);
* :mod:`vtlab.validation.report`: tables and the Markdown skeleton of a report;
* :mod:`vtlab.validation.errors`: the errors of a validation;
* :mod:`vtlab.validation.units`: parsing option values (loss rates, sizes);
* families: :mod:`vtlab.validation.v2g` (bulk transfers on the V2G cable and at the
  charging station, :mod:`vtlab.validation.station`), :mod:`vtlab.validation.lte`
  (trace replay against ns-3's LTE module), :mod:`vtlab.validation.wifi` (the 802.11
  chain), :mod:`vtlab.validation.wifi_aodv` (AODV on that chain) and
  :mod:`vtlab.validation.iso15118` (request/response sessions, paired by
  :mod:`vtlab.validation.paired`, the mechanism of every paired replay).

The ns-3 programs themselves are built and run by :mod:`vtlab.ns3`; the command line
is :mod:`vtlab.cli.validate`.
"""
