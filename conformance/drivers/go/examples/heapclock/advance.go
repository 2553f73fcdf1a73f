package main

import (
	"container/heap"

	"simclock.example/driver"
)

// Advance fires every live entry due by now+dt in (at, seq) order (C-ADV-1), each with
// now at its time (C-ADV-2), then sets now. A repeating entry is re-armed after its
// callback returns, fails or panics (C-PER-2), by a deferred call.
func (c *Clock) Advance(dt driver.Time) error {
	if c.running {
		return driver.Errorf(driver.RuntimeError, "advance from inside a callback")
	}
	target := c.now.Add(dt)
	if driver.MaxWire.Less(target) {
		return driver.Errorf(driver.ValueError, "advance(%v) would take now past 2**64-1 ns", dt)
	}
	c.running = true
	defer func() { c.running = false; c.compact() }()
	for len(c.queue) > 0 && !target.Less(c.queue[0].at) {
		e := heap.Pop(&c.queue).(*entry)
		if e.cancelled {
			c.dead--
			continue
		}
		c.now = e.at
		c.fire(e)
	}
	c.now = target
	return nil
}

func (c *Clock) fire(e *entry) {
	e.fired++
	if e.next != nil {
		defer func() {
			if !e.cancelled {
				e.k = e.k.Add(driver.Ns(1))
				c.push(e, e.next(e.k))
			}
		}()
	}
	_ = e.f() // C-ERR-1: an error is the callback's own; the others still fire
}

// NextEvent is the earliest live entry (C-X-PEEK); tombstones at the top leave on the way.
func (c *Clock) NextEvent() (driver.Time, bool) {
	for len(c.queue) > 0 && c.queue[0].cancelled {
		heap.Pop(&c.queue)
		c.dead--
	}
	if len(c.queue) == 0 {
		return driver.Time{}, false
	}
	return c.queue[0].at, true
}

// Stored is the queue's length, tombstones included.
func (c *Clock) Stored() uint64 { return uint64(len(c.queue)) }

// compact rebuilds the queue without its tombstones once they outnumber the live
// entries by more than 64 (C-CAN-4: the bound is 2*live + 1024).
func (c *Clock) compact() {
	if c.dead <= len(c.queue)-c.dead+64 {
		return
	}
	live := c.queue[:0]
	for _, e := range c.queue {
		if e.cancelled {
			e.index = -1
		} else {
			e.index = len(live)
			live = append(live, e)
		}
	}
	c.queue, c.dead = live, 0
	heap.Init(&c.queue)
}

// queue is a container/heap of entries ordered by (at, seq).
type queue []*entry

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at.Less(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *queue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*q = old[:len(old)-1]
	return e
}
