// Command clockwork is a simclock driver for github.com/jonboulle/clockwork's FakeClock,
// mapped as a user of that library writes a test:
//
//   - schedule(at) is AfterFunc(at - now, f); a past at is a negative duration;
//   - schedule_periodic is AfterFunc to the first grid point (tickers have no phase),
//     whose callback starts NewTicker(period); every tick read from the ticker's
//     channel calls f;
//   - cancel is Stop on the timer and the ticker; advance is Advance(dt);
//   - the callbacks AfterFunc starts run on their own goroutines, so after every call
//     the adapter waits, as a test does, for the callback of every timer due by now
//     (Settle), then reads each ticker's channel once without blocking. It never
//     orders callbacks: the records are in the order the goroutines ran.
//
// A callback's error cannot reach the library (AfterFunc takes a func()), and a halt is
// a panic on the callback's goroutine, which ends the process.
package main

import (
	"math/big"
	"sync"

	"github.com/jonboulle/clockwork"
	"simclock.example/driver"
)

type timer struct {
	t       clockwork.Timer
	due     driver.Time
	stopped bool
	done    chan struct{} // closed when the callback has returned
}

type ticker struct {
	first     *timer
	tk        clockwork.Ticker
	f         driver.Callback
	cancelled bool
}

type clock struct {
	fc      *clockwork.FakeClock
	mu      sync.Mutex
	timers  []*timer
	tickers []*ticker
}

func (c *clock) Now() driver.Time { return driver.NsOf(c.fc.Now()) }

func (c *clock) Start(at driver.Time) error {
	c.fc = clockwork.NewFakeClockAt(driver.TimeOf(at))
	return nil
}

func (c *clock) afterFunc(at driver.Time, f func()) (*timer, error) {
	d, err := driver.Between(at, c.Now())
	if err != nil {
		return nil, err
	}
	t := &timer{due: at, done: make(chan struct{})}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.t = c.fc.AfterFunc(d, func() {
		defer close(t.done)
		f()
	})
	return t, nil
}

func (c *clock) Schedule(at driver.Time, f driver.Callback) (driver.Handle, error) {
	t, err := c.afterFunc(at, func() { _ = f() })
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (c *clock) SchedulePeriodic(period, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	p, err := driver.GoDuration("period_ns", period)
	if err != nil {
		return nil, err
	}
	if p <= 0 {
		// NewTicker panics on a non-positive interval; a user checks first.
		return nil, driver.Errorf(driver.ValueError, "period_ns must be > 0, got 0")
	}
	tk := &ticker{f: f}
	first, err := c.afterFunc(driver.FirstGridPoint(period, phase, c.Now()), func() {
		defer func() {
			c.mu.Lock()
			if !tk.cancelled {
				tk.tk = c.fc.NewTicker(p)
			}
			c.mu.Unlock()
		}()
		_ = f()
	})
	if err != nil {
		return nil, err
	}
	tk.first = first
	c.mu.Lock()
	c.tickers = append(c.tickers, tk)
	c.mu.Unlock()
	return tk, nil
}

func (c *clock) Cancel(h driver.Handle) error {
	switch h := h.(type) {
	case *timer:
		if h.t.Stop() {
			c.mu.Lock()
			h.stopped = true
			c.mu.Unlock()
		}
	case *ticker:
		c.mu.Lock()
		h.cancelled = true
		tk := h.tk
		c.mu.Unlock()
		if h.first.t.Stop() {
			c.mu.Lock()
			h.first.stopped = true
			c.mu.Unlock()
		}
		if tk != nil {
			tk.Stop()
		}
	}
	return nil
}

func (c *clock) Advance(dt driver.Time) error {
	d, err := driver.GoDuration("dt_ns", dt)
	if err != nil {
		return err
	}
	c.fc.Advance(d)
	return nil
}

// Settle waits for the callbacks of the timers due by now, then reads every live
// ticker's channel once, until neither gives anything more.
func (c *clock) Settle() {
	for {
		progressed := false
		now := c.Now()
		c.mu.Lock()
		timers := append([]*timer(nil), c.timers...)
		tickers := append([]*ticker(nil), c.tickers...)
		c.mu.Unlock()
		for _, t := range timers {
			c.mu.Lock()
			waiting := !t.stopped && !now.Less(t.due)
			c.mu.Unlock()
			if !waiting {
				continue
			}
			select {
			case <-t.done:
			default:
				<-t.done
				progressed = true
			}
		}
		kept := timers[:0]
		for _, t := range timers {
			select {
			case <-t.done:
			default:
				if !t.stopped {
					kept = append(kept, t)
				}
			}
		}
		for _, tk := range tickers {
			c.mu.Lock()
			ch := tk.tk
			live := !tk.cancelled
			c.mu.Unlock()
			if ch == nil || !live {
				continue
			}
			select {
			case <-ch.Chan():
				_ = tk.f()
				progressed = true
			default:
			}
		}
		c.mu.Lock()
		// Timers finished or stopped leave the list; ones created meanwhile stay.
		c.timers = append(kept, c.timers[len(timers):]...)
		c.mu.Unlock()
		if !progressed {
			return
		}
	}
}

func main() {
	driver.Main("github.com/jonboulle/clockwork@v0.5.0 FakeClock", func(seed *big.Int) (driver.Clock, error) {
		return &clock{fc: clockwork.NewFakeClockAt(driver.Epoch)}, nil
	})
}
