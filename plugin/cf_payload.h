/* Payload of the collectives whose arguments mean different things at the
 * root and elsewhere (docs/models.md: gather/scatter count the p blocks moved). */
#ifndef CF_PAYLOAD_H
#define CF_PAYLOAD_H

#include "cf_runtime.h"

static inline int cf_is_root(const cf_comm_t *c, int root)
{
    if (root == MPI_ROOT)
        return 1; /* inter-communicator root */
    return c && !c->inter && c->rank == root;
}

/* Only the arguments that mean something on this rank are read: MPI lets
 * the others hold anything, even an invalid datatype.  The root counts
 * (count, type) at_root per rank of the other side; elsewhere a rank counts
 * its own block times the size of its group. */
static inline uint64_t cf_payload_rooted(const cf_comm_t *c, int root, int64_t root_count, MPI_Datatype root_type,
                                         int64_t count, MPI_Datatype type)
{
    if (root == MPI_PROC_NULL)
        return 0;
    if (cf_is_root(c, root))
        return (uint64_t)cf_comm_size(c) * cf_bytes(root_count, root_type);
    return (uint64_t)cf_comm_local_size(c) * cf_bytes(count, type);
}

/* The helpers over arrays of counts, defined once for int counts and once,
 * with the suffix _c, for the MPI_Count counts of the large-count forms.
 * sum_counts: the counts of one type; sum_counts_w: each with its own type;
 * payload_rooted_v (v variants): the root sums the counts, other ranks only
 * know their own block, so they count p times it (exact when the blocks
 * are equal). */
#define CF_COUNT_HELPERS(SUFFIX, COUNT_T)                                                                        \
    static inline uint64_t cf_sum_counts##SUFFIX(const COUNT_T *counts, int n, MPI_Datatype t)                 \
    {                                                                                                          \
        uint64_t s = 0;                                                                                        \
        if (!counts)                                                                                           \
            return 0;                                                                                          \
        for (int i = 0; i < n; i++)                                                                            \
            s += counts[i] > 0 ? (uint64_t)counts[i] : 0;                                                      \
        return s * cf_type_size(t);                                                                            \
    }                                                                                                          \
    static inline uint64_t cf_sum_counts_w##SUFFIX(const COUNT_T *counts, const MPI_Datatype *types, int n)    \
    {                                                                                                          \
        uint64_t s = 0;                                                                                        \
        if (!counts || !types)                                                                                 \
            return 0;                                                                                          \
        for (int i = 0; i < n; i++)                                                                            \
            if (counts[i] > 0)                                                                                 \
                s += (uint64_t)counts[i] * cf_type_size(types[i]);                                             \
        return s;                                                                                              \
    }                                                                                                          \
    static inline uint64_t cf_payload_rooted_v##SUFFIX(const cf_comm_t *c, int root, const COUNT_T *root_counts, \
                                                       MPI_Datatype root_type, int64_t count, MPI_Datatype type) \
    {                                                                                                          \
        if (root == MPI_PROC_NULL)                                                                             \
            return 0;                                                                                          \
        if (cf_is_root(c, root))                                                                               \
            return cf_sum_counts##SUFFIX(root_counts, cf_comm_size(c), root_type);                             \
        return (uint64_t)cf_comm_local_size(c) * cf_bytes(count, type);                                        \
    }
CF_COUNT_HELPERS(, int)
CF_COUNT_HELPERS(_c, MPI_Count)
#undef CF_COUNT_HELPERS

/* the larger of the two directions (Get_accumulate, Isendrecv) */
static inline uint64_t cf_max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

#endif
