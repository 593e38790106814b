// Command ui times arca ui's first page in headless Chromium, the real
// binary over a vault of many records and an audit file of many events:
//
//	go build -o arca ./cmd/arca
//	go run ./bench/ui -arca ./arca -records 100000 -events 1000000 -runs 3
//
// The vault is filled with arca migrate, the audit file written as the CLI
// writes one (bench/synth). arca ui reads the trail before it prints its
// URL; what is timed is from opening the URL to the page's having loaded
// every part (records, health, trail, chart), from a blank page each run.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/arca-secrets/arca/bench/synth"
)

type options struct {
	arca, chromium  string
	records, events int
	runs            int
}

func main() {
	var o options
	flag.StringVar(&o.arca, "arca", "", "the arca binary to time (required)")
	flag.StringVar(&o.chromium, "chromium", "chromium", "the browser")
	flag.IntVar(&o.records, "records", 100_000, "records in the vault (at most 100,000: one migrate)")
	flag.IntVar(&o.events, "events", 1_000_000, "events in the audit file")
	flag.IntVar(&o.runs, "runs", 3, "page loads timed (the median is reported)")
	flag.Parse()
	if o.arca == "" || o.records < 1 || o.records > 100_000 || o.events < 1 || o.runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "ui:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	home, err := os.MkdirTemp("", "arca-ui-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"}
	if err := fill(o, home, env); err != nil {
		return err
	}
	start := time.Now()
	ui := exec.Command(o.arca, "ui")
	ui.Env, ui.Dir = env, home
	out, err := ui.StdoutPipe()
	if err != nil {
		return err
	}
	if err := ui.Start(); err != nil {
		return err
	}
	defer func() { ui.Process.Signal(os.Interrupt); ui.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("arca ui printed no URL: %v", err)
	}
	startup := time.Since(start)
	walls, err := loads(o, strings.TrimSpace(url))
	if err != nil {
		return err
	}
	slices.Sort(walls)
	fmt.Printf("arca ui: %d records, %d events; up (the trail read) in %.3f s; first page loaded in %.3f s median of %d (fastest %.3f s, slowest %.3f s)\n",
		o.records, o.events, startup.Seconds(), walls[len(walls)/2].Seconds(), len(walls), walls[0].Seconds(), walls[len(walls)-1].Seconds())
	return nil
}

// fill makes the vault (arca init, arca migrate of o.records secrets) and
// the audit file of o.events events, in place of migrate's.
func fill(o options, home string, env []string) error {
	for _, args := range [][]string{{"init"}} {
		cmd := exec.Command(o.arca, args...)
		cmd.Env, cmd.Dir = env, home
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("arca %s: %v: %s", args[0], err, out)
		}
	}
	var b strings.Builder
	for i := range o.records {
		fmt.Fprintf(&b, "SECRET_%06d=\"value of secret %d, some forty bytes\"\n", i, i)
	}
	in := filepath.Join(home, "secrets.env")
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(o.arca, "migrate", "--from", "dotenv", "--ns", "bench", in)
	cmd.Env, cmd.Dir = env, home
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("arca migrate: %v: %s", err, out[:min(len(out), 500)])
	}
	trail := filepath.Join(home, ".local", "state", "arca", "audit.log")
	_, err := synth.WriteTrail(trail, o.events)
	return err
}

// loads opens url o.runs times, timing each until the page says it
// loaded.
func loads(o options, url string) ([]time.Duration, error) {
	profile, err := os.MkdirTemp("", "arca-ui-bench-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.UserDataDir(profile),
		chromedp.ExecPath(o.chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 1000))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil { // start the browser: not timed
		return nil, err
	}
	var walls []time.Duration
	for range o.runs {
		// The same tab each time, from a blank page: a page load, not the
		// browser's start.
		if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
			return nil, err
		}
		start := time.Now()
		err := chromedp.Do(browser, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ready="true"]`))
		walls = append(walls, time.Since(start))
		if err == nil {
			if st, _ := chromedp.Run(browser, chromedp.Text("#status")); st != "" {
				err = fmt.Errorf("the page failed: %s", st)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return walls, nil
}
