package driver

import (
	"math/big"
	"math/bits"
)

// MaxWire is the largest time the wire carries: 2**64-1 ns, about 584 years (C-TIME-4).
var MaxWire = Time{lo: ^uint64(0)}

// Time is a non-negative number of nanoseconds, exact up to 2**128-1.
//
// Times on the wire are at most 2**64-1 (C-WIRE-2), but a clock computes later ones:
// a child at now + delay, the next firing of a periodic after one near 2**64-1. Those
// must stay exact (C-TIME-4); such an entry simply never becomes due. Time is a value
// (comparable with ==, usable as a map key); the arithmetic panics where a result
// would not fit, which no sum or product of two wire values reaches.
type Time struct{ hi, lo uint64 }

// Ns is the time of ns nanoseconds.
func Ns(ns uint64) Time { return Time{lo: ns} }

// Uint64 is t as a uint64, and whether it fits (t <= 2**64-1).
func (t Time) Uint64() (uint64, bool) { return t.lo, t.hi == 0 }

// IsZero reports whether t is 0.
func (t Time) IsZero() bool { return t.hi == 0 && t.lo == 0 }

// Cmp is -1, 0 or +1 as t is less than, equal to or greater than u.
func (t Time) Cmp(u Time) int {
	switch {
	case t.hi < u.hi || (t.hi == u.hi && t.lo < u.lo):
		return -1
	case t == u:
		return 0
	}
	return 1
}

// Less reports whether t < u.
func (t Time) Less(u Time) bool { return t.Cmp(u) < 0 }

// Add is t + u; it panics past 2**128-1.
func (t Time) Add(u Time) Time {
	lo, carry := bits.Add64(t.lo, u.lo, 0)
	hi, over := bits.Add64(t.hi, u.hi, carry)
	if over != 0 {
		panic("driver.Time: t + u overflows 128 bits")
	}
	return Time{hi, lo}
}

// Sub is t - u; it panics when u > t (times are never negative).
func (t Time) Sub(u Time) Time {
	lo, borrow := bits.Sub64(t.lo, u.lo, 0)
	hi, under := bits.Sub64(t.hi, u.hi, borrow)
	if under != 0 {
		panic("driver.Time: t - u is negative")
	}
	return Time{hi, lo}
}

// Mul64 is t * m; it panics past 2**128-1.
func (t Time) Mul64(m uint64) Time {
	hiHi, hiLo := bits.Mul64(t.hi, m)
	loHi, lo := bits.Mul64(t.lo, m)
	hi, carry := bits.Add64(hiLo, loHi, 0)
	if hiHi != 0 || carry != 0 {
		panic("driver.Time: t * m overflows 128 bits")
	}
	return Time{hi, lo}
}

// Div64 is t / d and t % d; it panics when d is 0.
func (t Time) Div64(d uint64) (Time, uint64) {
	qHi, r := bits.Div64(0, t.hi, d)
	qLo, r := bits.Div64(r, t.lo, d)
	return Time{qHi, qLo}, r
}

// Big is t as a new big.Int.
func (t Time) Big() *big.Int {
	b := new(big.Int).SetUint64(t.hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(t.lo))
}

// FromBig is b as a Time, and whether it fits (0 <= b <= 2**128-1).
func FromBig(b *big.Int) (Time, bool) {
	if b.Sign() < 0 || b.BitLen() > 128 {
		return Time{}, false
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0))).Uint64()
	return Time{hi: new(big.Int).Rsh(b, 64).Uint64(), lo: lo}, true
}

// String is t in decimal, the wire's form.
func (t Time) String() string { return t.Big().String() }

var nsPerSecond = big.NewInt(1_000_000_000)

// RateOffset is ceil(k * 10**9 * den / num): the offset from the phase of firing k of
// a num/den Hz grid, computed exactly (C-X-RATE). It panics when num is 0.
func RateOffset(k Time, num, den uint64) Time {
	p := new(big.Int).Mul(k.Big(), nsPerSecond)
	p.Mul(p, new(big.Int).SetUint64(den))
	n := new(big.Int).SetUint64(num)
	q, r := new(big.Int).QuoRem(p, n, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	t, ok := FromBig(q)
	if !ok {
		panic("driver.RateOffset: the offset overflows 128 bits")
	}
	return t
}

// RateIndex is the first k whose RateOffset(k, num, den) >= elapsed: the first firing
// of a num/den Hz grid at or after phase + elapsed (C-X-RATE, C-PER-1).
func RateIndex(elapsed Time, num, den uint64) Time {
	if elapsed.IsZero() {
		return Time{}
	}
	// ceil(k*P/num) >= e  <=>  k*P > (e-1)*num  <=>  k = floor((e-1)*num / P) + 1, P = 10**9*den.
	e := elapsed.Sub(Ns(1)).Big()
	e.Mul(e, new(big.Int).SetUint64(num))
	p := new(big.Int).Mul(nsPerSecond, new(big.Int).SetUint64(den))
	e.Quo(e, p).Add(e, big.NewInt(1))
	t, _ := FromBig(e) // Invariant: elapsed < 2**128 and num/P <= 1 keep k below 2**128.
	return t
}
