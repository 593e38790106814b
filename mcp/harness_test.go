package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/backend"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/pdp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pdpConfig is the [serve.pdp] a harness's config needs for its service to
// consult a PDP at all; the harness's decider decides in its place.
const pdpConfig = "[serve.pdp]\nexec = \"false\"\ntimeout_ms = 1000\n"

// harnessOptions shape a harness: the config beside [serve.pdp], the
// policy (nil allows everything), the actor the session claims, the
// client's name and options and the protocol version it asks for
// ("": the SDK's latest), and the backends (nil: the real ones).
type harnessOptions struct {
	config   string
	decide   func(pdp.Request) pdp.Verdict
	actor    string
	client   string
	options  *sdk.ClientOptions
	protocol string
	environ  []string
	now      func() time.Time // the service's clock; nil: time.Now
	// sent, when set, sees each message the client sends, once arca has
	// read it.
	sent     func(msg []byte)
	backends ops.Backends // nil: the real ones
	who      audit.Who
}

// harness is one arca mcp session in process, over pipes, with the Go
// SDK's own client on the other end: every byte either way is kept in
// transcript, every audit event in events, every PDP request in asked.
type harness struct {
	t          *testing.T
	fix        *opstest.Fixture
	svc        *ops.Service
	events     *syncBuffer
	transcript *syncBuffer
	decider    *funcDecider
	session    *sdk.ClientSession
	input      io.Closer  // the client's input to arca: closing it ends the session
	done       chan error // Serve's return
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, events: &syncBuffer{}, transcript: &syncBuffer{}, done: make(chan error, 1)}
	if o.backends == nil {
		o.backends = backend.Kinds{}
	}
	h.fix = opstest.New(t, opstest.Options{Config: pdpConfig + o.config, Backends: o.backends})
	h.decider = &funcDecider{decide: o.decide}
	aw := audit.NewWriter(h.events, audit.SourceMCP, nil)
	h.svc = ops.New(ops.Options{Config: h.fix.Config, Audit: aw, ConsultPDP: true, Decider: h.decider, Backends: o.backends, Environ: o.environ, Now: o.now})
	t.Cleanup(func() { h.svc.Close() })

	// Each message goes into the transcript before the pipe, so that it
	// is there before the other end can have read it.
	inR, inW := io.Pipe()   // client → arca
	outR, outW := io.Pipe() // arca → client
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		h.done <- Serve(ctx, Options{In: inR, Out: io.MultiWriter(h.transcript, outW), Service: h.svc, Config: h.fix.Config,
			Audit: aw, Actor: o.actor, Environ: o.environ, Who: o.who})
		outW.Close()
	}()
	name := o.client
	if name == "" {
		name = "harness-client"
	}
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1.0"}, o.options)
	toArca := io.MultiWriter(h.transcript, inW)
	if o.sent != nil {
		toArca = io.MultiWriter(toArca, sentFunc(o.sent))
	}
	h.input = inW
	tr := &sdk.IOTransport{Reader: outR, Writer: writeCloser{toArca, inW}}
	cs, err := c.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	h.session = cs
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		cancel()
		<-h.done
	})
	return h
}

// call calls tool name with args and returns its result; a protocol
// error fails the test.
func (h *harness) call(name string, args any) *sdk.CallToolResult {
	h.t.Helper()
	res, err := h.session.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// toolError is the error a failed tool call holds: its second text, the
// error object as serve has it. A failed call has no structured content.
func toolError(t *testing.T, res *sdk.CallToolResult) wireError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("the call did not fail: %+v", res.StructuredContent)
	}
	if res.StructuredContent != nil || len(res.Content) != 2 {
		t.Fatalf("a failed call has %d texts and structured content %v, want 2 texts and none", len(res.Content), res.StructuredContent)
	}
	text, ok := res.Content[1].(*sdk.TextContent)
	if !ok {
		t.Fatalf("a failed call's second content is %T", res.Content[1])
	}
	var e struct{ Error wireError }
	if err := json.Unmarshal([]byte(text.Text), &e); err != nil {
		t.Fatalf("a failed call's error %q: %v", text.Text, err)
	}
	return e.Error
}

// sentFunc is a writer that hands each write to a func.
type sentFunc func([]byte)

func (f sentFunc) Write(p []byte) (int, error) {
	f(bytes.Clone(p))
	return len(p), nil
}

type writeCloser struct {
	io.Writer
	c io.Closer
}

func (w writeCloser) Close() error { return w.c.Close() }

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// funcDecider decides with decide (nil: allow) and keeps every request.
type funcDecider struct {
	mu     sync.Mutex
	decide func(pdp.Request) pdp.Verdict
	asked  []pdp.Request
}

func (d *funcDecider) Decide(_ context.Context, req pdp.Request) (pdp.Verdict, error) {
	d.mu.Lock()
	d.asked = append(d.asked, req)
	f := d.decide
	d.mu.Unlock()
	if f == nil {
		return pdp.Verdict{Allow: true}, nil
	}
	return f(req), nil
}

func (d *funcDecider) Close() error { return nil }

func (d *funcDecider) requests() []pdp.Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]pdp.Request(nil), d.asked...)
}
