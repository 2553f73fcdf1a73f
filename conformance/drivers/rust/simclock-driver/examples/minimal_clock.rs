//! The least a conforming backend needs: the `Clock` trait and simclock's random streams.
//!
//! A sorted queue of `(time, seq, id)`, `seq` taken at every push: equal times fire in
//! push order (C-TIE-1), and a periodic entry re-pushed after its callback (C-PER-2)
//! queues behind those already waiting. Cancelling removes the entry at once, so nothing
//! is ever held for a cancelled entry (C-CAN-4).
use simclock_driver::bits::RandomStreams;
use simclock_driver::*;

struct Entry {
    cb: Callback<usize>,
    grid: Option<PeriodGrid>,
    k: u128,
    live: bool,
}

pub struct Minimal {
    now: u64,
    seq: u64,
    running: bool,
    queue: Vec<(u128, u64, usize)>,
    entries: Vec<Entry>,
    streams: RandomStreams,
}

impl Minimal {
    fn push(&mut self, id: usize, at: u128) {
        self.seq += 1;
        let key = (at, self.seq, id);
        let pos = self.queue.partition_point(|k| *k < key);
        self.queue.insert(pos, key);
    }
    fn add(&mut self, cb: Callback<usize>, grid: Option<PeriodGrid>, k: u128, at: u128) -> usize {
        self.entries.push(Entry { cb, grid, k, live: true });
        self.push(self.entries.len() - 1, at);
        self.entries.len() - 1
    }
}

impl Clock for Minimal {
    type Handle = usize;
    fn now(&self) -> u64 {
        self.now
    }
    fn stored(&self) -> u64 {
        self.queue.len() as u64
    }
    fn schedule(&mut self, at: u128, cb: Callback<usize>) -> Result<usize, ClockError> {
        if at < self.now.into() {
            return Err(ClockError::value(format!("at_ns={at} is before now={}", self.now)));
        }
        Ok(self.add(cb, None, 0, at))
    }
    fn schedule_periodic(
        &mut self,
        period: u64,
        phase: u64,
        cb: Callback<usize>,
    ) -> Result<usize, ClockError> {
        let grid = PeriodGrid::new(period, phase)?;
        let k = grid.first_index(self.now);
        Ok(self.add(cb, Some(grid), k, grid.time(k)))
    }
    fn cancel(&mut self, &id: &usize) {
        self.entries[id].live = false;
        self.queue.retain(|&(_, _, queued)| queued != id);
    }
    fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
        if self.running {
            return Err(ClockError::runtime("advance() from inside a callback").into());
        }
        let target =
            self.now.checked_add(dt).ok_or_else(|| ClockError::value("now + dt_ns passes 2**64-1"))?;
        self.running = true;
        while let Some(&(at, _, id)) = self.queue.first().filter(|k| k.0 <= target.into()) {
            self.queue.remove(0);
            self.now = at as u64;
            let grid = self.entries[id].grid;
            self.entries[id].live &= grid.is_some(); // a one-shot is done before its callback
            let fault = self.entries[id].cb.clone().call(self).err();
            if let (Some(grid), true) = (grid, self.entries[id].live) {
                self.entries[id].k += 1;
                self.push(id, grid.time(self.entries[id].k));
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
    let new = |seed: &Seed| Minimal {
        now: 0,
        seq: 0,
        running: false,
        queue: Vec::new(),
        entries: Vec::new(),
        streams: RandomStreams::new(seed),
    };
    Driver::new("simclock-rust-minimal", new).streams().serve()
}
