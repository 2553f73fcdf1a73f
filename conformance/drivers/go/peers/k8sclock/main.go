// Command k8sclock is a simclock driver for k8s.io/utils/clock/testing's FakeClock,
// mapped as a user of that library writes a test:
//
//   - schedule(at) is AfterFunc(at - now, f); a past at is a negative duration;
//   - schedule_periodic is AfterFunc to the first grid point (tickers have no phase);
//     once it has fired, NewTicker(period), whose channel is read once after every
//     call (a tick calls f);
//   - cancel is Stop on the timer (the ticker's Stop does nothing, so a cancelled
//     ticker's channel is no longer read); advance is Step(dt); stored is Waiters().
//
// Step calls each due AfterFunc callback itself, on the caller's goroutine, while it
// holds the clock's write lock. A callback that calls the clock (Now, AfterFunc, Stop,
// Step) would wait for that lock for ever; the adapter answers those calls with an
// error of kind "Deadlock" instead of hanging (never RuntimeError, so no clause passes
// by it), and during Step a callback reads the time Step sends on its timer's channel.
package main

import (
	"math/big"
	"sync"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"simclock.example/driver"
)

type ticker struct {
	period    driver.Time
	tk        clock.Ticker
	f         driver.Callback
	first     clock.Timer
	fired     bool // the first grid point fired: start the ticker after Step returns
	cancelled bool
}

type fake struct {
	fc       *clocktesting.FakeClock
	mu       sync.Mutex
	inStep   bool
	stepTime driver.Time // the time on the channel of the timer firing now
	tickers  []*ticker
}

func deadlock(call string) error {
	return driver.Errorf("Deadlock", "%s from a callback waits for ever: FakeClock.Step holds the clock's lock while it calls the callbacks", call)
}

func (c *fake) Now() driver.Time {
	if c.inStep {
		return c.stepTime
	}
	return driver.NsOf(c.fc.Now())
}

func (c *fake) Stored() uint64 { return uint64(c.fc.Waiters()) }

func (c *fake) afterFunc(at driver.Time, f func()) (clock.Timer, error) {
	if c.inStep {
		return nil, deadlock("AfterFunc")
	}
	d, err := driver.Between(at, c.Now())
	if err != nil {
		return nil, err
	}
	var t clock.Timer
	t = c.fc.AfterFunc(d, func() {
		select {
		case sent := <-t.C(): // what Step sent just before calling f
			c.stepTime = driver.NsOf(sent)
		default:
		}
		f()
	})
	return t, nil
}

func (c *fake) Schedule(at driver.Time, f driver.Callback) (driver.Handle, error) {
	return c.afterFunc(at, func() { _ = f() })
}

func (c *fake) SchedulePeriodic(period, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	if _, err := driver.GoDuration("period_ns", period); err != nil {
		return nil, err
	}
	if period.IsZero() {
		return nil, driver.Errorf(driver.ValueError, "period_ns must be > 0, got 0")
	}
	tk := &ticker{period: period, f: f}
	first, err := c.afterFunc(driver.FirstGridPoint(period, phase, c.Now()), func() {
		tk.fired = true
		_ = f()
	})
	if err != nil {
		return nil, err
	}
	tk.first = first
	c.tickers = append(c.tickers, tk)
	return tk, nil
}

func (c *fake) Cancel(h driver.Handle) error {
	if c.inStep {
		return deadlock("Stop")
	}
	switch h := h.(type) {
	case clock.Timer:
		h.Stop()
	case *ticker:
		h.cancelled = true
		h.first.Stop()
		if h.tk != nil {
			h.tk.Stop()
		}
	}
	return nil
}

func (c *fake) Advance(dt driver.Time) error {
	if c.inStep {
		return deadlock("Step")
	}
	d, err := driver.GoDuration("dt_ns", dt)
	if err != nil {
		return err
	}
	c.inStep = true
	defer func() { c.inStep = false }()
	c.fc.Step(d)
	return nil
}

// Settle starts the tickers whose first firing happened and reads each live ticker's
// channel once (a tick calls f), as a test does after Step.
func (c *fake) Settle() {
	for _, tk := range c.tickers {
		if tk.cancelled {
			continue
		}
		if tk.tk == nil {
			if tk.fired {
				p, _ := driver.GoDuration("period_ns", tk.period)
				tk.tk = c.fc.NewTicker(p)
			}
			continue
		}
		select {
		case <-tk.tk.C():
			_ = tk.f()
		default:
		}
	}
}

func main() {
	driver.Main("k8s.io/utils/clock/testing FakeClock (k8s.io/utils v0.0.0-20261023123148-ca04ba58ecab)", func(seed *big.Int) (driver.Clock, error) {
		return &fake{fc: clocktesting.NewFakeClock(driver.Epoch)}, nil
	})
}
