//! The wire's values (C-WIRE-2): integers as digit strings, ids, `on_fire` actions.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::bits::Seed;
use crate::clock::Action;
use crate::ClockError;

/// A refusal as the wire sends it: a clock error kind or the driver's own
/// (`bad_request`, `unsupported`, `internal`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub error: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn bad_request(message: impl Into<String>) -> Refusal {
        Refusal { error: "bad_request", message: message.into() }
    }
    pub fn unsupported(message: impl Into<String>) -> Refusal {
        Refusal { error: "unsupported", message: message.into() }
    }
    pub fn type_error(message: String) -> Refusal {
        Refusal { error: "TypeError", message }
    }
    pub fn value_error(message: String) -> Refusal {
        Refusal { error: "ValueError", message }
    }
}

/// A clock's refusal: its wire name, and its message led by its own name
/// (`"ValueError: ..."`, `"Deadlock: ..."`), as the Python reference describes an
/// exception (docs/kits.md, "What a kit reports").
impl From<ClockError> for Refusal {
    fn from(e: ClockError) -> Refusal {
        Refusal { error: e.kind.wire_name(), message: format!("{}: {}", e.kind.as_str(), e.message) }
    }
}

pub(crate) type Request = Map<String, Value>;

/// A short description of a JSON value for messages.
pub(crate) fn show(v: Option<&Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(Value::Number(n)) => format!("the JSON number {n}"),
        Some(Value::String(s)) => format!("the string {:?}", s.chars().take(60).collect::<String>()),
        Some(Value::Array(_)) => "an array".into(),
        Some(Value::Object(_)) => "an object".into(),
        Some(other) => other.to_string(),
    }
}

fn field<'a>(req: &'a Request, name: &str) -> Result<&'a Value, Refusal> {
    req.get(name).ok_or_else(|| Refusal::bad_request(format!("missing field {name}")))
}

/// A string field (an op, a clock or entry id); missing or not a string: `bad_request`.
pub(crate) fn string<'a>(req: &'a Request, name: &str) -> Result<&'a str, Refusal> {
    match field(req, name)? {
        Value::String(s) => Ok(s),
        other => Err(Refusal::bad_request(format!("{name} must be a string, got {}", show(Some(other))))),
    }
}

fn digits<'a>(v: &'a Value, name: &str) -> Result<&'a str, Refusal> {
    match v {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => Ok(s),
        other => Err(Refusal::type_error(format!(
            "{name} must be a string of decimal digits [0-9]+, got {}; send integers as strings, \
             e.g. \"1000\"",
            show(Some(other))
        ))),
    }
}

/// A protocol integer held in 64 bits: not `[0-9]+` (a JSON number included) is a
/// `TypeError` (C-TIME-3 in its wire form), more than `2**64 - 1` a `ValueError` (C-TIME-4).
pub(crate) fn uint_value(v: &Value, name: &str) -> Result<u64, Refusal> {
    let s = digits(v, name)?;
    s.parse::<u64>().map_err(|_| {
        let shown: String = s.chars().take(60).collect();
        let more = if s.len() > 60 { "..." } else { "" };
        Refusal::value_error(format!(
            "{name} = {shown}{more} is larger than 18446744073709551615, the largest value this \
             backend keeps exactly"
        ))
    })
}

/// A protocol integer field (see [`uint_value`]); missing: `bad_request`.
pub(crate) fn uint(req: &Request, name: &str) -> Result<u64, Refusal> {
    uint_value(field(req, name)?, name)
}

/// An optional protocol integer field, 0 when absent.
pub(crate) fn uint_or_zero(req: &Request, name: &str) -> Result<u64, Refusal> {
    match req.get(name) {
        None => Ok(0),
        Some(v) => uint_value(v, name),
    }
}

/// The largest seed the kit takes, in decimal digits.
const SEED_DIGITS: usize = 4000;

/// A seed: any non-negative integer (C-RNG-1), up to 4000 digits.
pub(crate) fn seed(req: &Request) -> Result<Seed, Refusal> {
    let s = digits(field(req, "seed")?, "seed")?;
    if s.len() > SEED_DIGITS {
        return Err(Refusal::value_error(format!(
            "seed has {} digits; this backend keeps at most {SEED_DIGITS}",
            s.len()
        )));
    }
    Ok(Seed::from_decimal(s).expect("digits were checked"))
}

const MAX_NESTING: usize = 100;

/// An `on_fire` list, checked whole with its request (C-WIRE-3): a bad time anywhere
/// refuses the request. Absent: no actions.
pub(crate) fn actions(list: Option<&Value>, depth: usize) -> Result<Arc<[Action]>, Refusal> {
    let items = match list {
        None => return Ok(Arc::from(Vec::new())),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(Refusal::bad_request(format!(
                "on_fire must be a list of actions, got {}",
                show(Some(other))
            )))
        }
    };
    if depth > MAX_NESTING {
        return Err(Refusal::bad_request(format!("on_fire is nested deeper than {MAX_NESTING} levels")));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(a) = item else {
            return Err(Refusal::bad_request(format!(
                "an on_fire action must be an object, got {}",
                show(Some(item))
            )));
        };
        out.push(match string(a, "do")? {
            "schedule" => Action::Schedule {
                delay_ns: uint(a, "delay_ns")?,
                on_fire: actions(a.get("on_fire"), depth + 1)?,
            },
            "cancel" => Action::Cancel(string(a, "entry")?.to_owned()),
            "advance" => Action::Advance(uint(a, "dt_ns")?),
            "raise" => Action::Raise(match a.get("message") {
                Some(Value::String(m)) => m.clone(),
                _ => "raised".to_owned(),
            }),
            "halt" => Action::Halt,
            other => {
                return Err(Refusal::bad_request(format!(
                    "unknown action do={:?}; expected schedule, cancel, advance, raise or halt",
                    other.chars().take(60).collect::<String>()
                )))
            }
        });
    }
    Ok(out.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(v: Value) -> Request {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn c_wire_2_integers_are_digit_strings() {
        let r = req(json!({"a": "0", "b": "18446744073709551615", "c": "007"}));
        assert_eq!(uint(&r, "a"), Ok(0));
        assert_eq!(uint(&r, "b"), Ok(u64::MAX));
        assert_eq!(uint(&r, "c"), Ok(7));
    }

    #[test]
    fn c_wire_2_anything_but_digits_is_a_type_error() {
        for bad in [
            json!(5),
            json!(1.5),
            json!("1.5"),
            json!("1e6"),
            json!("-3"),
            json!(" 5"),
            json!(""),
            json!("+5"),
            json!("٣"),
            json!(null),
            json!(["5"]),
        ] {
            let r = req(json!({ "t": bad }));
            let err = uint(&r, "t").unwrap_err();
            assert_eq!(err.error, "TypeError", "{bad}");
            assert!(err.message.starts_with("t must be a string of decimal digits"), "{}", err.message);
        }
    }

    #[test]
    fn c_time_4_more_than_64_bits_is_a_value_error() {
        let r = req(json!({"t": "18446744073709551616", "u": "99999999999999999999999999"}));
        assert_eq!(uint(&r, "t").unwrap_err().error, "ValueError");
        assert_eq!(uint(&r, "u").unwrap_err().error, "ValueError");
    }

    #[test]
    fn c_wire_3_a_missing_field_is_a_bad_request() {
        let r = req(json!({}));
        assert_eq!(uint(&r, "at_ns"), Err(Refusal::bad_request("missing field at_ns")));
        assert_eq!(string(&r, "clock"), Err(Refusal::bad_request("missing field clock")));
        assert_eq!(uint_or_zero(&r, "phase_ns"), Ok(0));
    }

    #[test]
    fn c_wire_3_a_bad_time_inside_on_fire_refuses_the_request() {
        let nested = json!([{"do": "schedule", "delay_ns": "1",
                             "on_fire": [{"do": "advance", "dt_ns": 3}]}]);
        assert_eq!(actions(Some(&nested), 0).unwrap_err().error, "TypeError");
        let unknown = json!([{"do": "explode"}]);
        assert_eq!(actions(Some(&unknown), 0).unwrap_err().error, "bad_request");
        let good = json!([{"do": "raise"}, {"do": "halt"}, {"do": "cancel", "entry": "x"}]);
        assert_eq!(actions(Some(&good), 0).unwrap().len(), 3);
    }

    #[test]
    fn c_wire_2_seeds_are_digit_strings_of_any_size() {
        let r = req(json!({"seed": "340282366920938463463374607431768211456"}));
        assert_eq!(seed(&r).unwrap().words(), &[0, 0, 0, 0, 1]);
        let r = req(json!({"seed": 42}));
        assert_eq!(seed(&r).unwrap_err().error, "TypeError");
        let r = req(json!({"seed": "9".repeat(4001)}));
        assert_eq!(seed(&r).unwrap_err().error, "ValueError");
    }
}
