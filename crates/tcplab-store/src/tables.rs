//! A segment's tables as Parquet files.
//!
//! The columns are those of `_core.run`'s tables, both declared once in
//! [`crate::result_columns!`] (same names, order and types: uint32 ids,
//! uint64 counts, float64 values (NaN where the core has None), uint16 cc
//! and qdisc variable codes, strings), behind a leading `run` column: dictionary
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

/// A column's values as an Arrow array (the declared numeric types).
trait IntoArrow {
    fn into_arrow(self) -> ArrayRef;
}
macro_rules! into_arrow {
    ($($T:ty => $A:ty),*) => {$(
        impl IntoArrow for Vec<$T> {
            fn into_arrow(self) -> ArrayRef {
                Arc::new(<$A>::from(self))
            }
        }
    )*};
}
into_arrow!(u16 => UInt16Array, u32 => UInt32Array, u64 => UInt64Array, f64 => Float64Array);

/// The columns of table `TABLES[table]` ([`crate::result_columns!`]) over `runs`.
fn columns(runs: &[(i32, RunResults)], table: usize) -> Vec<(&'static str, ArrayRef)> {
    let mut out: Vec<(&'static str, ArrayRef)> = Vec::new();
    macro_rules! col {
        ($t:ident, $n:literal, $f:ident, $k:ident) => {
            if stringify!($t) == TABLES[table] {
                out.push(($n, col!(@$k $t $f)));
            }
        };
        (@num $t:ident $f:ident) => {
            runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f)).collect::<Vec<_>>().into_arrow()
        };
        // A statistic a row may lack (None): NaN, as `_core.run` gives it.
        (@opt $t:ident $f:ident) => {
            runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f.unwrap_or(f64::NAN))).collect::<Vec<_>>().into_arrow()
        };
        (@text $t:ident $f:ident) => {
            Arc::new(StringArray::from_iter_values(runs.iter().flat_map(|(_, r)| r.$t.iter().map(|x| x.$f.as_str()))))
                as ArrayRef
        };
        (@series $t:ident $f:ident) => {{
            let mut v = Vec::with_capacity(runs.iter().map(|(_, r)| r.$t.$f.len()).sum());
            for (_, r) in runs {
                v.extend_from_slice(&r.$t.$f);
            }
            v.into_arrow()
        }};
    }
    crate::result_columns!(col);
    out
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
