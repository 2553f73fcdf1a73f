package driver

import (
	"math/big"
	"testing"
)

func TestC_TIME_4_time_arithmetic_is_exact_past_2_64(t *testing.T) {
	max := MaxWire
	sum := max.Add(max) // 2**65 - 2
	if got := sum.String(); got != "36893488147419103230" {
		t.Fatalf("MaxWire+MaxWire = %s", got)
	}
	if _, fits := sum.Uint64(); fits {
		t.Fatal("2**65-2 reported as fitting 64 bits")
	}
	if got := sum.Sub(max); got != max {
		t.Fatalf("(2**65-2) - (2**64-1) = %v", got)
	}
	if got := max.Mul64(3).String(); got != "55340232221128654845" {
		t.Fatalf("(2**64-1)*3 = %s", got)
	}
	q, r := max.Mul64(3).Add(Ns(2)).Div64(3)
	if q != max || r != 2 {
		t.Fatalf("((2**64-1)*3+2)/3 = %v rem %d", q, r)
	}
	if !Ns(5).Less(sum) || sum.Cmp(sum) != 0 || sum.Cmp(Ns(5)) != 1 {
		t.Fatal("Cmp/Less disagree with the values")
	}
	b, _ := new(big.Int).SetString("340282366920938463463374607431768211455", 10)
	if got, ok := FromBig(b); !ok || got.String() != b.String() {
		t.Fatalf("FromBig(2**128-1) = %v, %v", got, ok)
	}
	if _, ok := FromBig(new(big.Int).Add(b, big.NewInt(1))); ok {
		t.Fatal("FromBig(2**128) fits?")
	}
}

func TestC_TIME_4_time_overflow_and_negative_panic(t *testing.T) {
	top, _ := FromBig(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1)))
	for name, f := range map[string]func(){
		"add": func() { top.Add(Ns(1)) },
		"sub": func() { Ns(1).Sub(Ns(2)) },
		"mul": func() { top.Mul64(2) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestC_X_RATE_rate_offsets_are_exact_ceilings(t *testing.T) {
	for _, tc := range []struct {
		k        uint64
		num, den uint64
		want     string
	}{
		{0, 30, 1, "0"},
		{1, 30, 1, "33333334"},
		{2, 30, 1, "66666667"},
		{30, 30, 1, "1000000000"},
		{1, 1000000000, 1, "1"},
		{3, 2, 3, "4500000000"},
		// A product past 2**128 before the division: k*10**9*den with den = 2**64-1.
		{^uint64(0), ^uint64(0), ^uint64(0), "18446744073709551615000000000"},
	} {
		if got := RateOffset(Ns(tc.k), tc.num, tc.den).String(); got != tc.want {
			t.Errorf("RateOffset(%d, %d/%d) = %s, want %s", tc.k, tc.num, tc.den, got, tc.want)
		}
	}
}

func TestC_X_RATE_rate_index_is_the_first_grid_point_at_or_after(t *testing.T) {
	for _, rate := range [][2]uint64{{30, 1}, {7, 3}, {1000000000, 1}, {999999999, 1000}} {
		for e := uint64(0); e < 3_000_000_000; e += 11_111_111 {
			k := RateIndex(Ns(e), rate[0], rate[1])
			if RateOffset(k, rate[0], rate[1]).Less(Ns(e)) {
				t.Fatalf("%v Hz, elapsed %d: firing %v is before", rate, e, k)
			}
			if !k.IsZero() && !RateOffset(k.Sub(Ns(1)), rate[0], rate[1]).Less(Ns(e)) {
				t.Fatalf("%v Hz, elapsed %d: firing %v is not the first", rate, e, k)
			}
		}
	}
}
