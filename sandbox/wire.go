package sandbox

import (
	"bufio"
	"encoding/gob"
	"io"
)

// The runner's wire. The host's requests on the runner's stdin and the
// runner's replies on its stdout are two gob streams, one encoder and one
// decoder per direction for the runner's life: gob sends each type's
// description once, then only values, so a start request costs a few
// microseconds to encode and decode where a JSON line cost 9 µs (a
// process-cooperative one) to 38 µs (a Bubblewrap command line) on the
// benchmark machine (BenchmarkRequestCodec). Fields are matched by name, so
// a runner of another build reads what both know. The one-shot helper
// (configArg) keeps JSON: its config is a command-line argument.

// wireReply is a runner reply as it travels. gob leaves out zero values,
// so a pointer to exit code 0 would arrive as nil ("no exit code"): the code
// travels as Exited and Code instead of the report's pointer.
type wireReply struct {
	ID     uint64
	Report helperReport
	Exited bool
	Code   int
	Live   *Usage // a usage report (runnerReply.Live)
}

func toWire(r runnerReply) wireReply {
	w := wireReply{ID: r.ID, Report: r.Report, Live: r.Live}
	if r.Report.ExitCode != nil {
		w.Exited, w.Code = true, *r.Report.ExitCode
	}
	w.Report.ExitCode = nil
	return w
}

func (w wireReply) reply() runnerReply {
	r := runnerReply{ID: w.ID, Report: w.Report, Live: w.Live}
	r.Report.ExitCode = nil
	if w.Exited {
		code := w.Code
		r.Report.ExitCode = &code
	}
	return r
}

// replyWriter encodes replies onto the runner's stdout.
type replyWriter struct{ enc *gob.Encoder }

func newReplyWriter(w io.Writer) *replyWriter { return &replyWriter{enc: gob.NewEncoder(w)} }

func (w *replyWriter) write(r runnerReply) error { return w.enc.Encode(toWire(r)) }

// replyReader decodes the runner's replies on the host.
type replyReader struct{ dec *gob.Decoder }

func newReplyReader(r io.Reader) *replyReader {
	return &replyReader{dec: gob.NewDecoder(bufio.NewReader(r))}
}

func (r *replyReader) read() (runnerReply, error) {
	var w wireReply
	if err := r.dec.Decode(&w); err != nil {
		return runnerReply{}, err
	}
	return w.reply(), nil
}

// requestReader decodes the host's requests in the runner.
type requestReader struct{ dec *gob.Decoder }

func newRequestReader(r io.Reader) *requestReader {
	return &requestReader{dec: gob.NewDecoder(bufio.NewReaderSize(r, 64<<10))}
}

func (r *requestReader) read() (runnerRequest, error) {
	var req runnerRequest
	err := r.dec.Decode(&req)
	return req, err
}

// newRequestEncoder encodes requests onto a runner's stdin.
func newRequestEncoder(w io.Writer) *gob.Encoder { return gob.NewEncoder(w) }
