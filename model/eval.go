package model

// AlphaBetaGamma returns the round-synchronous α-β-γ time of the counted
// schedules, in seconds:
//
//	α·CritMsgs + β·(CritBytes + CritCopied) + γ·CritReduced
//
// that is, for each round the busiest rank's messages, bytes, copies and
// reductions (see Counts), summed over rounds. Copies are charged at β, as
// algorithms.Cost charges them, so that the result is comparable with the
// registered closed form Info.Cost(...).Time(α, β, γ).
func AlphaBetaGamma(c Counts, p Params) float64 {
	return p.Alpha*float64(c.CritMsgs) + p.Beta*float64(c.CritBytes+c.CritCopied) + p.Gamma*float64(c.CritReduced)
}

// LogGP returns the round-synchronous LogGP time of the counted schedules,
// in seconds, under the accounting of Hoefler and Moor (sec. 2): a message of
// s bytes costs L + 2o + sG, a process injects its messages one after the
// other, and computation and local copies are free (γ plays no part; add
// p.Gamma·c.CritReduced for reduction time). A round in which the busiest
// rank sends (or receives) k messages of b bytes in all costs
//
//	L + 2o + (k−1)·max(o, g) + b·G
//
// (the first message pays o at both ends and the latency, each further one
// the larger of the overhead and the gap, every byte G), so the whole is
//
//	CommRounds·(L + 2o) + (CritMsgs − CommRounds)·max(o, g) + CritBytes·G.
//
// With g ≤ o, as Hoefler and Moor assume, this reproduces their exact forms
// for flat trees, binomial trees and butterflies (see the package
// documentation).
func LogGP(c Counts, p Params) float64 {
	per := max(p.O, p.G)
	return float64(c.CommRounds)*(p.L+2*p.O) + float64(c.CritMsgs-int64(c.CommRounds))*per + float64(c.CritBytes)*p.GPerByte
}

// Energy returns the energy of the counted schedules in joules, following
// Hoefler and Moor (sec. 2): the dynamic energy
//
//	D = e·(messages sent by all ranks) + E·(bytes sent by all ranks)
//
// plus static energy, charged here as p.PStatic watts for each of the
// c.Size processes during time seconds:
//
//	Energy = p.EMsg·c.Total.MsgsSent + p.EByte·c.Total.BytesSent + p.PStatic·c.Size·time.
//
// time is the operation's runtime (CriticalPath, AlphaBetaGamma or LogGP of
// the same schedules, or a measurement); Energy(c, p, 0) is the dynamic
// energy alone. Local computation and copies are free, as in their model.
//
// Hoefler and Moor write the total as T·P + D with P "the leakage power"
// and use 0.5 W, "a static NIC chip power". Charged per process, as here,
// the static term grows as Size·T and dominates the dynamic energy on their
// InfiniBand parameters, so the faster algorithm is usually also the more
// frugal one; their Fig. 5 discussion (the butterfly spending more energy
// than two binomial trees on many processes) holds with one 0.5 W for the
// whole operation. To charge a fixed power regardless of the process count,
// pass p.PStatic divided by c.Size.
func Energy(c Counts, p Params, time float64) float64 {
	return p.EMsg*float64(c.Total.MsgsSent) + p.EByte*float64(c.Total.BytesSent) + p.PStatic*float64(c.Size)*time
}

// Memory returns Hoefler and Moor's memory model of the counted schedules,
// in bytes: an offloaded collective keeps a descriptor of p.MemDesc bytes for
// every message a process sends, whatever the message's size, and the model
// reports the maximum over processes (sec. 2, memory models):
//
//	Memory = p.MemDesc·c.Max.MsgsSent.
//
// Receives, local operations and buffers are not counted (Counts.Max.Scratch
// has the scratch buffers).
func Memory(c Counts, p Params) float64 {
	return p.MemDesc * float64(c.Max.MsgsSent)
}
