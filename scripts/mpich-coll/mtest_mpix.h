/* scoll's stand-in for the header of MPI extensions that the test suite's
 * configure writes; it comes right after mpi.h. The tests are built for
 * standard MPI only (USE_STRICT_MPI in mpitestconf.h), so it declares no
 * extension. It only renames the one MPI-1 function some tests still call
 * (MPI_Errhandler_set, removed in MPI-3: Open MPI's mpi.h refuses it) to its
 * MPI-2 successor. */
#ifndef SCOLL_MTEST_MPIX_H
#define SCOLL_MTEST_MPIX_H
#undef MPI_Errhandler_set
#define MPI_Errhandler_set MPI_Comm_set_errhandler
#endif
