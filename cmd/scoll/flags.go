package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/scoll/scoll/sim"
	"github.com/spf13/pflag"
)

// Flags that several commands share, with their parsers.

// addFormatFlag registers --format: table, csv or json.
func addFormatFlag(f *pflag.FlagSet, format *string) {
	f.StringVar(format, "format", "table", "output format: table, csv or json")
}

// checkFormat returns --format in lower case, or an error unless it is
// table, csv or json.
func checkFormat(format string) (string, error) {
	f := strings.ToLower(format)
	return f, checkName("format", "format", f, []string{"table", "csv", "json"})
}

// addProgressFlag registers --progress: auto, always or never.
func addProgressFlag(f *pflag.FlagSet, progress *string) {
	f.StringVar(progress, "progress", "auto", "progress on stderr: auto (when stderr is a terminal), always or never (on and off are aliases)")
}

// showProgress reports whether, by --progress (checkProgress), progress
// is drawn on w.
func showProgress(progress string, w io.Writer) (bool, error) {
	mode, err := checkProgress(progress)
	switch mode {
	case "auto":
		return isTerminal(w), nil
	case "always":
		return true, nil
	}
	return false, err
}

// isTerminal reports whether w is a character device such as a terminal
// (without a dependency on x/term: /dev/null also counts, harmlessly).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws done of total as a bar of width characters.
func progressBar(done, total, width int) string {
	k := 0
	if total > 0 {
		k = done * width / total
	}
	return "[" + strings.Repeat("=", k) + strings.Repeat(" ", width-k) + "]"
}

// networkFlags are the network of scoll sim and scoll figures: the
// message start-up time α, the link bandwidth 1/δ and the multi-port
// stage model's derating of busy nodes.
type networkFlags struct{ alpha, linkBW, portEff string }

// add registers --alpha, --link-bw and --port-efficiency, the last with
// its default and help.
func (n *networkFlags) add(f *pflag.FlagSet, portEff, portEffHelp string) {
	f.StringVar(&n.alpha, "alpha", "6.29us", "message start-up time α (Sack's Blue Gene/P)")
	f.StringVar(&n.linkBW, "link-bw", "375MB/s", "link bandwidth 1/δ (MB = 10^6 bytes; MiB = 2^20)")
	f.StringVar(&n.portEff, "port-efficiency", portEff, portEffHelp)
}

// config returns the network as the Alpha, Delta, BusyPorts and
// BusyEfficiency of a sim.Config.
func (n *networkFlags) config() (sim.Config, error) {
	var cfg sim.Config
	var err error
	if cfg.Alpha, err = parseSeconds(n.alpha); err != nil {
		return cfg, fmt.Errorf("--alpha: %w", err)
	}
	bw, err := parseBandwidth(n.linkBW)
	if err != nil {
		return cfg, fmt.Errorf("--link-bw: %w", err)
	}
	cfg.Delta = 1 / bw
	cfg.BusyPorts, cfg.BusyEfficiency, err = parsePortEfficiency(n.portEff)
	return cfg, err
}

// parsePortEfficiency parses --port-efficiency K:E (nodes with K or more
// messages in a stage move at E of the link bandwidth); "" turns it off.
func parsePortEfficiency(s string) (int, float64, error) {
	if s == "" {
		return 0, 0, nil
	}
	k, e, ok := strings.Cut(s, ":")
	n, err1 := strconv.Atoi(k)
	eff, err2 := strconv.ParseFloat(e, 64)
	if !ok || err1 != nil || err2 != nil || n < 1 || !(eff > 0 && eff <= 1) {
		return 0, 0, fmt.Errorf("--port-efficiency %q: want K:E, like 6:0.93", s)
	}
	return n, eff, nil
}

// parseSeconds parses a duration such as 6.29us, 1.5µs or 2ns; a bare number
// is seconds.
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q: want a non-negative time", s)
		}
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a time like 6.29us, 2ns or 0.001 (seconds)", s)
	}
	return d.Seconds(), nil
}

// parseBandwidth parses a bandwidth in bytes per second: a number with B/s,
// KB/s, MB/s, GB/s (powers of 1000) or KiB/s, MiB/s, GiB/s (powers of 1024).
func parseBandwidth(s string) (float64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == 'e' || t[i] == 'E') {
		i++
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: want a positive bandwidth like 375MB/s", s)
	}
	mul := map[string]float64{"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1 << 10, "mib/s": 1 << 20, "gib/s": 1 << 30, "": 1}
	m, ok := mul[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)", s, t[i:])
	}
	return v * m, nil
}

// parseArrivals parses per-rank arrival times (comma-separated times as
// parseSeconds reads them) for np ranks and shifts them so that the
// earliest is 0; "" gives nil.
func parseArrivals(s string, np int) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	fields := strings.Split(s, ",")
	if len(fields) != np {
		return nil, fmt.Errorf("--arrivals: %d times for %d ranks", len(fields), np)
	}
	out := make([]float64, np)
	first := math.Inf(1)
	for r, f := range fields {
		v, err := parseSeconds(f)
		if err != nil {
			return nil, fmt.Errorf("--arrivals: rank %d: %w", r, err)
		}
		out[r] = v
		first = min(first, v)
	}
	for r := range out {
		out[r] -= first
	}
	return out, nil
}
