//! A deterministic heap clock on the kit: CONFORMING (wire profile 1), every feature.
//!
//! Entries are keyed `(time, seq)`, `seq` taken at every push, so equal times fire in
//! push order (C-TIE-1) and a repeating entry, re-pushed after its callback (C-PER-2),
//! queues behind those already waiting. Cancelling leaves a tombstone that leaves at the
//! top of the heap or when tombstones outnumber `2*live + 64` (C-CAN-4).
pub use heap::{driver, Heap};

// Kept compact on purpose (the whole clock on one screen); rustfmt leaves it as it is.
#[rustfmt::skip]
mod heap {
    use simclock_driver::bits::RandomStreams;
    use simclock_driver::*;
    use std::{cmp::Reverse, collections::BinaryHeap};

    #[derive(PartialEq)]
    enum State { Pending, Running, Cancelled, Done }
    enum Grid { Once, Every(PeriodGrid), Rate(RateGrid) }
    struct Entry { cb: Callback<usize>, grid: Grid, k: u128, state: State, fired: u64 }

    pub struct Heap {
        now: u64, seq: u64, running: bool, dead: usize,
        heap: BinaryHeap<Reverse<(u128, u64, usize)>>, entries: Vec<Entry>, streams: RandomStreams,
    }

    impl Heap {
        fn new(seed: &Seed, now: u64) -> Heap {
            let (heap, entries, streams) = (BinaryHeap::new(), Vec::new(), RandomStreams::new(seed));
            Heap { now, seq: 0, running: false, dead: 0, heap, entries, streams }
        }
        fn push(&mut self, id: usize) {
            let e = &self.entries[id];
            let at = match &e.grid { Grid::Once => e.k, Grid::Every(g) => g.time(e.k), Grid::Rate(g) => g.time(e.k).unwrap_or(u128::MAX) };
            self.seq += 1;
            self.heap.push(Reverse((at, self.seq, id)));
        }
        fn add(&mut self, cb: Callback<usize>, grid: Grid, k: u128) -> usize {
            self.entries.push(Entry { cb, grid, k, state: State::Pending, fired: 0 });
            self.push(self.entries.len() - 1);
            self.entries.len() - 1
        }
        fn compact(&mut self) {
            if self.dead > 2 * (self.heap.len() - self.dead) + 64 {
                let entries = &self.entries;
                self.heap.retain(|Reverse((_, _, id))| entries[*id].state == State::Pending);
                self.dead = 0;
            }
        }
    }

    impl Clock for Heap {
        type Handle = usize;
        fn now(&self) -> u64 { self.now }
        fn stored(&self) -> u64 { self.heap.len() as u64 }
        fn schedule(&mut self, at: u128, cb: Callback<usize>) -> Result<usize, ClockError> {
            if at < self.now.into() { return Err(ClockError::value(format!("at_ns={at} is before now={}", self.now))); }
            Ok(self.add(cb, Grid::Once, at))
        }
        fn schedule_periodic(&mut self, period: u64, phase: u64, cb: Callback<usize>) -> Result<usize, ClockError> {
            let grid = PeriodGrid::new(period, phase)?;
            Ok(self.add(cb, Grid::Every(grid), grid.first_index(self.now)))
        }
        fn cancel(&mut self, &id: &usize) {
            match self.entries[id].state {
                State::Pending => { self.entries[id].state = State::Cancelled; self.dead += 1; self.compact() }
                State::Running => self.entries[id].state = State::Cancelled, // not re-armed, not in the heap
                _ => {}
            }
        }
        fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
            if self.running { return Err(ClockError::runtime("advance() from inside a callback").into()); }
            let target = self.now.checked_add(dt).ok_or_else(|| ClockError::value("now + dt_ns is past 2**64-1 ns"))?;
            self.running = true;
            let mut result = Ok(());
            while let Some(&Reverse((at, _, id))) = self.heap.peek().filter(|top| top.0 .0 <= target.into()) {
                self.heap.pop();
                if self.entries[id].state != State::Pending { self.dead -= 1; continue; }
                let once = matches!(self.entries[id].grid, Grid::Once);
                self.now = at as u64;
                self.entries[id].state = if once { State::Done } else { State::Running };
                self.entries[id].fired += 1;
                let cb = self.entries[id].cb.clone();
                let fault = cb.call(self).err();
                if self.entries[id].state == State::Running {
                    self.entries[id].state = State::Pending;
                    self.entries[id].k += 1;
                    self.push(id);
                }
                if fault == Some(Fault::Halt) { result = Err(Fault::Halt.into()); break; }
            }
            self.running = false;
            if result.is_ok() { self.now = target; }
            self.compact();
            result
        }
    }

    impl Peek for Heap {
        fn next_event(&mut self) -> Option<u128> {
            while let Some(&Reverse((at, _, id))) = self.heap.peek() {
                if self.entries[id].state == State::Pending { return Some(at); }
                self.heap.pop();
                self.dead -= 1;
            }
            None
        }
    }

    impl Rate for Heap {
        fn schedule_rate(&mut self, num: u64, den: u64, phase: u64, cb: Callback<usize>) -> Result<usize, ClockError> {
            let grid = RateGrid::new(num, den, phase)?;
            Ok(self.add(cb, Grid::Rate(grid), grid.first_index(self.now)))
        }
    }

    impl Stats for Heap {
        fn stats(&self, &id: &usize) -> EntryStats { EntryStats { fired: self.entries[id].fired, ..EntryStats::default() } }
    }

    impl Streams for Heap {
        fn draw(&mut self, path: &str, n: usize) -> Vec<u64> { self.streams.draw(path, n) }
    }

    pub fn driver() -> Driver<Heap> {
        Driver::new("simclock-rust-heap", |seed| Heap::new(seed, 0)).start_ns(Heap::new).peek().rate().stats().streams()
    }
}

#[allow(dead_code)] // tests/heap_clock.rs includes this file for driver()
fn main() -> std::io::Result<()> {
    driver().serve()
}
