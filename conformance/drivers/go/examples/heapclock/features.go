package main

import (
	"math/big"

	"simclock.example/driver"
)

// ScheduleRate is feature "rate" (C-X-RATE): firing k at phase + ceil(k*10**9*den/num).
func (c *Clock) ScheduleRate(num, den uint64, phase driver.Time, f driver.Callback) (driver.Handle, error) {
	if num == 0 || new(big.Int).SetUint64(num).Cmp(new(big.Int).Mul(big.NewInt(1e9), new(big.Int).SetUint64(den))) > 0 {
		return nil, driver.Errorf(driver.ValueError, "rate_hz must be > 0 and <= 1e9 Hz, got %d/%d", num, den)
	}
	var k driver.Time
	if phase.Less(c.now) {
		k = driver.RateIndex(c.now.Sub(phase), num, den)
	}
	next := func(k driver.Time) driver.Time { return phase.Add(driver.RateOffset(k, num, den)) }
	return c.repeat(k, next, f), nil
}

// Stats is feature "stats" (C-X-STATS): an event clock never skips nor overruns.
func (c *Clock) Stats(h driver.Handle) (driver.EntryStats, error) {
	return driver.EntryStats{Fired: h.(*entry).fired}, nil
}

// Start is feature "start_ns": the clock begins at start instead of 0 (C-TIME-1).
func (c *Clock) Start(start driver.Time) error {
	c.now = start
	return nil
}
