//! A segment's tables as Parquet files.
//!
//! The columns are those of `_core.run`'s tables (crates/tcplab-py), same
//! names, order and types (uint32 ids, uint64 counts, float64 values (NaN
//! where the core has None), uint16 cc and qdisc variable codes, strings), behind a leading `run` column: dictionary
//! (int32 indices into the segment's run keys, string values). The run
//! records of the manifest give each run's row range in every table.
//!
//! Columns are dictionary-encoded where that pays (Parquet's default: it
//! falls back to plain values when a column has too many distinct ones).
//! Small tables (a segment of tiny runs) are written uncompressed and
//! without statistics; tables over [`COMPRESS_MIN_BYTES`] use zstd as
//! well. Measured on a segment of 100 one-flow runs: 157 KB in 2.4 ms with
//! dictionaries, against 540 KB in 1.6 ms without (every byte written is
//! flushed to disk before the run is indexed) and 92 KB in 5.7 ms with zstd.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Float64Array, Int32Array, RecordBatch, StringArray, UInt16Array, UInt32Array,
    UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use tcplab_core::results::RunResults;

/// The tables of a segment, in file order.
pub const TABLES: [&str; 7] = ["flows", "links", "files", "flow_ts", "queue_ts", "cc_ts", "qdisc_ts"];
/// Tables bigger than this (in memory) are compressed, bytes.
pub const COMPRESS_MIN_BYTES: usize = 1 << 20;

/// Rows of each table for one run, in [`TABLES`] order.
pub fn row_counts(r: &RunResults) -> [usize; 7] {
    [
        r.flows.len(),
        r.links.len(),
        r.files.len(),
        r.flow_ts.time.len(),
        r.queue_ts.time.len(),
        r.cc_ts.time.len(),
        r.qdisc_ts.time.len(),
    ]
}

fn columns(runs: &[(i32, RunResults)], table: usize) -> Vec<(&'static str, ArrayRef)> {
    macro_rules! rows {
        ($t:ident, $f:ident, $A:ty) => {
            Arc::new(<$A>::from(runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f)).collect::<Vec<_>>()))
                as ArrayRef
        };
    }
    // A statistic a row may lack (None): NaN, as `_core.run` gives it.
    macro_rules! orows {
        ($t:ident, $f:ident) => {
            Arc::new(Float64Array::from(
                runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f.unwrap_or(f64::NAN))).collect::<Vec<_>>(),
            )) as ArrayRef
        };
    }
    macro_rules! text {
        ($t:ident, $f:ident) => {
            Arc::new(StringArray::from_iter_values(runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f.as_str()))))
                as ArrayRef
        };
    }
    macro_rules! series {
        ($t:ident, $f:ident, $A:ty) => {{
            let mut v = Vec::with_capacity(runs.iter().map(|(_, r)| r.$t.$f.len()).sum());
            for (_, r) in runs {
                v.extend_from_slice(&r.$t.$f);
            }
            Arc::new(<$A>::from(v)) as ArrayRef
        }};
    }
    match TABLES[table] {
        "flows" => vec![
            ("flow", rows!(flows, id, UInt32Array)),
            ("name", text!(flows, name)),
            ("src", text!(flows, src)),
            ("dst", text!(flows, dst)),
            ("algorithm", text!(flows, algorithm)),
            ("recovery", text!(flows, recovery)),
            ("goodput_bps", rows!(flows, goodput_bps, Float64Array)),
            ("bytes_delivered", rows!(flows, bytes_delivered, UInt64Array)),
            ("data_packets_sent", rows!(flows, data_packets_sent, UInt64Array)),
            ("retransmits", rows!(flows, retransmits, UInt64Array)),
            ("timeouts", rows!(flows, timeouts, UInt64Array)),
            ("fast_recoveries", rows!(flows, fast_recoveries, UInt64Array)),
            ("loss_events", rows!(flows, loss_events, UInt64Array)),
            ("loss_events_ignored", rows!(flows, loss_events_ignored, UInt64Array)),
            ("data_packets_received", rows!(flows, data_packets_received, UInt64Array)),
            ("data_packets_dropped", rows!(flows, data_packets_dropped, UInt64Array)),
            ("data_packets_lost", rows!(flows, data_packets_lost, UInt64Array)),
            ("data_packets_in_network", rows!(flows, data_packets_in_network, UInt64Array)),
            ("acks_sent", rows!(flows, acks_sent, UInt64Array)),
            ("acks_received", rows!(flows, acks_received, UInt64Array)),
            ("acks_dropped", rows!(flows, acks_dropped, UInt64Array)),
            ("acks_lost", rows!(flows, acks_lost, UInt64Array)),
            ("acks_in_network", rows!(flows, acks_in_network, UInt64Array)),
            ("rtt_samples", rows!(flows, rtt_samples, UInt64Array)),
            ("rtt_min", rows!(flows, rtt_min, Float64Array)),
            ("rtt_mean", rows!(flows, rtt_mean, Float64Array)),
            ("rtt_max", rows!(flows, rtt_max, Float64Array)),
            ("srtt", rows!(flows, srtt, Float64Array)),
            ("cwnd", rows!(flows, cwnd, Float64Array)),
            ("ssthresh", rows!(flows, ssthresh, Float64Array)),
            ("ecn", text!(flows, ecn)),
            ("ce_received", rows!(flows, ce_received, UInt64Array)),
            ("ce_delivered", rows!(flows, ce_delivered, UInt64Array)),
            ("ecn_reductions", rows!(flows, ecn_reductions, UInt64Array)),
        ],
        "links" => vec![
            ("link", rows!(links, id, UInt32Array)),
            ("name", text!(links, name)),
            ("src", text!(links, src)),
            ("dst", text!(links, dst)),
            ("rate_bps", rows!(links, rate_bps, Float64Array)),
            ("delay", rows!(links, delay, Float64Array)),
            ("utilization", rows!(links, utilization, Float64Array)),
            ("packets_in", rows!(links, packets_in, UInt64Array)),
            ("packets_out", rows!(links, packets_out, UInt64Array)),
            ("drops", rows!(links, drops, UInt64Array)),
            ("losses", rows!(links, losses, UInt64Array)),
            ("packets_in_link", rows!(links, packets_in_link, UInt64Array)),
            ("bytes_out", rows!(links, bytes_out, UInt64Array)),
            ("data_packets_out", rows!(links, data_packets_out, UInt64Array)),
            ("queue_mean_packets", rows!(links, queue_mean_packets, Float64Array)),
            ("queue_max_packets", rows!(links, queue_max_packets, UInt64Array)),
            ("queue_mean_bytes", rows!(links, queue_mean_bytes, Float64Array)),
            ("discipline", text!(links, discipline)),
            ("marks", rows!(links, marks, UInt64Array)),
            ("aqm_drops", rows!(links, aqm_drops, UInt64Array)),
            ("sojourn_mean", orows!(links, sojourn_mean)),
            ("sojourn_p50", orows!(links, sojourn_p50)),
            ("sojourn_p95", orows!(links, sojourn_p95)),
            ("sojourn_p99", orows!(links, sojourn_p99)),
        ],
        "files" => vec![
            ("flow", rows!(files, flow, UInt32Array)),
            ("index", rows!(files, index, UInt32Array)),
            ("size", rows!(files, size, UInt64Array)),
            ("start", rows!(files, start, Float64Array)),
            ("finish", rows!(files, finish, Float64Array)),
            ("fct", rows!(files, fct, Float64Array)),
            ("first_sent", rows!(files, first_sent, Float64Array)),
            ("acked", rows!(files, acked, Float64Array)),
            ("transfer_time", rows!(files, transfer_time, Float64Array)),
        ],
        "flow_ts" => vec![
            ("time", series!(flow_ts, time, Float64Array)),
            ("flow", series!(flow_ts, flow, UInt32Array)),
            ("cwnd", series!(flow_ts, cwnd, Float64Array)),
            ("ssthresh", series!(flow_ts, ssthresh, Float64Array)),
            ("srtt", series!(flow_ts, srtt, Float64Array)),
            ("in_flight", series!(flow_ts, in_flight, UInt64Array)),
            ("delivered_bytes", series!(flow_ts, delivered_bytes, UInt64Array)),
        ],
        "queue_ts" => vec![
            ("time", series!(queue_ts, time, Float64Array)),
            ("link", series!(queue_ts, link, UInt32Array)),
            ("packets", series!(queue_ts, packets, UInt64Array)),
            ("bytes", series!(queue_ts, bytes, UInt64Array)),
        ],
        "cc_ts" => vec![
            ("time", series!(cc_ts, time, Float64Array)),
            ("flow", series!(cc_ts, flow, UInt32Array)),
            ("variable", series!(cc_ts, variable, UInt16Array)),
            ("value", series!(cc_ts, value, Float64Array)),
        ],
        "qdisc_ts" => vec![
            ("time", series!(qdisc_ts, time, Float64Array)),
            ("link", series!(qdisc_ts, link, UInt32Array)),
            ("variable", series!(qdisc_ts, variable, UInt16Array)),
            ("value", series!(qdisc_ts, value, Float64Array)),
        ],
        _ => unreachable!(),
    }
}

/// One table of the segment (`TABLES[table]`) as a record batch: the `run`
/// column (indices into `keys`) then the core's columns.
pub fn batch(runs: &[(i32, RunResults)], keys: &[&str], table: usize) -> RecordBatch {
    let mut idx = Vec::new();
    for (i, r) in runs {
        idx.extend(std::iter::repeat_n(*i, row_counts(r)[table]));
    }
    let run =
        DictionaryArray::<Int32Type>::try_new(Int32Array::from(idx), Arc::new(StringArray::from_iter_values(keys)))
            .expect("run indices are within the keys");
    let mut cols: Vec<(&str, ArrayRef, bool)> = vec![("run", Arc::new(run) as ArrayRef, true)];
    cols.extend(columns(runs, table).into_iter().map(|(n, a)| (n, a, true)));
    RecordBatch::try_from_iter_with_nullable(cols).expect("columns of equal length")
}

/// The Parquet bytes of a record batch.
pub fn parquet(b: &RecordBatch) -> Vec<u8> {
    let big = b.get_array_memory_size() > COMPRESS_MIN_BYTES;
    let props = if big {
        WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::try_new(1).expect("valid level")))
    } else {
        WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_statistics_enabled(EnabledStatistics::None)
    };
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, b.schema(), Some(props.build())).expect("a valid Arrow schema");
    w.write(b).expect("writing to memory");
    w.close().expect("writing to memory");
    buf
}

/// The RunSpecs of a segment's runs (row `i`: run record `i`), zstd-compressed
/// (they are most of a segment's text, and alike: 150 KB of JSON for 100
/// tiny runs becomes a few KB).
pub fn specs(keys: &[&str], specs: &[&str]) -> Vec<u8> {
    let run = DictionaryArray::<Int32Type>::try_new(
        Int32Array::from((0..keys.len() as i32).collect::<Vec<_>>()),
        Arc::new(StringArray::from_iter_values(keys)),
    )
    .expect("run indices are within the keys");
    let b = RecordBatch::try_from_iter_with_nullable(vec![
        ("run", Arc::new(run) as ArrayRef, true),
        ("spec_json", Arc::new(StringArray::from_iter_values(specs)) as ArrayRef, true),
    ])
    .expect("columns of equal length");
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
        .set_statistics_enabled(EnabledStatistics::None)
        .set_column_dictionary_enabled("spec_json".into(), false)
        .build();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, b.schema(), Some(props)).expect("a valid Arrow schema");
    w.write(&b).expect("writing to memory");
    w.close().expect("writing to memory");
    buf
}

/// The segment's Parquet files, `(file name, bytes)` in [`TABLES`] order.
pub fn encode(runs: &[(i32, RunResults)], keys: &[&str]) -> Vec<(String, Vec<u8>)> {
    (0..TABLES.len()).map(|t| (format!("{}.parquet", TABLES[t]), parquet(&batch(runs, keys, t)))).collect()
}
