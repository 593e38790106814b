package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/testscript"
)

// A block marked <!-- mcp-client --> is the configuration an MCP client
// reads to start arca mcp: a JSON block's "mcpServers" object (Claude
// Code's .mcp.json, Claude Desktop, Cursor), or a TOML block's
// [mcp_servers.NAME] tables (Codex). Each server it names is started as
// its command and args say, the command being arca, the binary under
// test, in a fresh HOME after arca init, and must answer an initialize
// handshake as arca and list its tools.
func TestDocMCPClients(t *testing.T) {
	dir := t.TempDir()
	n := 0
	for _, b := range markedBlocks(t, "mcp-client") {
		servers, err := mcpClientServers(b)
		if err != nil {
			t.Fatalf("%s:%d: %v", b.doc, b.line, err)
		}
		if len(servers) == 0 {
			t.Fatalf("%s:%d: the block names no server", b.doc, b.line)
		}
		for name, s := range servers {
			if s.Command != "arca" {
				t.Fatalf("%s:%d: server %s runs %q, not arca", b.doc, b.line, name, s.Command)
			}
			n++
			script := mcpClientScript(s)
			file := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.txtar", strings.TrimSuffix(filepath.Base(b.doc), ".md"), b.line, name))
			if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no MCP client configuration found in the docs")
	}
	testscript.Run(t, scriptParams(dir, nil))
}

// mcpServer is how a client's configuration starts a server.
type mcpServer struct {
	Command string   `json:"command" toml:"command"`
	Args    []string `json:"args" toml:"args"`
}

// mcpClientServers reads the servers a client configuration block names.
func mcpClientServers(b docBlock) (map[string]mcpServer, error) {
	switch b.lang {
	case "json":
		var c struct {
			Servers map[string]mcpServer `json:"mcpServers"`
		}
		dec := json.NewDecoder(strings.NewReader(b.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		return c.Servers, nil
	case "toml":
		var c struct {
			Servers map[string]mcpServer `toml:"mcp_servers"`
		}
		dec := toml.NewDecoder(strings.NewReader(b.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		return c.Servers, nil
	}
	return nil, fmt.Errorf("a client configuration in %q: json or toml", b.lang)
}

// mcpHandshake is what a client sends first: initialize, initialized, and
// the list of tools.
const mcpHandshake = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doc-client","version":"1.0.0"}}}
> {"jsonrpc":"2.0","method":"notifications/initialized"}
> {"jsonrpc":"2.0","id":2,"method":"tools/list"}
`

// mcpClientScript is the transcript that starts s as its client would.
func mcpClientScript(s mcpServer) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'" // testscript's quoting
	}
	return "exec arca init\n" +
		"exec mcphost handshake.txt arca " + strings.Join(args, " ") + "\n" +
		"stdout '^\\{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\\{.*\"serverInfo\":\\{\"name\":\"arca\"'\n" +
		"stdout '^\\{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\\{.*\"tools\":\\[.*\"name\":\"arca_list\"'\n" +
		"-- handshake.txt --\n" + mcpHandshake
}
