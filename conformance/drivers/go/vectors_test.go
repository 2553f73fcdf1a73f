package driver

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// vectorsDir is the suite's golden vectors, read from the repository by relative path.
var vectorsDir = filepath.Join("..", "..", "simclock_conformance", "vectors", "v1")

// vectorCase is one golden vector case (C-WIRE-7).
type vectorCase struct {
	ID       string   `json:"id"`
	Requires []string `json:"requires"`
	Steps    []struct {
		Request json.RawMessage `json:"request"`
		Reply   map[string]any  `json:"reply"`
	} `json:"steps"`
	Stages *struct {
		Seed             string    `json:"seed"`
		Path             string    `json:"path"`
		SpawnKey         [4]string `json:"spawn_key"`
		SeedSequenceSate [4]string `json:"seed_sequence_state"`
		PCG64State       struct {
			State string `json:"state"`
			Inc   string `json:"inc"`
		} `json:"pcg64_state"`
		Outputs []string `json:"outputs"`
	} `json:"stages"`
}

// readVectors is every case of the named vector files.
func readVectors(t *testing.T, names ...string) []vectorCase {
	t.Helper()
	var cases []vectorCase
	for _, name := range names {
		f, err := os.Open(filepath.Join(vectorsDir, name))
		if err != nil {
			t.Fatalf("the golden vectors: %v", err)
		}
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 16<<20)
		for s.Scan() {
			var c vectorCase
			if err := json.Unmarshal(s.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			cases = append(cases, c)
		}
		f.Close()
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("no golden vectors in %s", vectorsDir)
	}
	return cases
}
