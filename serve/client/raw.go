package client

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The request fields that are not strings (query, headers, args,
// services, versions) are written and checked by these, as the generated
// appendRequest and badUTF8 call them: an array of strings, an array of
// integers, an object of strings, an object of arrays of strings. An object's keys go in sorted
// order, so that a request is written the same way every time.

// appendStrings appends ss as a JSON array of strings.
func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendUints appends vs as a JSON array of integers (destroy's versions).
func appendUints(b []byte, vs []uint64) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, v, 10)
	}
	return append(b, ']')
}

// appendStringMap appends m as a JSON object of strings.
func appendStringMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendStringsMap appends m as a JSON object of arrays of strings.
func appendStringsMap(b []byte, m map[string][]string) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		b = appendStrings(b, m[k])
	}
	return append(b, '}')
}

// validStrings says whether every string of ss is valid UTF-8.
func validStrings(ss []string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// validStringMap says whether every key and value of m is valid UTF-8.
func validStringMap(m map[string]string) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// validStringsMap says whether every key and string of m is valid UTF-8.
func validStringsMap(m map[string][]string) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !validStrings(v) {
			return false
		}
	}
	return true
}
