//! The request loop (C-WIRE-1, C-WIRE-3): one JSON request per line in, one reply out.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use crate::bits::{self, Seed};
use crate::clock::{lock, Book, Callback, Fired, SharedBook};
use crate::wire::{self, Refusal, Request};
use crate::{AdvanceError, Clock, EntryStats, Fault, Peek, Rate, Stats, Streams};

/// The most values one `draw` returns.
const MAX_DRAW: u64 = 1 << 20;

type CreateAt<C> = Box<dyn FnMut(&Seed, u64) -> C>;
type DrawFn<C> = fn(&mut C, &str, usize) -> Vec<u64>;
type PeekFn<C> = fn(&mut C) -> Option<u128>;
type RateFn<C> = fn(
    &mut C,
    u64,
    u64,
    u64,
    Callback<<C as Clock>::Handle>,
) -> Result<<C as Clock>::Handle, crate::ClockError>;

struct Slot<C: Clock> {
    clock: C,
    book: SharedBook<C::Handle>,
}

/// A driver for clocks of type `C`: built with [`Driver::new`], told which optional parts
/// `C` has, then [`Driver::serve`]d on stdin/stdout.
///
/// ```no_run
/// # use simclock_driver::*;
/// # struct MyClock;
/// # impl MyClock { fn new(_: &Seed) -> Self { MyClock } }
/// # impl Clock for MyClock {
/// #     type Handle = usize;
/// #     fn now(&self) -> u64 { 0 }
/// #     fn stored(&self) -> u64 { 0 }
/// #     fn schedule(&mut self, _: u128, _: Callback<usize>) -> Result<usize, ClockError> { Ok(0) }
/// #     fn schedule_periodic(&mut self, _: u64, _: u64, _: Callback<usize>) -> Result<usize, ClockError> { Ok(0) }
/// #     fn cancel(&mut self, _: &usize) {}
/// #     fn advance(&mut self, _: u64) -> Result<(), AdvanceError> { Ok(()) }
/// # }
/// fn main() -> std::io::Result<()> {
///     Driver::new("my-clock", |seed| MyClock::new(seed)).serve()
/// }
/// ```
pub struct Driver<C: Clock> {
    backend: String,
    create: Box<dyn FnMut(&Seed) -> C>,
    create_at: Option<CreateAt<C>>,
    peek: Option<PeekFn<C>>,
    rate: Option<RateFn<C>>,
    stats: Option<fn(&C, &C::Handle) -> EntryStats>,
    draw: Option<DrawFn<C>>,
    clocks: HashMap<String, Slot<C>>,
    quit: bool,
}

impl<C: Clock> Driver<C> {
    /// A driver named `backend` (the `hello` reply) whose clocks `create` makes.
    pub fn new(backend: impl Into<String>, create: impl FnMut(&Seed) -> C + 'static) -> Self {
        Driver {
            backend: backend.into(),
            create: Box::new(create),
            create_at: None,
            peek: None,
            rate: None,
            stats: None,
            draw: None,
            clocks: HashMap::new(),
            quit: false,
        }
    }

    /// Clocks can start at another time than 0: feature `start_ns`.
    pub fn start_ns(mut self, create_at: impl FnMut(&Seed, u64) -> C + 'static) -> Self {
        self.create_at = Some(Box::new(create_at));
        self
    }

    /// `C` tells its next event: feature `peek`.
    pub fn peek(mut self) -> Self
    where
        C: Peek,
    {
        self.peek = Some(<C as Peek>::next_event);
        self
    }

    /// `C` has rate entries: feature `rate`.
    pub fn rate(mut self) -> Self
    where
        C: Rate,
    {
        self.rate = Some(<C as Rate>::schedule_rate);
        self
    }

    /// `C` counts firings per entry: feature `stats`.
    pub fn stats(mut self) -> Self
    where
        C: Stats,
    {
        self.stats = Some(<C as Stats>::stats);
        self
    }

    /// `C` has random streams: feature `bits`.
    pub fn streams(mut self) -> Self
    where
        C: Streams,
    {
        self.draw = Some(<C as Streams>::draw);
        self
    }

    /// The features `hello` declares, from the optional parts registered.
    pub fn features(&self) -> Vec<&'static str> {
        [
            (self.peek.is_some(), "peek"),
            (self.rate.is_some(), "rate"),
            (self.stats.is_some(), "stats"),
            (self.create_at.is_some(), "start_ns"),
            (self.draw.is_some(), "bits"),
        ]
        .into_iter()
        .filter_map(|(has, name)| has.then_some(name))
        .collect()
    }

    /// Serve stdin/stdout until `quit` or the end of input.
    pub fn serve(self) -> io::Result<()> {
        let stdin = io::stdin();
        let stdout = io::stdout();
        self.serve_on(stdin.lock(), stdout.lock())
    }

    /// Serve `input`/`output`: one reply per line read, flushed (C-WIRE-1).
    pub fn serve_on(mut self, input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        for line in input.lines() {
            let reply = self.handle(&line?);
            output.write_all(reply.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
            if self.quit {
                break;
            }
        }
        Ok(())
    }

    /// The reply to one request line; a panic in the clock is an `internal` reply.
    pub fn handle(&mut self, line: &str) -> String {
        let reply = panic::catch_unwind(AssertUnwindSafe(|| self.reply(line))).unwrap_or_else(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic".to_owned());
            json!({"ok": false, "error": "internal", "message": format!("the clock panicked: {what}")})
        });
        reply.to_string()
    }

    fn reply(&mut self, line: &str) -> Value {
        let req: Request = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(req)) => req,
            Ok(_) => return refusal(Refusal::bad_request("the request must be a JSON object")),
            Err(e) => {
                return refusal(Refusal::bad_request(format!("the request is not one JSON object: {e}")))
            }
        };
        let mut observed: Option<String> = None;
        match self.dispatch(&req, &mut observed) {
            Ok(reply) => reply,
            Err(r) => {
                let mut reply = refusal(r);
                // C-WIRE-3: a refusal of a clock request carries the observation too.
                if let Some(id) = observed {
                    if let Some(slot) = self.clocks.get_mut(&id) {
                        let map = reply.as_object_mut().expect("an object");
                        if matches!(req.get("op").and_then(Value::as_str), Some(op) if CARRIERS.contains(&op))
                        {
                            carry(&slot.book, map);
                        }
                        observe(slot, self.peek, map);
                    }
                }
                reply
            }
        }
    }

    fn dispatch(&mut self, req: &Request, observed: &mut Option<String>) -> Result<Value, Refusal> {
        let op = wire::string(req, "op")?;
        match op {
            "hello" => return self.hello(req),
            "quit" => {
                self.quit = true;
                return Ok(json!({"ok": true}));
            }
            "create" | "drop" | "schedule" | "schedule_periodic" | "schedule_rate" | "cancel" | "advance"
            | "observe" | "stats" | "step_ns" | "draw" => {}
            other => {
                return Err(Refusal::bad_request(format!(
                    "unknown op {:?}",
                    other.chars().take(60).collect::<String>()
                )))
            }
        }
        let id = wire::string(req, "clock")?;
        if op == "create" {
            if self.clocks.contains_key(id) {
                *observed = Some(id.to_owned());
                return Err(Refusal::bad_request(format!(
                    "clock {id:?} is in use; drop it first or pick another id"
                )));
            }
            return self.create(req, id);
        }
        let peek = self.peek;
        let (rate, stats, draw) = (self.rate, self.stats, self.draw);
        let Some(slot) = self.clocks.get_mut(id) else {
            return Err(Refusal::bad_request(format!(
                "unknown clock {:?}",
                id.chars().take(60).collect::<String>()
            )));
        };
        *observed = Some(id.to_owned());
        let mut reply = Map::new();
        reply.insert("ok".into(), Value::Bool(true));
        match op {
            "drop" => {
                observe(slot, peek, &mut reply);
                self.clocks.remove(id);
                return Ok(Value::Object(reply));
            }
            "schedule" => {
                let entry = new_entry(slot, req)?;
                let at = wire::uint(req, "at_ns")?;
                let cb = callback(slot, &entry, req)?;
                let handle = slot.clock.schedule(at.into(), cb).map_err(|e| escaped(&slot.book, e))?;
                lock(&slot.book).handles.insert(entry, handle);
            }
            "schedule_periodic" => {
                let entry = new_entry(slot, req)?;
                let period = wire::uint(req, "period_ns")?;
                let phase = wire::uint_or_zero(req, "phase_ns")?;
                let cb = callback(slot, &entry, req)?;
                let handle =
                    slot.clock.schedule_periodic(period, phase, cb).map_err(|e| escaped(&slot.book, e))?;
                lock(&slot.book).handles.insert(entry, handle);
            }
            "schedule_rate" => {
                let schedule_rate = rate.ok_or_else(|| unsupported(&self.backend, "rate entries"))?;
                let entry = new_entry(slot, req)?;
                let (num, den) = rate_hz(req)?;
                let phase = wire::uint_or_zero(req, "phase_ns")?;
                let cb = callback(slot, &entry, req)?;
                let handle = schedule_rate(&mut slot.clock, num, den, phase, cb)
                    .map_err(|e| escaped(&slot.book, e))?;
                lock(&slot.book).handles.insert(entry, handle);
            }
            "cancel" => {
                let handle = known_entry(slot, req)?;
                slot.clock.cancel(&handle);
            }
            "advance" => return advance(slot, peek, req),
            "stats" => {
                let stats = stats.ok_or_else(|| unsupported(&self.backend, "entry statistics"))?;
                let handle = known_entry(slot, req)?;
                let s = stats(&slot.clock, &handle);
                reply.insert("fired".into(), s.fired.to_string().into());
                reply.insert("skipped".into(), s.skipped.to_string().into());
                reply.insert("overruns".into(), s.overruns.to_string().into());
            }
            "step_ns" => {
                reply.insert("step_ns".into(), slot.clock.step_ns().to_string().into());
            }
            "draw" => {
                let draw = draw.ok_or_else(|| unsupported(&self.backend, "random streams"))?;
                let path = labels(req)?;
                let n = wire::uint(req, "n")?;
                if n > MAX_DRAW {
                    return Err(Refusal::value_error(format!(
                        "n = {n} is more than {MAX_DRAW} values in one draw; draw in smaller batches"
                    )));
                }
                let values: Vec<Value> =
                    draw(&mut slot.clock, &path, n as usize).iter().map(|v| v.to_string().into()).collect();
                reply.insert("values".into(), Value::Array(values));
            }
            _ => {} // observe
        }
        if CARRIERS.contains(&op) {
            carry(&slot.book, &mut reply);
        }
        observe(slot, peek, &mut reply);
        Ok(Value::Object(reply))
    }

    fn hello(&self, req: &Request) -> Result<Value, Refusal> {
        match req.get("protocol") {
            Some(Value::String(p)) if p == "1" => {}
            other => {
                return Err(Refusal::unsupported(format!(
                    "this driver speaks protocol \"1\" only, got {}",
                    wire::show(other)
                )))
            }
        }
        Ok(json!({"ok": true, "protocol": "1", "backend": self.backend, "features": self.features()}))
    }

    fn create(&mut self, req: &Request, id: &str) -> Result<Value, Refusal> {
        let seed = wire::seed(req)?;
        let clock = match req.get("start_ns") {
            None => (self.create)(&seed),
            Some(v) => {
                let create_at = self
                    .create_at
                    .as_mut()
                    .ok_or_else(|| unsupported(&self.backend, "a start time other than 0"))?;
                create_at(&seed, wire::uint_value(v, "start_ns")?)
            }
        };
        let mut slot = Slot { clock, book: Arc::new(Mutex::new(Book::new())) };
        let mut reply = Map::new();
        reply.insert("ok".into(), Value::Bool(true));
        observe(&mut slot, self.peek, &mut reply);
        self.clocks.insert(id.to_owned(), slot);
        Ok(Value::Object(reply))
    }
}

/// The ops whose reply carries the firings not yet reported, if there are any.
const CARRIERS: [&str; 4] = ["schedule", "schedule_periodic", "schedule_rate", "cancel"];

/// Put the firings and failures not yet reported into `reply` (a `schedule*` or `cancel`
/// reply), if there are any: a callback the clock ran inside that call, or on a thread of
/// its own since the last reply, shows where the suite sees it (docs/kits.md).
fn carry<H>(book: &SharedBook<H>, reply: &mut Map<String, Value>) {
    let mut book = lock(book);
    if book.fired.is_empty() && book.failures.is_empty() {
        return;
    }
    let fired: Vec<Value> = book.fired.drain(..).map(fired_json).collect();
    let failures: Vec<Value> = book.failures.drain(..).map(failure_json).collect();
    reply.insert("fired".into(), Value::Array(fired));
    reply.insert("failures".into(), Value::Array(failures));
}

fn failure_json(f: crate::clock::Failure) -> Value {
    json!({"entry": &*f.entry, "at_ns": f.at_ns.to_string(), "message": f.message})
}

/// A clock's error: if a callback failed with it (a clock that runs callbacks inside
/// `schedule` and lets their error out), it is no failure the clock isolated.
fn escaped<H>(book: &SharedBook<H>, e: crate::ClockError) -> crate::ClockError {
    let mut book = lock(book);
    if let Some(i) = book.failures.iter().rposition(|f| f.message == e.message) {
        book.failures.remove(i);
    }
    e
}

fn refusal(r: Refusal) -> Value {
    json!({"ok": false, "error": r.error, "message": r.message})
}

fn unsupported(backend: &str, what: &str) -> Refusal {
    Refusal::unsupported(format!("{backend} has no {what}"))
}

/// The observation (C-WIRE-3): `now_ns`, `next_event_ns` (feature `peek`), `stored`.
fn observe<C: Clock>(slot: &mut Slot<C>, peek: Option<PeekFn<C>>, reply: &mut Map<String, Value>) {
    reply.insert("now_ns".into(), slot.clock.now().to_string().into());
    if let Some(next_event) = peek {
        let next = next_event(&mut slot.clock).map_or(Value::Null, |t| t.to_string().into());
        reply.insert("next_event_ns".into(), next);
    }
    reply.insert("stored".into(), slot.clock.stored().to_string().into());
}

/// A new entry id: non-empty, without `.`, never used by this clock (C-WIRE-3).
fn new_entry<C: Clock>(slot: &Slot<C>, req: &Request) -> Result<Arc<str>, Refusal> {
    let id = wire::string(req, "entry")?;
    let shown: String = id.chars().take(60).collect();
    if id.is_empty() || id.contains('.') {
        return Err(Refusal::bad_request(format!("entry id {shown:?} must be non-empty without '.'")));
    }
    if lock(&slot.book).handles.contains_key(id) {
        return Err(Refusal::bad_request(format!("entry id {shown:?} is already used by this clock")));
    }
    Ok(id.into())
}

fn known_entry<C: Clock>(slot: &Slot<C>, req: &Request) -> Result<C::Handle, Refusal> {
    let id = wire::string(req, "entry")?;
    lock(&slot.book).handles.get(id).cloned().ok_or_else(|| {
        Refusal::bad_request(format!("unknown entry {:?}", id.chars().take(60).collect::<String>()))
    })
}

fn callback<C: Clock>(
    slot: &Slot<C>,
    entry: &Arc<str>,
    req: &Request,
) -> Result<Callback<C::Handle>, Refusal> {
    let actions = wire::actions(req.get("on_fire"), 0)?;
    Ok(Callback::new(entry.clone(), actions, slot.book.clone()))
}

fn rate_hz(req: &Request) -> Result<(u64, u64), Refusal> {
    match req.get("rate_hz") {
        None => Err(Refusal::bad_request("missing field rate_hz")),
        Some(Value::Array(parts)) if parts.len() == 2 => Ok((
            wire::uint_value(&parts[0], "rate_hz numerator")?,
            wire::uint_value(&parts[1], "rate_hz denominator")?,
        )),
        Some(other) => Err(Refusal::type_error(format!(
            "rate_hz must be a list [NUM, DEN] of two decimal strings, got {}",
            wire::show(Some(other))
        ))),
    }
}

/// The normalised label path of a `draw` (C-RNG-3): `TypeError` for a label that is not
/// a string, `ValueError` for a malformed one.
fn labels(req: &Request) -> Result<String, Refusal> {
    let list = match req.get("labels") {
        None => return Err(Refusal::bad_request("missing field labels")),
        Some(Value::Array(list)) => list,
        Some(other) => {
            return Err(Refusal::type_error(format!(
                "labels must be a list of strings, got {}",
                wire::show(Some(other))
            )))
        }
    };
    let mut path = String::from("/");
    for label in list {
        let Value::String(label) = label else {
            return Err(Refusal::type_error(format!(
                "label must be a string, got {}",
                wire::show(Some(label))
            )));
        };
        path = bits::join_label(&path, label)?;
    }
    Ok(path)
}

fn advance<C: Clock>(slot: &mut Slot<C>, peek: Option<PeekFn<C>>, req: &Request) -> Result<Value, Refusal> {
    let dt = wire::uint(req, "dt_ns")?;
    // Every firing and failure not yet reported (see `carry`).
    lock(&slot.book).halted = None;
    let result = slot.clock.advance(dt);
    let mut reply = Map::new();
    reply.insert("ok".into(), Value::Bool(result.is_ok()));
    match result {
        Ok(()) => {}
        Err(AdvanceError::Fault(Fault::Halt)) => {
            // C-ERR-2: the advance stopped at the halting callback.
            let halted = lock(&slot.book).halted.clone();
            let (entry, at) = halted.map_or((Value::Null, Value::Null), |(e, at)| {
                (Value::String(e.to_string()), at.to_string().into())
            });
            reply.insert("error".into(), "halted".into());
            reply.insert("entry".into(), entry);
            reply.insert("at_ns".into(), at);
        }
        Err(AdvanceError::Refused(e)) => {
            let book = lock(&slot.book);
            if book.fired.is_empty() && book.failures.is_empty() {
                return Err(e.into()); // a refused call: the plain error reply
            }
            let refusal = Refusal::from(e);
            reply.insert("error".into(), refusal.error.into());
            reply.insert("message".into(), refusal.message.into());
        }
        Err(AdvanceError::Fault(Fault::Raise(e))) => {
            // The clock let an ordinary callback error out of advance (not C-ERR-1): it is
            // the reply's error, not one of the failures the clock isolated.
            let refusal = Refusal::from(escaped(&slot.book, e));
            reply.insert("error".into(), refusal.error.into());
            reply.insert("message".into(), refusal.message.into());
        }
    }
    {
        let mut book = lock(&slot.book);
        let fired: Vec<Value> = book.fired.drain(..).map(fired_json).collect();
        let failures: Vec<Value> = book.failures.drain(..).map(failure_json).collect();
        reply.insert("fired".into(), Value::Array(fired));
        reply.insert("failures".into(), Value::Array(failures));
    }
    observe(slot, peek, &mut reply);
    Ok(Value::Object(reply))
}

fn fired_json(f: Fired) -> Value {
    let mut rec = json!({"entry": &*f.entry, "now_ns": f.now_ns.to_string()});
    for (key, value) in f.marks {
        rec[key] = value.into();
    }
    rec
}
