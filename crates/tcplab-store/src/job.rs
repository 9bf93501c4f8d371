//! A job: one run of a campaign, as the Python client describes it.
//!
//! One JSON object (one line of a jobs file, or one string handed to
//! `Segment.run`):
//!
//! ```json
//! {"key": "<32 hex>", "params": {...}, "seed": 1, "version": "0.1.0",
//!  "bottleneck": ["r1-r2"], "spec": {...the RunSpec, canonical JSON...}}
//! ```
//!
//! `params` and `seed` are kept as the client wrote them (they go into the
//! manifest unchanged); `spec` is kept as text: it is what the core runs
//! and what the manifest records as `spec_json`.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Deserialize)]
pub struct Job {
    pub key: String,
    pub params: Box<RawValue>,
    pub seed: Box<RawValue>,
    pub version: String,
    #[serde(default)]
    pub bottleneck: Vec<String>,
    pub spec: Box<RawValue>,
}

impl Job {
    /// Parses one job; the error says what is wrong with it.
    pub fn parse(text: &[u8]) -> Result<Job, String> {
        serde_json::from_slice(text).map_err(|e| format!("invalid job description: {e}"))
    }

    /// The RunSpec's JSON text.
    pub fn spec_json(&self) -> &str {
        self.spec.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_params_seed_and_spec_text_as_written() {
        let j = Job::parse(
            br#"{"key":"ab","params":{"b":1.5,"a":[1,"x"]},"seed":null,"version":"9","spec":{"z":1,"a":{"b":2}}}"#,
        )
        .unwrap();
        assert_eq!(j.params.get(), r#"{"b":1.5,"a":[1,"x"]}"#);
        assert_eq!(j.seed.get(), "null");
        assert_eq!(j.spec_json(), r#"{"z":1,"a":{"b":2}}"#);
        assert!(j.bottleneck.is_empty());
        let e = Job::parse(br#"{"key":"ab"}"#).unwrap_err();
        assert!(e.contains("missing field"), "{e}");
    }
}
