package secretfile

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/arca-secrets/arca/ops/ref"
)

// parseSopsDotenv reads what `sops -d` prints for a .env file, which is
// not the dotenv parseDotenv reads: sops writes every value unquoted and
// as it is, but for its newlines, which it writes as the two characters
// \n. So a line is NAME=VALUE split at the first =, with nothing trimmed,
// no quotes and no comments after a value; \n in VALUE is a newline and
// nothing else is decoded. Blank lines and lines starting with # are
// skipped, as sops skips them.
func parseSopsDotenv(data []byte, c *collector) error {
	seen := map[string]int{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		lineNo := n + 1
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		name, value, ok := bytes.Cut(line, []byte("="))
		if !ok {
			return fmt.Errorf("line %d: not an assignment NAME=value, a comment or a blank line", lineNo)
		}
		if prob := ref.SegmentProblem(string(name)); prob != "" {
			return fmt.Errorf("line %d: the name before = is not a valid name: %s", lineNo, prob)
		}
		if first, dup := seen[string(name)]; dup {
			return fmt.Errorf("line %d: %s is also set on line %d", lineNo, name, first)
		}
		seen[string(name)] = lineNo
		value = bytes.ReplaceAll(value, []byte(`\n`), []byte("\n"))
		if err := c.add("", string(name), value, "line "+strconv.Itoa(lineNo), func() string { return fmt.Sprintf("line %d: %s", lineNo, name) }); err != nil {
			return err
		}
	}
	return nil
}
