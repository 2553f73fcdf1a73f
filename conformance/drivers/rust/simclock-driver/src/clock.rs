//! The interface a backend implements, and the callbacks the kit hands it.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

/// The kind of a clock's refusal, as the wire names it (C-WIRE-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A value of the wrong type (the wire form of C-TIME-3).
    TypeError,
    /// A value out of range: a time in the past (C-SCH-1), beyond what the clock keeps
    /// (C-TIME-4), a zero period, a malformed label.
    ValueError,
    /// A call in the wrong state: an `advance` from inside a callback (C-ADV-4).
    RuntimeError,
    /// An error of the adapter's own kind (say `Other("Deadlock")`), none of the above:
    /// the wire reports it as `internal`, its name leading the message
    /// (`"Deadlock: ..."`), as for an exception of another class in Python.
    Other(&'static str),
}

impl ErrorKind {
    /// The error's own name: `TypeError`, `ValueError`, `RuntimeError` or the adapter's.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::TypeError => "TypeError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::RuntimeError => "RuntimeError",
            ErrorKind::Other(name) => name,
        }
    }

    /// The name the wire's `error` field uses: the kind, or `internal` for [`ErrorKind::Other`].
    pub fn wire_name(self) -> &'static str {
        match self {
            ErrorKind::Other(_) => "internal",
            kind => kind.as_str(),
        }
    }
}

/// A refused call: it changed nothing (C-WIRE-5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockError {
    /// Which kind of refusal.
    pub kind: ErrorKind,
    /// Free text for a person.
    pub message: String,
}

impl ClockError {
    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> ClockError {
        ClockError { kind: ErrorKind::TypeError, message: message.into() }
    }
    /// A `ValueError`.
    pub fn value(message: impl Into<String>) -> ClockError {
        ClockError { kind: ErrorKind::ValueError, message: message.into() }
    }
    /// A `RuntimeError`.
    pub fn runtime(message: impl Into<String>) -> ClockError {
        ClockError { kind: ErrorKind::RuntimeError, message: message.into() }
    }
}

impl ClockError {
    /// An error of the adapter's own kind `name` (reported as `internal`, see [`ErrorKind::Other`]).
    pub fn other(name: &'static str, message: impl Into<String>) -> ClockError {
        ClockError { kind: ErrorKind::Other(name), message: message.into() }
    }
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for ClockError {}

/// How a callback failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An ordinary error: the clock isolates it and goes on (C-ERR-1); a periodic entry
    /// is re-armed all the same (C-PER-2). A `raise` action is a `RuntimeError` with the
    /// action's message; a child schedule the clock refused with another kind than
    /// `ValueError`, or a nested advance that failed otherwise than with `RuntimeError`,
    /// is that error (docs/kits.md, "What a kit reports").
    Raise(ClockError),
    /// An error the clock must not isolate, the equivalent of Python's `BaseException`
    /// (C-ERR-2): the clock re-arms the entry if it repeats, stops the advance with
    /// `now` at this entry's time, and returns `Err(AdvanceError::Fault(Fault::Halt))`.
    Halt,
}

/// Why `advance` did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdvanceError {
    /// Refused before anything happened: a nested advance (C-ADV-4, `RuntimeError`), a
    /// target beyond what the clock keeps (C-TIME-4, `ValueError`).
    Refused(ClockError),
    /// A callback's fault that the clock let through: `Fault::Halt` (C-ERR-2), or a
    /// `Fault::Raise` it did not isolate (not C-ERR-1: the reply's `error` is its kind).
    Fault(Fault),
}

impl From<ClockError> for AdvanceError {
    fn from(e: ClockError) -> AdvanceError {
        AdvanceError::Refused(e)
    }
}

impl From<Fault> for AdvanceError {
    fn from(f: Fault) -> AdvanceError {
        AdvanceError::Fault(f)
    }
}

/// A clock: the one interface a backend implements (SPEC §1 through the wire, §18).
///
/// Times given on the wire are `u64` ns; times the kit computes (a child at
/// `now + delay`) can pass `2**64 - 1` and come as `u128`. The kit never reorders,
/// rounds or isolates anything: what the suite sees is what the clock did.
///
/// [`Callback`] is `Send + Sync` whenever the handle type is `Send`: a clock may run
/// callbacks on threads of its own (docs/kits.md, "What a kit reports").
pub trait Clock {
    /// What `schedule` returns and `cancel` takes.
    type Handle: Clone + 'static;

    /// The current time (C-TIME-1, C-TIME-2); during a callback, its entry's time (C-ADV-2).
    fn now(&self) -> u64;

    /// Entries the clock holds, cancelled ones still in memory included (C-CAN-4).
    fn stored(&self) -> u64;

    /// Call `callback` at `at_ns`: `ValueError` if `at_ns < now` (C-SCH-1), equal times
    /// in the order they were scheduled (C-TIE-1), and a time the clock cannot keep is a
    /// `ValueError` (C-TIME-4) or simply never due.
    fn schedule(&mut self, at_ns: u128, callback: Callback<Self::Handle>)
        -> Result<Self::Handle, ClockError>;

    /// Call `callback` at `phase_ns + k*period_ns` from the first such time `>= now`
    /// (C-PER-1), pushing each next firing after the callback returns or fails (C-PER-2),
    /// without drift (C-PER-3); `ValueError` for a zero period.
    fn schedule_periodic(
        &mut self,
        period_ns: u64,
        phase_ns: u64,
        callback: Callback<Self::Handle>,
    ) -> Result<Self::Handle, ClockError>;

    /// Make sure the entry never fires again (C-CAN-1..3): never fails, repeating it or
    /// cancelling a fired entry does nothing, and it works from inside any callback.
    fn cancel(&mut self, handle: &Self::Handle);

    /// Fire every live entry due by `now + dt_ns` in `(time, scheduling order)` and set
    /// `now` to the target (C-ADV-1..5): `now` is each entry's time while its callback runs,
    /// entries a callback pushes fire in the same advance if due, a `Fault::Raise` is
    /// isolated, a `Fault::Halt` stops the advance, and a call from inside a callback is
    /// refused with `RuntimeError` (C-ADV-4).
    fn advance(&mut self, dt_ns: u64) -> Result<(), AdvanceError>;

    /// The clock's step (C-STEP-1); a pure event clock keeps the default, 1.
    fn step_ns(&self) -> u64 {
        1
    }
}

/// Optional: the earliest pending entry's time (feature `peek`, C-X-PEEK).
pub trait Peek: Clock {
    /// `None` when nothing is pending.
    fn next_event(&mut self) -> Option<u128>;
}

/// Optional: rate entries (feature `rate`, C-X-RATE).
pub trait Rate: Clock {
    /// Call `callback` at `phase_ns + ceil(k * 10**9 * den / num)` from the first such
    /// time `>= now`, re-armed like a periodic; `ValueError` for a zero part or more than
    /// 10**9 Hz. [`crate::RateGrid`] computes the grid.
    fn schedule_rate(
        &mut self,
        num: u64,
        den: u64,
        phase_ns: u64,
        callback: Callback<Self::Handle>,
    ) -> Result<Self::Handle, ClockError>;
}

/// An entry's counters (feature `stats`, C-X-STATS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryStats {
    /// Invocations so far (failed ones included).
    pub fired: u64,
    /// Firings the clock skipped.
    pub skipped: u64,
    /// Firings that ran late.
    pub overruns: u64,
}

/// Optional: per-entry counters (feature `stats`, C-X-STATS).
pub trait Stats: Clock {
    /// The counters of the entry behind `handle`.
    fn stats(&self, handle: &Self::Handle) -> EntryStats;
}

/// Optional: the clock's random streams (feature `bits`, C-X-BITS, C-RNG-1..4).
pub trait Streams: Clock {
    /// The next `n` raw 64-bit outputs of the stream at the normalised label `path`
    /// (`/` is the root). [`crate::bits::RandomStreams`] is simclock's algorithm.
    fn draw(&mut self, path: &str, n: usize) -> Vec<u64>;
}

// ---------------------------------------------------------------------------------------
// Callbacks: the wire's `on_fire` actions (C-WIRE-4), run against the clock that fires them.

#[derive(Debug)]
pub(crate) enum Action {
    Schedule { delay_ns: u64, on_fire: Arc<[Action]> },
    Cancel(String),
    Advance(u64),
    Raise(String),
    Halt,
}

/// One callback invocation as the wire reports it in `fired`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fired {
    pub entry: Arc<str>,
    pub now_ns: u64,
    /// `refused` and `nested` in the order the actions first set them (C-WIRE-4).
    pub marks: Vec<(&'static str, &'static str)>,
}

impl Fired {
    fn mark(&mut self, key: &'static str, value: &'static str) {
        match self.marks.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.marks.push((key, value)),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    pub entry: Arc<str>,
    pub at_ns: u64,
    pub message: String,
}

/// The kit's record of one clock: entry ids, children counters, the current advance.
pub(crate) struct Book<H> {
    pub handles: HashMap<Arc<str>, H>,
    pub children: HashMap<Arc<str>, u64>,
    pub fired: Vec<Fired>,
    pub failures: Vec<Failure>,
    pub halted: Option<(Arc<str>, u64)>,
}

pub(crate) type SharedBook<H> = Arc<Mutex<Book<H>>>;

/// The book, also after a panic on another thread while it was held (the records are
/// whole: every change is one push or insert).
pub(crate) fn lock<H>(book: &Mutex<Book<H>>) -> MutexGuard<'_, Book<H>> {
    book.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<H> Book<H> {
    pub fn new() -> Book<H> {
        Book {
            handles: HashMap::new(),
            children: HashMap::new(),
            fired: Vec::new(),
            failures: Vec::new(),
            halted: None,
        }
    }
}

/// What the clock calls when an entry is due: the entry's `on_fire` actions.
///
/// A synchronous clock calls [`Callback::call`] with itself. A clock whose callbacks run
/// as async tasks uses [`Callback::begin`] and [`Firing::run`], which hand it each nested
/// advance to perform (and await) itself. It is `Send + Sync` when `H` is `Send`: the
/// kit's records are behind a mutex, so a callback may run on any thread, and its
/// actions call the clock from there.
pub struct Callback<H> {
    entry: Arc<str>,
    actions: Arc<[Action]>,
    book: SharedBook<H>,
}

impl<H> Clone for Callback<H> {
    fn clone(&self) -> Self {
        Callback { entry: self.entry.clone(), actions: self.actions.clone(), book: self.book.clone() }
    }
}

impl<H> fmt::Debug for Callback<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Callback({:?})", self.entry)
    }
}

/// The next thing a [`Firing`] needs from its clock.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// The callback is over: `Ok`, or how it failed.
    Done(Result<(), Fault>),
    /// The callback asks for `advance(dt_ns)`: perform it, pass its result to
    /// [`Firing::nested`], then `run` again.
    Advance(u64),
}

/// One invocation of a callback, in progress.
pub struct Firing<H> {
    cb: Callback<H>,
    at_ns: u64,
    next: usize,
    record: usize,
    fault: Option<Fault>,
}

impl<H: Clone + 'static> Callback<H> {
    pub(crate) fn new(entry: Arc<str>, actions: Arc<[Action]>, book: SharedBook<H>) -> Self {
        Callback { entry, actions, book }
    }

    /// The entry id this callback fires for (children are `<parent>.<n>`).
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// Run the callback to its end: record the firing at `clock.now()`, then perform each
    /// action on `clock` (a nested advance is `clock.advance`).
    pub fn call(&self, clock: &mut dyn Clock<Handle = H>) -> Result<(), Fault> {
        let mut firing = self.begin(clock.now());
        loop {
            match firing.run(clock) {
                Step::Done(result) => return result,
                Step::Advance(dt) => {
                    let result = clock.advance(dt);
                    firing.nested(result);
                }
            }
        }
    }

    /// Start an invocation whose callback reads `now_ns`: records it in `fired`.
    pub fn begin(&self, now_ns: u64) -> Firing<H> {
        let mut book = lock(&self.book);
        book.fired.push(Fired { entry: self.entry.clone(), now_ns, marks: Vec::new() });
        Firing { cb: self.clone(), at_ns: now_ns, next: 0, record: book.fired.len() - 1, fault: None }
    }
}

impl<H: Clone + 'static> Firing<H> {
    /// Perform the actions up to the end or to the next nested advance.
    pub fn run(&mut self, clock: &mut dyn Clock<Handle = H>) -> Step {
        if let Some(fault) = self.fault.take() {
            return self.finish(fault);
        }
        let actions = self.cb.actions.clone();
        while let Some(action) = actions.get(self.next) {
            self.next += 1;
            match action {
                Action::Schedule { delay_ns, on_fire } => {
                    let parent = self.cb.entry.clone();
                    let n = lock(&self.cb.book).children.get(&parent).copied().unwrap_or(0);
                    let child: Arc<str> = format!("{parent}.{n}").into();
                    let at = u128::from(clock.now()) + u128::from(*delay_ns);
                    let cb = Callback::new(child.clone(), on_fire.clone(), self.cb.book.clone());
                    // Invariant: no borrow of the book is held while the clock runs.
                    match clock.schedule(at, cb) {
                        Ok(handle) => {
                            let mut book = lock(&self.cb.book);
                            book.children.insert(parent, n + 1);
                            book.handles.insert(child, handle);
                        }
                        // A ValueError is noted on the record and the callback goes on (the
                        // child takes no number); another kind fails the callback.
                        Err(e) if e.kind == ErrorKind::ValueError => self.mark("refused", "ValueError"),
                        Err(e) => return self.finish(Fault::Raise(e)),
                    }
                }
                Action::Cancel(id) => {
                    let handle = lock(&self.cb.book).handles.get(id.as_str()).cloned();
                    if let Some(handle) = handle {
                        clock.cancel(&handle);
                    }
                }
                Action::Advance(dt) => return Step::Advance(*dt),
                Action::Raise(message) => {
                    return self.finish(Fault::Raise(ClockError::runtime(message.clone())))
                }
                Action::Halt => return self.finish(Fault::Halt),
            }
        }
        Step::Done(Ok(()))
    }

    /// The result of the nested advance that [`Firing::run`] asked for, noted on the
    /// firing record as `nested` (C-ADV-4): `"accepted"` when it ran, else the error's
    /// wire name. The callback goes on after an accepted advance or a `RuntimeError`; any
    /// other error fails it, and a halt that came out of it halts it too.
    pub fn nested(&mut self, result: Result<(), AdvanceError>) {
        let error = match result {
            Ok(()) => {
                self.mark("nested", "accepted");
                return;
            }
            Err(AdvanceError::Refused(e)) => e,
            Err(AdvanceError::Fault(Fault::Raise(e))) => {
                // A callback's error the clock let out of the nested advance: no failure it isolated.
                let mut book = lock(&self.cb.book);
                if let Some(i) = book.failures.iter().rposition(|f| f.message == e.message) {
                    book.failures.remove(i);
                }
                e
            }
            Err(AdvanceError::Fault(Fault::Halt)) => {
                self.fault = Some(Fault::Halt);
                return;
            }
        };
        self.mark("nested", error.kind.wire_name());
        if error.kind != ErrorKind::RuntimeError {
            self.fault = Some(Fault::Raise(error));
        }
    }

    fn mark(&mut self, key: &'static str, value: &'static str) {
        let mut book = lock(&self.cb.book);
        // The advance that began this firing may be over (an async clock can resume a
        // callback later): only its own record is marked.
        if let Some(rec) = book.fired.get_mut(self.record) {
            if Arc::ptr_eq(&rec.entry, &self.cb.entry) {
                rec.mark(key, value);
            }
        }
    }

    fn finish(&mut self, fault: Fault) -> Step {
        self.next = self.cb.actions.len();
        let mut book = lock(&self.cb.book);
        match &fault {
            Fault::Raise(error) => book.failures.push(Failure {
                entry: self.cb.entry.clone(),
                at_ns: self.at_ns,
                message: error.message.clone(),
            }),
            // A halt out of a nested advance: the halting callback is the inner one.
            Fault::Halt if book.halted.is_some() => {}
            Fault::Halt => book.halted = Some((self.cb.entry.clone(), self.at_ns)),
        }
        Step::Done(Err(fault))
    }
}
