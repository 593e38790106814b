package serve

import (
	"os/exec"
	"strings"
	"testing"
)

// The request loop links no backend: ops names none, so serve pulls in no
// etcd, gRPC or protobuf package (cmd/arca passes the backends in). Nor
// does it link what only the CLI's bulk verbs read: ops/bulk, ops/access,
// the foreign-format parsers of ops/secretfile and the YAML parser.
func TestLinksNoBackend(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, p := range deps {
		for _, banned := range []string{"go.etcd.io/", "google.golang.org/grpc", "google.golang.org/protobuf", "github.com/golang/protobuf", "github.com/arca-secrets/arca/vault/etcd", "github.com/arca-secrets/arca/ops/backend",
			"github.com/arca-secrets/arca/ops/bulk", "github.com/arca-secrets/arca/ops/access", "github.com/arca-secrets/arca/ops/secretfile",
			"go.yaml.in/yaml", "gopkg.in/yaml", "sigs.k8s.io/yaml"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("serve links %s", p)
			}
		}
	}
}
