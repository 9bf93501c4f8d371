//! The result tables' columns, declared once.
//!
//! [`result_columns!`] lists every column of the tables a run gives
//! (`_core.run`'s dicts, crates/tcplab-py) and a segment stores (Parquet,
//! [`crate::tables`]): its name, the `RunResults` field it comes from
//! (crates/tcplab-core/src/results.rs, trace.rs) and its kind. Adding a
//! column: the field in the core, one line here.
//!
//! Kinds: `num` (a number per row), `opt` (an `Option<f64>` per row, NaN for
//! `None`), `text` (a `String` per row), `series` (a time series' column
//! vector). The macro calls `$c!(table, "name", field, kind);` per column,
//! tables in the order of [`crate::tables::TABLES`], columns in table order.

/// Calls `$c!(table, "column", field, kind);` for every column of every
/// result table (module docs).
#[macro_export]
macro_rules! result_columns {
    ($c:ident) => {
        $crate::result_columns!(@rows $c flows [
            "flow" id num, "name" name text, "src" src text, "dst" dst text, "algorithm" algorithm text,
            "recovery" recovery text, "goodput_bps" goodput_bps num, "bytes_delivered" bytes_delivered num,
            "data_packets_sent" data_packets_sent num, "retransmits" retransmits num, "timeouts" timeouts num,
            "fast_recoveries" fast_recoveries num, "loss_events" loss_events num,
            "loss_events_ignored" loss_events_ignored num, "data_packets_received" data_packets_received num,
            "data_packets_dropped" data_packets_dropped num, "data_packets_lost" data_packets_lost num,
            "data_packets_in_network" data_packets_in_network num, "acks_sent" acks_sent num,
            "acks_received" acks_received num, "acks_dropped" acks_dropped num, "acks_lost" acks_lost num,
            "acks_in_network" acks_in_network num, "rtt_samples" rtt_samples num, "rtt_min" rtt_min num,
            "rtt_mean" rtt_mean num, "rtt_max" rtt_max num, "srtt" srtt num, "cwnd" cwnd num,
            "ssthresh" ssthresh num, "ecn" ecn text, "ce_received" ce_received num,
            "ce_delivered" ce_delivered num, "ecn_reductions" ecn_reductions num,
        ]);
        $crate::result_columns!(@rows $c links [
            "link" id num, "name" name text, "src" src text, "dst" dst text, "rate_bps" rate_bps num,
            "delay" delay num, "utilization" utilization num, "packets_in" packets_in num,
            "packets_out" packets_out num, "drops" drops num, "losses" losses num,
            "packets_in_link" packets_in_link num, "bytes_out" bytes_out num,
            "data_packets_out" data_packets_out num, "queue_mean_packets" queue_mean_packets num,
            "queue_max_packets" queue_max_packets num, "queue_mean_bytes" queue_mean_bytes num,
            "discipline" discipline text, "marks" marks num, "aqm_drops" aqm_drops num,
            "sojourn_mean" sojourn_mean opt, "sojourn_p50" sojourn_p50 opt, "sojourn_p95" sojourn_p95 opt,
            "sojourn_p99" sojourn_p99 opt,
        ]);
        $crate::result_columns!(@rows $c files [
            "flow" flow num, "index" index num, "size" size num, "start" start num, "finish" finish num,
            "fct" fct num, "first_sent" first_sent num, "acked" acked num, "transfer_time" transfer_time num,
        ]);
        $crate::result_columns!(@rows $c flow_ts [
            "time" time series, "flow" flow series, "cwnd" cwnd series, "ssthresh" ssthresh series,
            "srtt" srtt series, "in_flight" in_flight series, "delivered_bytes" delivered_bytes series,
        ]);
        $crate::result_columns!(@rows $c queue_ts [
            "time" time series, "link" link series, "packets" packets series, "bytes" bytes series,
        ]);
        $crate::result_columns!(@rows $c cc_ts [
            "time" time series, "flow" flow series, "variable" variable series, "value" value series,
        ]);
        $crate::result_columns!(@rows $c qdisc_ts [
            "time" time series, "link" link series, "variable" variable series, "value" value series,
        ]);
    };
    (@rows $c:ident $t:ident [$($n:literal $f:ident $k:ident,)*]) => {
        $($c!($t, $n, $f, $k);)*
    };
}

/// Every column as `(table, column, kind)`, in declaration order.
pub fn all() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut out = Vec::new();
    macro_rules! push {
        ($t:ident, $n:literal, $f:ident, $k:ident) => {
            out.push((stringify!($t), $n, stringify!($k)))
        };
    }
    result_columns!(push);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_table_is_declared_in_file_order() {
        let mut tables: Vec<&str> = super::all().iter().map(|c| c.0).collect();
        tables.dedup();
        assert_eq!(tables, crate::tables::TABLES);
    }
}
