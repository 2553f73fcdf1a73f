package main

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"simclock.example/driver"
)

// The shared careless-clock transcript (docs/kits.md, "What a kit reports"): every reply
// byte for byte as the Python reference gives it.
func TestC_WIRE_4_C_WIRE_5_the_careless_transcript_byte_for_byte(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "transcripts")
	requests, err := os.ReadFile(filepath.Join(dir, "careless.requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	replies, err := os.ReadFile(filepath.Join(dir, "careless.replies.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := driver.New("careless:clock", func(*big.Int) (driver.Clock, error) { return &clock{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Split(bytes.TrimSuffix(replies, []byte("\n")), []byte("\n"))
	for i, line := range bytes.Split(bytes.TrimSuffix(requests, []byte("\n")), []byte("\n")) {
		if got := d.Handle(line); !bytes.Equal(got, want[i]) {
			t.Fatalf("request %d %s\n got: %s\nwant: %s", i+1, line, got, want[i])
		}
	}
}
