package config

import (
	"errors"
	"unicode/utf8"
)

// The glob language of a guardrail's env, ref and actor. A deny rule must
// never miss what it seems to cover, so nothing in it stops at a "/" and
// nothing is left to guess:
//
//	*       any run of characters, "/" included, the empty run too
//	?       exactly one character, "/" included
//	[abc]   one of the characters listed; a-z a range (low to high)
//	[!abc]  one character not listed ([^abc] the same)
//
// Every other character matches itself, case-sensitively. "-" is itself at
// the start or the end of a class. A pattern with "\" (no escapes: no
// name or ref can hold one of *?[]), an unclosed or empty class, a range
// from high to low, a "[" or "]" inside a class, or invalid UTF-8 is
// refused when the config is loaded.

// token is one element of a parsed glob: a star, or a matcher of exactly
// one character.
type token struct {
	star bool
	one  func(r rune) bool
}

// parseGlob parses pattern, or says what is wrong with it.
func parseGlob(pattern string) ([]token, error) {
	if !utf8.ValidString(pattern) {
		return nil, errors.New("not valid UTF-8")
	}
	var toks []token
	for i := 0; i < len(pattern); {
		r, n := utf8.DecodeRuneInString(pattern[i:])
		switch r {
		case '*':
			if len(toks) == 0 || !toks[len(toks)-1].star {
				toks = append(toks, token{star: true})
			}
		case '?':
			toks = append(toks, token{one: func(rune) bool { return true }})
		case '[':
			one, end, err := parseClass(pattern, i+n)
			if err != nil {
				return nil, err
			}
			toks, n = append(toks, token{one: one}), end-i
		case ']':
			return nil, errors.New("] without [")
		case '\\':
			return nil, errors.New(`\ is not allowed (there are no escapes)`)
		default:
			toks = append(toks, token{one: func(c rune) bool { return c == r }})
		}
		i += n
	}
	return toks, nil
}

// span is one character (lo == hi) or a range of a class.
type span struct{ lo, hi rune }

// parseClass parses the class whose "[" ends at i: the matcher, and the
// index just past its "]".
func parseClass(p string, i int) (func(rune) bool, int, error) {
	neg := i < len(p) && (p[i] == '!' || p[i] == '^')
	if neg {
		i++
	}
	var spans []span
	for {
		lo, n, err := classChar(p, i)
		switch {
		case err != nil:
			return nil, 0, err
		case lo == ']' && len(spans) == 0:
			return nil, 0, errors.New("empty class []")
		case lo == ']':
			return classMatcher(spans, neg), i + n, nil
		}
		i += n
		hi := lo
		// lo-hi is a range; a "-" before the "]" is itself.
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			if hi, n, err = classChar(p, i+1); err != nil {
				return nil, 0, err
			}
			if hi < lo {
				return nil, 0, errors.New("range " + string(lo) + "-" + string(hi) + " runs from high to low")
			}
			i += 1 + n
		}
		spans = append(spans, span{lo, hi})
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

func classMatcher(spans []span, neg bool) func(rune) bool {
	return func(c rune) bool {
		for _, s := range spans {
			if s.lo <= c && c <= s.hi {
				return !neg
			}
		}
		return neg
	}
}

// globProblem says what is wrong with pattern, or returns "".
func globProblem(pattern string) string {
	if _, err := parseGlob(pattern); err != nil {
		return err.Error()
	}
	return ""
}

// MatchGlob reports whether pattern matches all of s (see the language
// above). A malformed pattern, which only a Config that skipped validation
// can hold, matches everything: the rule it is in fails closed.
func MatchGlob(pattern, s string) bool {
	toks, err := parseGlob(pattern)
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
