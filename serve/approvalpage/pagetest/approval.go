package pagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Shown is what an approval's page shows.
type Shown struct {
	AskedToken  bool   // the page asked for the token (the server answered 401)
	Phase       string // loaded, decided, failed or login (the token refused)
	Summary     string
	Reason      string
	Fingerprint string
	Expires     string
	State       string // pending, approved, denied or expired
	Status      string // the page's status line: what went wrong, or the outcome
}

// Open opens url, an approval's page, in the tab of ctx, types token when
// the page asks for it (a tab that was given it before is not asked
// again), and returns what the page then shows.
func Open(ctx context.Context, url, token string) (Shown, error) {
	var sh Shown
	if err := chromedp.Do(ctx, chromedp.Navigate(url), waitPhase()); err != nil {
		return sh, fmt.Errorf("opening %s: %w", url, err)
	}
	phase, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.phase`))
	if err != nil {
		return sh, err
	}
	if phase == "login" {
		sh.AskedToken = true
		err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("token"), token),
			clearPhase(),
			chromedp.Click(chromedp.ID("login-button")),
			waitPhase())
		if err != nil {
			return sh, fmt.Errorf("giving the token: %w", err)
		}
	}
	return read(ctx, sh)
}

// Approve opens url as Open does, chooses scope ("once", "uses:N",
// "minutes:T" or "session"), clicks Approve, and returns nil when the page
// then says the approval is approved.
func Approve(tb testing.TB, ctx context.Context, url, token, scope string) error {
	tb.Helper()
	choose, err := chooser(scope)
	if err != nil {
		return err
	}
	return decide(ctx, url, token, "approve", "approved", choose)
}

// Deny opens url as Open does, clicks Deny, and returns nil when the page
// then says the approval is denied.
func Deny(tb testing.TB, ctx context.Context, url, token string) error {
	tb.Helper()
	return decide(ctx, url, token, "deny", "denied", nil)
}

// decide clicks the button (after choose, when set) and checks the state
// the page then shows is want.
func decide(ctx context.Context, url, token, button, want string, choose []chromedp.Action[chromedp.Void]) error {
	sh, err := Open(ctx, url, token)
	if err != nil {
		return err
	}
	if sh.Phase != "loaded" || sh.State != "pending" {
		return fmt.Errorf("the page of %s is %s, the approval %s: %s", url, sh.Phase, sh.State, sh.Status)
	}
	steps := append(choose, clearPhase(), chromedp.Click(chromedp.ID(button)), waitPhase())
	if err := chromedp.Do(ctx, steps...); err != nil {
		return fmt.Errorf("clicking %s: %w", button, err)
	}
	if sh, err = read(ctx, Shown{}); err != nil {
		return err
	}
	if sh.Phase != "decided" || sh.State != want {
		return fmt.Errorf("after %s the page is %s, the approval %s: %s", button, sh.Phase, sh.State, sh.Status)
	}
	return nil
}

// chooser is the steps that choose scope in the page's chooser.
func chooser(scope string) ([]chromedp.Action[chromedp.Void], error) {
	kind, n, hasN := strings.Cut(scope, ":")
	bad := errors.New(`a scope is "once", "uses:N", "minutes:T" or "session", not ` + strconv.Quote(scope))
	switch {
	case (kind == "once" || kind == "session") && !hasN:
		return []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.ID("scope-" + kind))}, nil
	case (kind == "uses" || kind == "minutes") && hasN:
		if _, err := strconv.Atoi(n); err != nil {
			return nil, bad
		}
		return []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.ID("scope-" + kind)),
			chromedp.SetValue(chromedp.ID(kind+"-n"), n),
		}, nil
	}
	return nil, bad
}

// Step runs actions in the tab of ctx on a page that says where it is in
// its body's data-phase (the approval page, a secret request's page), and
// waits until the page says where it is next.
func Step(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	all := append([]chromedp.Action[chromedp.Void]{clearPhase()}, actions...)
	return chromedp.Do(ctx, append(all, waitPhase())...)
}

// clearPhase drops the page's phase, so that waitPhase waits for the next.
func clearPhase() chromedp.Action[chromedp.Void] {
	drop := chromedp.Evaluate[bool](`delete document.body.dataset.phase`)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := drop(ctx, t)
		return chromedp.Void{}, err
	}
}

// waitPhase waits until the page says where it is.
func waitPhase() chromedp.Action[chromedp.Void] {
	return chromedp.WaitReady(chromedp.CSS("body[data-phase]"))
}

// read fills sh with what the page shows.
func read(ctx context.Context, sh Shown) (Shown, error) {
	var err error
	get := func(expr string) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		return v
	}
	text := func(id string) string { return get(`document.getElementById("` + id + `").textContent`) }
	sh.Phase = get(`document.body.dataset.phase || ""`)
	sh.Summary, sh.Reason, sh.Fingerprint = text("summary"), text("reason"), text("fingerprint")
	sh.Expires, sh.State, sh.Status = text("expires"), text("state"), text("status")
	return sh, err
}
