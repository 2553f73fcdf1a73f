package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// request is one decoded request; numbers are kept as json.Number so that a time sent
// as a JSON number is told apart from a string of digits (C-WIRE-2).
type request map[string]any

func decode(line []byte) (request, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, kitErrorf(BadRequest, "the request is not one JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, kitErrorf(BadRequest, "the request is not one JSON object: something follows it")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, kitErrorf(BadRequest, "the request must be a JSON object, got %s", show(v))
	}
	return obj, nil
}

// show is a short quotation of a request value for a message.
func show(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	switch v.(type) {
	case json.Number:
		return "the JSON number " + s
	}
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// digits is the string of decimal digits in field name of r (C-WIRE-2): a missing field
// is bad_request, anything but [0-9]+ a TypeError.
func (r request) digits(name string) (string, error) {
	v, present := r[name]
	if !present {
		return "", kitErrorf(BadRequest, "missing field %s", name)
	}
	s, ok := v.(string)
	if !ok || !isDigits(s) {
		return "", kitErrorf(TypeError, "%s must be a string of decimal digits [0-9]+, got %s; send integers as strings, e.g. \"1000\"", name, show(v))
	}
	return s, nil
}

// uint is field name as a wire integer: at most 2**64-1, else a ValueError (C-TIME-4).
func (r request) uint(name string) (Time, error) {
	s, err := r.digits(name)
	if err != nil {
		return Time{}, err
	}
	return parseUint(name, s)
}

func parseUint(name, s string) (Time, error) {
	trimmed := strings.TrimLeft(s, "0")
	var v uint64
	for i := 0; i < len(trimmed); i++ {
		d := uint64(trimmed[i] - '0')
		if len(trimmed) > 20 || v > (^uint64(0)-d)/10 {
			q := s
			if len(q) > 60 {
				q = q[:60] + "..."
			}
			return Time{}, kitErrorf(ValueError, "%s = %s is larger than 18446744073709551615, the largest value this driver keeps exactly", name, q)
		}
		v = v*10 + d
	}
	return Ns(v), nil
}

// uintOr is field name, or def when it is absent.
func (r request) uintOr(name string, def Time) (Time, error) {
	if _, present := r[name]; !present {
		return def, nil
	}
	return r.uint(name)
}

// bigint is field name as an integer of any size (a seed), at most 4000 digits.
func (r request) bigint(name string) (*big.Int, error) {
	s, err := r.digits(name)
	if err != nil {
		return nil, err
	}
	if len(s) > 4000 {
		return nil, kitErrorf(ValueError, "%s has %d digits; this driver keeps at most 4000", name, len(s))
	}
	v, _ := new(big.Int).SetString(s, 10)
	return v, nil
}

// str is field name as a string; anything else is bad_request.
func (r request) str(name string) (string, error) {
	v, present := r[name]
	if !present {
		return "", kitErrorf(BadRequest, "missing field %s", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", kitErrorf(BadRequest, "%s must be a string, got %s", name, show(v))
	}
	return s, nil
}

// action is one step of a callback (C-WIRE-4).
type action struct {
	do     string // schedule, cancel, advance, raise, halt
	ns     Time   // delay_ns (schedule) or dt_ns (advance)
	text   string // entry (cancel) or message (raise)
	onFire []action
}

// actions checks an on_fire list with its request: a bad time anywhere refuses it all.
func actions(v any, present bool, depth int) ([]action, error) {
	if !present {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, kitErrorf(BadRequest, "on_fire must be a list of actions, got %s", show(v))
	}
	if depth > 200 {
		return nil, kitErrorf(BadRequest, "on_fire is nested deeper than 200 levels")
	}
	out := make([]action, 0, len(list))
	for _, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, kitErrorf(BadRequest, "an on_fire action must be an object, got %s", show(item))
		}
		r := request(obj)
		do, err := r.str("do")
		if err != nil {
			return nil, err
		}
		a := action{do: do}
		switch do {
		case "schedule":
			if a.ns, err = r.uint("delay_ns"); err != nil {
				return nil, err
			}
			sub, present := r["on_fire"]
			if a.onFire, err = actions(sub, present, depth+1); err != nil {
				return nil, err
			}
		case "cancel":
			if a.text, err = r.str("entry"); err != nil {
				return nil, err
			}
		case "advance":
			if a.ns, err = r.uint("dt_ns"); err != nil {
				return nil, err
			}
		case "raise":
			a.text = "raised"
			if m, ok := r["message"].(string); ok {
				a.text = m
			}
		case "halt":
		default:
			return nil, kitErrorf(BadRequest, "unknown action do=%s; expected schedule, cancel, advance, raise or halt", show(do))
		}
		out = append(out, a)
	}
	return out, nil
}

// reply is a JSON object whose members keep their order: ok first, the observation last.
type reply struct {
	keys []string
	vals []any
}

func (o *reply) set(key string, val any) *reply {
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = val
			return o
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, val)
	return o
}

func (o *reply) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is v as JSON the way the Python reference writes it: '<', '>' and '&' as they
// are (encoding/json escapes them for HTML by default), no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func okReply() *reply { return (&reply{}).set("ok", true) }

func errorReply(kind Kind, message string) *reply {
	return (&reply{}).set("ok", false).set("error", string(kind)).set("message", message)
}
