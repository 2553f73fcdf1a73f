//! The scripted careless clock of the kits' shared transcript: it breaks the contract on
//! purpose, so that every rule of "What a kit reports" (docs/kits.md) is reached once.
//! `conformance/transcripts/careless.py` is the reference; the replies to
//! `careless.requests.jsonl` must be those of `careless.replies.jsonl`, byte for byte.
//! Entries at a multiple of 100 ns run their callback on a thread of their own
//! (`Callback` is `Send`), and the callback's actions call the clock from there.
use simclock_driver::*;
use std::thread;

const HORIZON: u128 = 1_000_000;

struct Entry {
    at: u128,
    seq: u64, // the order of equal times: taken at every push
    id: u64,  // the handle: kept when a periodic entry is pushed again
    period: u128,
    cb: Callback<u64>,
}

#[derive(Default)]
struct Careless {
    now: u64,
    seq: u64,
    depth: u32,
    pending: Vec<Entry>,
}

impl Careless {
    fn push(&mut self, at: u128, id: Option<u64>, period: u128, cb: Callback<u64>) -> u64 {
        self.seq += 1;
        let id = id.unwrap_or(self.seq);
        self.pending.push(Entry { at, seq: self.seq, id, period, cb });
        id
    }

    /// Run a callback, on a new thread at a multiple of 100 ns, and wait for it.
    fn run(&mut self, at: u128, cb: &Callback<u64>) -> Result<(), Fault> {
        self.depth += 1;
        let result = if at % 100 == 0 {
            thread::scope(|s| s.spawn(|| cb.call(self)).join().unwrap())
        } else {
            cb.call(self)
        };
        self.depth -= 1;
        result
    }
}

impl Clock for Careless {
    type Handle = u64;

    fn now(&self) -> u64 {
        self.now
    }

    fn stored(&self) -> u64 {
        self.pending.len() as u64
    }

    fn schedule(&mut self, at: u128, cb: Callback<u64>) -> Result<u64, ClockError> {
        let now = u128::from(self.now);
        if at < now {
            return Err(ClockError::value(format!("at_ns {at} is before now {now}")));
        }
        if at > HORIZON {
            return Err(ClockError::value(format!("at_ns {at} is past the horizon {HORIZON}")));
        }
        if at == 4242 {
            return Err(ClockError::type_error("at_ns 4242 is unlucky"));
        }
        if at == now && self.depth == 0 {
            self.depth += 1; // careless: fires inside schedule
            let result = cb.call(self);
            self.depth -= 1;
            return match result {
                Err(Fault::Raise(e)) => Err(e), // a callback's error leaves schedule
                _ => Ok(0),
            };
        }
        Ok(self.push(at, None, 0, cb))
    }

    fn schedule_periodic(&mut self, period: u64, phase: u64, cb: Callback<u64>) -> Result<u64, ClockError> {
        if period == 0 {
            return Err(ClockError::value("period_ns must be > 0"));
        }
        let (period, mut first, now) = (u128::from(period), u128::from(phase), u128::from(self.now));
        if first < now {
            first += (now - first).div_ceil(period) * period;
        }
        Ok(self.push(first, None, period, cb))
    }

    fn cancel(&mut self, handle: &u64) {
        self.pending.retain(|e| e.id != *handle);
    }

    fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
        if self.depth > 0 {
            return match dt {
                13 => Err(ClockError::other("Deadlock", "a nested advance of 13 ns would deadlock").into()),
                11.. => Err(ClockError::runtime("advance from inside a callback").into()),
                _ => Ok(()), // careless: accepted and ignored
            };
        }
        if dt == 666 {
            return Err(ClockError::other("Deadlock", "advance of 666 ns would deadlock").into());
        }
        let target = self.now + dt;
        loop {
            let next = self
                .pending
                .iter()
                .enumerate()
                .filter(|(_, e)| e.at <= u128::from(target))
                .min_by_key(|(_, e)| (e.at, e.seq))
                .map(|(i, _)| i);
            let Some(i) = next else { break };
            let entry = self.pending.remove(i);
            let at = entry.at;
            self.now = at as u64;
            let result = self.run(at, &entry.cb);
            if entry.period > 0 {
                self.push(at + entry.period, Some(entry.id), entry.period, entry.cb);
            }
            match result {
                Err(Fault::Halt) => return Err(Fault::Halt.into()), // always leaves (C-ERR-2)
                Err(fault) if at % 2 == 1 => return Err(fault.into()), // careless: odd times
                _ => {}
            }
        }
        self.now = target;
        Ok(())
    }
}

fn main() -> std::io::Result<()> {
    Driver::new("careless:clock", |_| Careless::default()).serve()
}
