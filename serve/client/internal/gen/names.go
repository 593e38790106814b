package main

import "strings"

// goName is a JSON name as a Go field name: "created_at" is CreatedAt,
// "pdp_configured" PDPConfigured, "base_urls" BaseURLs.
func goName(s string) string {
	var out string
	for _, w := range strings.Split(s, "_") {
		switch w {
		case "id", "pdp", "cli", "url", "ttl", "http":
			out += strings.ToUpper(w)
		case "urls":
			out += "URLs"
		case "":
		default:
			out += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return out
}

// comment is text as a doc comment, after a blank line, its lines broken
// at spaces before column 77.
func comment(text string) string {
	out, line := "\n//", ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > 73 {
			out += " " + line + "\n//"
			line = w
			continue
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	return out + " " + line + "\n"
}

// exported is op's method name: "get" is Get, "http" HTTP.
func exported(op string) string { return goName(op) }
