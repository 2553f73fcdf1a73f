// Package peers holds what the adapters of Go fake clocks share: the mapping between
// the wire's nanoseconds and Go's time.Time / time.Duration.
package peers

import (
	"math"
	"math/big"
	"time"

	"simclock.example/driver"
)

// Epoch is protocol time 0 for a fake clock: the Unix epoch.
var Epoch = time.Unix(0, 0).UTC()

// NsOf is the protocol time of t: nanoseconds since Epoch, read exactly from the seconds
// and nanoseconds t holds (time.Time.Sub would saturate at 2**63-1 ns).
func NsOf(t time.Time) driver.Time {
	sec := t.Unix()
	ns := new(big.Int).Mul(big.NewInt(sec), big.NewInt(1e9))
	ns.Add(ns, big.NewInt(int64(t.Nanosecond())))
	v, ok := driver.FromBig(ns)
	if !ok {
		panic("peers: the fake clock is before the epoch")
	}
	return v
}

// TimeOf is Epoch + ns as a time.Time (exact for every wire time).
func TimeOf(ns driver.Time) time.Time {
	q, r := ns.Div64(1e9)
	sec, _ := q.Uint64() // Invariant: a wire time / 10**9 is below 2**35
	return time.Unix(int64(sec), int64(r)).UTC()
}

// Duration is d as a time.Duration, or a ValueError: a Duration is an int64 of
// nanoseconds, so nothing past 2**63-1 ns (about 292 years) can be given to the clock.
func Duration(name string, d driver.Time) (time.Duration, error) {
	v, ok := d.Uint64()
	if !ok || v > math.MaxInt64 {
		return 0, driver.Errorf(driver.ValueError, "%s = %v ns is more than a time.Duration holds (2**63-1 ns)", name, d)
	}
	return time.Duration(v), nil
}

// FirstGridPoint is the first phase + k*period at or after now (C-PER-1), computed
// exactly here: Go tickers have no phase, so the adapters start one at this time.
func FirstGridPoint(period, phase, now driver.Time) driver.Time {
	if !phase.Less(now) {
		return phase
	}
	p, _ := period.Uint64()
	k, r := now.Sub(phase).Div64(p)
	if r != 0 {
		k = k.Add(driver.Ns(1))
	}
	return phase.Add(k.Mul64(p))
}

// Between is at - now as a time.Duration (negative for a past at), or a ValueError.
func Between(at, now driver.Time) (time.Duration, error) {
	if at.Less(now) {
		d, err := Duration("now - at_ns", now.Sub(at))
		return -d, err
	}
	return Duration("at_ns - now", at.Sub(now))
}
