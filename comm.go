package scoll

import "github.com/scoll/scoll/internal/comm"

// Undefined is the color of a rank that joins no communicator in Split
// (any negative color does), like MPI_UNDEFINED, and the rank
// TranslateRanks gives a rank that is not a member.
const Undefined = comm.Undefined
