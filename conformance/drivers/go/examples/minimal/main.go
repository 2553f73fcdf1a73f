// Command minimal is the smallest complete backend on the kit: a sorted slice, the
// mandatory Clock methods and simclock's random streams. CONFORMING on every mandatory
// clause; peek, rate and stats are not implemented, so not applicable.
package main

import (
	"math/big"
	"slices"
	"sort"

	"simclock.example/driver"
)

type entry struct {
	at, period driver.Time // period zero: a one-shot
	f          driver.Callback
	cancelled  bool
}

type clock struct {
	driver.Streams
	now     driver.Time
	queue   []*entry // sorted by time; equal times in push order (C-TIE-1)
	running bool
}

func (c *clock) Now() driver.Time { return c.now }

func (c *clock) push(e *entry) *entry { // after every entry at or before e.at: FIFO ties, C-PER-2
	i := sort.Search(len(c.queue), func(i int) bool { return e.at.Less(c.queue[i].at) })
	c.queue = slices.Insert(c.queue, i, e)
	return e
}

func (c *clock) Schedule(at driver.Time, f driver.Callback) (driver.Handle, error) {
	if at.Less(c.now) {
		return nil, driver.Errorf(driver.ValueError, "at_ns=%v is before now (%v)", at, c.now)
	}
	return c.push(&entry{at: at, f: f}), nil
}

func (c *clock) SchedulePeriodic(period, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	p, _ := period.Uint64()
	if p == 0 {
		return nil, driver.Errorf(driver.ValueError, "period_ns must be > 0")
	}
	at := phase // the first grid point at or after now (C-PER-1)
	if phase.Less(c.now) {
		_, r := c.now.Sub(phase).Div64(p) // now - r is on the grid; one period on unless r == 0
		at = c.now.Sub(driver.Ns(r)).Add(driver.Ns(min(r, 1) * p))
	}
	return c.push(&entry{at: at, period: period, f: f}), nil
}

func (c *clock) Cancel(h driver.Handle) error {
	h.(*entry).cancelled = true // a running periodic is not re-armed (C-CAN-2)
	c.queue = slices.DeleteFunc(c.queue, func(q *entry) bool { return q == h })
	return nil
}

func (c *clock) Advance(dt driver.Time) error {
	if c.running {
		return driver.Errorf(driver.RuntimeError, "advance from inside a callback")
	}
	target := c.now.Add(dt)
	if driver.MaxWire.Less(target) {
		return driver.Errorf(driver.ValueError, "now would pass 2**64-1 ns")
	}
	c.running = true
	defer func() { c.running = false }()
	for len(c.queue) > 0 && !target.Less(c.queue[0].at) {
		e := c.queue[0]
		c.queue, c.now = c.queue[1:], e.at
		c.fire(e)
	}
	c.now = target
	return nil
}

func (c *clock) fire(e *entry) {
	defer func() { // a periodic is re-armed after its callback, even one that panics (C-PER-2)
		if e.at = e.at.Add(e.period); !e.period.IsZero() && !e.cancelled {
			c.push(e)
		}
	}()
	_ = e.f() // an error is isolated: the others still fire (C-ERR-1)
}

func main() {
	driver.Main("simclock-go-minimal", func(seed *big.Int) (driver.Clock, error) {
		return &clock{Streams: driver.NewStreams(seed)}, nil
	})
}
