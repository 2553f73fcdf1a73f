package drivertest

import "testing"

func TestC_WIRE_7_replies_are_compared_as_the_suite_compares_them(t *testing.T) {
	want := map[string]any{"ok": true, "message": "theirs", "now_ns": "5", "next_event_ns": "9", "stored": "2",
		"fired": []any{map[string]any{"entry": "a", "now_ns": "5"}}}
	same := map[string]any{"ok": true, "message": "mine", "now_ns": "5", "next_event_ns": "9", "stored": "1030",
		"fired": []any{map[string]any{"entry": "a", "now_ns": "5"}}, "extra": "allowed"}
	if d := difference(same, want, true); d != "" {
		t.Fatalf("an equal reply differs: %s", d)
	}
	for _, tc := range []struct {
		key  string
		val  any
		peek bool
		diff string
	}{
		{"now_ns", "6", true, `now_ns: expected "5", observed "6"`},
		{"next_event_ns", nil, true, `next_event_ns: expected "9", observed null`},
		{"next_event_ns", nil, false, ``},
		{"stored", "1031", true, `stored: 1031 held for 2 live`},
		{"fired", []any{map[string]any{"entry": "a", "now_ns": "5", "nested": "RuntimeError"}}, true,
			`fired: expected [{"entry":"a","now_ns":"5"}], observed [{"entry":"a","nested":"RuntimeError","now_ns":"5"}]`},
	} {
		got := map[string]any{}
		for k, v := range same {
			got[k] = v
		}
		got[tc.key] = tc.val
		if d := difference(got, want, tc.peek); d != tc.diff {
			t.Errorf("%s = %v (peek %v): difference %q, want %q", tc.key, tc.val, tc.peek, d, tc.diff)
		}
	}
}
