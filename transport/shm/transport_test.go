//go:build linux

package shm_test

import (
	"testing"

	"github.com/scoll/scoll/transport"
	"github.com/scoll/scoll/transport/shm"
	"github.com/scoll/scoll/transport/transporttest"
)

func TestConformance(t *testing.T) {
	for name, cfg := range map[string]shm.Config{
		"default": {},
		// Rings of 1 KiB: every message of the suite's large tests is
		// chunked and fills the rings many times.
		"small-rings": {RingBytes: 1024},
	} {
		t.Run(name, func(t *testing.T) {
			transporttest.Run(t, func(t *testing.T, n int) []transport.Transport {
				eps, err := shm.NewLocalGroup(n, cfg)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]transport.Transport, n)
				for i, e := range eps {
					out[i] = e
				}
				return out
			})
		})
	}
}
