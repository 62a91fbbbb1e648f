// Package human formats quantities for tables read by people: a value,
// a space and its unit, with a prefix that keeps the mantissa short and a
// fixed number of digits ("12.34 µs", "6.234 MiB", "512.00 MB/s"). CSV and
// JSON are for scripts and give plain numbers instead, in the unit their
// column or key names (time_s, memory_bytes; docs/json.md).
package human

import (
	"math"
	"strconv"
)

// siPrefixes are the prefixes SI picks from, smallest first.
var siPrefixes = []struct {
	name  string
	scale float64
}{{"n", 1e-9}, {"µ", 1e-6}, {"m", 1e-3}, {"", 1}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}}

// SI formats x in unit with the SI prefix (n to G, none above maxScale)
// that puts its mantissa in [1, 1000), to 4 significant digits: "12.34 µs",
// "3.456 ms", "1.234 s". Zero is "0 " + unit.
func SI(x float64, unit string, maxScale float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64) + " " + unit
	}
	p := siPrefixes[0]
	for _, q := range siPrefixes[1:] {
		if q.scale > maxScale || math.Abs(x) < q.scale*0.99995 {
			break
		}
		p = q
	}
	return fixed4(x/p.scale) + " " + p.name + unit
}

// fixed4 formats m to 4 significant digits for |m| in [1, 1000), and with
// no decimals from 1000 on: 1.234, 12.34, 123.4, 1234.
func fixed4(m float64) string {
	a := math.Abs(m)
	switch {
	case a < 9.9995:
		return strconv.FormatFloat(m, 'f', 3, 64)
	case a < 99.995:
		return strconv.FormatFloat(m, 'f', 2, 64)
	case a < 999.95:
		return strconv.FormatFloat(m, 'f', 1, 64)
	}
	return strconv.FormatFloat(m, 'f', 0, 64)
}

// Time formats seconds for a table: ns, µs, ms or s ("12.34 µs").
func Time(s float64) string { return SI(s, "s", 1) }

// Energy formats joules for a table: nJ, µJ, mJ, J or kJ.
func Energy(j float64) string { return SI(j, "J", 1e3) }

// Rate formats a rate in MB/s (10⁶ bytes per second) for a table, with
// two decimals: "512.00 MB/s", or "1.25 GB/s" from 1000 MB/s on.
func Rate(mbps float64) string {
	if math.Abs(mbps) >= 999.995 {
		return strconv.FormatFloat(mbps/1000, 'f', 2, 64) + " GB/s"
	}
	return strconv.FormatFloat(mbps, 'f', 2, 64) + " MB/s"
}

// Bytes formats a size in bytes for a table, in binary units: "512 B",
// "64 KiB", or 4 significant digits when not a whole multiple ("1.465 KiB").
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for i+1 < len(units) && math.Abs(b) >= 1024 {
		b /= 1024
		i++
	}
	if b == math.Trunc(b) {
		return strconv.FormatFloat(b, 'f', 0, 64) + " " + units[i]
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', 1, 64) + " B"
	}
	return fixed4(b) + " " + units[i]
}

// Count formats a count that may be fractional (message start-ups,
// congestion): whole numbers as they are, others with two decimals.
func Count(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
