package driver

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"testing"
)

func TestC_X_BITS_blake2b_128_matches_reference_digests(t *testing.T) {
	// Reference digests: Python's hashlib.blake2b(data, digest_size=16); 128 and 256
	// bytes end on a full last block, 129 spills one byte into a second.
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{nil, "cae66941d9efbd404e4d88758ea67670"},
		{[]byte("abc"), "cf4ab791c62b8d2b2109c90275287816"},
		{data[:128], "a74787004ef589e31149183900d0294a"},
		{data[:129], "aaf1b0371f6d4ee49ee4fb5ddd9c49ef"},
		{data, "c2472c0ac37a8dbdb25f05ada0d82643"},
	} {
		got := blake2b16(tc.data)
		if hex.EncodeToString(got[:]) != tc.want {
			t.Errorf("blake2b16(%d bytes) = %x, want %s", len(tc.data), got, tc.want)
		}
	}
}

// Every stage of every streams vector: spawn key, SeedSequence state, PCG64 state, outputs.
func TestC_X_BITS_stages_of_the_golden_stream_vectors(t *testing.T) {
	cases := readVectors(t, "streams.jsonl")
	for _, c := range cases {
		st := c.Stages
		if st == nil {
			t.Fatalf("%s: no stages", c.ID)
		}
		seed, _ := new(big.Int).SetString(st.Seed, 10)
		key := SpawnKey(st.Path)
		for i, w := range st.SpawnKey {
			if strconv.FormatUint(uint64(key[i]), 10) != w {
				t.Fatalf("%s: spawn key %v, want %v", c.ID, key, st.SpawnKey)
			}
		}
		state := SeedSequenceState(seed, key)
		// generate_state(4, uint32) is the first two 64-bit words as little-endian halves.
		halves := [4]uint64{state[0] & 0xffffffff, state[0] >> 32, state[1] & 0xffffffff, state[1] >> 32}
		for i, w := range st.SeedSequenceSate {
			if strconv.FormatUint(halves[i], 10) != w {
				t.Fatalf("%s: seed sequence state %v, want %v", c.ID, halves, st.SeedSequenceSate)
			}
		}
		g := NewPCG64(state)
		sh, sl, ih, il := g.State()
		if got := (Time{sh, sl}).String(); got != st.PCG64State.State {
			t.Fatalf("%s: PCG64 state %s, want %s", c.ID, got, st.PCG64State.State)
		}
		if got := (Time{ih, il}).String(); got != st.PCG64State.Inc {
			t.Fatalf("%s: PCG64 inc %s, want %s", c.ID, got, st.PCG64State.Inc)
		}
		for i, want := range st.Outputs {
			if got := strconv.FormatUint(g.Uint64(), 10); got != want {
				t.Fatalf("%s: output %d = %s, want %s", c.ID, i, got, want)
			}
		}
	}
	if len(cases) != 30 {
		t.Fatalf("%d stream vectors, want 30", len(cases))
	}
}

// Every draw of every vector file, drawn from Streams in the order the case draws.
func TestC_X_BITS_every_golden_draw_from_streams(t *testing.T) {
	draws := 0
	for _, c := range readVectors(t, "clauses.jsonl", "far_time.jsonl", "machine.jsonl", "streams.jsonl") {
		seeds := map[string]*big.Int{}
		sources := map[string]map[string]Source{}
		for _, step := range c.Steps {
			req, err := decode(step.Request)
			if err != nil {
				t.Fatal(err)
			}
			clock, _ := req["clock"].(string)
			switch req["op"] {
			case "create":
				seeds[clock], _ = new(big.Int).SetString(req["seed"].(string), 10)
				sources[clock] = map[string]Source{}
			case "draw":
				if step.Reply["ok"] != true {
					continue
				}
				var labels []string
				for _, l := range req["labels"].([]any) {
					labels = append(labels, l.(string))
				}
				path, err := StreamPath(labels)
				if err != nil {
					t.Fatalf("%s: %v", c.ID, err)
				}
				src := sources[clock][path]
				if src == nil {
					src, _ = NewStreams(seeds[clock]).Stream(labels)
					sources[clock][path] = src
				}
				for i, want := range step.Reply["values"].([]any) {
					if got := strconv.FormatUint(src.Uint64(), 10); got != want {
						t.Fatalf("%s: %s value %d = %s, want %s", c.ID, path, i, got, want)
					}
					draws++
				}
			}
		}
	}
	if draws == 0 {
		t.Fatal("no draws in the golden vectors")
	}
}

func TestC_RNG_3_stream_paths_normalise_and_refuse_malformed_labels(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{nil, "/"},
		{[]string{"a", "b"}, "/a/b"},
		{[]string{"a/b"}, "/a/b"},
		{[]string{"/a/b"}, "/a/b"},
		{[]string{"x.y-z_1", "/Q"}, "/x.y-z_1/Q"},
	} {
		if got, err := StreamPath(tc.labels); err != nil || got != tc.want {
			t.Errorf("StreamPath(%q) = %q, %v; want %q", tc.labels, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "/", "a//b", "a/", "//a", "a b", "é", "a\x00"} {
		_, err := StreamPath([]string{"ok", bad})
		want := fmt.Sprintf("label %q is malformed: segments must be non-empty and use only [A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\"", bad)
		if KindOf(err) != ValueError || messageOf(err) != want {
			t.Errorf("StreamPath(%q) error = %v, want ValueError %q", bad, err, want)
		}
	}
}
