package driver

import (
	"bytes"
	"errors"
	"math/big"
	"sort"
	"strings"
	"testing"
)

// listClock is a small clock with the mandatory methods only: a slice kept sorted by
// (at, seq); cancel removes. It has no optional interface, so the kit's defaults show.
type listClock struct {
	now     Time
	seq     uint64
	items   []*listItem
	running bool
	panicOn Time // Advance panics with a plain value when now+dt equals it (non-zero)
}

type listItem struct {
	at, period Time
	seq        uint64
	f          Callback
}

func (c *listClock) Now() Time { return c.now }

func (c *listClock) add(it *listItem) {
	it.seq, c.seq = c.seq, c.seq+1
	c.items = append(c.items, it)
	sort.SliceStable(c.items, func(i, j int) bool { return c.items[i].at.Less(c.items[j].at) })
}

func (c *listClock) Schedule(at Time, f Callback) (Handle, error) {
	if at.Less(c.now) {
		return nil, Errorf(ValueError, "at_ns=%v is in the past", at)
	}
	it := &listItem{at: at, f: f}
	c.add(it)
	return it, nil
}

func (c *listClock) SchedulePeriodic(period, phase Time, f Callback) (Handle, error) {
	if period.IsZero() {
		return nil, Errorf(ValueError, "period_ns must be > 0")
	}
	at := phase
	for at.Less(c.now) {
		at = at.Add(period)
	}
	it := &listItem{at: at, period: period, f: f}
	c.add(it)
	return it, nil
}

func (c *listClock) Cancel(h Handle) error {
	for i, it := range c.items {
		if it == h {
			c.items = append(c.items[:i], c.items[i+1:]...)
			break
		}
	}
	return nil
}

func (c *listClock) Advance(dt Time) error {
	if c.running {
		return errors.New("advance from a callback") // a plain error: RuntimeError
	}
	target := c.now.Add(dt)
	if !c.panicOn.IsZero() && target == c.panicOn {
		panic("listClock: broken on purpose")
	}
	c.running = true
	defer func() { c.running = false }()
	for len(c.items) > 0 && !target.Less(c.items[0].at) {
		it := c.items[0]
		c.items = c.items[1:]
		c.now = it.at
		func() {
			if !it.period.IsZero() {
				defer func() { it.at = it.at.Add(it.period); c.add(it) }()
			}
			_ = it.f()
		}()
	}
	c.now = target
	return nil
}

func newListDriver(t *testing.T, clock *listClock) *Driver {
	t.Helper()
	d, err := New("list", func(seed *big.Int) (Clock, error) {
		if clock != nil {
			return clock, nil
		}
		return &listClock{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// transcript sends each "> request" line and checks the "< reply" line after it, exactly.
func transcript(t *testing.T, d *Driver, text string) {
	t.Helper()
	var req string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "> "):
			req = line[2:]
		case strings.HasPrefix(line, "< "):
			if got := string(d.Handle([]byte(req))); got != line[2:] {
				t.Fatalf("request %s\n got: %s\nwant: %s", req, got, line[2:])
			}
		}
	}
}

func TestC_WIRE_3_hello_declares_only_what_the_clock_implements(t *testing.T) {
	transcript(t, newListDriver(t, nil), `
		> {"op":"hello","protocol":"1"}
		< {"ok":true,"protocol":"1","backend":"list","features":[]}
		> {"op":"hello","protocol":"2"}
		< {"ok":false,"error":"unsupported","message":"this driver speaks protocol \"1\" only, got \"2\""}
		> {"op":"hello","protocol":1}
		< {"ok":false,"error":"unsupported","message":"this driver speaks protocol \"1\" only, got the JSON number 1"}
	`)
}

func TestC_WIRE_2_times_must_be_digit_strings_and_refusals_change_nothing(t *testing.T) {
	d := newListDriver(t, nil)
	transcript(t, d, `
		> {"op":"create","clock":"c","seed":"7"}
		< {"ok":true,"now_ns":"0","stored":"0"}
		> {"op":"schedule","clock":"c","entry":"a","at_ns":"10","on_fire":[]}
		< {"ok":true,"now_ns":"0","stored":"1"}
	`)
	for _, bad := range []string{`5`, `5.0`, `"1.5"`, `"1e6"`, `"-3"`, `" 5"`, `""`, `null`, `true`, `["5"]`, `"５"`} {
		transcript(t, d, `
			> {"op":"schedule","clock":"c","entry":"b","at_ns":`+bad+`}
			< {"ok":false,"error":"TypeError","message":"at_ns must be a string of decimal digits [0-9]+, got `+strings.ReplaceAll(showForTest(bad), `"`, `\"`)+`; send integers as strings, e.g. \"1000\"","now_ns":"0","stored":"1"}
		`)
	}
	transcript(t, d, `
		> {"op":"advance","clock":"c","dt_ns":"18446744073709551616"}
		< {"ok":false,"error":"ValueError","message":"dt_ns = 18446744073709551616 is larger than 18446744073709551615, the largest value this driver keeps exactly","now_ns":"0","stored":"1"}
		> {"op":"schedule","clock":"c","entry":"b","at_ns":"00018446744073709551615"}
		< {"ok":true,"now_ns":"0","stored":"2"}
		> {"op":"schedule","clock":"c","entry":"x","at_ns":"1","on_fire":[{"do":"schedule","delay_ns":"2","on_fire":[{"do":"advance","dt_ns":2}]}]}
		< {"ok":false,"error":"TypeError","message":"dt_ns must be a string of decimal digits [0-9]+, got the JSON number 2; send integers as strings, e.g. \"1000\"","now_ns":"0","stored":"2"}
		> {"op":"schedule","clock":"c","entry":"x","at_ns":"1","on_fire":[{"do":"jump"}]}
		< {"ok":false,"error":"bad_request","message":"unknown action do=\"jump\"; expected schedule, cancel, advance, raise or halt","now_ns":"0","stored":"2"}
		> {"op":"observe","clock":"c"}
		< {"ok":true,"now_ns":"0","stored":"2"}
	`)
}

func showForTest(raw string) string {
	v, err := decode([]byte(`{"v":` + raw + `}`))
	if err != nil {
		panic(err)
	}
	return show(v["v"])
}

func TestC_WIRE_5_bad_requests_unknown_ids_and_undeclared_features(t *testing.T) {
	transcript(t, newListDriver(t, nil), `
		> {"op":
		< {"ok":false,"error":"bad_request","message":"the request is not one JSON object: unexpected EOF"}
		> [1]
		< {"ok":false,"error":"bad_request","message":"the request must be a JSON object, got [1]"}
		> {"op":"hello","protocol":"1"} {}
		< {"ok":false,"error":"bad_request","message":"the request is not one JSON object: something follows it"}
		> {"op":"warp","clock":"c"}
		< {"ok":false,"error":"bad_request","message":"unknown op \"warp\""}
		> {"op":"observe","clock":"nope"}
		< {"ok":false,"error":"bad_request","message":"unknown clock \"nope\""}
		> {"op":"create","clock":"c","seed":"1","start_ns":"5"}
		< {"ok":false,"error":"unsupported","message":"start_ns: list has no start time (feature start_ns)"}
		> {"op":"create","clock":"c","seed":1}
		< {"ok":false,"error":"TypeError","message":"seed must be a string of decimal digits [0-9]+, got the JSON number 1; send integers as strings, e.g. \"1000\""}
		> {"op":"create","clock":"c","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
		> {"op":"create","clock":"c","seed":"1"}
		< {"ok":false,"error":"bad_request","message":"clock \"c\" is in use; drop it first or pick another id","now_ns":"0","stored":"0"}
		> {"op":"schedule","clock":"c","entry":"a.b","at_ns":"1"}
		< {"ok":false,"error":"bad_request","message":"entry id \"a.b\" must be non-empty without '.'","now_ns":"0","stored":"0"}
		> {"op":"schedule","clock":"c","entry":"a","at_ns":"1"}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"schedule","clock":"c","entry":"a","at_ns":"2"}
		< {"ok":false,"error":"bad_request","message":"entry id \"a\" is already used by this clock","now_ns":"0","stored":"1"}
		> {"op":"cancel","clock":"c","entry":"zz"}
		< {"ok":false,"error":"bad_request","message":"unknown entry \"zz\"","now_ns":"0","stored":"1"}
		> {"op":"schedule_rate","clock":"c","entry":"r","rate_hz":["30","1"],"phase_ns":"0"}
		< {"ok":false,"error":"unsupported","message":"schedule_rate: list has no rate timers (feature rate)","now_ns":"0","stored":"1"}
		> {"op":"stats","clock":"c","entry":"a"}
		< {"ok":false,"error":"unsupported","message":"stats: list has no entry statistics (feature stats)","now_ns":"0","stored":"1"}
		> {"op":"draw","clock":"c","labels":[],"n":"1"}
		< {"ok":false,"error":"unsupported","message":"draw: list has no random streams","now_ns":"0","stored":"1"}
		> {"op":"step_ns","clock":"c"}
		< {"ok":true,"step_ns":"1","now_ns":"0","stored":"1"}
		> {"op":"drop","clock":"c"}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"observe","clock":"c"}
		< {"ok":false,"error":"bad_request","message":"unknown clock \"c\""}
		> {"op":"quit"}
		< {"ok":true}
	`)
}

func TestC_WIRE_4_callbacks_are_data(t *testing.T) {
	// Children are named <entry>.<n> over all firings, a nested advance refused is
	// recorded, a raise is a failure and stops its callback, a cancel of an unknown
	// entry does nothing; "stored" without a Sizer is the live entries.
	transcript(t, newListDriver(t, nil), `
		> {"op":"create","clock":"c","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
		> {"op":"schedule_periodic","clock":"c","entry":"p","period_ns":"10","phase_ns":"5","on_fire":[{"do":"schedule","delay_ns":"0"},{"do":"cancel","entry":"ghost"},{"do":"advance","dt_ns":"1"}]}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"schedule","clock":"c","entry":"r","at_ns":"5","on_fire":[{"do":"raise","message":"sensor lost"},{"do":"schedule","delay_ns":"1"}]}
		< {"ok":true,"now_ns":"0","stored":"2"}
		> {"op":"advance","clock":"c","dt_ns":"15"}
		< {"ok":true,"fired":[{"entry":"p","now_ns":"5","nested":"RuntimeError"},{"entry":"r","now_ns":"5"},{"entry":"p.0","now_ns":"5"},{"entry":"p","now_ns":"15","nested":"RuntimeError"},{"entry":"p.1","now_ns":"15"}],"failures":[{"entry":"r","at_ns":"5","message":"sensor lost"}],"now_ns":"15","stored":"1"}
		> {"op":"schedule","clock":"c","entry":"h","at_ns":"16","on_fire":[{"do":"halt"},{"do":"schedule","delay_ns":"0"}]}
		< {"ok":true,"now_ns":"15","stored":"2"}
		> {"op":"schedule","clock":"c","entry":"late","at_ns":"17"}
		< {"ok":true,"now_ns":"15","stored":"3"}
		> {"op":"advance","clock":"c","dt_ns":"100"}
		< {"ok":false,"error":"halted","entry":"h","at_ns":"16","fired":[{"entry":"h","now_ns":"16"}],"failures":[],"now_ns":"16","stored":"2"}
		> {"op":"cancel","clock":"c","entry":"p.0"}
		< {"ok":true,"now_ns":"16","stored":"2"}
	`)
}

func TestC_WIRE_4_a_child_refused_with_ValueError_takes_no_number(t *testing.T) {
	d := newListDriver(t, nil)
	transcript(t, d, `
		> {"op":"create","clock":"c","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
	`)
	// The list clock refuses a child only for a past time, which a delay cannot make:
	// a clock that wraps is simulated by a wrapper refusing far children.
	st := d.clocks["c"]
	st.clock = farRefusing{st.clock.(*listClock)}
	transcript(t, d, `
		> {"op":"schedule","clock":"c","entry":"a","at_ns":"1","on_fire":[{"do":"schedule","delay_ns":"18446744073709551615"},{"do":"schedule","delay_ns":"1"}]}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"advance","clock":"c","dt_ns":"2"}
		< {"ok":true,"fired":[{"entry":"a","now_ns":"1","refused":"ValueError"},{"entry":"a.0","now_ns":"2"}],"failures":[],"now_ns":"2","stored":"0"}
	`)
}

type farRefusing struct{ *listClock }

func (c farRefusing) Schedule(at Time, f Callback) (Handle, error) {
	if MaxWire.Less(at) {
		return nil, Errorf(ValueError, "at_ns=%v is past 2**64-1", at)
	}
	return c.listClock.Schedule(at, f)
}

func TestC_WIRE_5_a_panicking_clock_is_answered_internal(t *testing.T) {
	d := newListDriver(t, &listClock{panicOn: Ns(3)})
	transcript(t, d, `
		> {"op":"create","clock":"c","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
	`)
	got := string(d.Handle([]byte(`{"op":"advance","clock":"c","dt_ns":"3"}`)))
	if !strings.HasPrefix(got, `{"ok":false,"error":"internal","message":"the driver failed: listClock: broken on purpose\n`) {
		t.Fatalf("reply %s", got)
	}
	if !strings.HasSuffix(got, `","now_ns":"0","stored":"0"}`) {
		t.Fatalf("reply without the observation: %s", got)
	}
}

func TestC_WIRE_1_serve_answers_line_by_line_until_quit(t *testing.T) {
	in := strings.NewReader("{\"op\":\"hello\",\"protocol\":\"1\"}\n{\"op\":\"quit\"}\n{\"op\":\"hello\",\"protocol\":\"1\"}\n")
	var out bytes.Buffer
	if err := Serve(in, &out, newListDriver(t, nil)); err != nil {
		t.Fatal(err)
	}
	want := "{\"ok\":true,\"protocol\":\"1\",\"backend\":\"list\",\"features\":[]}\n{\"ok\":true}\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// swallowing recovers every panic of its callbacks, the halt included: the kit must not
// make up the halted reply the clock did not give (C-ERR-2).
type swallowing struct{ *listClock }

func (c swallowing) Schedule(at Time, f Callback) (Handle, error) {
	return c.listClock.Schedule(at, func() (err error) {
		defer func() { _ = recover() }()
		return f()
	})
}

// stopping stops its advance at the first callback error and returns it: the kit must
// not isolate what the clock does not (C-ERR-1).
type stopping struct{ *listClock }

func (c stopping) Advance(dt Time) error {
	var first error
	for _, it := range c.items {
		f := it.f
		it.f = func() error {
			err := f()
			if first == nil {
				first = err
			}
			return err
		}
	}
	target := c.now.Add(dt)
	for len(c.items) > 0 && !target.Less(c.items[0].at) && first == nil {
		it := c.items[0]
		c.items, c.now = c.items[1:], it.at
		_ = it.f()
	}
	if first != nil {
		return first
	}
	c.now = target
	return nil
}

// An error the clock lets out of Advance is the reply's error, not one of its failures (docs/kits.md).
func TestC_ERR_the_kit_reports_what_the_clock_does_with_errors_and_halts(t *testing.T) {
	d := newListDriver(t, nil)
	transcript(t, d, `
		> {"op":"create","clock":"s","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
		> {"op":"create","clock":"e","seed":"1"}
		< {"ok":true,"now_ns":"0","stored":"0"}
	`)
	d.clocks["s"].clock = swallowing{d.clocks["s"].clock.(*listClock)}
	d.clocks["e"].clock = stopping{d.clocks["e"].clock.(*listClock)}
	transcript(t, d, `
		> {"op":"schedule","clock":"s","entry":"h","at_ns":"1","on_fire":[{"do":"halt"}]}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"schedule","clock":"s","entry":"after","at_ns":"2"}
		< {"ok":true,"now_ns":"0","stored":"2"}
		> {"op":"advance","clock":"s","dt_ns":"5"}
		< {"ok":true,"fired":[{"entry":"h","now_ns":"1"},{"entry":"after","now_ns":"2"}],"failures":[],"now_ns":"5","stored":"0"}
		> {"op":"schedule","clock":"e","entry":"r","at_ns":"1","on_fire":[{"do":"raise","message":"boom"}]}
		< {"ok":true,"now_ns":"0","stored":"1"}
		> {"op":"schedule","clock":"e","entry":"after","at_ns":"2"}
		< {"ok":true,"now_ns":"0","stored":"2"}
		> {"op":"advance","clock":"e","dt_ns":"5"}
		< {"ok":false,"error":"RuntimeError","message":"RuntimeError: boom","fired":[{"entry":"r","now_ns":"1"}],"failures":[],"now_ns":"1","stored":"1"}
	`)
}
