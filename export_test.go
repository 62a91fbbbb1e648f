package scoll

import "github.com/scoll/scoll/transport/inproc"

// WithLanesForTest forces the in-process transport's lanes on or off.
func WithLanesForTest(on bool) Option { return withWorld(inproc.Lanes(on)) }
