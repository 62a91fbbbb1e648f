package launch

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// MaxLine is the longest line written whole. A longer line is written in
// pieces of MaxLine bytes, each tagged and ended as a line of its own, so
// that a child writing without newlines cannot make the launcher hold
// unbounded memory or block the other ranks' output.
const MaxLine = 1 << 20

// output copies the children's output to the launcher's writers.
type output struct {
	mu             sync.Mutex // serialises writes to stdout and stderr
	stdout, stderr io.Writer
	tagged         bool

	pumps sync.WaitGroup // one per started stream
	rmu   sync.Mutex
	reads []*os.File // read ends of the pipes, closed by wait on timeout
}

func newOutput(stdout, stderr io.Writer, tagged bool) *output {
	return &output{stdout: stdout, stderr: stderr, tagged: tagged}
}

// stream is one child's stdout or stderr between attach and Start.
type stream struct {
	o      *output
	r, w   *os.File // nil when the child writes to the destination directly
	rank   int
	dst    io.Writer
	prefix []byte
}

// attach sets cmd.Stdout (or cmd.Stderr) for the child of rank.
func (o *output) attach(rank int, cmd *exec.Cmd, stderr bool) (*stream, error) {
	dst := o.stdout
	if stderr {
		dst = o.stderr
	}
	s := &stream{o: o, rank: rank, dst: dst}
	if dst == nil {
		return s, nil // os/exec connects the child to the null device
	}
	if f, ok := dst.(*os.File); ok && !o.tagged {
		s.setCmd(cmd, stderr, f)
		return s, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.r, s.w = r, w
	s.setCmd(cmd, stderr, w)
	if o.tagged {
		s.prefix = []byte("[" + strconv.Itoa(rank) + "] ")
	}
	return s, nil
}

func (s *stream) setCmd(cmd *exec.Cmd, stderr bool, f *os.File) {
	if stderr {
		cmd.Stderr = f
	} else {
		cmd.Stdout = f
	}
}

// started closes the launcher's copy of the write end and starts copying.
func (s *stream) started() {
	if s.r == nil {
		return
	}
	s.w.Close()
	s.o.rmu.Lock()
	s.o.reads = append(s.o.reads, s.r)
	s.o.rmu.Unlock()
	s.o.pumps.Add(1)
	go func() {
		defer s.o.pumps.Done()
		if s.prefix != nil {
			s.o.lines(s.r, s.dst, s.prefix)
		} else {
			s.o.chunks(s.r, s.dst)
		}
	}()
}

// abort releases a stream whose child did not start.
func (s *stream) abort() {
	if s.r != nil {
		s.r.Close()
		s.w.Close()
	}
}

// write writes b to dst under the output lock. Errors are dropped: the
// children's output must keep draining whatever happens to the launcher's.
func (o *output) write(dst io.Writer, b []byte) {
	o.mu.Lock()
	dst.Write(b)
	o.mu.Unlock()
}

// lines copies r to dst a line at a time, each line prefixed and ended with
// a newline (also a last line that had none).
func (o *output) lines(r io.Reader, dst io.Writer, prefix []byte) {
	br := bufio.NewReaderSize(r, 64<<10)
	line := append([]byte(nil), prefix...)
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		eof := err != nil && err != bufio.ErrBufferFull
		if err == nil || eof || len(line)-len(prefix) >= MaxLine {
			if n := len(line) - len(prefix); n > 0 {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				o.write(dst, line)
			}
			if cap(line) > 2*MaxLine {
				line = append([]byte(nil), prefix...)
			}
			line = line[:len(prefix)]
		}
		if eof {
			return
		}
	}
}

// chunks copies r to dst as it comes.
func (o *output) chunks(r io.Reader, dst io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.write(dst, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// wait waits for the copies to reach the end of their pipes, at most limit
// once it is called (after the last child has exited): a process the
// children left behind may still hold a pipe open.
func (o *output) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() {
		o.pumps.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	o.rmu.Lock()
	for _, f := range o.reads {
		f.Close()
	}
	o.rmu.Unlock()
	<-done
}
