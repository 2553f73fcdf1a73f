package main

import (
	"math/big"
	"path/filepath"
	"testing"

	"simclock.example/driver"
	"simclock.example/driver/drivertest"
)

// The golden vectors (C-WIRE-7) of every clause the minimal clock implements; the cases
// that need peek, rate, stats or start_ns are not applicable.
func TestC_WIRE_7_golden_vectors_of_the_mandatory_clauses(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "simclock_conformance", "vectors", "v1")
	factory := func(seed *big.Int) (driver.Clock, error) {
		return &clock{Streams: driver.NewStreams(seed)}, nil
	}
	ran, skipped := drivertest.Vectors(t, dir, "simclock-go-minimal", factory)
	if ran+skipped != 162 || ran < 100 {
		t.Fatalf("%d golden vectors ran, %d not applicable", ran, skipped)
	}
	t.Logf("%d golden vectors ran, %d not applicable", ran, skipped)
}
