package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/scoll/scoll/algorithms"
)

// knobFlags declares a --<name> flag for every knob of the algorithms
// (algorithms.Knobs: --radix, --segment, ...) on f, and returns what reads
// their values: a knob declared in package algorithms gets its flag here,
// with nothing else to write.
func knobFlags(f *pflag.FlagSet) func() (algorithms.KnobValues, error) {
	ks := algorithms.Knobs()
	vals := make([]*string, len(ks))
	for i, k := range ks {
		vals[i] = f.String(k.Name, "", k.Doc)
	}
	return func() (kv algorithms.KnobValues, err error) {
		for i, k := range ks {
			if *vals[i] == "" {
				continue
			}
			if kv[k.Index()], err = k.Parse(*vals[i]); err != nil {
				return kv, fmt.Errorf("--%w", err) // "--segment "12Q": ..."
			}
		}
		return kv, nil
	}
}

// capsHelp describes --caps.
const capsHelp = `capabilities the default choice ("auto") assumes, as a real call sees them: ` +
	`a comma-separated list of exchange=<bytes> (the transport's exchange slots: in-process ranks 4096, ` +
	`shared memory between processes 2048, MPI 96), meet (in-process ranks), oversubscribed (more ranks than CPUs), ` +
	`chain (a chain communicator) and blocking (a blocking call), or none; TCP between processes offers blocking alone`

// capsFlag declares --caps on f (a blocking call over plain messages by
// default) and returns what reads it.
func capsFlag(f *pflag.FlagSet) func() (algorithms.Caps, error) {
	s := f.String("caps", "blocking", capsHelp)
	return func() (algorithms.Caps, error) {
		c, err := algorithms.ParseCaps(*s)
		if err != nil {
			return c, fmt.Errorf("--caps: %w", err)
		}
		return c, nil
	}
}
