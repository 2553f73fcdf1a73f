// Package driver is the simclock wire protocol (SPEC §18) for a clock written in Go.
//
// The conformance suite checks a clock through a driver: a program it starts and talks
// to over stdin/stdout, one JSON object per line. This package is that program's whole
// protocol side: JSON, the request loop, integers as digit strings, refusals, callbacks
// as data (on_fire), the firing records and simclock's random streams. A backend
// implements Clock (and any optional interface below) and calls Serve:
//
//	func main() { driver.Main("my-clock", func(seed *big.Int) (driver.Clock, error) { return New(), nil }) }
//
// The kit adds no time semantics: every firing, its order, its time, every refusal and
// every error isolation is the clock's; the kit only translates and records.
package driver

import "math/big"

// Callback is what a clock calls when an entry fires. It returns an ordinary error when
// it fails (the clock isolates it: C-ERR-1) and panics with a value the clock must let
// through when it halts the run (the Go form of a BaseException: C-ERR-2).
type Callback func() error

// Handle is whatever a clock returns from a schedule call, handed back to Cancel and Stats.
type Handle any

// Clock is the interface a backend implements: a deterministic simulation clock (SPEC §1).
//
// Times are exact (Time). A refusal is an *Error from Errorf (TypeError, ValueError,
// RuntimeError) and must change nothing (C-WIRE-5).
type Clock interface {
	// Now is the current time (C-TIME-1, C-TIME-2); during a callback, the time of the
	// entry that fires (C-ADV-2).
	Now() Time
	// Schedule calls f once at time at (C-SCH-1: ValueError for at < Now(); at == Now()
	// fires at the next Advance). Equal times fire in the order they were scheduled
	// (C-TIE-1). at may exceed MaxWire for a child scheduled by a callback.
	Schedule(at Time, f Callback) (Handle, error)
	// SchedulePeriodic calls f at phase + k*period for every k whose time is >= Now()
	// (C-PER-1: ValueError for period 0), re-arming after f returns or fails (C-PER-2),
	// without drift (C-PER-3).
	SchedulePeriodic(period, phase Time, f Callback) (Handle, error)
	// Cancel stops an entry (C-CAN-1..4): at any time, from anywhere, repeatable, a
	// no-op once it fired. Returning an error is a defect the suite reports.
	Cancel(h Handle) error
	// Advance fires, in (time, schedule order), every entry due at or before Now()+dt,
	// entries scheduled by the callbacks included (C-ADV-1, C-ADV-3), then sets Now() to
	// Now()+dt. Called from inside a callback it is a RuntimeError (C-ADV-4); a time
	// past what the clock keeps is a ValueError (C-TIME-4). An error a callback returns
	// is isolated (C-ERR-1); a panic passes through (C-ERR-2).
	Advance(dt Time) error
}

// Factory makes a new clock from its root seed (any size: C-RNG-1).
type Factory func(seed *big.Int) (Clock, error)

// Peeker is feature "peek" (C-X-PEEK): the time of the earliest live entry, if any.
type Peeker interface {
	NextEvent() (at Time, ok bool)
}

// RateScheduler is feature "rate" (C-X-RATE): f at phase + ceil(k * 10**9 * den / num)
// for num/den Hz (RateOffset computes it exactly). num == 0 or a rate above 10**9 Hz is
// a ValueError; the kit refuses den == 0 itself.
type RateScheduler interface {
	ScheduleRate(num, den uint64, phase Time, f Callback) (Handle, error)
}

// EntryStats is one entry's firing counts (C-X-STATS).
type EntryStats struct{ Fired, Skipped, Overruns uint64 }

// StatsReporter is feature "stats" (C-X-STATS).
type StatsReporter interface {
	Stats(h Handle) (EntryStats, error)
}

// Starter is feature "start_ns": Start is called once on a new clock, before any other
// call, to set its start time (C-TIME-1).
type Starter interface {
	Start(at Time) error
}

// Streamer gives the clock's random streams (C-RNG-1..4): Stream is the stream of the
// label path labels, from its first output. The kit keeps each stream by its normalised
// path (StreamPath) and draws it on. A malformed label must be refused with ValueError
// (C-RNG-3): the kit asks the clock even then. Embed Streams for simclock's own streams;
// feature "bits" is declared when the clock's streams are those (C-X-BITS).
type Streamer interface {
	Stream(labels []string) (Source, error)
}

// Sizer is the count of entries the clock holds, tombstones of cancelled ones included
// (the observation's "stored", C-CAN-4). Without it the kit reports the live entries:
// scheduled, not cancelled, a one-shot not yet fired.
type Sizer interface {
	Stored() uint64
}

// Stepper is the clock's step (a grid clock's resolution); without it step_ns is 1, a
// pure event clock (C-STEP-1).
type Stepper interface {
	StepNs() uint64
}

// Settler is for a clock whose callbacks run on other goroutines: Settle returns once
// the callbacks the clock has started have returned, as a test waits for them after
// advancing a fake clock. The kit calls it after every call into the clock.
type Settler interface {
	Settle()
}
