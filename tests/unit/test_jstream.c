/* The streamed profile reader: the pull reader's tokens across its window,
 * and cf_profile_read giving exactly what the whole-tree reader gives
 * (cf_profile_from_json on json_load_file), for every recorded profile of
 * the corpus and for damaged ones (the same error, word for word). */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "tmpdir.h"
#include "cf_jstream.h"
#include "cf_profile.h"

static int setup(void **state)
{
    (void)state;
    return tmpdir_setup("jstream");
}

static char *write_tmp(const char *name, const char *text, size_t len)
{
    static char path[400];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* A file of the recorded corpus: tests/corpus/NAME. */
static const char *corpus_path(const char *name)
{
    static char path[600];
    const char *src = getenv("CF_SRCDIR");
    snprintf(path, sizeof(path), "%s/tests/corpus/%s", src ? src : ".", name);
    return path;
}

/* Tokens and values, with a string far longer than the reader's window
 * (256 kB) and white space everywhere JSON allows it. */
static void test_pull(void **state)
{
    (void)state;
    size_t big = 600 * 1024;
    char *text = malloc(big + 200);
    int n = snprintf(text, 200, " {\n \"a\" : [ 1 , {\"b\": [2, 3]} ,\"x\\\"]\" ] , \"s\": \"");
    memset(text + n, 'z', big);
    n += (int)big;
    n += snprintf(text + n, 200, "\", \"t\": true }  \n");
    const char *path = write_tmp("pull.json", text, (size_t)n);
    int fd = open(path, O_RDONLY);
    cf_jin_t *in = cf_jin_new(fd);
    int first = 1, afirst = 1;
    json_t *v;

    assert_true(cf_jin_accept(in, '{'));
    assert_int_equal(cf_jin_more(in, '}', &first), 1);
    v = cf_jin_value(in, 0);
    assert_string_equal(json_string_value(v), "a");
    json_decref(v);
    assert_true(cf_jin_accept(in, ':'));
    assert_true(cf_jin_accept(in, '['));
    assert_int_equal(cf_jin_more(in, ']', &afirst), 1);
    v = cf_jin_value(in, 0);
    assert_int_equal(json_integer_value(v), 1);
    json_decref(v);
    assert_int_equal(cf_jin_more(in, ']', &afirst), 1);
    v = cf_jin_value(in, 0);
    assert_int_equal(json_array_size(json_object_get(v, "b")), 2);
    json_decref(v);
    assert_int_equal(cf_jin_more(in, ']', &afirst), 1);
    v = cf_jin_value(in, 0); /* a bracket inside a string is not one */
    assert_string_equal(json_string_value(v), "x\"]");
    json_decref(v);
    assert_int_equal(cf_jin_more(in, ']', &afirst), 0);
    assert_int_equal(cf_jin_more(in, '}', &first), 1);
    v = cf_jin_value(in, 0);
    assert_string_equal(json_string_value(v), "s");
    json_decref(v);
    assert_true(cf_jin_accept(in, ':'));
    v = cf_jin_value(in, 0);
    assert_int_equal(json_string_length(v), big);
    json_decref(v);
    assert_int_equal(cf_jin_more(in, '}', &first), 1);
    json_decref(cf_jin_value(in, 0));
    assert_true(cf_jin_accept(in, ':'));
    v = cf_jin_value(in, 0);
    assert_true(json_is_true(v));
    json_decref(v);
    assert_int_equal(cf_jin_more(in, '}', &first), 0);
    assert_int_equal(cf_jin_peek(in), -1);
    cf_jin_free(in);
    close(fd);

    /* cut inside a value: no value, not a partial one */
    path = write_tmp("cut.json", text, 24);
    fd = open(path, O_RDONLY);
    in = cf_jin_new(fd);
    assert_true(cf_jin_accept(in, '{'));
    json_decref(cf_jin_value(in, 0));
    assert_true(cf_jin_accept(in, ':'));
    assert_null(cf_jin_value(in, 0));
    cf_jin_free(in);
    close(fd);
    free(text);
}

static void assert_same_profile(const cf_profile_t *a, const cf_profile_t *b)
{
    assert_int_equal(a->ranks, b->ranks);
    assert_int_equal(a->nodes, b->nodes);
    assert_true(a->wall_s == b->wall_s);
    assert_int_equal(a->partial, b->partial);
    assert_int_equal(a->npartial_reason, b->npartial_reason);
    for (size_t i = 0; i < a->npartial_reason; i++)
        assert_string_equal(a->partial_reason[i], b->partial_reason[i]);
    assert_int_equal(a->oversubscribed, b->oversubscribed);
    assert_int_equal(a->failed_calls, b->failed_calls);
    assert_int_equal(a->unfinished_requests, b->unfinished_requests);
    assert_string_equal(a->mpi_library, b->mpi_library);
    assert_string_equal(a->start_time, b->start_time);
    assert_int_equal(a->nrank, b->nrank);
    assert_int_equal(a->ncomm, b->ncomm);
    assert_int_equal(a->nrec, b->nrec);
    assert_int_equal(a->nregion, b->nregion);
    assert_memory_equal(a->rank, b->rank, a->nrank * sizeof(*a->rank));
    assert_memory_equal(a->comm, b->comm, a->ncomm * sizeof(*a->comm));
    assert_memory_equal(a->rec, b->rec, a->nrec * sizeof(*a->rec));
    for (size_t i = 0; i < a->nregion; i++)
        assert_string_equal(a->region[i], b->region[i]);
    /* the sections as the tools see them: the matrix and the call sites
     * (the stream keeps them compact, the tree as trees) */
    cf_pair_t *pa, *pb;
    size_t na, nb;
    uint64_t la, lb;
    char e1[512], e2[512];
    int ra = cf_profile_matrix(a, &pa, &na, &la, e1, sizeof(e1)), rb = cf_profile_matrix(b, &pb, &nb, &lb, e2, sizeof(e2));
    assert_int_equal(ra, rb);
    assert_int_equal(na, nb);
    assert_int_equal(la, lb);
    if (na > 0)
        assert_memory_equal(pa, pb, na * sizeof(*pa));
    free(pa);
    free(pb);
    cf_callsites_t ca, cb;
    assert_int_equal(cf_profile_callsites(a, &ca, e1, sizeof(e1)), cf_profile_callsites(b, &cb, e2, sizeof(e2)));
    assert_int_equal(ca.n, cb.n);
    assert_int_equal(ca.depth, cb.depth);
    assert_int_equal(ca.lost_calls, cb.lost_calls);
    assert_int_equal(ca.complete, cb.complete);
    for (size_t i = 0; i < ca.n; i++) {
        const cf_callsite_t *x = &ca.site[i], *y = &cb.site[i];
        assert_int_equal(x->id, y->id);
        assert_string_equal(x->op, y->op);
        assert_true(x->comm == y->comm && x->calls == y->calls && x->bytes == y->bytes && x->ranks == y->ranks);
        assert_memory_equal(&x->time_s, &y->time_s, 3 * sizeof(double));
        assert_int_equal(x->nframe, y->nframe);
        for (size_t k = 0; k < x->nframe; k++) {
            const cf_site_frame_t *g = &x->frame[k], *h = &y->frame[k];
            assert_true((g->module == NULL) == (h->module == NULL) && (g->symbol == NULL) == (h->symbol == NULL));
            if (g->module != NULL)
                assert_string_equal(g->module, h->module);
            if (g->symbol != NULL)
                assert_string_equal(g->symbol, h->symbol);
            assert_true(g->offset == h->offset && g->symbol_offset == h->symbol_offset);
        }
    }
    free(ca.site);
    free(cb.site);
    /* and written back, the same tree (the plugin's form) */
    json_t *ja = cf_profile_to_json(a), *jb = cf_profile_to_json(b);
    assert_true(json_equal(ja, jb));
    json_decref(ja);
    json_decref(jb);
    /* the same sections in the same order */
    void *ia = json_object_iter(a->extra), *ib = json_object_iter(b->extra);
    for (; ia != NULL && ib != NULL; ia = json_object_iter_next(a->extra, ia), ib = json_object_iter_next(b->extra, ib)) {
        const char *k = json_object_iter_key(ia);
        assert_string_equal(k, json_object_iter_key(ib));
        if ((strcmp(k, "matrix") != 0 || !a->matrix_cols) && (strcmp(k, "callsites") != 0 || a->nsite == 0))
            assert_true(json_equal(json_object_iter_value(ia), json_object_iter_value(ib)));
    }
    assert_true(ia == NULL && ib == NULL);
}

/* rc and message of the whole-tree reader */
static int read_tree(const char *path, cf_profile_t *p, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return -1;
    int rc = cf_profile_from_json(root, p, err, errlen);
    json_decref(root);
    return rc;
}

static void test_corpus(void **state)
{
    (void)state;
    char dir[700], path[1000], e1[512], e2[512];
    snprintf(dir, sizeof(dir), "%s", corpus_path(""));
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        cf_profile_t a, b;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s%s/profile.json", dir, de->d_name);
        if (access(path, R_OK) != 0)
            continue;
        assert_int_equal(cf_profile_read(path, &a, e1, sizeof(e1)), CF_OK);
        assert_int_equal(read_tree(path, &b, e2, sizeof(e2)), CF_OK);
        assert_same_profile(&a, &b);
        cf_profile_free(&a);
        /* a section left out is checked and absent, the rest the same */
        const char *const skip[] = {"samples", NULL};
        assert_int_equal(cf_profile_read_without(path, skip, &a, e1, sizeof(e1)), CF_OK);
        assert_null(json_object_get(a.extra, "samples"));
        json_object_del(b.extra, "samples");
        assert_same_profile(&a, &b);
        cf_profile_free(&a);
        cf_profile_free(&b);
        n++;
    }
    closedir(d);
    assert_true(n >= 20);
}

/* One damaged copy of a profile: the streamed reader says what the tree
 * says (or reads it the same). */
static void check_damaged(const char *name, const char *text)
{
    char e1[512] = "", e2[512] = "";
    cf_profile_t a, b;
    const char *path = write_tmp(name, text, strlen(text));
    int r1 = cf_profile_read(path, &a, e1, sizeof(e1));
    int r2 = read_tree(path, &b, e2, sizeof(e2));
    if (r2 == -1) { /* not JSON: the message is the reader's own */
        assert_int_equal(r1, CF_ERR_FORMAT);
        assert_true(strstr(e1, "not valid JSON") || strstr(e1, "truncated"));
        return;
    }
    assert_int_equal(r1, r2);
    if (r1 == CF_OK) {
        assert_same_profile(&a, &b);
        cf_profile_free(&a);
        cf_profile_free(&b);
    } else {
        assert_string_equal(e1, e2);
    }
}

static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    assert_non_null(at);
    size_t n = strlen(s) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    snprintf(out, n + 1, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return out;
}

static void test_damaged(void **state)
{
    (void)state;
    FILE *f = fopen(corpus_path("hpcc-shm-2/profile.json"), "r");
    assert_non_null(f);
    char *text = calloc(1, 1 << 20);
    size_t len = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_true(len > 1000);
    char *t;
    /* regions left out, and after the records (out of the format's order):
     * read all the same */
    check_damaged("noregions.json", t = replace(text, "\"regions\": [],", ""));
    char *u = replace(t, "\"region_entries\": {},", "\"region_entries\": {}, \"regions\": [],");
    check_damaged("order.json", u);
    free(u);
    free(t);
    check_damaged("layer.json", t = replace(text, "\"layer\": \"mpi\"", "\"layer\": \"zz\""));
    free(t);
    check_damaged("dup.json", t = replace(text, "\"version\": 1,", "\"version\": 1, \"job\": {},"));
    free(t);
    check_damaged("dupextra.json", t = replace(text, "\"samples\": {", "\"sampling\": 1, \"samples\": {"));
    free(t);
    check_damaged("badsamples.json", t = replace(text, "\"samples\": {", "\"samples\": {\"x\": [1,,2], "));
    free(t);
    check_damaged("host.json", t = replace(text, "\"host\"", "\"hast\""));
    free(t);
    check_damaged("trailing.json", t = replace(text, "\"records\": [", "\"records\": [ ,"));
    free(t);
    /* the sections read compact: a bad element, columns that change, a
     * repeated name, a bad depth are the tree's to tell */
    check_damaged("pairrank.json", t = replace(text, "\"pairs\": [\n   [\n    0,", "\"pairs\": [\n   [\n    7,"));
    free(t);
    check_damaged("paircols.json", t = replace(text, "\"pairs\": [", "\"pairs\": [[0, 1, 2, 3], "));
    free(t);
    check_damaged("pair4.json", t = replace(text, "\"pairs\": [", "\"pairs\": [[0, 1, 2, 3]], \"x\": ["));
    free(t);
    check_damaged("pairdup.json", t = replace(text, "\"pairs\": [", "\"pairs\": [], \"pairs\": ["));
    free(t);
    check_damaged("sitecalls.json", t = replace(text, "\"calls\": 11484,", ""));
    free(t);
    check_damaged("sitedepth.json", t = replace(text, "\"depth\": 1,", "\"depth\": 0,"));
    free(t);
    check_damaged("sitenone.json", t = replace(text, "\"sites\": [", "\"stes\": ["));
    free(t);
    check_damaged("sitectl.json", t = replace(text, "\"op\": \"MPI_Sendrecv\"", "\"op\": \"MPI_\\u001b[31mSendrecv\""));
    free(t);
    text[len / 2] = '\0';
    check_damaged("cut.json", text);
    free(text);
}

static int count_each(json_t *e, void *ctx)
{
    json_t *want = ctx;
    size_t *n = (size_t *)json_integer_value(json_object_get(want, "n"));
    assert_true(json_equal(e, json_array_get(json_object_get(want, "a"), *n)));
    (*n)++;
    return CF_OK;
}

static int stop_at_first(json_t *e, void *ctx)
{
    (void)e;
    (*(int *)ctx)++;
    return CF_ERR_INVALID;
}

/* The samples walked one at a time are the samples of the tree, in order. */
static void test_each(void **state)
{
    (void)state;
    const char *path = corpus_path("hpcc-shm-2/profile.json");
    json_t *root = json_load_file(path, 0, NULL);
    assert_non_null(root);
    json_t *coll = json_object_get(json_object_get(root, "samples"), "collectives");
    assert_true(json_array_size(coll) > 10);
    size_t n = 0;
    json_t *want = json_pack("{s:O, s:I}", "a", coll, "n", (json_int_t)(intptr_t)&n);
    assert_int_equal(cf_profile_each(path, "samples", "collectives", count_each, want), CF_OK);
    assert_int_equal(n, json_array_size(coll));
    json_decref(want);
    assert_int_equal(cf_profile_each(path, "samples", "collectives", NULL, NULL), CF_OK);
    assert_int_equal(cf_profile_each(path, "samples", "nothing", NULL, NULL), CF_ERR_NODATA);
    assert_int_equal(cf_profile_each(path, "nothing", "collectives", NULL, NULL), CF_ERR_NODATA);
    assert_int_equal(cf_profile_each(path, "job", "ranks", NULL, NULL), CF_ERR_NODATA); /* not an array */
    int calls = 0;
    assert_int_equal(cf_profile_each(path, "samples", "collectives", stop_at_first, &calls), CF_ERR_INVALID);
    assert_int_equal(calls, 1);
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pull),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
