//! tokio's paused time (`tokio::time::pause`, `sleep_until`, `interval_at`, `advance`)
//! through the simclock driver kit.
//!
//! The mapping is what a tokio user writes in a test with a paused clock:
//!
//! * one wire nanosecond is one nanosecond of `tokio::time::Duration`; wire time `t` is
//!   the instant `base + (t - start_ns)`, `base` the runtime's paused `Instant::now()` at
//!   creation;
//! * `schedule(at)` spawns a task (`spawn_local`: the kit's callbacks are `!Send`) that
//!   awaits `sleep_until(at)` and runs the callback; a past `at` is simply an instant that
//!   has passed;
//! * `schedule_periodic(period, phase)` spawns a task looping on an
//!   `interval_at(first, period)`, `first` the first grid point at or after `now` (tokio
//!   intervals have no phase); an ordinary callback error is logged by the loop, which
//!   goes on;
//! * `cancel` aborts the task (`JoinHandle::abort`);
//! * `advance(dt)` is `sleep(dt).await` on the runtime, which auto-advances the paused
//!   clock from timer to timer: tokio's documented way to "wait for a duration to pass and
//!   have all timers fire in order"; then `yield_now().await` until a yield runs no
//!   callback, so that tasks whose timers fired at the target itself have run;
//! * a nested advance is `tokio::time::advance(dt).await` from inside the task;
//! * `halt` panics in the task (Rust's error that no `Result` handler catches); tokio
//!   catches a task's panic, as it does for every task;
//! * `stored` is the number of the adapter's tasks that tokio has not finished
//!   (`!JoinHandle::is_finished()`), an aborted one included until the runtime drops it.
//!
//! No `peek`, `rate`, `stats` or `bits`: tokio offers none of them.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use simclock_driver::{AdvanceError, Callback, Clock, ClockError, Driver, Fault, Step};
use tokio::runtime::{Builder, Runtime};
use tokio::task::{JoinHandle, LocalSet};
use tokio::time::{interval_at, sleep, sleep_until, Instant};

/// What the clock and its tasks share: the time origin and the timer tasks.
struct Shared {
    base: Instant,
    start_ns: u64,
    /// tokio nanoseconds per wire unit: 1, or 1_000_000 with `--wire-unit ms`.
    unit: u128,
    next_id: u64,
    tasks: HashMap<u64, JoinHandle<()>>,
    /// Callback invocations so far: `advance` yields until a yield runs none.
    firings: u64,
}

impl Shared {
    /// `units` wire units as a tokio Duration.
    fn duration(&self, units: u128) -> Duration {
        let ns = units * self.unit;
        Duration::new((ns / 1_000_000_000) as u64, (ns % 1_000_000_000) as u32)
    }
    /// Wire time `t` as a tokio Instant.
    fn instant(&self, t: u128) -> Instant {
        let start = u128::from(self.start_ns);
        if t >= start {
            self.base + self.duration(t - start)
        } else {
            self.base - self.duration(start - t)
        }
    }
    /// tokio's `Instant::now()` in wire units (whole units: a part of one is dropped).
    fn now_ns(&self) -> u64 {
        let since = Instant::now().duration_since(self.base).as_nanos() / self.unit;
        (u128::from(self.start_ns) + since) as u64
    }
    fn spawn(this: &Rc<RefCell<Shared>>, task: impl std::future::Future<Output = ()> + 'static) -> u64 {
        let handle = tokio::task::spawn_local(task);
        let mut shared = this.borrow_mut();
        shared.next_id += 1;
        let id = shared.next_id;
        shared.tasks.insert(id, handle);
        id
    }
}

fn shared_duration(ctx: &InTask, units: u64) -> Duration {
    ctx.0.borrow().duration(units.into())
}

/// One invocation of a kit callback inside a tokio task.
async fn fire(shared: Rc<RefCell<Shared>>, cb: Callback<u64>) -> Result<(), Fault> {
    shared.borrow_mut().firings += 1;
    let mut ctx = InTask(shared);
    let mut firing = cb.begin(ctx.now());
    loop {
        match firing.run(&mut ctx) {
            Step::Done(result) => return result,
            Step::Advance(dt) => {
                let d = shared_duration(&ctx, dt);
                tokio::time::advance(d).await;
                firing.nested(Ok(()));
            }
        }
    }
}

fn oneshot(shared: &Rc<RefCell<Shared>>, at: u128, cb: Callback<u64>) -> u64 {
    let deadline = shared.borrow().instant(at);
    let inner = shared.clone();
    Shared::spawn(shared, async move {
        sleep_until(deadline).await;
        if fire(inner, cb).await == Err(Fault::Halt) {
            std::panic::resume_unwind(Box::new("halt"));
        }
    })
}

fn periodic(shared: &Rc<RefCell<Shared>>, period: u64, phase: u64, cb: Callback<u64>) -> u64 {
    let first = {
        let s = shared.borrow();
        let now = u128::from(s.now_ns());
        let (phase, period) = (u128::from(phase), u128::from(period.max(1)));
        let k = if phase >= now { 0 } else { (now - phase).div_ceil(period) };
        s.instant(phase + k * period)
    };
    let mut ticks = interval_at(first, shared.borrow().duration(period.into()));
    let inner = shared.clone();
    Shared::spawn(shared, async move {
        loop {
            ticks.tick().await;
            match fire(inner.clone(), cb.clone()).await {
                Err(Fault::Halt) => std::panic::resume_unwind(Box::new("halt")),
                Err(Fault::Raise(message)) => eprintln!("tokio_driver: periodic callback failed: {message}"),
                Ok(()) => {}
            }
        }
    })
}

fn cancel(shared: &Rc<RefCell<Shared>>, id: u64) {
    if let Some(task) = shared.borrow().tasks.get(&id) {
        task.abort();
    }
}

/// The clock as the callbacks see it from inside their task.
struct InTask(Rc<RefCell<Shared>>);

impl Clock for InTask {
    type Handle = u64;
    fn now(&self) -> u64 {
        self.0.borrow().now_ns()
    }
    fn stored(&self) -> u64 {
        unreachable!("the driver asks the clock itself")
    }
    fn schedule(&mut self, at: u128, cb: Callback<u64>) -> Result<u64, ClockError> {
        Ok(oneshot(&self.0, at, cb))
    }
    fn schedule_periodic(&mut self, period: u64, phase: u64, cb: Callback<u64>) -> Result<u64, ClockError> {
        Ok(periodic(&self.0, period, phase, cb))
    }
    fn cancel(&mut self, &id: &u64) {
        cancel(&self.0, id)
    }
    fn advance(&mut self, _: u64) -> Result<(), AdvanceError> {
        unreachable!("fire() performs a nested advance with tokio::time::advance")
    }
}

/// A paused current-thread runtime and the local task set its timer tasks run on.
struct TokioClock {
    rt: Runtime,
    local: LocalSet,
    shared: Rc<RefCell<Shared>>,
}

impl TokioClock {
    fn new(start_ns: u64, unit: u128) -> TokioClock {
        let rt =
            Builder::new_current_thread().enable_time().start_paused(true).build().expect("a tokio runtime");
        let base = rt.block_on(async { Instant::now() });
        let shared = Shared { base, start_ns, unit, next_id: 0, tasks: HashMap::new(), firings: 0 };
        TokioClock { rt, local: LocalSet::new(), shared: Rc::new(RefCell::new(shared)) }
    }
    /// Run `f` where tokio's context functions work (spawn_local, interval_at, now).
    fn within<R>(&self, f: impl FnOnce() -> R) -> R {
        let _rt = self.rt.enter();
        let _local = self.local.enter();
        f()
    }
}

impl Clock for TokioClock {
    type Handle = u64;
    fn now(&self) -> u64 {
        self.within(|| self.shared.borrow().now_ns())
    }
    fn stored(&self) -> u64 {
        let mut shared = self.shared.borrow_mut();
        shared.tasks.retain(|_, task| !task.is_finished());
        shared.tasks.len() as u64
    }
    fn schedule(&mut self, at: u128, cb: Callback<u64>) -> Result<u64, ClockError> {
        Ok(self.within(|| oneshot(&self.shared, at, cb)))
    }
    fn schedule_periodic(&mut self, period: u64, phase: u64, cb: Callback<u64>) -> Result<u64, ClockError> {
        Ok(self.within(|| periodic(&self.shared, period, phase, cb)))
    }
    fn cancel(&mut self, &id: &u64) {
        cancel(&self.shared, id)
    }
    fn advance(&mut self, dt: u64) -> Result<(), AdvanceError> {
        let d = self.shared.borrow().duration(dt.into());
        let shared = self.shared.clone();
        // The sleep is made inside the runtime: it needs its timer driver. When it ends,
        // tasks whose timers fired at the same tick may not have run yet: yield (which
        // never moves the paused clock) until a yield runs no callback.
        self.rt.block_on(self.local.run_until(async move {
            sleep(d).await;
            loop {
                let before = shared.borrow().firings;
                tokio::task::yield_now().await;
                if shared.borrow().firings == before {
                    break;
                }
            }
        }));
        Ok(())
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (unit, name): (u128, &str) = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => (1, "tokio-1.54.1-paused-time"),
        ["--wire-unit", "ms"] => (1_000_000, "tokio-1.54.1-paused-time+wire-unit-ms"),
        _ => {
            eprintln!("usage: tokio_driver [--wire-unit ms]   (got {args:?})");
            std::process::exit(2);
        }
    };
    Driver::new(name, move |_seed| TokioClock::new(0, unit))
        .start_ns(move |_seed, start| TokioClock::new(start, unit))
        .serve()
}
