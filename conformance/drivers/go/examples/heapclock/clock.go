package main

import (
	"container/heap"

	"simclock.example/driver"
)

// entry is one scheduled callback; a repeating one carries its grid (next).
type entry struct {
	at        driver.Time
	seq       uint64
	f         driver.Callback
	next      func(k driver.Time) driver.Time // nil for a one-shot; else the time of firing k
	k         driver.Time
	cancelled bool
	fired     uint64
	index     int // in queue; -1 once popped
}

// Clock is a binary heap of entries keyed (at, seq): seq is taken at every push, so equal
// times fire in push order (C-TIE-1) and a re-armed periodic goes after those already
// waiting (C-PER-2). Cancelled entries stay as tombstones until they reach the top or
// outnumber the live ones (C-CAN-4).
type Clock struct {
	now     driver.Time
	seq     uint64
	queue   queue
	dead    int // Invariant: the number of cancelled entries still in queue
	running bool
}

func (c *Clock) Now() driver.Time { return c.now }

func (c *Clock) push(e *entry, at driver.Time) {
	e.at, e.seq = at, c.seq
	c.seq++
	heap.Push(&c.queue, e)
}

func (c *Clock) Schedule(at driver.Time, f driver.Callback) (driver.Handle, error) {
	if at.Less(c.now) {
		return nil, driver.Errorf(driver.ValueError, "at_ns=%v is before now (%v ns)", at, c.now)
	}
	e := &entry{f: f}
	c.push(e, at)
	return e, nil
}

func (c *Clock) SchedulePeriodic(period, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	p, _ := period.Uint64() // Invariant: wire values fit 64 bits
	if p == 0 {
		return nil, driver.Errorf(driver.ValueError, "period_ns must be > 0, got 0")
	}
	var k driver.Time // the first grid point at or after now (C-PER-1)
	if phase.Less(c.now) {
		var r uint64
		if k, r = c.now.Sub(phase).Div64(p); r != 0 {
			k = k.Add(driver.Ns(1))
		}
	}
	return c.repeat(k, func(k driver.Time) driver.Time { return phase.Add(k.Mul64(p)) }, f), nil
}

func (c *Clock) repeat(k driver.Time, next func(driver.Time) driver.Time, f driver.Callback) *entry {
	e := &entry{f: f, next: next, k: k}
	c.push(e, next(k))
	return e
}

func (c *Clock) Cancel(h driver.Handle) error {
	// C-CAN-1..3: never fails, repeatable; an entry out of the queue (fired, or running)
	// is only marked, so a running periodic is not re-armed.
	if e := h.(*entry); !e.cancelled {
		e.cancelled = true
		if e.index >= 0 {
			c.dead++
			c.compact()
		}
	}
	return nil
}
