//! The example heap clock through the kit's request loop: every golden vector, replayed
//! in process, and a transcript (C-WIRE-3, C-WIRE-4, C-WIRE-7).

mod common;

#[path = "../examples/heap_clock.rs"]
mod heap_clock;

use serde_json::{json, Value};

/// The reply without `message` (free text, never compared).
fn strip(mut v: Value) -> Value {
    if let Some(map) = v.as_object_mut() {
        map.remove("message");
    }
    v
}

/// The replies as the suite compares them: no `message`, and `stored` only bounded
/// (C-CAN-4: at most `2*live + 1024` tombstones, `live` being the recorded reply's count).
fn comparable(got: Value, want: Value) -> (Value, Value) {
    let (mut got, mut want) = (strip(got), strip(want));
    let held = got.as_object_mut().and_then(|m| m.remove("stored"));
    let live = want.as_object_mut().and_then(|m| m.remove("stored"));
    if let (Some(held), Some(live)) = (held, live) {
        let bound = 3 * common::dec(&live) + 1024;
        assert!(common::dec(&held) <= bound, "stored {held} for {live} live ones");
    }
    (got, want)
}

fn replay(file: &str) -> usize {
    let mut n = 0;
    for case in common::cases(file) {
        let mut driver = heap_clock::driver();
        let mut refused = false;
        for step in case["steps"].as_array().unwrap() {
            let req = &step["request"];
            if refused && req["op"] != "drop" {
                continue;
            }
            let got: Value = serde_json::from_str(&driver.handle(&req.to_string())).unwrap();
            if refused {
                continue; // its clocks are dropped, the replies not compared
            }
            // A case may accept a clean refusal past 2**64 - 1 (C-TIME-4): it ends there.
            let accept = step.get("accept").and_then(Value::as_array);
            if got["ok"] == false && accept.is_some_and(|a| a.contains(&got["error"])) {
                refused = true;
                continue;
            }
            let (got, want) = comparable(got, step["reply"].clone());
            assert_eq!(got, want, "{} at {req}", case["id"]);
        }
        n += 1;
    }
    n
}

#[test]
fn c_wire_7_the_heap_clock_replays_every_golden_vector() {
    let n: usize = [
        "clauses.jsonl",
        "far_time.jsonl",
        "machine.jsonl",
        "streams.jsonl",
        "regressions/state_machine.jsonl",
    ]
    .iter()
    .map(|f| replay(f))
    .sum();
    assert_eq!(n, 162);
}

fn talk(driver: &mut simclock_driver::Driver<heap_clock::Heap>, req: Value) -> Value {
    serde_json::from_str(&driver.handle(&req.to_string())).unwrap()
}

#[test]
fn c_wire_4_the_transcript_of_the_protocol_guide() {
    let mut d = heap_clock::driver();
    assert_eq!(
        talk(&mut d, json!({"op": "hello", "protocol": "1"})),
        json!({"ok": true, "protocol": "1", "backend": "simclock-rust-heap",
               "features": ["peek", "rate", "stats", "start_ns", "bits"]})
    );
    talk(&mut d, json!({"op": "create", "clock": "c", "seed": "42"}));
    talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "a", "at_ns": "5",
        "on_fire": [{"do": "schedule", "delay_ns": "0"}, {"do": "advance", "dt_ns": "1"}]}),
    );
    talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "b", "at_ns": "5",
        "on_fire": [{"do": "raise", "message": "sensor lost"}]}),
    );
    talk(
        &mut d,
        json!({"op": "schedule_rate", "clock": "c", "entry": "cam", "rate_hz": ["30", "1"],
        "phase_ns": "0", "on_fire": []}),
    );
    assert_eq!(
        talk(&mut d, json!({"op": "advance", "clock": "c", "dt_ns": "40000000"})),
        json!({"ok": true,
               "fired": [{"entry": "cam", "now_ns": "0"}, {"entry": "a", "now_ns": "5", "nested": "RuntimeError"},
                         {"entry": "b", "now_ns": "5"}, {"entry": "a.0", "now_ns": "5"},
                         {"entry": "cam", "now_ns": "33333334"}],
               "failures": [{"entry": "b", "at_ns": "5", "message": "sensor lost"}],
               "next_event_ns": "66666667", "now_ns": "40000000", "stored": "1"})
    );
    assert_eq!(
        talk(&mut d, json!({"op": "cancel", "clock": "c", "entry": "cam"})),
        json!({"ok": true, "next_event_ns": null, "now_ns": "40000000", "stored": "0"})
    );
    assert_eq!(
        talk(&mut d, json!({"op": "stats", "clock": "c", "entry": "cam"})),
        json!({"ok": true, "fired": "2", "skipped": "0", "overruns": "0",
               "next_event_ns": null, "now_ns": "40000000", "stored": "0"})
    );
    let refused = talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "far", "at_ns": 18446744073709551615u64}),
    );
    assert_eq!(
        strip(refused),
        json!({"ok": false, "error": "TypeError",
        "next_event_ns": null, "now_ns": "40000000", "stored": "0"})
    );
    let refused = talk(
        &mut d,
        json!({"op": "schedule", "clock": "c", "entry": "far", "at_ns": "18446744073709551616"}),
    );
    assert_eq!(
        strip(refused),
        json!({"ok": false, "error": "ValueError",
        "next_event_ns": null, "now_ns": "40000000", "stored": "0"})
    );
    assert_eq!(
        talk(&mut d, json!({"op": "draw", "clock": "c", "labels": ["sensors", "imu0"], "n": "2"})),
        json!({"ok": true, "values": ["4798505500344436202", "6344606573098996892"],
               "next_event_ns": null, "now_ns": "40000000", "stored": "0"})
    );
}

#[test]
fn c_wire_5_the_driver_s_own_refusals() {
    let mut d = heap_clock::driver();
    let cases = [
        ("{not json", "bad_request"),
        ("[1]", "bad_request"),
        (r#"{"op":"fly"}"#, "bad_request"),
        (r#"{"op":"observe","clock":"nope"}"#, "bad_request"),
        (r#"{"op":"hello","protocol":"2"}"#, "unsupported"),
    ];
    for (line, error) in cases {
        let reply: Value = serde_json::from_str(&d.handle(line)).unwrap();
        assert_eq!(strip(reply), json!({"ok": false, "error": error}), "{line}");
    }
    talk(&mut d, json!({"op": "create", "clock": "c", "seed": "1"}));
    let obs = json!({"next_event_ns": "7", "now_ns": "0", "stored": "1"});
    talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": "x", "at_ns": "7"}));
    for (req, error) in [
        (json!({"op": "create", "clock": "c", "seed": "1"}), "bad_request"),
        (json!({"op": "schedule", "clock": "c", "entry": "x", "at_ns": "9"}), "bad_request"),
        (json!({"op": "schedule", "clock": "c", "entry": "y.1", "at_ns": "9"}), "bad_request"),
        (json!({"op": "cancel", "clock": "c", "entry": "nope"}), "bad_request"),
        (
            json!({"op": "schedule", "clock": "c", "entry": "y", "at_ns": "9",
                "on_fire": [{"do": "schedule", "delay_ns": "-1"}]}),
            "TypeError",
        ),
        (json!({"op": "schedule_periodic", "clock": "c", "entry": "y", "period_ns": "0"}), "ValueError"),
        (json!({"op": "draw", "clock": "c", "labels": ["a//b"], "n": "1"}), "ValueError"),
        (json!({"op": "draw", "clock": "c", "labels": "a", "n": "1"}), "TypeError"),
    ] {
        let mut want = obs.clone();
        want["ok"] = false.into();
        want["error"] = error.into();
        assert_eq!(strip(talk(&mut d, req.clone())), want, "{req}");
    }
    // Nothing changed: y was never scheduled, so its id is still free.
    assert_eq!(
        talk(&mut d, json!({"op": "schedule", "clock": "c", "entry": "y", "at_ns": "9"}))["stored"],
        "2"
    );
    assert_eq!(d.handle(r#"{"op":"quit"}"#), r#"{"ok":true}"#);
}
