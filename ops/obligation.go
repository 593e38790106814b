package ops

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
)

// maxObligationShown caps how much of an obligation a denial quotes: the
// PDP's output is untrusted, and a message is not a place for 64 KiB.
const maxObligationShown = 128

// obligationDenial is why an allow that carries obligations is a deny
// for op, or "" when arca fulfils them all, with the grant they ask for.
// Obligations without the arca: prefix (case-sensitive: "ARCA:x" is
// unprefixed) are only recorded; an arca: one this build does not list
// (manifest.Obligations, by its name before any "=") or has no case for
// below cannot be fulfilled and denies, so the list and the enforcement
// failing to match is a deny, never a silent allow; arca:no_reveal
// denies a get; arca:ttl=S and arca:max_uses=N out of range, malformed
// or given twice deny; arca:approval, a deny's obligation, denies an
// allow.
func obligationDenial(op string, obligations []string) (grantBounds, string) {
	supported := manifest.Obligations()
	var b grantBounds
	noReveal := false
	for _, o := range obligations {
		if !strings.HasPrefix(o, manifest.ObligationPrefix) {
			continue
		}
		name, _, _ := strings.Cut(o, "=")
		if !slices.Contains(supported, name) {
			return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o)
		}
		switch name {
		case manifest.NoReveal:
			if o != manifest.NoReveal {
				return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o)
			}
			noReveal = true
		case manifest.ObligationApproval:
			if o == manifest.ObligationApproval {
				return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o) + " on an allow (send it with a deny)"
			}
			return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o)
		case manifest.ObligationTTL, manifest.ObligationMaxUses:
			if !parseGrantObligation(o, &b) {
				return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o)
			}
		default: // listed but not enforced here: still a deny
			return grantBounds{}, "cannot fulfil obligation " + quoteObligation(o)
		}
	}
	if noReveal && op == "get" {
		return grantBounds{}, "cannot reveal: " + manifest.NoReveal
	}
	return b, ""
}

// quoteObligation is o cut to maxObligationShown bytes (at a rune's
// start) and Go-quoted, so control characters and the like are escapes,
// never bytes a terminal acts on. A cut one ends in "…" after the quote.
func quoteObligation(o string) string {
	if len(o) <= maxObligationShown {
		return strconv.Quote(o)
	}
	cut := maxObligationShown
	for cut > 0 && !utf8.RuneStart(o[cut]) {
		cut--
	}
	return strconv.Quote(o[:cut]) + "…"
}

// asksApproval reports whether a deny's obligations say a human may
// approve the request: arca:approval among them, exactly.
func asksApproval(obligations []string) bool {
	return slices.Contains(obligations, manifest.ObligationApproval)
}
