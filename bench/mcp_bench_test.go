package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// mcpRecords is how many names the vault BenchmarkMCPList lists holds.
const mcpRecords = 100

// BenchmarkMCPList measures an arca_list tool call of arca mcp against a
// list request of arca serve, both the built binary over real pipes on
// the same vault of mcpRecords names, their audit events on a pipe. The
// MCP side is driven with raw JSON-RPC lines after initialize, so no
// client library's cost counts: a tools/call line written, its response
// line read. When $ARCA_BASELINE names a binary (for instance one built
// from main), its arca mcp is a third side. One round trip of each side
// per iteration, the side that goes first taking turns, so whatever else
// the machine does falls on every side alike; p50 and p99 of each, and
// MCP's p50 over serve's (issue 33's target: at most 1.5), and over the
// baseline's.
func BenchmarkMCPList(b *testing.B) {
	bins := build(b)
	bins.arcaCmd(b, "", "init")
	var puts strings.Builder
	for i := range mcpRecords {
		fmt.Fprintf(&puts, `{"id":%d,"op":"put","ref":"arca://app/secret-%03d","value":"value-%03d-0123456789abcdef"}`+"\n", i, i, i)
	}
	bins.arcaCmd(b, puts.String(), "serve")
	const serveList = `{"id":1,"op":"list","actor":"agent:bench"}` + "\n"
	id := 1
	call := func() string {
		id++
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"arca_list","arguments":{}}}`+"\n", id)
	}
	serve := start(b, bins.env(), bins.arca, "serve")
	listed(b, "serve", serve.roundTrip(b, serveList), "/result")
	names, procs, lines := []string{"serve", "mcp"}, []*proc{serve}, []func() string{func() string { return serveList }, call}
	mcps := []string{bins.arca}
	if base := os.Getenv("ARCA_BASELINE"); base != "" {
		names, mcps, lines = append(names, "baseline"), append(mcps, base), append(lines, call)
	}
	for _, path := range mcps {
		p := start(b, bins.env(), path, "mcp", "--actor", "agent:bench", "--audit-stderr")
		mcpInitialize(b, p)
		listed(b, "mcp", p.roundTrip(b, call()), "/result/structuredContent")
		procs = append(procs, p)
	}
	lat := make([][]time.Duration, len(procs))
	b.ResetTimer()
	for i := range b.N {
		for k := range procs {
			side := (i + k) % len(procs)
			line := lines[side]()
			t0 := time.Now()
			procs[side].roundTrip(b, line)
			lat[side] = append(lat[side], time.Since(t0))
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(procs))
	for side, name := range names {
		slices.Sort(lat[side])
		p50[side] = float64(lat[side][len(lat[side])/2].Nanoseconds())
		b.ReportMetric(p50[side], name+"-p50-ns")
		b.ReportMetric(float64(lat[side][len(lat[side])*99/100].Nanoseconds()), name+"-p99-ns")
	}
	b.ReportMetric(p50[1]/p50[0], "mcp/serve")
	if len(procs) > 2 {
		b.ReportMetric(p50[1]/p50[2], "mcp/baseline")
	}
}

// mcpInitialize opens the MCP session on p: initialize, its answer, then
// the initialized notification.
func mcpInitialize(b *testing.B, p *proc) {
	b.Helper()
	resp := p.roundTrip(b, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	if !strings.Contains(resp, `"protocolVersion"`) {
		b.Fatalf("initialize: %s", resp)
	}
	if _, err := p.in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
}

// listed fails b unless resp holds, at the JSON pointer at (of object
// members only), a list result of every name in the vault.
func listed(b *testing.B, side, resp, at string) {
	b.Helper()
	var v any
	if err := json.Unmarshal([]byte(resp), &v); err != nil {
		b.Fatalf("%s: %v: %s", side, err, resp)
	}
	for _, k := range strings.Split(strings.TrimPrefix(at, "/"), "/") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	if recs, _ := m["records"].([]any); len(recs) != mcpRecords {
		b.Fatalf("%s listed %d names, want %d: %.300s", side, len(recs), mcpRecords, resp)
	}
}
