//! Write a driver for the simclock conformance suite (SPEC §18, the wire profile) by
//! implementing one trait.
//!
//! The kit speaks the protocol: JSON lines, integers as digit strings with their
//! `TypeError`/`ValueError` rules, `bad_request`/`unsupported`/`internal` replies, the
//! observation in every clock reply, the `on_fire` actions, and simclock's random streams
//! bit for bit ([`bits`]). The backend implements [`Clock`] (and, optionally, [`Peek`],
//! [`Rate`], [`Stats`], [`Streams`]); [`Driver`] serves it:
//!
//! ```text
//! Driver::new("my-clock", |seed| MyClock::new(seed)).peek().serve()
//! ```
//!
//! The kit adds no time semantics: it never reorders, rounds, delays or isolates anything,
//! so the verdict is the clock's own. `examples/heap_clock.rs` is a complete conforming
//! clock.

pub mod bits;
mod clock;
mod driver;
pub mod grid;
mod wire;

pub use bits::Seed;
pub use clock::{
    AdvanceError, Callback, Clock, ClockError, EntryStats, ErrorKind, Fault, Firing, Peek, Rate, Stats, Step,
    Streams,
};
pub use driver::Driver;
pub use grid::{PeriodGrid, RateGrid};
