// Command careless is the scripted careless clock of the kits' shared transcript
// (conformance/transcripts/careless.py is the reference, docs/kits.md the script): it
// breaks the contract on purpose so that every rule of "What a kit reports" is reached.
// Its replies to conformance/transcripts/careless.requests.jsonl must be those of
// careless.replies.jsonl, byte for byte.
package main

import (
	"math/big"

	"simclock.example/driver"
)

const horizon = 1000000

type entry struct {
	at, period, seq uint64
	f               driver.Callback
}

type clock struct {
	now, seq uint64
	depth    int
	pending  []*entry
}

func (c *clock) Now() driver.Time { return driver.Ns(c.now) }
func (c *clock) Stored() uint64   { return uint64(len(c.pending)) }

func (c *clock) push(e *entry) *entry {
	e.seq = c.seq
	c.seq++
	c.pending = append(c.pending, e)
	return e
}

func (c *clock) remove(e *entry) bool {
	for i, q := range c.pending {
		if q == e {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (c *clock) Schedule(t driver.Time, f driver.Callback) (driver.Handle, error) {
	at, ok := t.Uint64()
	switch {
	case at < c.now && ok:
		return nil, driver.Errorf(driver.ValueError, "at_ns %d is before now %d", at, c.now)
	case !ok || at > horizon:
		return nil, driver.Errorf(driver.ValueError, "at_ns %v is past the horizon %d", t, horizon)
	case at == 4242:
		return nil, driver.Errorf(driver.TypeError, "at_ns 4242 is unlucky")
	case at == c.now && c.depth == 0: // careless: fires inside schedule
		c.depth++
		defer func() { c.depth-- }()
		if err := f(); err != nil {
			return nil, err // a callback's error leaves schedule
		}
		return &entry{}, nil
	}
	return c.push(&entry{at: at, f: f}), nil
}

func (c *clock) SchedulePeriodic(period, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	p, _ := period.Uint64()
	first, _ := phase.Uint64()
	if p == 0 {
		return nil, driver.Errorf(driver.ValueError, "period_ns must be > 0")
	}
	if first < c.now {
		first += (c.now - first + p - 1) / p * p
	}
	return c.push(&entry{at: first, period: p, f: f}), nil
}

func (c *clock) Cancel(h driver.Handle) error {
	c.remove(h.(*entry))
	return nil
}

func (c *clock) Advance(d driver.Time) error {
	dt, _ := d.Uint64()
	if c.depth > 0 {
		switch {
		case dt == 13:
			return driver.Errorf("Deadlock", "a nested advance of 13 ns would deadlock")
		case dt > 10:
			return driver.Errorf(driver.RuntimeError, "advance from inside a callback")
		}
		return nil // careless: accepted and ignored
	}
	if dt == 666 {
		return driver.Errorf("Deadlock", "advance of 666 ns would deadlock")
	}
	target := c.now + dt
	for {
		var next *entry
		for _, e := range c.pending {
			if e.at <= target && (next == nil || e.at < next.at || (e.at == next.at && e.seq < next.seq)) {
				next = e
			}
		}
		if next == nil {
			break
		}
		c.remove(next)
		at := next.at
		c.now = at
		err, halt := c.run(next)
		if next.period > 0 { // the same entry, so that its handle still cancels it
			next.at += next.period
			c.push(next)
		}
		if halt != nil {
			panic(halt) // a halt always leaves advance (C-ERR-2)
		}
		if err != nil && at%2 == 1 {
			return err // careless: an error at an odd time leaves advance
		}
	}
	c.now = target
	return nil
}

// run calls e's callback, on a new goroutine at a multiple of 100 ns, and waits for it.
func (c *clock) run(e *entry) (err error, halt any) {
	c.depth++
	defer func() { c.depth-- }()
	call := func() {
		defer func() { halt = recover() }()
		err = e.f()
	}
	if e.at%100 != 0 {
		call()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	<-done
	return
}

func main() {
	driver.Main("careless:clock", func(*big.Int) (driver.Clock, error) { return &clock{}, nil })
}
