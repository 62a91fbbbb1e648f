package sim

import (
	"fmt"
	"slices"

	"github.com/scoll/scoll/schedule"
	"github.com/scoll/scoll/topology"
)

// EmbeddingResult is the embedding of a schedule's communication graph on
// a topology, measured as in sec. 3.1.2 of the Heath–Solomonik notes.
type EmbeddingResult struct {
	// Graph measures the communication graph: the ranks, and one directed
	// edge from a to b (a ≠ b) when a sends to b at least once, however
	// many messages and rounds (no multiplicity), routed as the stage
	// model routes messages.
	Graph topology.Embedding
	// Messages counts the sends between distinct ranks.
	Messages int64
	// StageCongestion[s] is the congestion of stage s (round s of every
	// rank, as in StageModel): the largest number of the stage's messages
	// on one link, with multiplicity (two messages a→b in one round count
	// twice), fractional for split routes, divided by the link's capacity;
	// 0 for a stage without messages between distinct nodes. Where a
	// stage has messages, StageModel's StageStat.MaxCongestion is
	// max(1, StageCongestion[s]): the model charges a message at least
	// one link's time.
	StageCongestion []float64
	// MaxStageCongestion is the largest of StageCongestion. It is not
	// bounded by Graph.Congestion, nor does it bound it: the graph counts
	// an edge once over all stages, a stage counts its messages.
	MaxStageCongestion float64
}

// Embed measures the embedding of the communication graph of a schedule
// of size ranks, placed on cfg.Topology by cfg.Mapping, whole and stage by
// stage (only cfg's topology and mapping are used). It streams the
// schedule like StageModel and keeps each rank's distinct peers, so the
// whole graph's edges are held once: O(P²) for an all-to-all.
func Embed(cfg Config, size int, gen schedule.Generator) (EmbeddingResult, error) {
	if err := cfg.check(size); err != nil {
		return EmbeddingResult{}, err
	}
	stage, err := topology.NewEmbedder(cfg.Topology, cfg.Mapping, size)
	if err != nil {
		return EmbeddingResult{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rs := schedule.NewStreams(size, gen, fastBuild)
	defer rs.Close()
	peers := make([]peerSet, size)
	var res EmbeddingResult
	for {
		live := false
		for r := range size {
			rd, _, ok, err := rs.Next(r)
			if err != nil {
				return EmbeddingResult{}, fmt.Errorf("rank %d: %w", r, err)
			}
			live = live || ok
			for _, op := range rd {
				if op.Kind != schedule.OpSend || op.Peer == r {
					continue
				}
				if op.Peer < 0 || op.Peer >= size {
					return EmbeddingResult{}, fmt.Errorf("%w: rank %d sends to rank %d of %d", ErrConfig, r, op.Peer, size)
				}
				stage.Add(r, op.Peer)
				peers[r].add(op.Peer)
				res.Messages++
			}
		}
		if !live {
			break
		}
		c := stage.Result().Congestion
		res.StageCongestion = append(res.StageCongestion, c)
		res.MaxStageCongestion = max(res.MaxStageCongestion, c)
		stage.Reset()
	}
	graph := stage // the same placement: reuse its buffers
	for r := range peers {
		for _, p := range peers[r].distinct() {
			graph.Add(r, int(p))
		}
	}
	res.Graph = graph.Result()
	return res, nil
}

// peerSet collects a rank's peers, compacting its duplicates whenever it
// has doubled since the last compaction.
type peerSet struct {
	ids     []int32
	compact int // len(ids) after the last compaction
}

func (s *peerSet) add(p int) {
	s.ids = append(s.ids, int32(p))
	if len(s.ids) > 2*s.compact+16 {
		s.distinct()
	}
}

// distinct sorts and deduplicates the peers and returns them.
func (s *peerSet) distinct() []int32 {
	slices.Sort(s.ids)
	s.ids = slices.Compact(s.ids)
	s.compact = len(s.ids)
	return s.ids
}
