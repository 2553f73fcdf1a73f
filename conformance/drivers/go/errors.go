package driver

import (
	"errors"
	"fmt"
)

// Kind names an error the way the protocol does (C-WIRE-5).
type Kind string

// The clock's own refusals, and the driver's.
const (
	TypeError    Kind = "TypeError"    // a time that is not a string of digits (C-WIRE-2, C-TIME-3)
	ValueError   Kind = "ValueError"   // a value out of range: a past time, a zero period (C-SCH-1, C-PER-1)
	RuntimeError Kind = "RuntimeError" // a call at the wrong moment: a nested advance (C-ADV-4)
	BadRequest   Kind = "bad_request"  // unknown op, clock or entry, a malformed request
	Unsupported  Kind = "unsupported"  // a feature the backend does not declare
	Internal     Kind = "internal"     // the driver's own failure
)

// Error is an error of a Kind. A clock returns one (Errorf) to refuse a call; any other
// error it returns is reported as RuntimeError, a panic as internal. An adapter may use a
// Kind of its own (Errorf(Kind("Deadlock"), ...)): the wire reports it as internal, with
// the message "Deadlock: ..." (docs/kits.md, "What a kit reports").
type Error struct {
	Kind    Kind
	Message string
	kit     bool // a refusal of the kit's own (a malformed request): its message has no "Kind: "
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Errorf is an *Error of kind with a formatted message.
func Errorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// kitErrorf is a refusal of the kit's own, found in the request before the clock is asked.
func kitErrorf(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), kit: true}
}

// KindOf is the Kind of err: its *Error's, else RuntimeError.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return RuntimeError
}

// messageOf is err's text without its kind prefix.
func messageOf(err error) string {
	var e *Error
	if errors.As(err, &e) && e == err {
		return e.Message
	}
	return err.Error()
}

// describe is the message of a clock's error as the wire carries it: "Kind: text", the
// error's own name first (the adapter's own kind included), as Python names an exception
// by its class. The driver's own refusals (bad_request, unsupported, internal) are the
// text alone.
func describe(err error) string {
	var e *Error
	if errors.As(err, &e) && e.kit {
		return e.Message
	}
	switch k := KindOf(err); k {
	case BadRequest, Unsupported, Internal:
		return messageOf(err)
	default:
		return string(k) + ": " + messageOf(err)
	}
}
