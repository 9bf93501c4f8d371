"""Scenarios: what to simulate, in friendly units, turned into the core's run description.

A :class:`Scenario` holds nodes, links, routes and flows plus the run settings
(duration, measurement window, sampling interval, seed). ``to_spec()`` checks
everything, naming the offending field in a :class:`~tcplab.errors.ScenarioError`,
and returns the exact ``RunSpec`` JSON object of ``crates/tcplab-core/src/spec.rs``
(SI units: seconds, bit/s, bytes; no extra keys). :func:`dumbbell` builds the
single-bottleneck network of the mv-highspeed and mv-buffers papers.

The package, one file per role:

- ``checks``: field checks naming the field, the core's limits, the algorithm and
  queue-discipline catalogs, and the ``queue``/``loss``/``source`` tables;
- ``model``: :class:`Node`, :class:`Link`, :class:`Route`, :class:`File`, :class:`Flow`
  (each ``to_spec(path)`` gives its part of the run description);
- ``scenario``: :class:`Scenario` (run settings, cross-references, TOML writing);
- ``dumbbell``: :func:`dumbbell` (also named ``Dumbbell``), which builds a Scenario from
  the dumbbell's parameters kept on a :class:`DumbbellParams`;
- ``loading``: :func:`scenario_from_dict` and :func:`load_scenario`.

Scenario files (TOML)
=====================

The complete reference, every key with its default and unit, is
docs/reference/scenario-file.md (the documentation site's "Scenario files").
Quantities may be written with units as strings (``"200Mbps"``, ``"100ms"``,
``"1500B"``, ``"0.1BDP"``, see :mod:`tcplab.units`) or as plain numbers in SI
base units. Unknown keys are errors that name the key and suggest close
matches. A file has optional top-level ``name`` and ``description`` strings,
a ``[run]`` table, and *either* a ``[dumbbell]`` table *or* the generic
``[[nodes]]``/``[[links]]``/``[[routes]]``/``[[flows]]`` arrays.

``[run]``
    ``duration`` (required for the generic form; dumbbell default ``"2000s"``),
    ``measure_window`` (length of the measurement window at the end of the
    run) *or* ``measure_start`` (its start), ``sample_interval`` (time-series
    sampling; ``0`` disables), ``seed`` (integer), ``trace_links`` (links
    whose queue length is sampled; default: every link with a finite queue
    limit, i.e. the dumbbell's bottleneck), ``loss_trace`` (``true`` records
    every drop, loss and retransmission: the results' ``drop_trace`` and
    ``retransmit_trace``; default ``false``), ``pcap`` (links whose packets
    are captured, for pcap files: link names, or ``"bottleneck"`` for the
    bottleneck both ways; docs/pcap.md), ``pcap_limit`` (most packets
    captured; default 5,000,000), ``memory_limit`` (a size such as
    ``"16GiB"``: the memory a run may be estimated to need before the core
    refuses it; default 4 GiB, docs/limits.md). Defaults: generic form
    measures over the whole run; the dumbbell measures over the last half
    (the papers' "2000 s, goodput over the last 1000 s"); sample interval
    ``"100ms"``; seed ``0``.

``[dumbbell]`` (keys of :func:`dumbbell`)
    ``n_flows``, ``bottleneck_rate``, ``rtt``, ``buffer`` (required);
    ``algorithm`` (name, or a list with one per flow; default ``"newreno"``),
    ``params`` (table, or list of tables per flow), ``recovery``
    (``"reno"|"newreno"|"sack"`` or list; default ``"newreno"``),
    ``start`` (flow start time or list; default 0), ``access_rate`` (default
    10 x ``bottleneck_rate``), ``access_delay`` (``"spread"`` (default),
    ``"uniform"``, one time for all, or a list of times, one per flow),
    ``access_jitter`` (a time, default 0: each sender's access delay gets an
    offset drawn uniform in [0, jitter) from the seed),
    ``packet_size`` (``"1500B"``), ``header_size`` (``40``), ``ack_size``
    (``40``), ``accounting`` (``"ns2"``), ``loss`` / ``reverse_loss``,
    ``queue`` / ``reverse_queue`` (the bottleneck's queue discipline, e.g.
    ``queue = { discipline = "codel", target = "5ms" }``, see ``[[links]]``;
    ``buffer`` is its limit), ``source`` (an unresponsive source table for
    every flow, or a list with one per flow, ``"tcp"`` for a TCP flow; see
    ``[[flows]]``), and a sub-table ``[dumbbell.flow_options]`` with any
    other :class:`Flow` keyword applied to every flow (e.g.
    ``delayed_ack = true``, ``min_rto = "200ms"``).

``[[nodes]]``
    ``name``, ``kind`` (``"host"`` (default) or ``"router"``).

``[[links]]`` (unidirectional)
    ``name``, ``src``, ``dst``, ``rate``, ``delay``, ``buffer`` (optional;
    packets, or a size in bytes; absent = unlimited; BDP fractions are only
    meaningful in the dumbbell), ``loss``, ``queue`` (optional: the queue
    discipline, ``{ discipline = "fq_codel", target = "5ms", ... }``; the
    other keys are the discipline's parameters as ``tcplab disciplines``
    lists them, a value with a unit converted (times to seconds, sizes to
    bytes, rates to bit/s), or ``limit_packets`` / ``limit_bytes`` when
    ``buffer`` is absent; absent = the fast drop-tail FIFO).

``[[routes]]`` (optional static routes; otherwise shortest propagation delay)
    ``node``, ``dst``, ``link``.

``[[flows]]`` (keys of :class:`Flow`)
    ``src``, ``dst`` (required), ``name`` (default ``flow<i+1>``),
    ``algorithm``, ``params``, ``recovery``, ``start``, ``packet_size``,
    ``header_size``, ``ack_size``, ``accounting``, ``init_cwnd``,
    ``init_ssthresh``, ``rwnd`` (packets), ``min_rto``, ``max_rto``, ``rto_mode``,
    ``init_rto``, ``dupthresh``, ``dupack_guard``, ``limited_transmit``, ``delayed_ack``,
    ``delack_timeout``, ``sack_blocks``, ``ack_policy`` (``"rfc"``|``"linux"``),
    ``delack_min``, ``delack_max``, ``quickacks``, ``dsack``, ``restart_after_idle``, ``files``
    (array of ``{size = "1MB", start = "0s"}``; absent = bulk, unlimited data),
    ``source`` (instead of TCP, an unresponsive source:
    ``{ kind = "cbr", rate = "10Mbps", ecn = "ect1" }`` or
    ``{ kind = "on_off", rate = "10Mbps", on = "1s", off = "2s", exponential = true }``;
    not with ``files``).

A generic file may also give ``bottleneck = ["link-name", ...]``, the links
reports and plots should highlight.

Example::

    name = "dumbbell-newreno-bdp"
    [dumbbell]
    n_flows = 1
    bottleneck_rate = "200Mbps"
    rtt = "100ms"
    buffer = "1BDP"
    algorithm = "newreno"
    [run]
    duration = "2000s"
    measure_window = "1000s"
    sample_interval = "10ms"
"""

from __future__ import annotations

# The key lists, limits and checks are importable from here as before the package split (the private
# ones, _check_keys and the like, by the sweep, topology and generator modules).
from .checks import (  # noqa: F401
    ACCESS_JITTER_STREAM,
    ACCESS_RATE_FACTOR,
    ACCOUNTINGS,
    ACK_POLICIES,
    BUILTIN_ALGORITHMS,
    BUILTIN_DISCIPLINES,
    DEFAULT_SAMPLE_INTERVAL,
    DUMBBELL_BYTES_PER_FLOW,
    DUPACK_GUARDS,
    ECN_MODES,
    LINUX_DELACK_MAX,
    LINUX_DELACK_MIN,
    LINUX_QUICKACKS,
    LOSS_KEYS,
    LOSS_KINDS,
    MAX_DUMBBELL_FLOWS,
    MAX_PACKET_SIZE,
    MAX_RATE_BPS,
    NODE_KINDS,
    PACING_CA_RATIO,
    PACING_SS_RATIO,
    PROFILE_DEFAULTS,
    PROFILES,
    QUEUE_KEYS,
    QUEUE_LIMIT_KEYS,
    RECOVERIES,
    RTO_MODES,
    SOURCE_ECN,
    SOURCE_KINDS,
    UNIFORM_ACCESS_DELAY_MAX,
    UNLIMITED_QUEUE,
    WINDOW_CONTROLLING,
    _check_keys,
    _check_params,
    _loss_spec,
    _suggest,
    algorithm_catalog,
    discipline_catalog,
    resolve_algorithm,
    resolve_discipline,
)
from .dumbbell import (  # noqa: F401
    DUMBBELL_KEYS,
    FLOW_OPTION_KEYS,
    Dumbbell,
    DumbbellParams,
    dumbbell,
)
from .loading import (  # noqa: F401
    TOP_KEYS,
    load_scenario,
    scenario_from_dict,
)
from .model import (  # noqa: F401
    FILE_KEYS,
    FLOW_KEYS,
    LOSS_CLASSIFIER_KEYS,
    File,
    Flow,
    Link,
    Node,
    Route,
)
from .scenario import (  # noqa: F401
    RUN_KEYS,
    Scenario,
    _tomlable,
)

__all__ = [
    "Dumbbell",
    "DumbbellParams",
    "File",
    "Flow",
    "Link",
    "Node",
    "Route",
    "Scenario",
    "algorithm_catalog",
    "discipline_catalog",
    "dumbbell",
    "load_scenario",
    "scenario_from_dict",
]
