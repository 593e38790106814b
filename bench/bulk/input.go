package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// input is the dotenv file every tool reads, and what it holds.
type input struct {
	path   string
	size   int64
	values []string // values[i] is the value of name(i)
}

// name is the name of the i-th secret: KEY_00001 for i = 0.
func name(i int) string { return fmt.Sprintf("KEY_%05d", i+1) }

// writeInput writes a dotenv file of n secrets in dir.
func writeInput(dir string, n int) (input, error) {
	in := input{path: filepath.Join(dir, "secrets.env"), values: values(n)}
	var b bytes.Buffer
	b.WriteString("# " + strconv.Itoa(n) + " secrets for arca's bulk benchmark\n")
	for i, v := range in.values {
		b.WriteString(dotenvLine(name(i), v))
	}
	if err := os.WriteFile(in.path, b.Bytes(), 0o600); err != nil {
		return in, err
	}
	in.size = int64(b.Len())
	return in, nil
}

// valueChars are the characters values are made of: printable ASCII but
// for the quotes, the backslash, '$', '#' and '`', which dotenv readers
// treat differently from one another (escapes, expansion, comments).
const valueChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" +
	"    -_.,:;/+=@%!?()[]{}<>~^&*|"

// values returns n values of about 40 bytes of varied printable text, the
// same on every run. Some hold spaces at both ends, some double quotes,
// some a single quote; dotenvLine quotes each so that it reads back as is.
func values(n int) []string {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 34+rng.IntN(13))
		for j := range b {
			b[j] = valueChars[rng.IntN(len(valueChars))]
		}
		v := string(b)
		switch i % 10 {
		case 3:
			v = v[:10] + `"quoted"` + v[18:]
		case 6:
			v = v[:10] + "it's" + v[14:]
		case 9:
			v = "  " + v[2:len(v)-2] + "  "
		}
		out[i] = v
	}
	return out
}

// dotenvLine is one KEY="value" line. A value holding a double quote is
// single-quoted instead, so that it needs no escape: the readers agree on
// a quoted value without escapes, not on escapes.
func dotenvLine(key, v string) string {
	if strings.Contains(v, `"`) {
		return key + "='" + v + "'\n"
	}
	return key + `="` + v + "\"\n"
}
