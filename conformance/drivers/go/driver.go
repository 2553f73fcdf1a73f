package driver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// MaxFired is the most firings one advance records: more could not fit in the suite's
// 1 MiB reply line. Past it the advance is stopped and answered internal (a periodic
// stuck at one time would fire for ever).
const MaxFired = (1 << 20) / len(`{"entry":"a","now_ns":"0"},`)

// Driver answers protocol requests for the clocks of one backend.
type Driver struct {
	backend  string
	factory  Factory
	features []string
	clocks   map[string]*clockState
	quit     bool
	current  *clockState // the clock of the request being answered, for a failure's reply
}

// New is a driver for the clocks factory makes; backend is the name hello reports. The
// features follow from the optional interfaces a probe clock (seed 0) implements.
func New(backend string, factory Factory) (*Driver, error) {
	d := &Driver{backend: backend, factory: factory, clocks: map[string]*clockState{}}
	probe, err := factory(new(big.Int))
	if err != nil {
		return nil, fmt.Errorf("the factory failed on seed 0: %w", err)
	}
	if _, ok := probe.(Peeker); ok {
		d.features = append(d.features, "peek")
	}
	if _, ok := probe.(RateScheduler); ok {
		d.features = append(d.features, "rate")
	}
	if _, ok := probe.(StatsReporter); ok {
		d.features = append(d.features, "stats")
	}
	if _, ok := probe.(Starter); ok {
		d.features = append(d.features, "start_ns")
	}
	if s, ok := probe.(Streamer); ok && isSimclockStreams(s) {
		d.features = append(d.features, "bits")
	}
	return d, nil
}

// isSimclockStreams: "bits" is claimed only when it holds, on a probe stream (C-X-BITS).
func isSimclockStreams(s Streamer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	src, err := s.Stream([]string{"simclock-probe"})
	if err != nil || src == nil {
		return false
	}
	want := NewPCG64(SeedSequenceState(new(big.Int), SpawnKey("/simclock-probe")))
	return src.Uint64() == want.Uint64() && src.Uint64() == want.Uint64()
}

// Features is what hello reports, in the protocol's order.
func (d *Driver) Features() []string { return append([]string{}, d.features...) }

func (d *Driver) has(feature string) bool {
	for _, f := range d.features {
		if f == feature {
			return true
		}
	}
	return false
}

// Quit reports whether the last request was quit.
func (d *Driver) Quit() bool { return d.quit }

// Handle is the reply line (without its newline) to one request line. It never panics:
// a failure of the clock or of the driver itself is the reply internal.
func (d *Driver) Handle(line []byte) (out []byte) {
	var st *clockState
	d.current = nil
	defer func() {
		if p := recover(); p != nil {
			r := errorReply(Internal, fmt.Sprintf("the driver failed: %v\n%s", p, debug.Stack()))
			out = d.encode(d.observeSafely(d.current, r))
		}
	}()
	req, err := decode(line)
	var r *reply
	if err == nil {
		st, r, err = d.dispatch(req)
	}
	if err != nil {
		if st != nil {
			st.mu.Lock()
			st.escapedLocked(err) // a callback's error the clock let out of schedule, say
			st.mu.Unlock()
		}
		r = errorReply(replyKind(err), describe(err))
		if op, _ := req["op"].(string); st != nil && carriers[op] {
			st.carry(r)
		}
		r = d.observeSafely(st, r) // C-WIRE-3: a refusal carries the observation too
	}
	return d.encode(r)
}

// replyKind is the protocol's error name for err: a kind outside the protocol's own
// (say an adapter's "Deadlock") is internal, its name kept in the message.
func replyKind(err error) Kind {
	switch k := KindOf(err); k {
	case TypeError, ValueError, RuntimeError, BadRequest, Unsupported, Internal:
		return k
	}
	return Internal
}

func (d *Driver) encode(r *reply) []byte {
	b, err := marshal(r)
	if err != nil {
		b, _ = marshal(errorReply(Internal, "the reply could not be encoded: "+err.Error()))
	}
	return b
}

func (d *Driver) observeSafely(st *clockState, r *reply) (out *reply) {
	if st == nil {
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			out = errorReply(Internal, fmt.Sprintf("observing the clock failed: %v", p))
		}
	}()
	return st.observe(r)
}

var clockOps = map[string]bool{
	"create": true, "drop": true, "schedule": true, "schedule_periodic": true, "schedule_rate": true,
	"cancel": true, "advance": true, "observe": true, "stats": true, "step_ns": true, "draw": true,
}

func (d *Driver) dispatch(req request) (*clockState, *reply, error) {
	op, err := req.str("op")
	if err != nil {
		return nil, nil, err
	}
	switch {
	case op == "hello":
		if p, _ := req["protocol"].(string); p != "1" {
			return nil, nil, kitErrorf(Unsupported, "this driver speaks protocol \"1\" only, got %s", show(req["protocol"]))
		}
		return nil, okReply().set("protocol", "1").set("backend", d.backend).set("features", d.Features()), nil
	case op == "quit":
		d.quit = true
		return nil, okReply(), nil
	case !clockOps[op]:
		return nil, nil, kitErrorf(BadRequest, "unknown op %s", show(op))
	}
	id, err := req.str("clock")
	if err != nil {
		return nil, nil, err
	}
	st := d.clocks[id]
	d.current = st
	if op == "create" {
		if st != nil {
			return st, nil, kitErrorf(BadRequest, "clock %s is in use; drop it first or pick another id", show(id))
		}
		st, err := d.create(req)
		if err != nil {
			return nil, nil, err
		}
		d.clocks[id] = st
		return st, st.observe(okReply()), nil
	}
	if st == nil {
		return nil, nil, kitErrorf(BadRequest, "unknown clock %s", show(id))
	}
	r, err := st.perform(d, op, req)
	if err != nil {
		return st, nil, err
	}
	if op == "drop" {
		delete(d.clocks, id)
	}
	return st, r, nil
}

func (d *Driver) create(req request) (*clockState, error) {
	seed, err := req.bigint("seed")
	if err != nil {
		return nil, err
	}
	_, hasStart := req["start_ns"]
	if hasStart && !d.has("start_ns") {
		return nil, kitErrorf(Unsupported, "start_ns: %s has no start time (feature start_ns)", d.backend)
	}
	start, err := req.uintOr("start_ns", Time{})
	if err != nil {
		return nil, err
	}
	c, err := d.factory(seed)
	if err != nil {
		return nil, err
	}
	if hasStart {
		if err := c.(Starter).Start(start); err != nil {
			return nil, err
		}
	}
	return &clockState{clock: c, entries: map[string]*entry{}, streams: map[string]Source{}}, nil
}

// entry is the kit's record of one entry id: its handle and the data the protocol needs.
type entry struct {
	handle   Handle
	children uint64 // the next child number, counted over all firings (C-WIRE-4)
	once     bool
	live     bool // scheduled, not cancelled, a one-shot not yet fired: "stored" without a Sizer
}

// clockState is one clock and the protocol's bookkeeping around it. Invariant: mu guards
// everything a callback touches, since a clock may run callbacks on other goroutines.
type clockState struct {
	clock    Clock
	mu       sync.Mutex
	entries  map[string]*entry
	fired    []*reply
	failures []*reply
	errs     []error    // the error of each failure, to know the one the clock let out of Advance
	halted   *[2]string // entry and at_ns of the halting callback
	streams  map[string]Source
}

// halt is what a halt action panics with: not an error, so a clock that isolates errors
// lets it through (C-ERR-2).
type halt struct{ entry string }

func (h halt) String() string { return "the halt action of entry " + h.entry + " (C-ERR-2)" }

// tooManyFirings stops an advance that fired MaxFired callbacks.
type tooManyFirings struct{}

// escapedLocked drops the failure record of err, an error the clock let out of one of its
// calls: if a callback returned it, it is no failure the clock isolated. st.mu is held.
func (st *clockState) escapedLocked(err error) {
	for i := len(st.errs) - 1; i >= 0; i-- {
		if errors.Is(err, st.errs[i]) {
			st.failures = append(st.failures[:i:i], st.failures[i+1:]...)
			st.errs = append(st.errs[:i:i], st.errs[i+1:]...)
			return
		}
	}
}

func (st *clockState) settle() {
	if s, ok := st.clock.(Settler); ok {
		s.Settle()
	}
}

func (st *clockState) observe(r *reply) *reply {
	st.settle()
	r.set("now_ns", st.clock.Now().String())
	if p, ok := st.clock.(Peeker); ok {
		if at, ok := p.NextEvent(); ok {
			r.set("next_event_ns", at.String())
		} else {
			r.set("next_event_ns", nil)
		}
	}
	if s, ok := st.clock.(Sizer); ok {
		r.set("stored", strconv.FormatUint(s.Stored(), 10))
	} else {
		st.mu.Lock()
		n := 0
		for _, e := range st.entries {
			if e.live {
				n++
			}
		}
		st.mu.Unlock()
		r.set("stored", strconv.Itoa(n))
	}
	return r
}

func (st *clockState) perform(d *Driver, op string, req request) (*reply, error) {
	switch op {
	case "drop", "observe":
		return st.observe(okReply()), nil
	case "schedule", "schedule_periodic", "schedule_rate":
		if err := st.schedule(d, op, req); err != nil {
			return nil, err
		}
	case "cancel":
		e, err := st.known(req)
		if err != nil {
			return nil, err
		}
		err = st.clock.Cancel(e.handle)
		st.settle()
		if err != nil {
			return nil, err
		}
		st.mu.Lock()
		e.live = false
		st.mu.Unlock()
	case "advance":
		return st.advance(req)
	case "stats":
		s, ok := st.clock.(StatsReporter)
		if !ok {
			return nil, kitErrorf(Unsupported, "stats: %s has no entry statistics (feature stats)", d.backend)
		}
		e, err := st.known(req)
		if err != nil {
			return nil, err
		}
		stats, err := s.Stats(e.handle)
		if err != nil {
			return nil, err
		}
		r := okReply().set("fired", strconv.FormatUint(stats.Fired, 10))
		r.set("skipped", strconv.FormatUint(stats.Skipped, 10)).set("overruns", strconv.FormatUint(stats.Overruns, 10))
		return st.observe(r), nil
	case "step_ns":
		step := uint64(1)
		if s, ok := st.clock.(Stepper); ok {
			step = s.StepNs()
		}
		return st.observe(okReply().set("step_ns", strconv.FormatUint(step, 10))), nil
	case "draw":
		return st.draw(d, req)
	}
	return st.observe(st.carry(okReply())), nil // schedule*, cancel
}

// carriers are the ops whose reply carries the firings not yet reported, if there are any.
var carriers = map[string]bool{"schedule": true, "schedule_periodic": true, "schedule_rate": true, "cancel": true}

// carry puts the firings and failures not yet reported into r (a schedule* or cancel
// reply), if there are any: a callback the clock ran inside that call, or on a goroutine
// of its own since the last reply, shows where the suite sees it (docs/kits.md).
func (st *clockState) carry(r *reply) *reply {
	st.settle()
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.fired) == 0 && len(st.failures) == 0 {
		return r
	}
	r.set("fired", st.fired).set("failures", append([]*reply{}, st.failures...))
	st.fired, st.failures, st.errs = nil, nil, nil
	return r
}

func (st *clockState) known(req request) (*entry, error) {
	id, err := req.str("entry")
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.entries[id]
	if e == nil {
		return nil, kitErrorf(BadRequest, "unknown entry %s", show(id))
	}
	return e, nil
}

// schedule checks everything before the clock is called: a refused call changes nothing.
func (st *clockState) schedule(d *Driver, op string, req request) error {
	id, err := req.str("entry")
	if err != nil {
		return err
	}
	if id == "" || strings.Contains(id, ".") {
		return kitErrorf(BadRequest, "entry id %s must be non-empty without '.'", show(id))
	}
	st.mu.Lock()
	_, used := st.entries[id]
	st.mu.Unlock()
	if used {
		return kitErrorf(BadRequest, "entry id %s is already used by this clock", show(id))
	}
	var call func(Callback) (Handle, error)
	switch op {
	case "schedule":
		at, err := req.uint("at_ns")
		if err != nil {
			return err
		}
		call = func(f Callback) (Handle, error) { return st.clock.Schedule(at, f) }
	case "schedule_periodic":
		period, err := req.uint("period_ns")
		if err != nil {
			return err
		}
		phase, err := req.uintOr("phase_ns", Time{})
		if err != nil {
			return err
		}
		call = func(f Callback) (Handle, error) { return st.clock.SchedulePeriodic(period, phase, f) }
	case "schedule_rate":
		rs, ok := st.clock.(RateScheduler)
		if !ok {
			return kitErrorf(Unsupported, "schedule_rate: %s has no rate timers (feature rate)", d.backend)
		}
		parts, ok := req["rate_hz"].([]any)
		if !ok || len(parts) != 2 {
			if _, present := req["rate_hz"]; !present {
				return kitErrorf(BadRequest, "missing field rate_hz")
			}
			return kitErrorf(TypeError, "rate_hz must be a list [NUM, DEN] of two decimal strings, got %s", show(req["rate_hz"]))
		}
		frac := request{"rate_hz numerator": parts[0], "rate_hz denominator": parts[1]}
		num, err := frac.uint("rate_hz numerator")
		if err != nil {
			return err
		}
		den, err := frac.uint("rate_hz denominator")
		if err != nil {
			return err
		}
		phase, err := req.uintOr("phase_ns", Time{})
		if err != nil {
			return err
		}
		if den.IsZero() {
			return kitErrorf(ValueError, "rate_hz denominator must be > 0, got 0")
		}
		n, _ := num.Uint64()
		m, _ := den.Uint64()
		call = func(f Callback) (Handle, error) { return rs.ScheduleRate(n, m, phase, f) }
	}
	sub, present := req["on_fire"]
	acts, err := actions(sub, present, 0)
	if err != nil {
		return err
	}
	e := &entry{once: op == "schedule", live: true}
	h, err := call(st.callback(id, e, acts))
	if err != nil {
		st.settle()
		return err
	}
	st.mu.Lock()
	e.handle = h
	st.entries[id] = e
	st.mu.Unlock()
	st.settle()
	return nil
}

// advance runs the clock's Advance and answers what fired (C-WIRE-3), or the halt
// that stopped it (C-WIRE-4): every firing not yet reported (see carry).
func (st *clockState) advance(req request) (r *reply, err error) {
	dt, err := req.uint("dt_ns")
	if err != nil {
		return nil, err
	}
	stopped := func() (p any) {
		defer func() { p = recover() }()
		err = st.clock.Advance(dt)
		return nil
	}()
	st.settle()
	st.mu.Lock()
	if err != nil && stopped == nil {
		st.escapedLocked(err) // the reply's own error reports it
	}
	fired, failures, halted := st.fired, st.failures, st.halted
	st.fired, st.failures, st.errs, st.halted = nil, nil, nil, nil
	st.mu.Unlock()
	if fired == nil {
		fired = []*reply{}
	}
	if failures == nil {
		failures = []*reply{}
	}
	switch p := stopped.(type) {
	case nil:
	case halt:
		r = (&reply{}).set("ok", false).set("error", "halted")
		r.set("entry", halted[0]).set("at_ns", halted[1])
		return st.observe(r.set("fired", fired).set("failures", failures)), nil
	case tooManyFirings:
		return nil, kitErrorf(Internal, "the advance fired more than %d callbacks, more than one reply can carry; it was stopped (a periodic stuck at one time fires for ever)", MaxFired)
	default:
		panic(p) // the clock's own failure: answered internal by Handle
	}
	if err != nil {
		if len(fired) == 0 && len(failures) == 0 {
			return nil, err // a refused call: the plain error reply
		}
		r = (&reply{}).set("ok", false).set("error", string(replyKind(err))).set("message", describe(err))
		return st.observe(r.set("fired", fired).set("failures", failures)), nil
	}
	return st.observe(okReply().set("fired", fired).set("failures", failures)), nil
}

// callback is the Callback of entry id: it records its firing with Now() as it reads it,
// then performs the actions in order (C-WIRE-4).
func (st *clockState) callback(id string, e *entry, acts []action) Callback {
	return func() error {
		now := st.clock.Now()
		record := (&reply{}).set("entry", id).set("now_ns", now.String())
		st.mu.Lock()
		if len(st.fired) >= MaxFired {
			st.mu.Unlock()
			panic(tooManyFirings{})
		}
		st.fired = append(st.fired, record)
		if e.once {
			e.live = false
		}
		st.mu.Unlock()
		err := st.perform1(id, e, now, record, acts)
		if err != nil {
			st.mu.Lock()
			st.failures = append(st.failures, (&reply{}).set("entry", id).set("at_ns", now.String()).set("message", messageOf(err)))
			st.errs = append(st.errs, err)
			st.mu.Unlock()
		}
		return err
	}
}

func (st *clockState) perform1(id string, e *entry, now Time, record *reply, acts []action) error {
	for _, a := range acts {
		switch a.do {
		case "schedule":
			st.mu.Lock()
			child := id + "." + strconv.FormatUint(e.children, 10)
			st.mu.Unlock()
			ce := &entry{once: true, live: true}
			h, err := st.clock.Schedule(now.Add(a.ns), st.callback(child, ce, a.onFire))
			if err != nil {
				if KindOf(err) == ValueError {
					st.mu.Lock()
					record.set("refused", "ValueError") // a refused child takes no number (C-WIRE-4)
					st.mu.Unlock()
					continue
				}
				return err
			}
			st.mu.Lock()
			e.children++
			ce.handle = h
			st.entries[child] = ce
			st.mu.Unlock()
		case "cancel":
			st.mu.Lock()
			target := st.entries[a.text]
			st.mu.Unlock()
			if target == nil {
				continue // an unknown entry: nothing (C-WIRE-4)
			}
			if err := st.clock.Cancel(target.handle); err != nil {
				return err
			}
			st.mu.Lock()
			target.live = false
			st.mu.Unlock()
		case "advance":
			err := st.clock.Advance(a.ns)
			nested := "accepted"
			if err != nil {
				nested = string(replyKind(err))
			}
			st.mu.Lock()
			record.set("nested", nested)
			if err != nil {
				st.escapedLocked(err)
			}
			st.mu.Unlock()
			if err != nil && nested != string(RuntimeError) {
				return err // any other kind fails the callback (docs/kits.md)
			}
		case "raise":
			return Errorf(RuntimeError, "%s", a.text)
		case "halt":
			st.mu.Lock()
			st.halted = &[2]string{id, now.String()}
			st.mu.Unlock()
			panic(halt{entry: id})
		}
	}
	return nil
}

func (st *clockState) draw(d *Driver, req request) (*reply, error) {
	s, ok := st.clock.(Streamer)
	if !ok {
		return nil, kitErrorf(Unsupported, "draw: %s has no random streams", d.backend)
	}
	raw, present := req["labels"]
	if !present {
		return nil, kitErrorf(BadRequest, "missing field labels")
	}
	list, ok := raw.([]any)
	labels := make([]string, 0, len(list))
	for _, l := range list {
		s, isString := l.(string)
		ok = ok && isString
		labels = append(labels, s)
	}
	if !ok {
		return nil, kitErrorf(TypeError, "labels must be a list of strings, got %s", show(raw))
	}
	n, err := req.uint("n")
	if err != nil {
		return nil, err
	}
	count, _ := n.Uint64()
	if count > 1<<20 {
		return nil, kitErrorf(ValueError, "n = %d is more than 1048576 values in one draw; draw in smaller batches", count)
	}
	path, perr := StreamPath(labels)
	src := st.streams[path]
	if src == nil || perr != nil {
		// A malformed label is the clock's to refuse (C-RNG-3): it is asked, and a
		// stream it makes anyway is drawn from, never kept under a path.
		if src, err = s.Stream(labels); err != nil {
			return nil, err
		}
		if perr == nil {
			st.streams[path] = src
		}
	}
	values := make([]string, count)
	for i := range values {
		values[i] = strconv.FormatUint(src.Uint64(), 10)
	}
	return st.observe(okReply().set("values", values)), nil
}

// Serve answers the requests read from in, one reply line each on out, until quit or
// the end of input (C-WIRE-1).
func Serve(in io.Reader, out io.Writer, d *Driver) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 64<<20)
	w := bufio.NewWriter(out)
	for scanner.Scan() {
		if _, err := w.Write(append(d.Handle(scanner.Bytes()), '\n')); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if d.quit {
			return nil
		}
	}
	return scanner.Err()
}

// Main serves the backend on stdin/stdout and exits: 0 at the end of input or after
// quit, 1 (with the reason on stderr) when the factory or the pipe fails.
func Main(backend string, factory Factory) {
	d, err := New(backend, factory)
	if err == nil {
		err = Serve(os.Stdin, os.Stdout, d)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", backend, err)
		os.Exit(1)
	}
	os.Exit(0)
}
