package main

import (
	"path/filepath"
	"testing"

	"simclock.example/driver"
	"simclock.example/driver/drivertest"
)

func newDriver(t *testing.T) *driver.Driver {
	t.Helper()
	d, err := driver.New("simclock-go-heap", newClock)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The worked transcript of conformance/drivers/README.md, reply for reply.
func TestC_WIRE_3_the_worked_transcript(t *testing.T) {
	d := newDriver(t)
	steps := []string{
		`{"op":"hello","protocol":"1"}`,
		`{"ok":true,"protocol":"1","backend":"simclock-go-heap","features":["peek","rate","stats","start_ns","bits"]}`,
		`{"op":"create","clock":"c","seed":"42"}`,
		`{"ok":true,"now_ns":"0","next_event_ns":null,"stored":"0"}`,
		`{"op":"schedule","clock":"c","entry":"a","at_ns":"5","on_fire":[{"do":"schedule","delay_ns":"0"},{"do":"advance","dt_ns":"1"}]}`,
		`{"ok":true,"now_ns":"0","next_event_ns":"5","stored":"1"}`,
		`{"op":"schedule","clock":"c","entry":"b","at_ns":"5","on_fire":[{"do":"raise","message":"sensor lost"}]}`,
		`{"ok":true,"now_ns":"0","next_event_ns":"5","stored":"2"}`,
		`{"op":"schedule_rate","clock":"c","entry":"cam","rate_hz":["30","1"],"phase_ns":"0","on_fire":[]}`,
		`{"ok":true,"now_ns":"0","next_event_ns":"0","stored":"3"}`,
		`{"op":"advance","clock":"c","dt_ns":"40000000"}`,
		`{"ok":true,"fired":[{"entry":"cam","now_ns":"0"},{"entry":"a","now_ns":"5","nested":"RuntimeError"},{"entry":"b","now_ns":"5"},{"entry":"a.0","now_ns":"5"},{"entry":"cam","now_ns":"33333334"}],"failures":[{"entry":"b","at_ns":"5","message":"sensor lost"}],"now_ns":"40000000","next_event_ns":"66666667","stored":"1"}`,
		`{"op":"cancel","clock":"c","entry":"cam"}`,
		`{"ok":true,"now_ns":"40000000","next_event_ns":null,"stored":"0"}`,
		`{"op":"stats","clock":"c","entry":"cam"}`,
		`{"ok":true,"fired":"2","skipped":"0","overruns":"0","now_ns":"40000000","next_event_ns":null,"stored":"0"}`,
		`{"op":"draw","clock":"c","labels":["sensors","imu0"],"n":"2"}`,
		`{"ok":true,"values":["4798505500344436202","6344606573098996892"],"now_ns":"40000000","next_event_ns":null,"stored":"0"}`,
	}
	for i := 0; i < len(steps); i += 2 {
		if got := string(d.Handle([]byte(steps[i]))); got != steps[i+1] {
			t.Fatalf("request %s\n got: %s\nwant: %s", steps[i], got, steps[i+1])
		}
	}
}

func TestC_TIME_4_far_children_and_grids_stay_exact(t *testing.T) {
	// A child past 2**64-1 is kept (it never becomes due), a periodic firing at 2**64-1
	// re-arms past it, and an advance past 2**64-1 is refused with nothing changed.
	d := newDriver(t)
	for _, step := range [][2]string{
		{`{"op":"create","clock":"c","seed":"0","start_ns":"18446744073709551610"}`,
			`{"ok":true,"now_ns":"18446744073709551610","next_event_ns":null,"stored":"0"}`},
		{`{"op":"schedule_periodic","clock":"c","entry":"p","period_ns":"5","phase_ns":"0","on_fire":[{"do":"schedule","delay_ns":"18446744073709551615"}]}`,
			`{"ok":true,"now_ns":"18446744073709551610","next_event_ns":"18446744073709551610","stored":"1"}`},
		{`{"op":"advance","clock":"c","dt_ns":"5"}`,
			`{"ok":true,"fired":[{"entry":"p","now_ns":"18446744073709551610"},{"entry":"p","now_ns":"18446744073709551615"}],"failures":[],"now_ns":"18446744073709551615","next_event_ns":"18446744073709551620","stored":"3"}`},
		{`{"op":"advance","clock":"c","dt_ns":"1"}`,
			`{"ok":false,"error":"ValueError","message":"ValueError: advance(1) would take now past 2**64-1 ns","now_ns":"18446744073709551615","next_event_ns":"18446744073709551620","stored":"3"}`},
		{`{"op":"cancel","clock":"c","entry":"p.1"}`,
			`{"ok":true,"now_ns":"18446744073709551615","next_event_ns":"18446744073709551620","stored":"3"}`},
	} {
		if got := string(d.Handle([]byte(step[0]))); got != step[1] {
			t.Fatalf("request %s\n got: %s\nwant: %s", step[0], got, step[1])
		}
	}
}

// Every golden vector (C-WIRE-7), as the suite compares them.
func TestC_WIRE_7_every_golden_vector_replays(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "simclock_conformance", "vectors", "v1")
	ran, skipped := drivertest.Vectors(t, dir, "simclock-go-heap", newClock)
	if ran != 162 || skipped != 0 {
		t.Fatalf("%d golden vectors ran, %d not applicable; want 162 and 0", ran, skipped)
	}
}
