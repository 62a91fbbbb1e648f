/* scoll's stand-in for the header that the test suite's configure writes:
 * scripts/mpich-coll.sh builds MPICH's collective tests without running
 * their configure, for any MPI with a C99 compiler on Linux. It says only
 * what such a system has. */
#ifndef SCOLL_MPITESTCONF_H
#define SCOLL_MPITESTCONF_H

/* C library and headers of any Linux */
#define HAVE_UNISTD_H 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1

/* C types that C99 has and MPI-3 names (MPI_LONG_LONG, MPI_LONG_DOUBLE,
 * MPI_C_BOOL) */
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_LONG_DOUBLE 1
#define HAVE__BOOL 1

/* MPI-2 functions every MPI has now */
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_WIN_CREATE 1

/* POSIX threads (the single-threaded tests only declare the helpers) */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX

/* The standard only: no MPI extensions, no optional datatypes with the
 * logical and bitwise operators that MPI does not require. */
#define USE_STRICT_MPI 1

#endif
