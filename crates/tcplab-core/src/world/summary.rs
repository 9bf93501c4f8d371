//! The results of a run: per-flow, per-link and per-file rows and the
//! sampled series.

use super::{World, NO_QDISC};
use crate::net::qdisc::{self};
use crate::net::{Packet, PacketKind};
use crate::results::{FileResult, FlowResult, LinkResult, RunMeta, RunResults};
use crate::sim::time::{to_secs, Time};
use crate::spec::{AppSpec, Recovery};
use crate::trace::{CcSeries, DropTrace, FlowSeries, PacketTrace, QdiscSeries, QueueSeries, RetransmitTrace};

impl World {
    /// Results of the run (call after [`World::run`]); copies the sampled
    /// series (see [`World::into_results`] to move them instead).
    pub fn results(&self) -> RunResults {
        let mut r = self.summary();
        r.flow_ts = self.flow_ts.clone();
        r.queue_ts = self.queue_ts.clone();
        r.cc_ts = self.cc_ts.clone();
        r.qdisc_ts = self.qdisc_ts.clone();
        r.drop_trace = self.drop_trace.as_deref().cloned().unwrap_or_default();
        r.packet_trace = self.packet_trace(self.capture.as_deref().cloned());
        r.retransmit_trace = self.retransmit_trace();
        r
    }

    /// The packet capture without the packets that would start onto their
    /// link's wire only after the end of the run (a fast link records a
    /// packet when it accepts it).
    fn packet_trace(&self, c: Option<PacketTrace>) -> Option<PacketTrace> {
        c.map(|mut c| {
            c.cut_at(self.end);
            c
        })
    }

    /// The flows' retransmissions merged into one table in time order (ties
    /// by flow).
    fn retransmit_trace(&self) -> RetransmitTrace {
        let mut rows: Vec<(Time, u32, u64, u8, u64)> = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            for &(t, seq, cause, outstanding) in fl.sender.rtx_trace.iter().flatten() {
                rows.push((t, i as u32, seq, cause as u8, outstanding));
            }
        }
        rows.sort_by_key(|&(t, f, ..)| (t, f)); // stable: a flow's own order stays
        let mut tr = RetransmitTrace::default();
        for (t, f, seq, cause, outstanding) in rows {
            tr.time.push(to_secs(t));
            tr.flow.push(f);
            tr.seq.push(seq);
            tr.cause.push(cause);
            tr.outstanding.push(outstanding);
        }
        tr
    }

    /// Results of the run, moving the sampled series out rather than copying
    /// them (a long traced run would otherwise peak at twice their size).
    pub fn into_results(mut self) -> RunResults {
        let mut r = self.summary();
        r.flow_ts = std::mem::take(&mut self.flow_ts);
        r.queue_ts = std::mem::take(&mut self.queue_ts);
        r.cc_ts = std::mem::take(&mut self.cc_ts);
        r.qdisc_ts = std::mem::take(&mut self.qdisc_ts);
        r.drop_trace = self.drop_trace.take().map(|t| *t).unwrap_or_default();
        let capture = self.capture.take().map(|c| *c);
        r.packet_trace = self.packet_trace(capture);
        r.retransmit_trace = self.retransmit_trace();
        r
    }

    /// Every result but the sampled series.
    fn summary(&self) -> RunResults {
        let window = to_secs(self.end - self.measure_start);
        let mut in_net = vec![[0u64; 2]; self.flows.len()];
        for (i, l) in self.links.iter().enumerate() {
            let packets: Vec<Packet> = match self.qlink_of[i] {
                NO_QDISC => l.packets().collect(),
                qi => self.qlinks[qi as usize].packets(),
            };
            for p in packets {
                in_net[self.flow_of(p.pos) as usize][(p.kind == PacketKind::Ack) as usize] += 1;
            }
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let fs = &self.spec.flows[i];
                let s = &fl.sender;
                let r = &fl.receiver;
                let rtt = &s.rtt;
                let nan_if_none = |x: f64| if rtt.samples > 0 { x } else { f64::NAN };
                let at_start =
                    if self.finished || self.now >= self.measure_start { fl.delivered_at_measure_start } else { 0 };
                FlowResult {
                    id: i as u32,
                    name: fs.name.clone(),
                    src: fs.src.clone(),
                    dst: fs.dst.clone(),
                    algorithm: match (&fl.source, &fs.app) {
                        (Some(_), AppSpec::Cbr { .. }) => "cbr".to_string(),
                        (Some(_), _) => "on_off".to_string(),
                        (None, _) => s.cc.name().to_string(),
                    },
                    recovery: match fs.recovery {
                        Recovery::Reno => "reno",
                        Recovery::NewReno => "newreno",
                        Recovery::Sack => "sack",
                    }
                    .to_string(),
                    goodput_bps: (r.delivered_bytes - at_start) as f64 * 8.0 / window,
                    bytes_delivered: r.delivered_bytes,
                    data_packets_sent: s.stats.data_sent,
                    retransmits: s.stats.retransmits,
                    timeouts: s.stats.timeouts,
                    fast_recoveries: s.stats.fast_recoveries,
                    loss_events: s.stats.loss_events,
                    loss_events_ignored: s.stats.loss_events_ignored,
                    data_packets_received: r.stats.data_received,
                    data_packets_dropped: fl.data_dropped,
                    data_packets_lost: fl.data_lost,
                    acks_lost: fl.acks_lost,
                    data_packets_in_network: in_net[i][0],
                    acks_sent: r.stats.acks_sent,
                    acks_received: s.stats.acks_received,
                    acks_dropped: fl.acks_dropped,
                    acks_in_network: in_net[i][1],
                    rtt_samples: rtt.samples,
                    rtt_min: nan_if_none(rtt.min_rtt),
                    rtt_mean: nan_if_none(rtt.sum / rtt.samples.max(1) as f64),
                    rtt_max: nan_if_none(rtt.max_rtt),
                    srtt: nan_if_none(rtt.srtt),
                    cwnd: s.w.cwnd,
                    ssthresh: s.w.ssthresh,
                    ecn: s.ecn.mode.name().to_string(),
                    ce_received: r.stats.ce_received,
                    ce_delivered: s.stats.ce_delivered,
                    ecn_reductions: s.stats.ecn_reductions,
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let ls = &self.spec.links[i];
                let q = self.qdisc_link(i);
                let st = q.map_or_else(|| l.stats(), |q| q.link_stats());
                let wps = (self.end - self.measure_start) as f64;
                let sojourn = |x: f64| {
                    q.filter(|q| q.stats.sojourn.n > 0).map(|q| {
                        if x < 0.0 {
                            q.stats.sojourn.mean()
                        } else {
                            q.stats.sojourn.quantile(x)
                        }
                    })
                };
                LinkResult {
                    id: i as u32,
                    name: ls.name.clone(),
                    src: ls.src.clone(),
                    dst: ls.dst.clone(),
                    rate_bps: ls.rate_bps,
                    delay: ls.delay,
                    utilization: st.busy_in_window as f64 / wps,
                    packets_in: st.packets_in,
                    packets_out: st.packets_out,
                    drops: st.drops,
                    losses: st.losses,
                    packets_in_link: q.map_or_else(|| l.packets_in_link(), |q| q.packets_in_link()),
                    bytes_out: st.bytes_out,
                    data_packets_out: st.data_packets_out,
                    queue_mean_packets: st.queue_packet_ps as f64 / wps,
                    queue_max_packets: st.max_queue_packets,
                    queue_mean_bytes: st.queue_byte_ps as f64 / wps,
                    discipline: ls
                        .queue
                        .discipline
                        .as_deref()
                        .and_then(qdisc::canonical_name)
                        .unwrap_or("droptail")
                        .to_string(),
                    marks: st.marks,
                    aqm_drops: st.aqm_drops,
                    sojourn_mean: sojourn(-1.0),
                    sojourn_p50: sojourn(0.5),
                    sojourn_p95: sojourn(0.95),
                    sojourn_p99: sojourn(0.99),
                }
            })
            .collect();
        let mut files = Vec::new();
        for (i, fl) in self.flows.iter().enumerate() {
            if let (Some(fs), AppSpec::Files { files: spec_files }) = (&fl.map.files, &self.spec.flows[i].app) {
                let mut rows: Vec<FileResult> = fs
                    .iter()
                    .enumerate()
                    .map(|(k, f)| {
                        let start = spec_files[f.index].start.max(self.spec.flows[i].start);
                        let finish = fl.receiver.file_finish[k].map(to_secs);
                        let first_sent = fl.file_first_sent[k].map(to_secs);
                        let acked = fl.file_acked[k].map(to_secs);
                        FileResult {
                            flow: i as u32,
                            index: f.index as u32,
                            size: f.size,
                            start,
                            finish: finish.unwrap_or(f64::NAN),
                            fct: finish.map_or(f64::NAN, |t| t - start),
                            first_sent: first_sent.unwrap_or(f64::NAN),
                            acked: acked.unwrap_or(f64::NAN),
                            transfer_time: match (first_sent, acked) {
                                (Some(a), Some(b)) => b - a,
                                _ => f64::NAN,
                            },
                        }
                    })
                    .collect();
                rows.sort_by_key(|r| r.index);
                files.extend(rows);
            }
        }
        RunResults {
            flows,
            links,
            files,
            flow_ts: FlowSeries::default(),
            queue_ts: QueueSeries::default(),
            cc_ts: CcSeries::default(),
            qdisc_ts: QdiscSeries::default(),
            drop_trace: DropTrace::default(),
            retransmit_trace: RetransmitTrace::default(),
            packet_trace: None,
            meta: RunMeta {
                events: self.events.popped(),
                sim_time: to_secs(self.now),
                wall_s: self.wall_s,
                seed: self.spec.seed,
            },
        }
    }
}
