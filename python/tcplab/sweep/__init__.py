"""Campaigns: parameter sweeps, a result store that loses nothing, local or Dask execution.

::

    from tcplab import Dumbbell
    from tcplab.sweep import Campaign, Sweep

    base = Dumbbell(n_flows=1, bottleneck_rate="10Mbps", rtt="20ms", buffer="1BDP", duration="5s")
    sw = Sweep(base, grid={"buffer": ["0.1BDP", "1BDP"], "algorithm": ["newreno", "reno"]}, seeds=3)
    camp = Campaign("out/campaigns/demo")
    report = camp.run(sw)                 # only what is not stored yet; all local cores
    df = camp.results(sw)                 # one row per run: parameters, seed, metrics
    camp.aggregate(sw)                    # mean and 95 % t-interval across seeds
    camp.load(df.key[0]).flow_ts          # one run's time series, on demand

See docs/campaigns.md. Only the standard library is imported here; pandas,
pyarrow, tqdm and distributed come in when used.
"""

from __future__ import annotations

from typing import Any

from .campaign import Campaign, CampaignError, CampaignWarning, DamagedSegmentError, RunReport, run_key
from .envfail import StorageError
from .grid import Sweep, SweepError, load_sweep
from .query import aggregate, t_interval

__all__ = ["Campaign", "CampaignError", "CampaignWarning", "DamagedSegmentError", "RunReport", "StorageError", "Sweep",
           "SweepError", "aggregate", "load_sweep", "run_key", "run_sweep", "t_interval"]


def run_sweep(sweep: Sweep, campaign: Any, **kwargs: Any) -> RunReport:
    """``Campaign(campaign).run(sweep, **kwargs)`` (``campaign``: a path or a Campaign)."""
    camp = campaign if isinstance(campaign, Campaign) else Campaign(campaign)
    return camp.run(sweep, **kwargs)
