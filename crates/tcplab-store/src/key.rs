//! Run identity: the key a campaign stores a run under.
//!
//! A run is what the core runs, so its identity is the core's: the RunSpec
//! JSON is parsed into [`RunSpec`] (the same parse that runs it: a spec
//! the core refuses has no key, and the error names the field) and written
//! back with serde. That canonical text does not depend on how the caller
//! wrote the spec (key order, whitespace, `1` or `1.0`, a field left at its
//! default or written out) and differs for any two different RunSpecs
//! (serde writes each float as the shortest digits that read back to it).
//! The key is the first [`KEY_LEN`] hex digits of the SHA-256 of
//! `{"spec": <canonical spec>, "version": <tcplab version>}` as serde writes
//! it, so a new tcplab keys every run anew.
//!
//! The canonical text is only hashed, never run: serde_json reads floats
//! faster than exactly (without its `float_roundtrip` feature a float read
//! back from the shortest digits can be one unit off in the last place, for
//! about one random double in seven), so the core runs and the campaign
//! stores the text the caller gave ([`crate::job::Job::plan`]); it reads to
//! the RunSpec the key names, so one key is one run.
//!
//! Campaign format 4 (python/tcplab/sweep/campaign.py) is keyed this way;
//! earlier formats hashed Python's `json.dumps` text and are refused.

use serde::Serialize;
use sha2::{Digest, Sha256};
use tcplab_core::{RunSpec, SpecError};

/// Hex digits of a run key.
pub const KEY_LEN: usize = 32;

/// What the key hashes (serde writes the fields in this order).
#[derive(Serialize)]
struct Identity<'a> {
    spec: &'a RunSpec,
    version: &'a str,
}

/// The run key of the RunSpec `spec_json` for tcplab `version`, and the
/// spec as the core reads it; the error (the core's, naming the field) if
/// the core cannot read it as a RunSpec.
pub fn run_key(spec_json: &str, version: &str) -> Result<(String, RunSpec), SpecError> {
    // (the plain parse is the one the core runs; RunSpec::from_json's, slower, finds the field path)
    let spec = match serde_json::from_str::<RunSpec>(spec_json) {
        Ok(spec) => spec,
        Err(_) => return Err(RunSpec::from_json(spec_json).expect_err("the same parse fails")),
    };
    let identity = serde_json::to_vec(&Identity { spec: &spec, version }).expect("a RunSpec always serializes");
    let mut key = crate::segment::hex(&Sha256::digest(&identity));
    key.truncate(KEY_LEN);
    Ok((key, spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dumbbell spec as the bindings' tests write it (pretty-printed: the key ignores layout).
    fn spec() -> String {
        let v: serde_json::Value = serde_json::from_str(&crate::segment::tests::spec(5, 2.0)).unwrap();
        serde_json::to_string_pretty(&v).unwrap()
    }

    fn key(spec: &str, version: &str) -> String {
        run_key(spec, version).unwrap().0
    }

    #[test]
    fn the_same_spec_written_differently_has_one_key() {
        let k = key(&spec(), "1.0");
        assert_eq!(k.len(), KEY_LEN);
        assert!(k.bytes().all(|c| c.is_ascii_hexdigit()));
        // compact, the seed moved first, an integer for a float, a default left out
        let other = crate::segment::tests::spec(5, 2.0)
            .replace(r#","seed":3"#, "")
            .replace(r#"{"duration":2.0"#, r#"{"seed":3,"duration":2"#)
            .replace(r#""restart_after_idle":true,"#, "");
        assert_ne!(other, spec());
        assert_eq!(key(&other, "1.0"), k);
        // the canonical text is itself keyed the same
        let canonical = serde_json::to_string(&run_key(&spec(), "1.0").unwrap().1).unwrap();
        assert_eq!(key(&canonical, "1.0"), k);
    }

    #[test]
    fn a_changed_field_or_version_changes_the_key() {
        let s = spec();
        let k = key(&s, "1.0");
        assert_ne!(key(&s.replace("\"seed\": 3", "\"seed\": 4"), "1.0"), k);
        assert_ne!(key(&crate::segment::tests::spec(5, 2.5), "1.0"), k);
        assert_ne!(key(&crate::segment::tests::spec(6, 2.0), "1.0"), k);
        assert_ne!(key(&s.replace("\"algorithm\": \"newreno\"", "\"algorithm\": \"cubic\""), "1.0"), k);
        assert_ne!(key(&s, "1.1"), k);
    }

    #[test]
    fn a_spec_the_core_refuses_has_no_key() {
        let s = spec();
        let e = run_key(&s.replace("\"seed\"", "\"sede\""), "1.0").unwrap_err();
        assert!(e.to_string().contains("sede"), "{e}");
        let e = run_key(&s.replace("\"duration\": 2.0,", ""), "1.0").unwrap_err();
        assert_eq!(e.field, "duration");
        assert!(run_key("[1, 2]", "1.0").is_err());
        assert!(run_key("{", "1.0").is_err());
    }
}
