// Package glob is arca's one glob language: a guardrail's env, ref, ops
// and actor, the audit filters' --ref and --actor, and the patterns of
// arca list. A deny rule must never miss what it seems to cover, so
// nothing in it stops at a "/" and nothing is left to guess:
//
//	glob    matches
//	*       any run of characters, "/" included, the empty run too
//	?       exactly one character, "/" included
//	[abc]   one of the characters listed; a-z a range (low to high)
//	[!abc]  one character not listed ([^abc] the same)
//
// Every other character matches itself, case-sensitively. "-" is itself at
// the start or the end of a class. A pattern with "\" (no escapes: no
// name or ref can hold one of *?[]), an unclosed or empty class, a range
// from high to low, a "[" or "]" inside a class, or invalid UTF-8 is
// refused (Problem says why), before any match: a config when it is
// loaded, a filter when it is given.
package glob

import (
	"errors"
	"unicode/utf8"
)

// token is one element of a parsed glob: a star, or a matcher of exactly
// one character (any, one literal, or a class). Tokens are plain values, so
// a match on the request path allocates nothing for a short pattern.
type token struct {
	star  bool
	any   bool
	lit   rune
	spans string // a class: its text between "[" (and any "!") and "]"
	neg   bool
}

// one reports whether t, a one-character token, matches c.
func (t token) one(c rune) bool {
	switch {
	case t.any:
		return true
	case t.spans == "":
		return c == t.lit
	}
	return inClass(t.spans, c) != t.neg
}

// inClass reports whether c is in the spans of a class parseClass checked.
func inClass(spans string, c rune) bool {
	for i := 0; i < len(spans); {
		lo, n := utf8.DecodeRuneInString(spans[i:])
		i += n
		hi := lo
		if i+1 < len(spans) && spans[i] == '-' {
			hi, n = utf8.DecodeRuneInString(spans[i+1:])
			i += 1 + n
		}
		if lo <= c && c <= hi {
			return true
		}
	}
	return false
}

// parseGlob parses pattern, or says what is wrong with it.
func parseGlob(pattern string) ([]token, error) {
	var buf [globTokens]token
	toks, err := appendGlob(buf[:0], pattern)
	if err != nil {
		return nil, err
	}
	return append([]token(nil), toks...), nil
}

// globTokens is how many tokens a match parses without allocating.
const globTokens = 64

// appendGlob appends the tokens of pattern to toks.
func appendGlob(toks []token, pattern string) ([]token, error) {
	if !utf8.ValidString(pattern) {
		return nil, errors.New("not valid UTF-8")
	}
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		switch r {
		case '*':
			if len(toks) == 0 || !toks[len(toks)-1].star {
				toks = append(toks, token{star: true})
			}
		case '?':
			toks = append(toks, token{any: true})
		case '[':
			class, end, err := parseClass(pattern, i+n)
			if err != nil {
				return nil, err
			}
			toks, n = append(toks, class), end-i
		case ']':
			return nil, errors.New("] without [")
		case '\\':
			return nil, errors.New(`\ is not allowed (there are no escapes)`)
		default:
			toks = append(toks, token{lit: r})
		}
		i += n
	}
	return toks, nil
}

// parseClass parses the class whose "[" ends at i: its token, and the
// index just past its "]".
func parseClass(p string, i int) (token, int, error) {
	neg := i < len(p) && (p[i] == '!' || p[i] == '^')
	if neg {
		i++
	}
	start, empty := i, true
	for {
		lo, n, err := classChar(p, i)
		switch {
		case err != nil:
			return token{}, 0, err
		case lo == ']' && empty:
			return token{}, 0, errors.New("empty class []")
		case lo == ']':
			return token{spans: p[start:i], neg: neg}, i + n, nil
		}
		i += n
		empty = false
		// lo-hi is a range; a "-" before the "]" is itself (inClass reads
		// the spans the same way).
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, n, err := classChar(p, i+1)
			if err != nil {
				return token{}, 0, err
			}
			if hi < lo {
				return token{}, 0, errors.New("range " + string(lo) + "-" + string(hi) + " runs from high to low")
			}
			i += 1 + n
		}
	}
}

// classChar is the character at p[i] inside a class, and its length.
func classChar(p string, i int) (rune, int, error) {
	if i >= len(p) {
		return 0, 0, errors.New("[ without ]")
	}
	r, n := utf8.DecodeRuneInString(p[i:])
	if r == '[' || r == '\\' {
		return 0, 0, errors.New(string(r) + " inside a class")
	}
	return r, n, nil
}

// Problem says what is wrong with pattern, or returns "".
func Problem(pattern string) string {
	if _, err := parseGlob(pattern); err != nil {
		return err.Error()
	}
	return ""
}

// Match reports whether pattern matches all of s. A malformed pattern,
// which only a caller that skipped Problem can hold, matches everything:
// a deny rule it is in fails closed.
func Match(pattern, s string) bool {
	var buf [globTokens]token
	toks, err := appendGlob(buf[:0], pattern)
	if err != nil {
		return true
	}
	return matchTokens(toks, s)
}

// matchTokens matches s against toks. After a star, a mismatch retries one
// character further along s from that star only: every other token
// matches one character, so this finds a match if there is one, in time
// proportional to len(toks) * len(s) at worst.
func matchTokens(toks []token, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		r, n := utf8.DecodeRuneInString(s[si:])
		switch {
		case ti < len(toks) && toks[ti].star:
			starT, starS = ti, si
			ti++
		case ti < len(toks) && toks[ti].one(r):
			ti, si = ti+1, si+n
		case starT >= 0:
			_, sn := utf8.DecodeRuneInString(s[starS:])
			starS += sn
			ti, si = starT+1, starS
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
}
