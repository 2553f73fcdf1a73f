//! The least a conforming backend needs: the `Clock` trait and simclock's random streams.
//!
//! Entries wait in a `BTreeMap` keyed `(time, seq)`, `seq` taken at every insert: equal
//! times fire in insert order (C-TIE-1), and a periodic entry, re-inserted after its
//! callback (C-PER-2), queues behind those already waiting. A handle is the entry's
//! cancelled flag: cancelling sets it and removes the entry at once, so nothing is held
//! for a cancelled entry (C-CAN-4), and an entry cancelled while it runs is not re-armed.
use simclock_driver::bits::RandomStreams;
use simclock_driver::*;
use std::{cell::Cell, collections::BTreeMap, rc::Rc};

/// An entry's cancelled flag, shared with its handle.
type Flag = Rc<Cell<bool>>;

struct Entry {
    cb: Callback<Flag>,
    period: Option<u128>,
    cancelled: Flag,
}

pub struct Minimal {
    now: u64,
    seq: u64,
    running: bool,
    queue: BTreeMap<(u128, u64), Entry>,
    streams: RandomStreams,
}

impl Minimal {
    fn new(seed: &Seed) -> Minimal {
        Minimal { now: 0, seq: 0, running: false, queue: BTreeMap::new(), streams: RandomStreams::new(seed) }
    }
    fn insert(&mut self, at: u128, entry: Entry) -> Flag {
        self.seq += 1;
        self.queue.entry((at, self.seq)).or_insert(entry).cancelled.clone()
    }
}

impl Clock for Minimal {
    type Handle = Flag;
    fn now(&self) -> u64 {
        self.now
    }
    fn stored(&self) -> u64 {
        self.queue.len() as u64
    }
    fn schedule(&mut self, at: u128, cb: Callback<Flag>) -> Result<Flag, ClockError> {
        if at < self.now.into() {
            return Err(ClockError::value(format!("at_ns={at} is before now={}", self.now)));
        }
        Ok(self.insert(at, Entry { cb, period: None, cancelled: Flag::default() }))
    }
    fn schedule_periodic(&mut self, period: u64, phase: u64, cb: Callback<Flag>) -> Result<Flag, ClockError> {
        let grid = PeriodGrid::new(period, phase)?;
        let at = grid.time(grid.first_index(self.now));
        Ok(self.insert(at, Entry { cb, period: Some(grid.period), cancelled: Flag::default() }))
    }
    fn cancel(&mut self, cancelled: &Flag) {
        cancelled.set(true);
        self.queue.retain(|_, entry| !entry.cancelled.get());
    }
    fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
        if self.running {
            return Err(ClockError::runtime("advance() from inside a callback").into());
        }
        let target = self.now.checked_add(dt).ok_or(ClockError::value("now + dt_ns is past 2**64-1"))?;
        self.running = true;
        while let Some(first) = self.queue.first_entry().filter(|e| e.key().0 <= target.into()) {
            let ((at, _), entry) = first.remove_entry();
            self.now = at as u64;
            let fault = entry.cb.call(self).err();
            if let Some(period) = entry.period.filter(|_| !entry.cancelled.get()) {
                self.insert(at + period, entry);
            }
            if fault == Some(Fault::Halt) {
                self.running = false;
                return Err(Fault::Halt.into());
            }
        }
        self.running = false;
        self.now = target;
        Ok(())
    }
}

impl Streams for Minimal {
    fn draw(&mut self, path: &str, n: usize) -> Vec<u64> {
        self.streams.draw(path, n)
    }
}

fn main() -> std::io::Result<()> {
    Driver::new("simclock-rust-minimal", Minimal::new).streams().serve()
}
