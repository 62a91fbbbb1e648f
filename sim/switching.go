package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scoll/scoll/topology"
)

// SwitchMode is how the routers forward a message along its route (Heath
// and Solomonik's notes, sec. 4.2.2).
type SwitchMode uint8

const (
	// CutThrough (wormhole) routing forwards each piece of a message as
	// soon as it arrives: a message of s bytes over D hops costs
	// α + βs + t_h·D alone on the network. It is the default (the zero
	// value) and what both models charged before there was a choice.
	CutThrough SwitchMode = iota
	// StoreAndForward routing moves the whole message one link at a time,
	// each router receiving all of it before it forwards it:
	// (α + βs)·D.
	StoreAndForward
	// Packet switching cuts the message into ⌈s/b⌉ packets of b bytes
	// (Switching.PacketSize; the last one padded) that move store and
	// forward but pipelined, one pipeline step (t_h + βb) per packet and
	// per link: α + (D + ⌈s/b⌉ − 1)(t_h + βb).
	Packet
)

// Switching is the switching mode of a network and, for packet switching,
// its packet size. The zero value is cut-through.
type Switching struct {
	Mode SwitchMode
	// PacketSize is the packet size b in bytes, positive for Packet and
	// zero otherwise.
	PacketSize int64
}

// ParseSwitching parses "cut-through" (also "wormhole"),
// "store-and-forward" (also "saf") or "packet:SIZE", SIZE in bytes with an
// optional K, M or G suffix (powers of 1024), as scoll sim's --switching
// spells them; "" is cut-through.
func ParseSwitching(s string) (Switching, error) {
	spec := strings.ToLower(strings.TrimSpace(s))
	switch spec {
	case "", "cut-through", "wormhole":
		return Switching{}, nil
	case "store-and-forward", "saf":
		return Switching{Mode: StoreAndForward}, nil
	}
	if size, ok := strings.CutPrefix(spec, "packet:"); ok {
		mult := int64(1)
		for i, suffix := range []string{"k", "m", "g"} {
			if t, ok := strings.CutSuffix(size, suffix); ok {
				size, mult = t, 1<<(10*(i+1))
				break
			}
		}
		n, err := strconv.ParseInt(size, 10, 64)
		if err == nil && n > 0 && n <= math.MaxInt64/mult {
			return Switching{Mode: Packet, PacketSize: n * mult}, nil
		}
	}
	return Switching{}, fmt.Errorf("%w: switching %q (want cut-through, store-and-forward or packet:SIZE, like packet:4K)", ErrConfig, s)
}

// String returns the spelling ParseSwitching reads: "cut-through",
// "store-and-forward" or "packet:SIZE" (SIZE in bytes, or with a K, M or
// G suffix when it is a multiple).
func (s Switching) String() string {
	switch s.Mode {
	case CutThrough:
		return "cut-through"
	case StoreAndForward:
		return "store-and-forward"
	case Packet:
		n, suffix := s.PacketSize, ""
		for _, x := range []string{"K", "M", "G"} {
			if n < 1024 || n%1024 != 0 {
				break
			}
			n, suffix = n/1024, x
		}
		return "packet:" + strconv.FormatInt(n, 10) + suffix
	}
	return fmt.Sprintf("switching(%d)", s.Mode)
}

func (s Switching) check() error {
	if s.Mode > Packet || (s.Mode == Packet) != (s.PacketSize > 0) || s.PacketSize < 0 {
		return fmt.Errorf("%w: switching mode %d with packet size %d", ErrConfig, s.Mode, s.PacketSize)
	}
	return nil
}

// packets returns ⌈bytes/b⌉, the packets of a message in packet mode.
func (s Switching) packets(bytes int64) int64 {
	return (bytes + s.PacketSize - 1) / s.PacketSize
}

// stageCharge returns what one message of the stage model costs under
// c's switching: its start-ups, its δ bytes and its per-hop time in
// seconds. hops is the route's length D; db is the message's δ bytes c·s
// (store-and-forward: the sum of c_j·s over its steps j), derated, and f
// the factor c, derated, so that packets move at the message's speed. A
// message within a node (D = 0) costs the same in every mode.
//
//	cut-through:       1 start-up,  c·s bytes,      latency t_h·D
//	store-and-forward: D start-ups, Σ_j c_j·s bytes, latency 0
//	packet:            1 start-up,  c·k·b bytes,    latency (D+k−1)·t_h + (D−1)·c·b·δ   (k = ⌈s/b⌉)
func (c *Config) stageCharge(hops float64, bytes int64, db, f float64) (starts, deltaBytes, latency float64) {
	switch {
	case hops == 0 || c.Switching.Mode == CutThrough:
		return 1, db, c.HopLatency * hops
	case c.Switching.Mode == StoreAndForward:
		return hops, db, 0
	}
	b := c.Switching.PacketSize
	k := c.Switching.packets(bytes)
	return 1, f * float64(k*b), (hops+float64(k)-1)*c.HopLatency + (hops-1)*f*float64(b)*c.Delta
}

// routeLength returns the length of a route in links: the sum of its hop
// fractions, rounded to drop the float error of summing them (equal-cost
// paths have equal lengths).
func routeLength(route []topology.Hop) float64 {
	length := 0.0
	for _, h := range route {
		length += h.Frac
	}
	return math.Round(length*1e6) / 1e6
}

// hopSteps cuts a route into the consecutive links of a store-and-forward
// message: groups of hops whose fractions add up to one link each (a
// single path gives one hop per step; a path split in two gives pairs).
func hopSteps(route []topology.Hop) [][]topology.Hop {
	var steps [][]topology.Hop
	start, acc := 0, 0.0
	for i, h := range route {
		acc += h.Frac
		if acc >= 1-1e-9 {
			steps = append(steps, route[start:i+1:i+1])
			start, acc = i+1, 0
		}
	}
	if start < len(route) {
		steps = append(steps, route[start:len(route):len(route)])
	}
	return steps
}
