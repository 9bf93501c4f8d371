//! A job: one run of a campaign.
//!
//! One JSON object (one line of a jobs file, or one string handed to
//! `Segment.run`), written by [`Job::plan`] when the campaign plans the run
//! (python/tcplab/sweep/campaign.py, through `_core.plan_job`):
//!
//! ```json
//! {"key": "<32 hex>", "params": {...}, "seed": 1, "version": "0.1.0",
//!  "bottleneck": ["r1-r2"], "spec": {...the RunSpec as the client gave it...}}
//! ```
//!
//! `params` is kept as the client wrote it (it goes into the manifest
//! unchanged); `spec` is kept as text: it is what the core runs and what
//! the manifest records as `spec_json`.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tcplab_core::SpecError;

use crate::key::run_key;

#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    pub key: String,
    pub params: Box<RawValue>,
    /// The seed the run uses (the RunSpec's).
    pub seed: u64,
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

    /// The job of the RunSpec `spec_json` with its run key (see
    /// [`crate::key`]) and the seed the run uses; the spec is kept as given
    /// (without its whitespace if it spans lines: a job is one line).
    /// `params_json` is the JSON object of the job's parameters. The error
    /// names what the core cannot read.
    pub fn plan(spec_json: &str, version: &str, params_json: &str, bottleneck: Vec<String>) -> Result<Job, SpecError> {
        let (key, spec) = run_key(spec_json, version)?;
        let params = RawValue::from_string(params_json.to_string())
            .map_err(|e| SpecError::new("params".into(), format!("not JSON: {e}")))?;
        Ok(Job {
            key,
            params,
            seed: spec.seed,
            version: version.to_string(),
            bottleneck,
            spec: RawValue::from_string(if spec_json.contains(['\n', '\r']) {
                compact(spec_json)
            } else {
                spec_json.to_string()
            })
            .expect("a spec the core read is JSON"),
        })
    }

    /// The job as one line of JSON (what [`Job::parse`] reads).
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("a job is JSON")
    }

    /// The RunSpec's JSON text.
    pub fn spec_json(&self) -> &str {
        self.spec.get()
    }
}

/// JSON text without the whitespace between its tokens (strings kept as they are).
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if c.is_ascii_whitespace() {
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_params_and_spec_text_as_written() {
        let j = Job::parse(
            br#"{"key":"ab","params":{"b":1.5,"a":[1,"x"]},"seed":7,"version":"9","spec":{"z":1,"a":{"b":2}}}"#,
        )
        .unwrap();
        assert_eq!(j.params.get(), r#"{"b":1.5,"a":[1,"x"]}"#);
        assert_eq!(j.seed, 7);
        assert_eq!(j.spec_json(), r#"{"z":1,"a":{"b":2}}"#);
        assert!(j.bottleneck.is_empty());
        let e = Job::parse(br#"{"key":"ab"}"#).unwrap_err();
        assert!(e.contains("missing field"), "{e}");
    }

    #[test]
    fn a_planned_job_reads_back_as_written() {
        let spec = crate::segment::tests::spec(5, 2.0).replace(r#""name":"flow1""#, r#""name": "flow \" 1\\""#);
        let pretty = serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&spec).unwrap()).unwrap();
        let job = Job::plan(&pretty, "1.0", r#"{"b": 1.5, "a": "x"}"#, vec!["r1-r2".into()]).unwrap();
        assert!(!job.line().contains('\n'));
        let back = Job::parse(job.line().as_bytes()).unwrap();
        assert_eq!(back.key, crate::key::run_key(&spec, "1.0").unwrap().0);
        assert_eq!(back.params.get(), r#"{"b": 1.5, "a": "x"}"#);
        assert_eq!(back.seed, 3);
        assert_eq!((back.version.as_str(), &back.bottleneck[..]), ("1.0", &["r1-r2".to_string()][..]));
        assert_eq!(back.spec_json(), compact(&pretty));
        assert!(back.spec_json().contains(r#""name":"flow \" 1\\""#));
        assert!(Job::plan(&spec, "1.0", "{nope", vec![]).unwrap_err().to_string().contains("params"));
    }
}
