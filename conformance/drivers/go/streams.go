package driver

import (
	"encoding/binary"
	"math/big"
	"math/bits"
	"strings"
)

// The random streams of simclock (C-X-BITS): stream path -> BLAKE2b-128 -> spawn key ->
// numpy's SeedSequence -> PCG64, written from the published algorithms so that the kit
// needs nothing outside the standard library.

// Source is a stream of raw 64-bit outputs; math/rand/v2's rand.Source has the same
// method, so a Source can feed rand.New.
type Source interface {
	Uint64() uint64
}

// StreamPath is the normalised path of labels (C-RNG-3): ["a","b"], ["a/b"] and ["/a/b"]
// are all "/a/b", [] is "/". A label is one or more '/'-separated segments of
// [A-Za-z0-9_.-] (one leading '/' allowed); anything else is a ValueError.
func StreamPath(labels []string) (string, error) {
	var b strings.Builder
	for _, label := range labels {
		body := strings.TrimPrefix(label, "/")
		for _, seg := range strings.Split(body, "/") {
			if seg == "" || strings.IndexFunc(seg, badSegmentRune) >= 0 {
				return "", Errorf(ValueError, "label %q is malformed: segments must be non-empty and use only [A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\"", label)
			}
			b.WriteString("/")
			b.WriteString(seg)
		}
	}
	if b.Len() == 0 {
		return "/", nil
	}
	return b.String(), nil
}

func badSegmentRune(r rune) bool {
	ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
	return !ok
}

// Streams gives a clock simclock's own random streams: embed it (from NewStreams(seed))
// in a clock and the clock implements Streamer with the streams every simclock
// backend draws, bit for bit (feature "bits").
type Streams struct{ seed *big.Int }

// NewStreams is the stream tree of root seed.
func NewStreams(seed *big.Int) Streams { return Streams{seed: new(big.Int).Set(seed)} }

// Stream is the stream at the normalised path of labels; a malformed label is a ValueError.
func (s Streams) Stream(labels []string) (Source, error) {
	path, err := StreamPath(labels)
	if err != nil {
		return nil, err
	}
	return NewPCG64(SeedSequenceState(s.seed, SpawnKey(path))), nil
}

const streamDomain = "simclock.random_source.v1\x00"

// SpawnKey is the four big-endian 32-bit words of blake2b(domain + path, digest_size=16).
func SpawnKey(path string) [4]uint32 {
	d := blake2b16([]byte(streamDomain + path))
	var key [4]uint32
	for i := range key {
		key[i] = binary.BigEndian.Uint32(d[4*i:])
	}
	return key
}

// ---- BLAKE2b (RFC 7693), unkeyed, 16-byte digest.

var b2IV = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

var b2Sigma = [10][16]byte{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

func b2Compress(h *[8]uint64, block []byte, counter uint64, last bool) {
	var m, v [16]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(block[8*i:])
	}
	copy(v[:8], h[:])
	copy(v[8:], b2IV[:])
	v[12] ^= counter // inputs here are far below 2**64 bytes: the counter's high word stays 0
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint64) {
		v[a] += v[b] + x
		v[d] = bits.RotateLeft64(v[d]^v[a], -32)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -24)
		v[a] += v[b] + y
		v[d] = bits.RotateLeft64(v[d]^v[a], -16)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -63)
	}
	for r := 0; r < 12; r++ {
		s := &b2Sigma[r%10]
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
}

// blake2b16 is BLAKE2b with a 16-byte digest and no key.
func blake2b16(data []byte) [16]byte {
	h := b2IV
	h[0] ^= 0x01010000 ^ 16
	var block [128]byte
	counter := uint64(0)
	// Every full block but the last is compressed as not-last; the final one (possibly
	// empty, zero-padded) carries the last-block flag.
	for len(data) > 128 {
		counter += 128
		b2Compress(&h, data[:128], counter, false)
		data = data[128:]
	}
	n := copy(block[:], data)
	counter += uint64(n)
	b2Compress(&h, block[:], counter, true)
	var out [16]byte
	binary.LittleEndian.PutUint64(out[0:], h[0])
	binary.LittleEndian.PutUint64(out[8:], h[1])
	return out
}

// ---- numpy's SeedSequence (pool of four 32-bit words).

const (
	ssInitA    = 0x43b0d7e5
	ssMultA    = 0x931e8875
	ssInitB    = 0x8b51f9dd
	ssMultB    = 0x58f38ded
	ssMixMultL = 0xca01f9dd
	ssMixMultR = 0x4973f715
	ssXShift   = 16
	ssPool     = 4
)

// seedWords is seed as little-endian 32-bit words, [0] for 0, as numpy reads an int.
func seedWords(seed *big.Int) []uint32 {
	words := []uint32{}
	rest := new(big.Int).Set(seed)
	mask := big.NewInt(0xffffffff)
	for rest.Sign() > 0 {
		words = append(words, uint32(new(big.Int).And(rest, mask).Uint64()))
		rest.Rsh(rest, 32)
	}
	if len(words) == 0 {
		words = append(words, 0)
	}
	return words
}

// SeedSequenceState is SeedSequence(seed, spawn_key=key).generate_state(4, uint64).
func SeedSequenceState(seed *big.Int, key [4]uint32) [4]uint64 {
	words := seedWords(seed)
	// With a spawn key, the run entropy is zero-padded up to the pool size first.
	for len(words) < ssPool {
		words = append(words, 0)
	}
	words = append(words, key[:]...)
	hashConst := uint32(ssInitA)
	hashmix := func(v uint32) uint32 {
		v ^= hashConst
		hashConst *= ssMultA
		v *= hashConst
		return v ^ v>>ssXShift
	}
	mix := func(x, y uint32) uint32 {
		r := ssMixMultL*x - ssMixMultR*y
		return r ^ r>>ssXShift
	}
	var pool [ssPool]uint32
	for i := range pool {
		pool[i] = hashmix(words[i])
	}
	for src := 0; src < ssPool; src++ {
		for dst := 0; dst < ssPool; dst++ {
			if src != dst {
				pool[dst] = mix(pool[dst], hashmix(pool[src]))
			}
		}
	}
	for _, w := range words[ssPool:] {
		for dst := range pool {
			pool[dst] = mix(pool[dst], hashmix(w))
		}
	}
	var state [8]uint32
	hc := uint32(ssInitB)
	for i := range state {
		v := pool[i%ssPool] ^ hc
		hc *= ssMultB
		v *= hc
		state[i] = v ^ v>>ssXShift
	}
	var out [4]uint64
	for i := range out {
		out[i] = uint64(state[2*i]) | uint64(state[2*i+1])<<32
	}
	return out
}

// ---- PCG64: a 128-bit LCG with the XSL-RR output, seeded as numpy seeds it.

const pcgMulHi, pcgMulLo = 0x2360ED051FC65DA4, 0x4385DF649FCCF645

// PCG64 is numpy's PCG64 bit generator.
type PCG64 struct{ stateHi, stateLo, incHi, incLo uint64 }

// NewPCG64 seeds a PCG64 with initstate = w[0]:w[1] and initseq = w[2]:w[3].
func NewPCG64(w [4]uint64) *PCG64 {
	g := &PCG64{incHi: w[2]<<1 | w[3]>>63, incLo: w[3]<<1 | 1}
	g.step()
	lo, carry := bits.Add64(g.stateLo, w[1], 0)
	g.stateHi, _ = bits.Add64(g.stateHi, w[0], carry)
	g.stateLo = lo
	g.step()
	return g
}

// State is the 128-bit LCG state and increment, high word first.
func (g *PCG64) State() (stateHi, stateLo, incHi, incLo uint64) {
	return g.stateHi, g.stateLo, g.incHi, g.incLo
}

func (g *PCG64) step() {
	hi, lo := bits.Mul64(g.stateLo, pcgMulLo)
	hi += g.stateHi*pcgMulLo + g.stateLo*pcgMulHi
	lo, carry := bits.Add64(lo, g.incLo, 0)
	g.stateHi, _ = bits.Add64(hi, g.incHi, carry)
	g.stateLo = lo
}

// Uint64 is the next raw output: the XSL-RR of the state after one step.
func (g *PCG64) Uint64() uint64 {
	g.step()
	return bits.RotateLeft64(g.stateHi^g.stateLo, -int(g.stateHi>>58))
}
