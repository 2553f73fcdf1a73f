package driver

import (
	"math"
	"testing"
	"time"
)

func TestC_TIME_4_wire_times_map_to_time_Time_exactly(t *testing.T) {
	for _, ns := range []Time{Ns(0), Ns(1), Ns(1<<53 + 1), Ns(math.MaxInt64), Ns(math.MaxInt64 + 1), MaxWire} {
		if got := NsOf(TimeOf(ns)); got != ns {
			t.Errorf("NsOf(TimeOf(%v)) = %v", ns, got)
		}
	}
	// Past 2**63-1 ns from the epoch, Sub saturates; NsOf does not.
	far := TimeOf(MaxWire)
	if far.Sub(Epoch) != time.Duration(math.MaxInt64) {
		t.Fatalf("time.Time.Sub no longer saturates: %v", far.Sub(Epoch))
	}
}

func TestC_TIME_4_durations_past_int64_are_a_ValueError(t *testing.T) {
	if d, err := GoDuration("dt_ns", Ns(math.MaxInt64)); err != nil || d != time.Duration(math.MaxInt64) {
		t.Fatalf("Duration(2**63-1) = %v, %v", d, err)
	}
	_, err := GoDuration("dt_ns", Ns(math.MaxInt64+1))
	if KindOf(err) != ValueError || err.Error() != "ValueError: dt_ns = 9223372036854775808 ns is more than a time.Duration holds (2**63-1 ns)" {
		t.Fatalf("Duration(2**63) error = %v", err)
	}
	if d, err := Between(Ns(3), Ns(10)); err != nil || d != -7 {
		t.Fatalf("Between(3, 10) = %v, %v; want -7ns", d, err)
	}
}

func TestC_PER_1_first_grid_point_at_or_after_now(t *testing.T) {
	for _, tc := range [][4]uint64{{15, 1, 0, 1}, {15, 1, 1, 1}, {15, 1, 2, 16}, {15, 1, 16, 16}, {15, 1, 17, 31}, {7, 100, 50, 100}} {
		got := FirstGridPoint(Ns(tc[0]), Ns(tc[1]), Ns(tc[2]))
		if got != Ns(tc[3]) {
			t.Errorf("period %d phase %d now %d: first %v, want %d", tc[0], tc[1], tc[2], got, tc[3])
		}
	}
}
