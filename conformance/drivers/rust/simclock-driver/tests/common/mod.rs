//! The golden vectors, read from the repository (SPEC §18, C-WIRE-7).

use std::path::PathBuf;

use serde_json::Value;

/// `conformance/simclock_conformance/vectors/v1`, relative to this crate.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../simclock_conformance/vectors/v1")
}

/// Every case of one vector file.
pub fn cases(file: &str) -> Vec<Value> {
    let path = vectors_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A decimal string of a JSON value.
#[allow(dead_code)] // not every test file uses it
pub fn dec(v: &Value) -> u128 {
    v.as_str().unwrap().parse().unwrap()
}
