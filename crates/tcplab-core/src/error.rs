//! Errors of the core. Every error about the run description names the field
//! it concerns, so a front end can show it as it is.

use std::fmt;

/// A problem with the run description: `field` is a path such as
/// `flows[0].cc.algorithm`, `message` says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub field: String,
    pub message: String,
}

impl SpecError {
    pub fn new(field: String, message: String) -> Self {
        SpecError { field, message }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}
