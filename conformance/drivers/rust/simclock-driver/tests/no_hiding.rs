//! The kit reports what a clock does, defects included (C-WIRE-4, C-WIRE-5): a clock
//! that runs a nested advance, lets an ordinary error out of `advance`, fires ties
//! last-scheduled first or panics is seen doing exactly that.

use serde_json::{json, Value};
use simclock_driver::*;

/// A deliberately careless clock: a list scanned from the back, no nesting guard, no
/// isolation of any callback error.
struct Careless {
    now: u64,
    due: Vec<(u128, Callback<usize>)>,
}

impl Clock for Careless {
    type Handle = usize;
    fn now(&self) -> u64 {
        self.now
    }
    fn stored(&self) -> u64 {
        self.due.len() as u64
    }
    fn schedule(&mut self, at: u128, cb: Callback<usize>) -> Result<usize, ClockError> {
        self.due.push((at, cb));
        Ok(self.due.len() - 1)
    }
    fn schedule_periodic(&mut self, _: u64, _: u64, _: Callback<usize>) -> Result<usize, ClockError> {
        Err(ClockError::value("no periodic entries here"))
    }
    fn cancel(&mut self, _: &usize) {
        panic!("cancel is not written yet")
    }
    fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
        let target = self.now + dt;
        // Last scheduled first among the due ones: LIFO ties.
        while let Some(i) = self.due.iter().rposition(|(at, _)| *at <= u128::from(target)) {
            let (at, cb) = self.due.remove(i);
            self.now = at as u64;
            cb.call(self)?; // every fault leaves advance, a Raise included
        }
        self.now = target;
        Ok(())
    }
}

fn talk(d: &mut Driver<Careless>, req: Value) -> Value {
    let mut reply: Value = serde_json::from_str(&d.handle(&req.to_string())).unwrap();
    reply.as_object_mut().unwrap().shift_remove("message");
    reply
}

fn driver() -> Driver<Careless> {
    let mut d = Driver::new("careless", |_| Careless { now: 0, due: Vec::new() });
    talk(&mut d, json!({"op": "create", "clock": "c", "seed": "0"}));
    d
}

#[test]
fn c_adv_4_a_nested_advance_that_runs_is_reported_as_running() {
    let mut d = driver();
    talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "n", "at_ns": "1",
                        "on_fire": [{"do": "advance", "dt_ns": "5"}]}),
    );
    talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": "later", "at_ns": "4"}));
    // `nested: "accepted"`: the clock ran the nested advance, which fired `later` inside `n`.
    assert_eq!(
        talk(&mut d, json!({"op": "advance", "clock": "c", "dt_ns": "2"})),
        json!({"ok": true, "fired": [{"entry": "n", "now_ns": "1", "nested": "accepted"}, {"entry": "later", "now_ns": "4"}],
               "failures": [], "now_ns": "2", "stored": "0"})
    );
}

#[test]
fn c_tie_1_lifo_ties_come_out_lifo() {
    let mut d = driver();
    for id in ["a", "b", "c"] {
        talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": id, "at_ns": "3"}));
    }
    let reply = talk(&mut d, json!({"op": "advance", "clock": "c", "dt_ns": "3"}));
    let order: Vec<&str> =
        reply["fired"].as_array().unwrap().iter().map(|f| f["entry"].as_str().unwrap()).collect();
    assert_eq!(order, ["c", "b", "a"]);
}

#[test]
fn c_err_1_an_error_the_clock_does_not_isolate_stops_the_advance() {
    let mut d = driver();
    talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "bad", "at_ns": "1",
                        "on_fire": [{"do": "raise", "message": "boom"}, {"do": "schedule", "delay_ns": "0"}]}),
    );
    talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": "never", "at_ns": "0"}));
    // `never` is due first but scheduled last... LIFO: it fires first; then `bad` raises
    // and the clock lets it out: a RuntimeError reply, `now` left at 1, no child; the
    // error is the reply's, not one of the failures (the clock isolated none).
    assert_eq!(
        talk(&mut d, json!({"op": "advance", "clock": "c", "dt_ns": "5"})),
        json!({"ok": false, "error": "RuntimeError",
               "fired": [{"entry": "never", "now_ns": "0"}, {"entry": "bad", "now_ns": "1"}],
               "failures": [],
               "now_ns": "1", "stored": "0"})
    );
}

#[test]
fn c_wire_5_a_panicking_clock_is_an_internal_reply_and_the_driver_goes_on() {
    let mut d = driver();
    talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": "x", "at_ns": "7"}));
    assert_eq!(
        talk(&mut d, json!({"op": "cancel", "clock": "c", "entry": "x"})),
        json!({"ok": false, "error": "internal"})
    );
    assert_eq!(
        talk(&mut d, json!({"op": "observe", "clock": "c"})),
        json!({"ok": true, "now_ns": "0", "stored": "1"})
    );
}
