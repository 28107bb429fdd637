/* Communicators made every way a program names them: a dup, a split by
 * colour, a Cartesian grid and a row of it, a dup of the split, and a dup
 * named with MPI_Comm_set_name.  Each gets MPI_Allreduce calls of its own
 * count, so the report's rows can be told apart: world 1, dup 2, split 3,
 * cart 4, cart row 5, dup of split 6, named 7 (one call of n ints each). */
#include <mpi.h>
#include <stdio.h>

static void reduce(MPI_Comm c, int n)
{
    int in[8] = {0}, out[8];
    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, split, cart, row, dsplit, named;
    int rank, size, dims[2] = {2, 0}, periods[2] = {1, 0}, remain[2] = {0, 1};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0)
            fprintf(stderr, "comm_names: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Dims_create(size, 2, dims);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2 + 3, rank, &split); /* colours 3 and 4, 2 ranks each */
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, remain, &row);
    MPI_Comm_dup(split, &dsplit);
    MPI_Comm_dup(MPI_COMM_WORLD, &named);
    MPI_Comm_set_name(named, "halo <x>");
    reduce(MPI_COMM_WORLD, 1);
    reduce(dup, 2);
    reduce(split, 3);
    reduce(cart, 4);
    reduce(row, 5);
    reduce(dsplit, 6);
    reduce(named, 7);
    MPI_Comm_free(&named);
    MPI_Comm_free(&dsplit);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
