package scoll

// ChainStateForTest reports whether c keeps its members as a chain and
// whether it has learnt them (then it holds every member's address).
func ChainStateForTest(c *Comm) (chain, learnt bool) { return c.c.ChainState() }
