/* SPDX-License-Identifier: BSD-3-Clause */
/* Open MPI's installed ompi/op/op.h includes this header, which its devel
 * packages (Debian's libopenmpi-dev among them) do not ship. op.h uses
 * one macro of it, on its Fortran-operator path; where MPI_Fint is an int
 * (checked below) Open MPI's own header defines it as the identity. */
#ifndef COLL_UCG_SHIM_FINT_2_INT_H_
#define COLL_UCG_SHIM_FINT_2_INT_H_

#include "mpi.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int),
               "coll/ucg's fint_2_int.h shim assumes MPI_Fint is an int");

#define OMPI_INT_2_FINT(a) ((MPI_Fint)(a))

#endif
