package topology

import (
	"math/rand/v2"
	"testing"
)

// benchmarkRoute routes random node pairs with a reused buffer.
func benchmarkRoute(b *testing.B, spec string) {
	topo := mustParse(b, spec)
	rng := rand.New(rand.NewPCG(5, 6))
	const npairs = 1 << 12
	src, dst := make([]int, npairs), make([]int, npairs)
	for i := range npairs {
		src[i], dst[i] = rng.IntN(topo.Nodes()), rng.IntN(topo.Nodes())
	}
	buf := make([]Hop, 0, 1024)
	hops := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf = topo.Route(src[i%npairs], dst[i%npairs], buf)
		hops += len(buf)
	}
	b.ReportMetric(float64(hops)/float64(b.N), "hops/route")
}

func BenchmarkRouteTorus32x32x32(b *testing.B) { benchmarkRoute(b, "torus:32x32x32") }
func BenchmarkRouteMesh32x32x32(b *testing.B)  { benchmarkRoute(b, "mesh:32x32x32") }
func BenchmarkRouteHypercube12(b *testing.B)   { benchmarkRoute(b, "hypercube:12") }

// 4096 nodes: 128 leaves of 32 nodes with 8 uplinks each (μ = 1/4).
func BenchmarkRouteClos4096Taper(b *testing.B) { benchmarkRoute(b, "clos:R=128,T=32,mu=0.25") }

// 4096 nodes: 64 leaves of 64 nodes with 64 uplinks each (full bisection),
// so an ideal route spreads over 64 paths (130 hops).
func BenchmarkRouteClos4096Full(b *testing.B) {
	benchmarkRoute(b, "clos:R=128,T=64,mu=1,nodes=4096")
}
func BenchmarkRouteClos4096DModK(b *testing.B) {
	benchmarkRoute(b, "clos:R=128,T=64,mu=1,nodes=4096,routing=dmodk")
}
func BenchmarkRouteDragonfly(b *testing.B) { benchmarkRoute(b, "dragonfly:g=33,a=16,p=8") }
