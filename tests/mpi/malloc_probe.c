/* Prints, from rank 0, whether a block of the given MiB (default 4) that
 * the program allocates after MPI_Init is mapped afresh (glibc's mmap
 * threshold as the program and MPI left it) or taken from the heap (the
 * threshold raised, as glibc does when a larger mapped block is freed).
 * test_bad_input.sh: a plugin switched off must leave it as it was. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char **argv)
{
    int rank;
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 4;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *where = "unknown";
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    size_t before = mallinfo2().hblks;
    volatile char *p = malloc(mib << 20);
    if (p != NULL) {
        p[0] = 1;
        where = mallinfo2().hblks > before ? "mapped" : "heap";
    }
    free((void *)p);
#endif
    if (rank == 0)
        printf("malloc_probe: %zu MiB %s\n", mib, where);
    MPI_Finalize();
    return 0;
}
