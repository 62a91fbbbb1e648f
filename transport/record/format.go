package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// header is the first line of a trace file; the number is the version.
const header = "scoll-trace 1"

// WriteTo writes t in the text format Read reads, after checking it with
// Validate (a trace that would not load is not written).
func (t *Trace) WriteTo(w io.Writer) (int64, error) {
	if err := t.Validate(); err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	var line []byte
	fmt.Fprintf(bw, "%s\nranks %d\n", header, t.Size)
	for r, rs := range t.Ranks {
		fmt.Fprintf(bw, "rank %d\n", r)
		for _, rd := range rs {
			line = line[:0]
			for i, o := range rd {
				if i > 0 {
					line = append(line, ' ')
				}
				if o.Recv {
					line = append(line, 'r')
				} else {
					line = append(line, 's')
				}
				line = strconv.AppendInt(line, int64(o.Peer), 10)
				line = append(line, ':')
				line = strconv.AppendInt(line, o.Bytes, 10)
			}
			line = append(line, '\n')
			bw.Write(line)
		}
	}
	bw.WriteString("end\n")
	err := bw.Flush()
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteFile writes t to the file name (see WriteTo).
func (t *Trace) WriteFile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := t.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Read reads a trace in scoll's text format and validates it (Validate).
// The format, line by line:
//
//	scoll-trace 1
//	ranks P
//	rank 0
//	s1:4096 r3:4096
//	r1:8
//	rank 1
//	...
//	end
//
// The first line names the format and its version; "ranks P" gives the
// number of ranks. Then each rank from 0 to P−1 in order: a line "rank r"
// followed by its rounds, one line each, in order. A round is a list of
// operations separated by blanks: s<peer>:<bytes> sends bytes bytes to
// rank peer, r<peer>:<bytes> receives bytes bytes from it. Numbers are
// decimal. A line "end" closes the file, so that a truncated file is
// recognised. Blank lines are ignored, and so is everything from a "#" to
// the end of its line. Between two ranks, the i-th send of one matches the
// i-th receive of the other.
//
// Read checks every field and allocates memory in proportion to its input,
// whatever the header claims. Errors wrap ErrFormat (with the line) or
// ErrInconsistent.
func Read(r io.Reader) (*Trace, error) {
	p := &parser{r: bufio.NewReaderSize(r, 64<<10)}
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// ReadFile reads the trace in the file name (see Read).
func ReadFile(name string) (*Trace, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

type parser struct {
	r    *bufio.Reader
	line int
	buf  []byte
	toks [][]byte
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrFormat, p.line, fmt.Sprintf(format, args...))
}

// next reads the next line that has tokens and splits it; it returns
// io.EOF at the end of the input.
func (p *parser) next() error {
	for {
		p.buf = p.buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = p.r.ReadSlice('\n')
			p.buf = append(p.buf, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(p.buf) == 0 && err == io.EOF {
			return io.EOF
		}
		p.line++
		line := p.buf
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		p.toks = p.toks[:0]
		for len(line) > 0 {
			i := 0
			for i < len(line) && isBlank(line[i]) {
				i++
			}
			j := i
			for j < len(line) && !isBlank(line[j]) {
				j++
			}
			if j > i {
				p.toks = append(p.toks, line[i:j])
			}
			line = line[j:]
		}
		if len(p.toks) > 0 {
			return nil
		}
		if err == io.EOF {
			return io.EOF
		}
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// expect reads a line "word n" and returns n, which must be in [lo, hi].
func (p *parser) expect(word string, lo, hi int64) (int64, error) {
	if err := p.next(); err != nil {
		if err == io.EOF {
			return 0, p.errorf("file ends where %q was expected", word)
		}
		return 0, err
	}
	if len(p.toks) != 2 || string(p.toks[0]) != word {
		return 0, p.errorf("want %q and a number", word)
	}
	n, ok := parseNum(p.toks[1], hi)
	if !ok || n < lo {
		return 0, p.errorf("%s %q: want a number from %d to %d", word, p.toks[1], lo, hi)
	}
	return n, nil
}

// parseNum parses a decimal number in [0, hi].
func parseNum(b []byte, hi int64) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n > hi {
			return 0, false
		}
	}
	return n, true
}

func (p *parser) parse() (*Trace, error) {
	err := p.next()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty input", ErrFormat)
	}
	if err == nil && string(bytes.Join(p.toks, []byte(" "))) != header {
		return nil, p.errorf("not a trace (want a first line %q)", header)
	}
	if err != nil {
		return nil, err
	}
	size, err := p.expect("ranks", 1, MaxRanks)
	if err != nil {
		return nil, err
	}
	t := &Trace{Size: int(size)}
	if _, err := p.expect("rank", 0, 0); err != nil {
		return nil, err
	}
	t.Ranks = append(t.Ranks, nil)
	for {
		if err := p.next(); err != nil {
			if err == io.EOF {
				return nil, p.errorf("file ends without \"end\" (truncated?)")
			}
			return nil, err
		}
		r := len(t.Ranks) - 1
		switch string(p.toks[0]) {
		case "end":
			if len(p.toks) != 1 {
				return nil, p.errorf("\"end\" takes nothing after it")
			}
			if len(t.Ranks) != t.Size {
				return nil, p.errorf("end after rank %d of ranks 0 to %d", r, t.Size-1)
			}
			if err := p.next(); err != io.EOF {
				if err == nil {
					return nil, p.errorf("text after \"end\"")
				}
				return nil, err
			}
			return t, nil
		case "rank":
			n, ok := int64(0), len(p.toks) == 2
			if ok {
				n, ok = parseNum(p.toks[1], MaxRanks)
			}
			switch {
			case ok && n >= size:
				return nil, p.errorf("rank %d of a trace of %d ranks", n, size)
			case !ok || n != int64(r+1):
				return nil, p.errorf("want \"rank %d\" (every rank, in order)", r+1)
			}
			t.Ranks = append(t.Ranks, nil)
		default:
			rd := make(Round, len(p.toks))
			for i, tok := range p.toks {
				o, ok := parseOp(tok, size)
				if !ok {
					return nil, p.errorf("operation %q: want s<peer>:<bytes> or r<peer>:<bytes> with a peer below %d and at most %d bytes", tok, size, int64(MaxBytes))
				}
				if o.Peer == r {
					return nil, p.errorf("operation %q: rank %d messages itself", tok, r)
				}
				rd[i] = o
			}
			t.Ranks[r] = append(t.Ranks[r], rd)
		}
	}
}

// parseOp parses s<peer>:<bytes> or r<peer>:<bytes>.
func parseOp(tok []byte, size int64) (Op, bool) {
	if len(tok) < 4 || (tok[0] != 's' && tok[0] != 'r') {
		return Op{}, false
	}
	peer, n, ok := bytes.Cut(tok[1:], []byte{':'})
	if !ok {
		return Op{}, false
	}
	pv, ok1 := parseNum(peer, size-1)
	nv, ok2 := parseNum(n, MaxBytes)
	if !ok1 || !ok2 {
		return Op{}, false
	}
	return Op{Recv: tok[0] == 'r', Peer: int(pv), Bytes: nv}, true
}
