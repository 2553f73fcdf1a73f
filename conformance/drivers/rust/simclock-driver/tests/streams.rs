//! simclock's random streams against the golden vectors' stages (C-X-BITS, C-RNG-3).

mod common;

use std::collections::HashMap;

use simclock_driver::bits::{label_path, seed_sequence_state, spawn_key, Pcg64, RandomStreams};
use simclock_driver::Seed;

#[test]
fn c_x_bits_every_stage_of_every_stream_vector() {
    let cases = common::cases("streams.jsonl");
    assert!(cases.len() >= 20, "{} stream cases", cases.len());
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let st = &case["stages"];
        let seed = Seed::from_decimal(st["seed"].as_str().unwrap()).unwrap();
        let path = st["path"].as_str().unwrap();
        let key = spawn_key(path);
        let want_key: Vec<u128> = st["spawn_key"].as_array().unwrap().iter().map(common::dec).collect();
        assert_eq!(key.map(u128::from).to_vec(), want_key, "{id}: spawn key");
        let words = seed_sequence_state(seed.words(), &key);
        let first_u32: Vec<u128> = [words[0], words[0] >> 32, words[1], words[1] >> 32]
            .iter()
            .map(|w| u128::from(*w as u32))
            .collect();
        let want_state: Vec<u128> =
            st["seed_sequence_state"].as_array().unwrap().iter().map(common::dec).collect();
        assert_eq!(first_u32, want_state, "{id}: SeedSequence.generate_state(4, uint32)");
        let mut g = Pcg64::from_state_words(words);
        assert_eq!(g.state, common::dec(&st["pcg64_state"]["state"]), "{id}: PCG64 state");
        assert_eq!(g.inc, common::dec(&st["pcg64_state"]["inc"]), "{id}: PCG64 inc");
        let want: Vec<u128> = st["outputs"].as_array().unwrap().iter().map(common::dec).collect();
        let got: Vec<u128> = (0..want.len()).map(|_| u128::from(g.next_u64())).collect();
        assert_eq!(got, want, "{id}: outputs");
    }
}

#[test]
fn c_x_bits_every_draw_request_of_the_vectors() {
    // Each draw step of streams.jsonl and clauses.jsonl, replayed on the streams alone
    // (one RandomStreams per clock id).
    let mut checked = 0;
    for file in ["streams.jsonl", "clauses.jsonl"] {
        for case in common::cases(file) {
            let mut clocks: HashMap<String, RandomStreams> = HashMap::new();
            for step in case["steps"].as_array().unwrap() {
                let (req, reply) = (&step["request"], &step["reply"]);
                match req["op"].as_str().unwrap() {
                    "create" => {
                        let seed = Seed::from_decimal(req["seed"].as_str().unwrap()).unwrap();
                        clocks.insert(req["clock"].as_str().unwrap().to_owned(), RandomStreams::new(&seed));
                    }
                    "draw" if reply["ok"] == true => {
                        let labels: Vec<&str> =
                            req["labels"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
                        let path = label_path(&labels).unwrap();
                        let n = common::dec(&req["n"]) as usize;
                        let got = clocks.get_mut(req["clock"].as_str().unwrap()).unwrap().draw(&path, n);
                        let want: Vec<u128> =
                            reply["values"].as_array().unwrap().iter().map(common::dec).collect();
                        assert_eq!(
                            got.iter().map(|v| u128::from(*v)).collect::<Vec<_>>(),
                            want,
                            "{}",
                            case["id"]
                        );
                        checked += 1;
                    }
                    "draw" => {
                        let labels: Vec<&str> =
                            req["labels"].as_array().unwrap().iter().filter_map(|l| l.as_str()).collect();
                        assert_eq!(reply["error"], "ValueError", "{}", case["id"]);
                        assert!(label_path(&labels).is_err(), "{}: {labels:?} must be refused", case["id"]);
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(checked >= 30, "{checked} draws checked");
}
