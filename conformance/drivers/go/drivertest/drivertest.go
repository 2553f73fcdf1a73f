// Package drivertest replays simclock's golden vectors (C-WIRE-7) against a backend
// from go test, without Python: every case whose features the backend declares, request
// by request, compared as the suite compares them.
//
//	func TestGoldenVectors(t *testing.T) {
//		drivertest.Vectors(t, "path/to/simclock/conformance/simclock_conformance/vectors/v1", "my-clock", newClock)
//	}
package drivertest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"simclock.example/driver"
)

type vectorCase struct {
	ID       string   `json:"id"`
	Requires []string `json:"requires"`
	Steps    []struct {
		Request json.RawMessage `json:"request"`
		Reply   map[string]any  `json:"reply"`
		Accept  []string        `json:"accept"`
	} `json:"steps"`
}

// Vectors replays every *.jsonl file under dir (regressions included) through a fresh
// driver per case, and returns how many cases ran and how many were not applicable.
// A difference fails t with the case, the request and both values.
func Vectors(t testing.TB, dir, backend string, factory driver.Factory) (ran, skipped int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	files = append(files, more...)
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no golden vector files (*.jsonl) in %s", dir)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 64<<20)
		for s.Scan() {
			var c vectorCase
			if err := json.Unmarshal(s.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			d, err := driver.New(backend, factory)
			if err != nil {
				t.Fatal(err)
			}
			if !subset(c.Requires, d.Features()) {
				skipped++
				continue
			}
			ran++
			replay(t, d, c)
		}
		f.Close()
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return ran, skipped
}

func replay(t testing.TB, d *driver.Driver, c vectorCase) {
	t.Helper()
	peek := subset([]string{"peek"}, d.Features())
	for i, step := range c.Steps {
		var got map[string]any
		if err := json.Unmarshal(d.Handle(step.Request), &got); err != nil {
			t.Fatalf("%s step %d: the reply is not JSON: %v", c.ID, i, err)
		}
		if got["ok"] == false && contains(step.Accept, got["error"]) {
			return // a clean refusal past 2**64-1 ends the case (C-TIME-4)
		}
		if diff := difference(got, step.Reply, peek); diff != "" {
			t.Fatalf("case %s, request %d: %s\n  %s", c.ID, i+1, step.Request, diff)
		}
	}
}

func subset(want, have []string) bool {
	for _, w := range want {
		if !contains(have, w) {
			return false
		}
	}
	return true
}

func contains(list []string, v any) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// difference is how got differs from want: the top-level message is the backend's own,
// next_event_ns needs feature peek, stored is bounded by C-CAN-4 (3*live + 1024), and
// fields want does not have may be added.
func difference(got, want map[string]any, peek bool) string {
	for key, w := range want {
		g, present := got[key]
		switch {
		case key == "message" || key == "next_event_ns" && !peek:
		case key == "stored":
			live, _ := strconv.Atoi(w.(string))
			held, err := strconv.Atoi(toString(g))
			if err != nil || held > 3*live+1024 {
				return "stored: " + toString(g) + " held for " + w.(string) + " live"
			}
		case !present || !reflect.DeepEqual(g, w):
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			return key + ": expected " + string(wb) + ", observed " + string(gb)
		}
	}
	return ""
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
