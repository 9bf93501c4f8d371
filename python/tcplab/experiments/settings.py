"""The TCP setup of a reproduction, and the settings every index.md records in one layout.

**TCP setup.** A paper states its scenario and its algorithms; the sender and receiver around them
(initial window, initial ssthresh, the retransmission timer, how the receiver ACKs) it leaves to its
simulator. ``setup = "paper"`` (``tcplab reproduce --setup paper``, the default) gives every flow the
simulator's values: for the papers run on ns-2, ns-2's defaults wherever the paper states nothing
(read in ns-2's ``tcl/lib/ns-default.tcl`` and ``tcp/tcp.cc``, with the dates their defaults changed,
so that each paper gets the values of the release it ran). ``setup = "linux"`` gives today's: tcplab's
Flow defaults (RFC 6928's initial window of 10, the Linux RTO), what the reproductions used before
they had a paper profile. Each value comes with its source; what tcplab cannot model of the
simulator is listed apart, as a deviation.

**The Settings section of index.md** has the same four parts for every paper, in this order:

- ``### Runs``: durations, grids, seeds (the paper's own lines);
- ``### TCP setup``: :meth:`TcpSetup.markdown`, every value with its source;
- ``### Protocols``: each protocol's algorithm, the parameters set and why, its loss recovery (and,
  for the Westwood family, every parameter left at its default, with the default's source);
- ``### Other choices``: the paper's remaining choices where it is silent.

:func:`settings_markdown` writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The setups ``--setup`` accepts.
SETUPS = ("paper", "linux")

#: The sections of every reproduction's index.md, in order (index.py writes the ``##`` ones,
#: :func:`settings_markdown` the ``###`` ones; ``## Other files`` may follow).
INDEX_LAYOUT = ("## Scenario", "## Settings", "### Runs", "### TCP setup", "### Protocols", "### Other choices",
                "## Outputs")


def index_sections(markdown: str) -> list[str]:
    """The ``##`` and ``###`` headings of an index.md, in order (to compare with :data:`INDEX_LAYOUT`)."""
    import re

    return [line.rstrip() for line in markdown.splitlines() if re.match(r"#{2,3} ", line)]


@dataclass(frozen=True)
class SetupValue:
    """One value of a TCP setup: ``option`` is a :class:`tcplab.scenario.Flow` option (passed to
    every flow) unless ``flow`` is False (a value recorded only, e.g. one the scenario sets)."""

    option: str
    value: Any
    source: str
    flow: bool = True


@dataclass(frozen=True)
class TcpSetup:
    """The sender and receiver settings of every flow of a reproduction (or of some of its items)."""

    name: str  # "paper" or "linux": the --setup that chose it
    title: str  # what it models, e.g. "ns-2.28's one-way TCP agents, as the paper ran them"
    values: tuple[SetupValue, ...]
    not_modelled: tuple[str, ...] = ()

    def flow_options(self) -> dict:
        """The :class:`~tcplab.scenario.Flow` options every flow gets (``Dumbbell(flow_options=...)``)."""
        return {v.option: v.value for v in self.values if v.flow}

    def value(self, option: str) -> Any:
        for v in self.values:
            if v.option == option:
                return v.value
        raise KeyError(option)

    def with_values(self, *extra: SetupValue) -> TcpSetup:
        """The same setup with ``extra`` values first (e.g. what the paper states itself)."""
        return TcpSetup(self.name, self.title, tuple(extra) + self.values, self.not_modelled)

    def markdown(self) -> list[str]:
        """The setup as Markdown lines: a line on what it models, a table of every value with its
        source, and what tcplab does not model of it."""
        lines = [f"`--setup {self.name}`: {self.title}.", "",
                 "| setting | value | source |", "|---|---|---|"]
        for v in self.values:
            lines.append(f"| {v.option} | {show(v.value, v.option)} | {v.source} |")
        if self.not_modelled:
            lines += ["", "Not modelled (deviations from that setup):", ""]
            lines += [f"- {d}" for d in self.not_modelled]
        return lines


def show(value: Any, option: str = "") -> str:
    """A setting's value as index.md shows it: None as "unlimited" (a window or ssthresh) or
    "none", booleans as on/off, times in s."""
    if value is None:
        return "unlimited" if option in ("init_ssthresh", "rwnd") else "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        text = f"{value:g}"
        return f"{text} s" if option.endswith("_rto") else text
    return str(value)


# ---------------------------------------------------------------- the setups

#: ns-2 Agent/TCP defaults that changed between releases (tcl/lib/ns-default.tcl, whose comments
#: date each change): option -> (value until the change, date of the change, value after).
NS2_CHANGED = {
    "init_rto": (6.0, "2006/01/21", 3.0),  # rtxcur_init_
    "max_rto": (100000.0, "2007/03/28", 60.0),  # maxrto_
}

#: The receiver window: what ns-2's default (window_ = 20 packets) would do to these papers.
_WINDOW = ("ns-2's `window_` = 20 caps the window at 20 packets (TcpAgent::window() = min(cwnd_, window_)), "
           "which makes the paper's windows of hundreds to thousands of packets impossible: the paper evidently "
           "raised it (choice: unlimited)")


#: Why the ns-2 setups use tcplab's linux RTO mode although ns-2's formula is RFC 6298's.
_RTO_MODE = ("choice: ns-2's `rtt_timeout()` (`rfc2988_` = true) is RFC 6298's max(minrto_, srtt + 4 rttvar), "
             "tcplab's rfc6298, but ns-2 times one segment per round trip on a 10-ms tick (rttvar keeps at least a "
             "quarter tick) where tcplab samples every ACK on an exact clock, so with rfc6298 tcplab's timer fires "
             "spuriously just before a fast retransmission's ACK crosses a full queue; srtt + max(4 rttvar, min_rto) "
             "matches ns-2's outcome (one NewReno flow, 40 Mbit/s, 100 ms, B = BDP, 300 s: ns-2 1 RTO, 39.96 "
             "Mbit/s; tcplab linux 2 RTOs, 39.96; rfc6298 10 RTOs, 36.6; docs/validation-ns2-howto.md)")


def ns2(release: str, date: str, why: str) -> TcpSetup:
    """ns-2's one-way TCP agents (Agent/TCP and its Reno, NewReno, Sack1 subclasses) with the
    TCPSink, at their defaults. ``release`` names the ns-2 the paper ran and ``date`` when it was
    current ("YYYY/MM/DD", or a prefix such as "2005"): it decides the defaults that changed
    (:data:`NS2_CHANGED`). ``why``: where the paper says which ns-2 it ran."""

    def changed(option: str, variable: str) -> SetupValue:
        old, when, new = NS2_CHANGED[option]
        if date < when:
            return SetupValue(option, old, f"ns-2 Agent/TCP `{variable}` = {old:g} s until {when} ({new:g} s after)")
        return SetupValue(option, new, f"ns-2 Agent/TCP `{variable}` = {new:g} s since {when} ({old:g} s before)")

    return TcpSetup("paper", f"the one-way TCP agents and TCPSink of {release} at their defaults, as the paper "
                             f"ran them ({why})", (
        SetupValue("init_cwnd", 2.0, "ns-2 Agent/TCP `windowInit_` = 2 (default since 2001/5/26; the paper is "
                                     "silent)"),
        SetupValue("init_ssthresh", None, "ns-2 `TcpAgent::reset()` sets `ssthresh_ = window_`, the receiver "
                                          "window, raised as below"),
        SetupValue("rwnd", None, _WINDOW),
        changed("init_rto", "rtxcur_init_"),
        SetupValue("min_rto", 0.2, "ns-2 Agent/TCP `minrto_` = 0.2 s (default since 2004/10/14)"),
        changed("max_rto", "maxrto_"),
        SetupValue("rto_mode", "linux", _RTO_MODE),
        SetupValue("limited_transmit", True, "ns-2 Agent/TCP `singledup_` = 1 (default since 2001/11/28): Reno "
                                             "and NewReno send a new segment on each of the first two duplicate "
                                             "ACKs (`send_one()`, within cwnd + dupacks; RFC 3042); SACK flows "
                                             "send on every duplicate ACK anyway"),
        SetupValue("dupthresh", 3, "ns-2 Agent/TCP `numdupacks_` = 3"),
        SetupValue("dupack_guard", "careful", "ns-2 Agent/TCP `bugFix_` = true, `lessCareful_` = false"),
        SetupValue("delayed_ack", False, "ns-2 Agent/TCPSink: one ACK per segment (the DelAck sink is not the "
                                         "default)"),
        SetupValue("sack_blocks", 3, "ns-2 Agent/TCPSink `maxSackBlocks_` = 3"),
        SetupValue("restart_after_idle", True, "ns-2 Agent/TCP `slow_start_restart_` = true"),
        SetupValue("header and ACK size", "40 B", "ns-2 Agent/TCP `tcpip_base_hdr_size_` = 40, Agent/TCPSink "
                                                  "`packetSize_` = 40", flow=False),
    ), (
        "ns-2 measures round-trip times in ticks of `tcpTick_` = 0.01 s (srtt, rttvar and so the RTO move in "
        "10 ms steps); tcplab's clock is exact.",
        "ns-2's one-way TCP with `syn_` = true and `delay_growth_` = true (defaults since 2001/5/17) sends a "
        "40-byte SYN-like first packet with cwnd 1 and opens the window to `windowInit_` when it is "
        "acknowledged; tcplab sends the initial window at the flow's start, about one round trip earlier.",
    ))


def ns2_tcp_linux(why: str) -> TcpSetup:
    """ns-2's Agent/TCP/Linux (the TCP-Linux patch of 2007, part of ns-2 since 2.33) with a
    SACK sink, at its defaults: Linux congestion-control modules inside ns-2's sender."""
    return TcpSetup("paper", f"ns-2's Agent/TCP/Linux (TCP-Linux) at its defaults, as the paper ran it ({why})", (
        SetupValue("init_cwnd", 2.0, "ns-2 `windowInit_` = 2; Agent/TCP/Linux sets `delay_growth_` = false, so "
                                     "from the start (tcp-linux.cc: `snd_cwnd` = 2)"),
        SetupValue("init_ssthresh", None, "TCP-Linux `load_to_linux_once()`: `snd_ssthresh = snd_cwnd_clamp = "
                                          "window_`, the receiver window, raised as below"),
        SetupValue("rwnd", None, _WINDOW.replace("(TcpAgent::window() = min(cwnd_, window_))",
                                                 "(TCP-Linux's `snd_cwnd_clamp` = window_)")),
        SetupValue("init_rto", 3.0, "ns-2 Agent/TCP/Linux `rtxcur_init_` = 3 s"),
        SetupValue("min_rto", 0.2, "ns-2 Agent/TCP/Linux `minrto_` = 0.2 s"),
        SetupValue("max_rto", 120.0, "ns-2 Agent/TCP/Linux `maxrto_` = 120 s"),
        SetupValue("rto_mode", "linux", "choice: TCP-Linux keeps ns-2's `rtt_timeout()`, RFC 6298's max(minrto_, "
                                        "srtt + 4 rttvar) (tcplab's rfc6298), but restarts the timer on every ACK, "
                                        "duplicates included, which tcplab does not model; with rfc6298 tcplab's "
                                        "timer fires spuriously where TCP-Linux's does not, and srtt + max(4 rttvar, "
                                        "min_rto) is the closer match (the ns-2 comparison runs it for this reason: "
                                        "docs/validation-ns2-howto.md)"),
        SetupValue("limited_transmit", False, "TCP-Linux's `recv()` has no `send_one()`; a SACK flow sends on "
                                              "every duplicate ACK anyway"),
        SetupValue("dupthresh", 3, "ns-2 `numdupacks_` = 3"),
        SetupValue("delayed_ack", False, "ns-2 Agent/TCPSink/Sack1, TCP-Linux's sink: one ACK per segment"),
        SetupValue("sack_blocks", 3, "ns-2 Agent/TCPSink `maxSackBlocks_` = 3"),
        SetupValue("restart_after_idle", True, "ns-2 `slow_start_restart_` = true"),
        SetupValue("header and ACK size", "40 B", "ns-2 `tcpip_base_hdr_size_` = 40, Agent/TCPSink `packetSize_` = "
                                                  "40", flow=False),
    ), (
        "TCP-Linux measures round-trip times in 1 ms ticks (`tcp_tick_` = 1/JIFFY_RATIO once a Linux module is "
        "installed) and updates rttvar as Linux's `tcp_rtt_estimator` (a falling sample's deviation weighted "
        "1/8); tcplab's clock is exact and its rfc6298 RTO uses RFC 6298's estimator.",
        "TCP-Linux's loss recovery is its own SACK scoreboard with rate halving (`tcp_fastretrans_alert`); "
        "tcplab uses RFC 6675 SACK recovery.",
        "ns-2's `syn_` = true makes the first packet of the initial window a 40-byte SYN-like packet; tcplab "
        "sends data from the first packet.",
    ))


def linux() -> TcpSetup:
    """Today's settings: tcplab's Flow defaults, what the reproductions used before ``--setup``
    (the classic RFC receiver; not the full Linux profile, ``flow_options={"profile": "linux"}``)."""
    return TcpSetup("linux", "today's settings: tcplab's Flow defaults (RFC 6928's initial window, the Linux RTO), "
                             "what the reproductions used before they had a paper profile", (
        SetupValue("init_cwnd", 10.0, "RFC 6928; Linux TCP_INIT_CWND"),
        SetupValue("init_ssthresh", None, "Linux TCP_INFINITE_SSTHRESH"),
        SetupValue("rwnd", None, "no receiver-window limit (Linux's autotuning keeps it out of the way)"),
        SetupValue("init_rto", 1.0, "RFC 6298 2.1; Linux TCP_TIMEOUT_INIT (since 3.1)"),
        SetupValue("min_rto", 0.2, "Linux TCP_RTO_MIN"),
        SetupValue("max_rto", 60.0, "RFC 6298 2.5 (at least 60 s; Linux's TCP_RTO_MAX is 120 s): tcplab's default"),
        SetupValue("rto_mode", "linux", "Linux `__tcp_set_rto`: srtt + max(4 rttvar, min_rto)"),
        SetupValue("limited_transmit", False, "tcplab's default"),
        SetupValue("dupthresh", 3, "RFC 5681; Linux tcp_reordering"),
        SetupValue("delayed_ack", False, "tcplab's rfc receiver: one ACK per segment"),
        SetupValue("sack_blocks", 3, "RFC 2018 with the timestamp option"),
        SetupValue("restart_after_idle", True, "RFC 5681 4.1; Linux tcp_slow_start_after_idle"),
        SetupValue("header and ACK size", "40 B", "tcplab's rfc profile", flow=False),
    ))


def linux_2_6(why: str) -> TcpSetup:
    """Linux 2.6 end hosts of about 2005 (a real experiment's hosts, not a simulator): RFC 3390's
    initial window and the 3-s initial RTO of that time."""
    return TcpSetup("paper", f"Linux 2.6 end hosts of the paper's time ({why})", (
        SetupValue("init_cwnd", 3.0, "Linux 2.6 `tcp_init_cwnd` (RFC 3390): 3 segments for an MSS of 1095 to "
                                     "1460 bytes"),
        SetupValue("init_ssthresh", None, "Linux TCP_INFINITE_SSTHRESH"),
        SetupValue("rwnd", None, "no receiver-window limit (choice: the paper's hosts were tuned for 1 Gbit/s)"),
        SetupValue("init_rto", 3.0, "Linux TCP_TIMEOUT_INIT = 3 s (until 3.1)"),
        SetupValue("min_rto", 0.2, "Linux TCP_RTO_MIN"),
        SetupValue("max_rto", 120.0, "Linux TCP_RTO_MAX"),
        SetupValue("rto_mode", "linux", "Linux `tcp_set_rto`: srtt + max(4 rttvar, min_rto)"),
        SetupValue("limited_transmit", False, "not used: SACK flows"),
        SetupValue("dupthresh", 3, "Linux tcp_reordering"),
        SetupValue("delayed_ack", False, "choice: one ACK per segment (see below)"),
        SetupValue("sack_blocks", 3, "RFC 2018 with the timestamp option"),
        SetupValue("restart_after_idle", True, "Linux tcp_slow_start_after_idle"),
        SetupValue("header and ACK size", "40 B", "tcplab's rfc profile", flow=False),
    ), (
        "Linux 2.6's receiver delays ACKs (quick-ACK mode, then every second segment); tcplab's linux ACK "
        "policy is Linux 6.x's, so these runs ACK every segment.",
        "Linux 2.6's loss recovery (rate halving, FACK, undo); tcplab uses RFC 6675 SACK recovery.",
    ))


def choose(setup: str, paper: TcpSetup, where: str) -> TcpSetup:
    """``paper`` for ``setup = "paper"``, :func:`linux` for ``"linux"``; anything else is an error
    naming ``where`` (the paper)."""
    if setup not in SETUPS:
        raise ValueError(f"setup: must be 'paper' or 'linux', got {setup!r} ({where})")
    return paper if setup == "paper" else linux()


# ---------------------------------------------------------------- protocols

#: Algorithms whose every parameter index.md lists (with defaults): the brief of each choice the
#: Westwood family leaves open (which RTT sample, which filter, the RCE's interval) is in them.
LIST_ALL_PARAMS = ("westwood", "westwood-re", "westwood-bs", "areno")


@dataclass(frozen=True)
class Protocol:
    """One protocol of a reproduction as index.md shows it."""

    name: str  # the paper's name, e.g. "STCP"
    algorithm: str
    params: Mapping[str, Any] = field(default_factory=dict)
    recovery: str = ""
    why: str = ""  # where the variant and parameters come from


def _catalog() -> dict:
    from tcplab.scenario import algorithm_catalog

    try:
        return {a["name"]: a for a in algorithm_catalog()}
    except Exception:  # noqa: BLE001 (the core is always there in a run; a page without defaults is no error)
        return {}


def protocols_markdown(protocols: Sequence[Protocol]) -> list[str]:
    """One nested list item per protocol: algorithm and loss recovery, the parameters set (or
    "defaults"), why; for :data:`LIST_ALL_PARAMS` also every parameter left at its default."""
    catalog = _catalog()
    lines = []
    for p in protocols:
        head = f"- **{p.name}**: `{p.algorithm}`" + (f", loss recovery {p.recovery}" if p.recovery else "")
        lines.append(head)
        given = ", ".join(f"{k} = {show(v)}" for k, v in sorted(p.params.items()))
        lines.append(f"  - parameters: {given or 'the defaults'}")
        if p.why:
            lines.append(f"  - why: {p.why}")
        if p.algorithm in LIST_ALL_PARAMS and p.algorithm in catalog:
            rest = [q for q in catalog[p.algorithm]["params"] if q["name"] not in p.params]
            if rest:
                lines.append("  - the other parameters, at their defaults:")
                lines += [f"    - {q['name']} = {q['default']} ({q['source']})" for q in rest]
    return lines


# ---------------------------------------------------------------- the section

def settings_markdown(runs: Sequence[str], tcp: TcpSetup | Sequence[tuple[str, TcpSetup]],
                      protocols: Sequence[Protocol], other: Sequence[str] = (),
                      protocols_note: str | None = None) -> str:
    """index.md's settings in the layout every paper shares: ``### Runs`` (``runs``: Markdown list
    lines), ``### TCP setup`` (one setup, or ``(label, setup)`` pairs for items set up apart),
    ``### Protocols`` (``protocols_note`` first, if any), ``### Other choices`` (``other``: list
    lines; "none" when empty)."""
    lines = ["### Runs", "", *runs, "", "### TCP setup", ""]
    if isinstance(tcp, TcpSetup):
        lines += tcp.markdown()
    else:
        for label, s in tcp:
            lines += [f"#### {label}", "", *s.markdown(), ""]
        while lines and lines[-1] == "":
            lines.pop()
    lines += ["", "### Protocols", ""]
    if protocols_note:
        lines += [protocols_note, ""]
    lines += protocols_markdown(protocols)
    lines += ["", "### Other choices", "", *(other or ["- none beyond the above"])]
    return "\n".join(lines)
