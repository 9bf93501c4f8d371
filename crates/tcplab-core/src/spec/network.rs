//! The network of a run: nodes, links (with their loss model and queue)
//! and static routes.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A unidirectional link: a FIFO queue at `src` feeding a transmitter of
/// `rate_bps`, then a propagation delay of `delay` seconds to `dst`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub rate_bps: f64,
    pub delay: f64,
    #[serde(default)]
    pub queue: QueueSpec,
    /// Random loss on the wire (packets that were transmitted and never
    /// arrive), drawn from the link's own random stream. Counted as `losses`,
    /// apart from queue `drops`. Links are one-way, so each direction has its own.
    #[serde(default)]
    pub loss: Option<LossSpec>,
}

fn d_one() -> f64 {
    1.0
}

/// A random loss model of a link.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Gilbert-Elliott two-state Markov chain, stepped once per packet:
    /// Good -> Bad with probability `p_gb`, Bad -> Good with `p_bg`; a packet is
    /// lost with probability `loss_good` (default 0) in Good and `loss_bad`
    /// (default 1) in Bad. Stationary loss rate
    /// `(p_bg * loss_good + p_gb * loss_bad) / (p_gb + p_bg)`; with the
    /// defaults the mean loss burst is `1 / p_bg` packets.
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "d_one")]
        loss_bad: f64,
    },
}

/// Drop-tail queue limit. The packet being serialized is not counted (as a
/// Linux qdisc), so a queue of B packets holds B waiting packets plus the one
/// on the wire. ns-2's DropTail counts that one: its `limit_` L holds L - 1
/// waiting packets (`queue/drop-tail.cc` drops when `length + 1 >= qlim_`),
/// so tcplab's B is ns-2's `limit_` B + 1. `None` in both fields means
/// unlimited.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    #[serde(default)]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Queue discipline (`droptail`, `red`, `codel`, `fq_codel`, `pie`,
    /// `dualpi2`; see `crate::net::qdisc`). `None`: the fast drop-tail FIFO
    /// of `crate::net::Link` (no sojourn statistics, no marks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discipline: Option<String>,
    /// The discipline's parameters (times in seconds), by name.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub node: String,
    pub dst: String,
    pub link: String,
}
