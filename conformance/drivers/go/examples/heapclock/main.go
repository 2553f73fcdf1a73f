// Command heapclock is the reference heap clock on the simclock Go driver kit: every
// feature (peek rate stats start_ns bits), CONFORMING (wire profile 1).
//
//	go build -o heapclock ./examples/heapclock
//	python -m simclock_conformance --driver -- ./heapclock
package main

import (
	"math/big"

	"simclock.example/driver"
)

// streamingClock is the heap clock with simclock's random streams (feature "bits").
type streamingClock struct {
	*Clock
	driver.Streams
}

func newClock(seed *big.Int) (driver.Clock, error) {
	return streamingClock{&Clock{}, driver.NewStreams(seed)}, nil
}

func main() { driver.Main("simclock-go-heap", newClock) }
