package api

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

// maxErrorBody bounds how much of an error response is kept.
const maxErrorBody = 64 << 10

// probe watches one HTTP exchange from inside the client's middleware: the
// status, the body of an error response (the client's own error type drops
// bodies it cannot parse) and whether the stream's terminating
// `data: [DONE]` line arrived.
type probe struct {
	status      int
	contentType string
	errBody     []byte
	done        bool
}

// option installs the probe on one request.
func (p *probe) option() option.RequestOption { return option.WithMiddleware(p.middleware) }

func (p *probe) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	p.status, p.contentType = res.StatusCode, res.Header.Get("Content-Type")
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		p.errBody = body
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
	res.Body = &doneWatcher{rc: res.Body, done: &p.done, tail: []byte("\n")}
	return res, nil
}

// doneWatcher passes a response body through and notes a `data: [DONE]`
// line. Only a line start can match: JSON strings cannot hold a raw newline.
type doneWatcher struct {
	rc   io.ReadCloser
	done *bool
	tail []byte
}

var doneMarks = [][]byte{[]byte("\ndata: [DONE]"), []byte("\ndata:[DONE]")}

func (w *doneWatcher) Read(b []byte) (int, error) {
	n, err := w.rc.Read(b)
	if n > 0 && !*w.done {
		buf := append(w.tail, b[:n]...)
		for _, m := range doneMarks {
			if bytes.Contains(buf, m) {
				*w.done = true
			}
		}
		keep := min(len(buf), 16)
		w.tail = append(w.tail[:0:0], buf[len(buf)-keep:]...)
	}
	return n, err
}

func (w *doneWatcher) Close() error { return w.rc.Close() }

// truncated explains a stream that ended without [DONE]: an endpoint that
// answered without streaming says so.
func (p *probe) truncated() error {
	if ct := p.contentType; ct != "" && !strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
		return fmt.Errorf("%w (the endpoint answered %s, not an event stream)", errTruncated, ct)
	}
	return errTruncated
}
