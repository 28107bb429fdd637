/* Payload of the collectives whose arguments mean different things at the
 * root and elsewhere (DESIGN.md: gather/scatter count the p blocks moved). */
#ifndef CF_PAYLOAD_H
#define CF_PAYLOAD_H

#include "cf_runtime.h"

static inline int cf_is_root(const cf_comm_t *c, int root)
{
    if (root == MPI_ROOT)
        return 1; /* inter-communicator root */
    return c && !c->inter && c->rank == root;
}

/* at_root: the per-rank block as the root sees it; elsewhere: this rank's block */
static inline uint64_t cf_payload_rooted(const cf_comm_t *c, int root, uint64_t at_root, uint64_t elsewhere)
{
    if (root == MPI_PROC_NULL)
        return 0;
    return (uint64_t)cf_comm_size(c) * (cf_is_root(c, root) ? at_root : elsewhere);
}

/* v variants: the root sums the counts; other ranks only know their own block,
 * so they count p times it (exact when the blocks are equal) */
static inline uint64_t cf_payload_rooted_v(const cf_comm_t *c, int root, const int *counts, MPI_Datatype t,
                                           uint64_t elsewhere)
{
    if (root == MPI_PROC_NULL)
        return 0;
    if (cf_is_root(c, root))
        return cf_sum_counts(counts, cf_comm_size(c), t);
    return (uint64_t)cf_comm_size(c) * elsewhere;
}

static inline uint64_t cf_sum_counts_w(const int *counts, const MPI_Datatype *types, int n)
{
    uint64_t s = 0;
    if (!counts || !types)
        return 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            s += (uint64_t)counts[i] * cf_type_size(types[i]);
    return s;
}

#endif
