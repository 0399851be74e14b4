package sandbox

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestWireRoundTrip: requests and replies come out of the runner's wire as
// they went in, exit code 0 included (gob leaves zero values out, so a
// pointer to 0 must not arrive as "no exit code"), several per stream.
func TestWireRoundTrip(t *testing.T) {
	cfg := codecConfig(3)
	cfg.ProotStatus = true
	zero, three := 0, 3
	reqs := []runnerRequest{{Op: "start", ID: 1, Config: &cfg}, {Op: "cancel", ID: 1}, {Op: "start", ID: 2, Config: &cfg}}
	reps := []runnerReply{
		{ID: 1, Report: helperReport{ExitCode: &zero, Samples: 2, WallSeconds: 0.5, Containment: "c"}},
		{ID: 2, Report: helperReport{Signal: "SIGKILL", TimedOut: true, Limit: LimitWallTime, KilledByUs: true}},
		{ID: 3, Report: helperReport{ExitCode: &three, Survivors: 1, Error: "helper: x"}},
	}
	var in, out bytes.Buffer
	enc, rw := newRequestEncoder(&in), newReplyWriter(&out)
	for i := range reqs {
		if err := enc.Encode(reqs[i]); err != nil {
			t.Fatal(err)
		}
		if err := rw.write(reps[i]); err != nil {
			t.Fatal(err)
		}
	}
	rd, rr := newRequestReader(&in), newReplyReader(&out)
	for i := range reqs {
		got, err := rd.read()
		if err != nil || !reflect.DeepEqual(got, reqs[i]) {
			t.Errorf("request %d: %+v, %v; want %+v", i, got, err, reqs[i])
		}
		back, err := rr.read()
		if err != nil || !reflect.DeepEqual(back, reps[i]) {
			t.Errorf("reply %d: %+v, %v; want %+v", i, back, err, reps[i])
		}
	}
	if _, err := rd.read(); err == nil {
		t.Error("a drained request stream still decodes")
	}
}

// TestWireRefusesGarbage: bytes that are not a request stream are an error
// (the runner then stops), never a request or a panic.
func TestWireRefusesGarbage(t *testing.T) {
	for _, s := range []string{`{"op":"start","id":1}` + "\n", "\x00\x01\x02", strings.Repeat("\xff", 64)} {
		if req, err := newRequestReader(strings.NewReader(s)).read(); err == nil {
			t.Errorf("%q decoded as %+v", s, req)
		}
	}
	var b bytes.Buffer
	_ = newRequestEncoder(&b).Encode(runnerRequest{Op: "start", ID: 1, Config: &helperConfig{Timeout: time.Second}})
	cut := b.Bytes()[:b.Len()-3]
	if _, err := newRequestReader(bytes.NewReader(cut)).read(); err == nil {
		t.Error("a cut request decoded")
	}
}

// FuzzRequestReader: no input makes the request decoder panic.
func FuzzRequestReader(f *testing.F) {
	var b bytes.Buffer
	cfg := codecConfig(2)
	_ = newRequestEncoder(&b).Encode(runnerRequest{Op: "start", ID: 1, Config: &cfg})
	f.Add(b.Bytes())
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := newRequestReader(bytes.NewReader(data))
		for range 4 {
			if _, err := rd.read(); err != nil {
				return
			}
		}
	})
}
