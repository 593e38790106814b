package secretfile

import (
	"strings"
	"testing"
)

func TestDotenvGood(t *testing.T) {
	tests := []struct {
		name, in string
		want     []kv
	}{
		{"empty", "", nil},
		{"blank and comments", "\n  \n# c\n   # indented = comment\n\t\n", nil},
		{"plain", "A=1\nB=two\n", []kv{{"", "A", "1", "line 1"}, {"", "B", "two", "line 2"}}},
		{"no final newline", "A=1", []kv{{"", "A", "1", "line 1"}}},
		{"export", "export A=1\nexport\tB=2\nexportC=3\nexport=4\n", []kv{{"", "A", "1", "line 1"}, {"", "B", "2", "line 2"}, {"", "exportC", "3", "line 3"}, {"", "export", "4", "line 4"}}},
		{"spaces around =", "A = 1\nB\t=\t2  \n  C=3\n", []kv{{"", "A", "1", "line 1"}, {"", "B", "2", "line 2"}, {"", "C", "3", "line 3"}}},
		{"empty values", "A=\nB=''\nC=\"\"\nD= # c\n", []kv{{"", "A", "", "line 1"}, {"", "B", "", "line 2"}, {"", "C", "", "line 3"}, {"", "D", "", "line 4"}}},
		{"unquoted comment", "A=x # c\nB=x\t#c\nC=a#b\nD=#x\nE=a # b # c\n", []kv{{"", "A", "x", "line 1"}, {"", "B", "x", "line 2"}, {"", "C", "a#b", "line 3"}, {"", "D", "#x", "line 4"}, {"", "E", "a", "line 5"}}},
		{"unquoted keeps inner spaces and quotes", "A=a b  c\nB=it's\nC=x\"y\n", []kv{{"", "A", "a b  c", "line 1"}, {"", "B", "it's", "line 2"}, {"", "C", `x"y`, "line 3"}}},
		{"= in value", "A=b=c==\n", []kv{{"", "A", "b=c==", "line 1"}}},
		{"no expansion", "H=$HOME\nX=${X}\nC=\"$(rm -rf /) `id` $X\"\nS='$HOME'\n", []kv{{"", "H", "$HOME", "line 1"}, {"", "X", "${X}", "line 2"}, {"", "C", "$(rm -rf /) `id` $X", "line 3"}, {"", "S", "$HOME", "line 4"}}},
		{"single quotes literal", `A='a\nb\\c"d #e'` + "\n", []kv{{"", "A", `a\nb\\c"d #e`, "line 1"}}},
		{"single quotes span lines", "A='one\ntwo\n'\nB=2\n", []kv{{"", "A", "one\ntwo\n", "line 1"}, {"", "B", "2", "line 4"}}},
		{"double-quote escapes", `A="a\nb\rc\td\"e\\f\$g"` + "\n", []kv{{"", "A", "a\nb\rc\td\"e\\f$g", "line 1"}}},
		{"other backslashes kept", `A="C:\Users\x\0\'"` + "\n" + `B="end\\"`, []kv{{"", "A", `C:\Users\x\0\'`, "line 1"}, {"", "B", `end\`, "line 2"}}},
		{"double quotes span lines", "A=\"one\ntwo\"\nB=\"#x\" # c\n", []kv{{"", "A", "one\ntwo", "line 1"}, {"", "B", "#x", "line 3"}}},
		{"after the quote", "A='x'  \nB=\"y\"# c\nC='z'\t# c\n", []kv{{"", "A", "x", "line 1"}, {"", "B", "y", "line 2"}, {"", "C", "z", "line 3"}}},
		{"CRLF", "A=1\r\nB='x'\r\nC=\"a\r\nb\"\r\n\r\n# c\r\nD='p\r\nq'\r\nE=e #c\r\n", []kv{{"", "A", "1", "line 1"}, {"", "B", "x", "line 2"}, {"", "C", "a\nb", "line 3"}, {"", "D", "p\nq", "line 7"}, {"", "E", "e", "line 9"}}},
		{"final CR", "A=1\r", []kv{{"", "A", "1", "line 1"}}},
		{"a lone CR inside stays", "A=a\rb\nB=\"c\rd\"\n", []kv{{"", "A", "a\rb", "line 1"}, {"", "B", "c\rd", "line 2"}}},
		{"unicode", "A=é 日本\nB=\"🙂\"\n", []kv{{"", "A", "é 日本", "line 1"}, {"", "B", "🙂", "line 2"}}},
		{"segment names", "a.b-c_D9=1\n9lives=2\n", []kv{{"", "a.b-c_D9", "1", "line 1"}, {"", "9lives", "2", "line 2"}}},
		{"escaped quote does not close", `A="a\"b"` + "\n", []kv{{"", "A", `a"b`, "line 1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseOK(t, "dotenv", tc.in, Flat, tc.want...) })
	}
}

func TestDotenvRefused(t *testing.T) {
	long := strings.Repeat("N", 129)
	tests := []struct{ name, in, msg string }{
		{"no =", "A=1\n" + canary + "\n", "line 2: not an assignment NAME=value, a comment or a blank line"},
		{"export alone", "export " + canary + "\n", "line 1: not an assignment NAME=value, a comment or a blank line"},
		{"space in name", "\n\nMY KEY=" + canary + "\n", `line 3: the name before = is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"a value split over lines", "TOKEN=\nab+cd/" + canary + "==\n", "line 2: the name before = is not a valid name: has a character outside [A-Za-z0-9._-]: '+'"},
		{"its padding line", "TOKEN=\nU29tZVNlY3JldA==\n", "line 2: U29tZVNlY3JldA: the value starts with = (is a value split over lines? quote a value that spans lines)"},
		{"empty name", "=" + canary + "\n", `line 1: the name before = is not a valid name: is empty`},
		{"name starts with a dot", ".A=" + canary + "\n", `line 1: the name before = is not a valid name: must start with a letter or digit`},
		{"non-ASCII name", "É=" + canary + "\n", `line 1: the name before = is not a valid name: has a non-ASCII character`},
		{"control character in name", "A\x01=" + canary + "\n", `line 1: the name before = is not a valid name: has a control character`},
		{"long name", long + "=" + canary + "\n", "line 1: the name before = is not a valid name: is longer than 128 characters"},
		{"a YAML line", "KEY: " + canary + "==\n", "line 1: the name before = is not a valid name: has a character outside [A-Za-z0-9._-]: ':'"},
		{"a JSON line", `  "KEY": "` + canary + `=="` + "\n", "line 1: the name before = is not a valid name: has a character outside [A-Za-z0-9._-]: '\"'"},
		{"duplicate", "A=1\nDB_PASSWORD=" + canary + "\n\n\n\n\n\n\nDB_PASSWORD=" + canary + "\n", "line 9: DB_PASSWORD is also set on line 2"},
		{"the first repeat down the file", "B=" + canary + "\nA=" + canary + "\nA=" + canary + "\nB=" + canary + "\nA=" + canary + "\n", "line 3: A is also set on line 2"},
		{"duplicate via export", "A=" + canary + "\nexport A=" + canary + "\n", "line 2: A is also set on line 1"},
		{"single quote not closed", "A=1\nB='" + canary + "\nC=3\n", "line 2: B: the single quote opened on line 2 is not closed"},
		{"double quote not closed", "A=\"" + canary + "\n\n", "line 1: A: the double quote opened on line 1 is not closed"},
		{"escaped closing quote", "A=\"" + canary + "\\\"\n", "line 1: A: the double quote opened on line 1 is not closed"},
		{"backslash at the end", "A=\"" + canary + "\\", "line 1: A: the double quote opened on line 1 is not closed"},
		{"text after the quote", "A='" + canary + "' " + canary + "\n", "line 1: A: text after the closing quote (only a # comment may follow)"},
		{"text after a multi-line quote", "A=\"x\n" + canary + "\"" + canary + "\n", "line 2: A: text after the closing quote (only a # comment may follow)"},
		{"second quoted value", "A='x''" + canary + "'\n", "line 1: A: text after the closing quote (only a # comment may follow)"},
		{"lone CR after the quote", "A='" + canary + "'\rB=1\n", "line 1: A: text after the closing quote (only a # comment may follow)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseErr(t, "dotenv", tc.in, tc.msg, Options{}) })
	}
}
