package driver

// What an adapter of a Go clock library needs between the wire's nanoseconds and Go's
// time.Time / time.Duration: exact conversions both ways, the far-time checks a Duration
// (an int64) imposes, and the first point of a periodic grid. Standard library only.

import (
	"math"
	"math/big"
	"time"
)

// Epoch is protocol time 0 for a Go clock: the Unix epoch.
var Epoch = time.Unix(0, 0).UTC()

// NsOf is the protocol time of t: nanoseconds since Epoch, read exactly from the seconds
// and nanoseconds t holds (time.Time.Sub would saturate at 2**63-1 ns).
func NsOf(t time.Time) Time {
	sec := t.Unix()
	ns := new(big.Int).Mul(big.NewInt(sec), big.NewInt(1e9))
	ns.Add(ns, big.NewInt(int64(t.Nanosecond())))
	v, ok := FromBig(ns)
	if !ok {
		panic("driver.NsOf: the time is before the epoch")
	}
	return v
}

// TimeOf is Epoch + ns as a time.Time (exact for every wire time).
func TimeOf(ns Time) time.Time {
	q, r := ns.Div64(1e9)
	sec, _ := q.Uint64() // Invariant: a wire time / 10**9 is below 2**35
	return time.Unix(int64(sec), int64(r)).UTC()
}

// GoDuration is d as a time.Duration, or a ValueError: a Duration is an int64 of
// nanoseconds, so nothing past 2**63-1 ns (about 292 years) can be given to the clock.
func GoDuration(name string, d Time) (time.Duration, error) {
	v, ok := d.Uint64()
	if !ok || v > math.MaxInt64 {
		return 0, Errorf(ValueError, "%s = %v ns is more than a time.Duration holds (2**63-1 ns)", name, d)
	}
	return time.Duration(v), nil
}

// FirstGridPoint is the first phase + k*period at or after now (C-PER-1), exactly: Go
// tickers have no phase, so an adapter starts one at this time. period must be > 0.
func FirstGridPoint(period, phase, now Time) Time {
	if !phase.Less(now) {
		return phase
	}
	p, _ := period.Uint64()
	k, r := now.Sub(phase).Div64(p)
	if r != 0 {
		k = k.Add(Ns(1))
	}
	return phase.Add(k.Mul64(p))
}

// Between is at - now as a time.Duration (negative for a past at), or a ValueError.
func Between(at, now Time) (time.Duration, error) {
	if at.Less(now) {
		d, err := GoDuration("now - at_ns", now.Sub(at))
		return -d, err
	}
	return GoDuration("at_ns - now", at.Sub(now))
}
