// Package mpi is a scoll transport over an installed MPI library, through
// cgo. It is compiled only with the build tag mpi; without the tag the
// package is this comment alone, so that plain go build, go vet and go test
// need neither cgo nor MPI.
//
// One process is one rank: Init initialises MPI and returns the transport
// for this process's rank of MPI_COMM_WORLD; Close finalizes MPI. Start the
// program with the MPI library's launcher (mpirun, mpiexec).
//
// # Building
//
// cgo finds MPI with pkg-config (#cgo pkg-config: mpi). On Debian and
// Ubuntu the name "mpi" is an alternative (update-alternatives --display
// mpi) that the MPI development packages register, so after
//
//	apt-get install -y openmpi-bin libopenmpi-dev
//
// go build -tags mpi works as it is, against Open MPI (ompi.pc). MPICH can
// be installed beside it (apt-get install -y mpich libmpich-dev) without
// changing the default; build against it with the extra tag mpich, which
// uses mpich.pc instead, and launch with MPICH's launcher:
//
//	go test -c -tags mpi,mpich -o /tmp/mpich.test ./transport/mpi
//	mpirun.mpich -np 4 /tmp/mpich.test
//
// Elsewhere, point PKG_CONFIG_PATH at a directory holding an mpi.pc, or set
// CGO_CFLAGS and CGO_LDFLAGS from the MPI compiler wrapper (mpicc -showme
// for Open MPI, mpicc -show for MPICH).
//
// # Tests
//
// The tests run transporttest.RunWorld on every rank when the binary is
// started by a launcher, and skip otherwise (plain go test -tags mpi runs
// the suite's self-check on in-process ranks only). Open MPI refuses to run
// as root unless told:
//
//	go test -c -tags mpi -o /tmp/mpi.test ./transport/mpi
//	mpirun --allow-run-as-root --oversubscribe -np 4 /tmp/mpi.test -test.v
//	mpirun --allow-run-as-root -np 2 /tmp/mpi.test -test.run TestMeasure -mpi.measure -test.v
//
// (or set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
//
// # Protocol
//
// scoll matches messages by source and a 24-byte Key, which does not fit an
// MPI tag, and hashing keys into tags could deliver the wrong message. So
// every message starts with a 64-byte header on its own duplicate of
// MPI_COMM_WORLD and one tag: message kind, the full Key, Msg.Sig, length,
// a per-destination message id and the sender's chunk size. The receiver
// keeps 32 header receives posted (MPI_ANY_SOURCE) and matches headers to
// posted receives itself, in posting order among equal source and Key.
// Headers from one sender are handled in sending order: MPI matches them
// with the header receives in posting order, and the transport handles
// completed header receives in posting order too.
//
// A payload of up to 8 KiB travels inside its header: the send copies it
// and completes at once, and the receiver copies it into the matched
// buffer (or keeps a copy until a receive matches). A larger payload is
// sent on a second communicator with tag id mod (MPI_TAG_UB+1), in chunks
// of at most 1 GiB (MPI counts are C ints), from the sender's pinned
// buffer; the receiver posts MPI_Irecv straight into the user's pinned
// buffer once a receive matches its header, so MPI's rendezvous protocol
// keeps an unmatched large payload at the sender. The send completes when
// MPI completes it. When the payload cannot go to the user's buffer as it
// is (it is longer than the buffer: the receive keeps its first len(Buf)
// bytes and fails with errs.InvalidArgument; or the signatures differ:
// errs.Mismatch), it is received into C scratch memory first. So is an
// unmatched payload whose tag a newer message from the same sender reuses
// (after MPI_TAG_UB+1 messages: 2^31 on Open MPI 4.1, 2^28 on MPICH 4.0),
// so that MPI never hands a payload to the wrong receive.
//
// Buffers MPI holds are pinned with runtime.Pinner until the request
// completes; headers and scratch memory are C memory.
//
// # Progress
//
// MPI moves data only inside MPI calls, and the Go runtime moves goroutines
// between threads. The transport initialises MPI with
// MPI_THREAD_SERIALIZED (MPI_Init_thread and MPI_Finalize run on one locked
// OS thread, as MPI requires) and makes every later MPI call under one
// mutex, from whatever goroutine needs it. It implements transport.Poller:
// a waiting goroutine polls (MPI_Testsome over the outstanding requests,
// then header matching) while it spins, so that the rank that waits also
// moves its messages, without a thread hand-off. A pump goroutine polls
// whenever no waiter is polling and there is work: operations outstanding
// (sends nobody waits for too), a parked waiter (it may wait for what a
// peer's request delivers, such as a split's post), or a registered
// service (Serve), whose requests are answered even while the rank makes
// no call at all. When nothing happens it
// polls without pause for 50 µs, then yields the CPU between polls
// (sched_yield) up to 5 ms if a waiter is parked or a payload is in
// flight, then sleeps between polls from 10 µs doubling to 1 ms: a rank
// that waits a second for a late peer uses about 3% of a CPU. A dedicated
// progress thread owning all MPI calls (MPI_THREAD_FUNNELED) was the
// alternative: every operation would pay a hand-off between threads, and a
// rank would keep two CPUs busy while it waits. The pump alone is that
// design's best case; ping-pong between two ranks of one machine (Open MPI
// 4.1.4, shared memory, 2 CPUs shared with other work, best of 5 runs):
//
//	one-way          waiter polls      pump only (parked)   MPI_Send/MPI_Recv
//	8 B              1.3 µs            3.0 µs               0.39 µs
//	1 KiB            1.9 µs            3.4 µs               0.94 µs
//	64 KiB           14 µs, 4.5 GB/s   16 µs, 4.0 GB/s      11 µs, 6.0 GB/s
//	1 MiB            152 µs, 6.9 GB/s  150 µs, 7.0 GB/s     134 µs, 7.9 GB/s
//	16 MiB           5.2 ms, 3.2 GB/s  5.2 ms, 3.2 GB/s     4.8 ms, 3.5 GB/s
//
// The small-message cost over MPI is the header protocol's bookkeeping and
// about four cgo calls per message and side.
//
// # Exchanges
//
// The transport implements transport.Exchanger: small blocking collectives
// of the world communicator (8 bytes, say) run as one allgather of
// fixed-size records (call, signature, payload of up to 96 bytes) on a
// communicator of their own, persistent where the library has persistent
// collectives (MPIX_Allgather_init in Open MPI 4, MPI_Allgather_init in MPI
// 4; MPI_Iallgather otherwise), started and tested in a loop inside one cgo
// call. Between two processes of one host (Open MPI 4.1.4, shared memory),
// 8 bytes per call, best of 5 (TestMeasureExchange): exchange 0.43 µs,
// MPI_Allgather 0.34 µs and MPI_Allreduce 0.34 µs in the same process
// (initialised MPI_THREAD_SERIALIZED, which alone costs MPI 0.1-0.2 µs per
// call against a plain MPI_Init). Records of different calls or
// signatures fail the call with errs.Mismatch on every rank. Ranks that
// disagree about taking the exchange (a count that differs: some run the
// call as messages) are found by the exchanging ranks, from the others'
// messages of the call or from a word a receive of the call sends its
// peer after waiting 0.5 ms (transport.Msg.Announce): the call then fails
// with errs.Mismatch everywhere, the next exchange too (one rank's
// allgather is one behind), and the ranks are in step again after it. An
// exchange abandoned because its context ended completes in the
// background with the late ranks' records.
//
// # Native collectives
//
// NativeAllreduceSumFloat64, NativeAllgather, NativeBcast and NativeBarrier
// call MPI's own blocking collectives on a third duplicate of
// MPI_COMM_WORLD, as references for benchmarks. They hold the mutex for the
// whole call: point-to-point messages keep moving inside MPI, but no header
// is matched and no operation is posted or completes until the collective
// returns.
//
// # Limitations
//
//   - No combining receives (Irecv fails with errs.Unsupported), and no
//     transport.Checker or Meeter: executors emulate them.
//   - A signature mismatch fails the receive only; the send completes.
//   - Cancel withdraws unmatched receives only. For a large send it asks
//     the receiver to drop the message if no receive has matched it, so that
//     the send completes; small sends have completed already.
//   - An error MPI reports fails the operation and every later post (wrapping
//     errs.PeerFailed); MPI has no recovery from a failed rank.
//   - Init works once per process. Close is collective, like MPI_Finalize;
//     it fails pending operations with errs.Closed and waits up to a second
//     for sends in flight.
//   - A message that arrives before its receive costs a copy of its payload
//     (small) or holds the sender's buffer (large); a truncated or
//     mismatched large message is staged in scratch memory of its full size.
package mpi
