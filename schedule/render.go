package schedule

import (
	"fmt"
	"io"
	"strings"
)

// WriteText renders a schedule as text: a header line, then one line a round
// with its communication first and its local operations after a semicolon.
//
//	rank 1 of 4, scratch 2
//	  0: send recv[1:2] -> 0 | recv recv[0:1] <- 0
//	  1: recv tmp[0:2] <- 3 ; reduce recv[0:2] (+)= tmp[0:2]
func WriteText(w io.Writer, s *Schedule) error {
	if _, err := fmt.Fprintf(w, "rank %d of %d, scratch %d\n", s.Rank, s.Size, s.Scratch); err != nil {
		return err
	}
	for i, r := range s.Rounds {
		if _, err := fmt.Fprintf(w, "  %d: %s\n", i, RoundString(r)); err != nil {
			return err
		}
	}
	return nil
}

// RoundString renders one round on a line.
func RoundString(r Round) string {
	var comm, local []string
	for _, o := range r {
		if o.Kind.IsComm() {
			comm = append(comm, o.String())
		} else {
			local = append(local, o.String())
		}
	}
	out := strings.Join(comm, " | ")
	if len(local) > 0 {
		if out != "" {
			out += " ; "
		}
		out += strings.Join(local, " ; ")
	}
	return out
}
