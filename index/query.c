#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Columns as in CHUNK_GET / CHUNK_OF_FILE. */
static void chunk_from_row(sqlite3_stmt *s, IdxChunk *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(s, 0);
    c->file_id = sqlite3_column_int64(s, 1);
    c->path = idx_store_col_dup(s, 2);
    c->module = idx_store_col_dup(s, 3);
    c->symbol = idx_store_col_dup(s, 4);
    c->signature = idx_store_col_dup(s, 5);
    c->docstring = idx_store_col_dup(s, 6);
    c->start_line = (uint32_t)sqlite3_column_int(s, 7);
    c->end_line = (uint32_t)sqlite3_column_int(s, 8);
    c->window = (uint32_t)sqlite3_column_int(s, 9);
    c->kind = (IdxKind)sqlite3_column_int(s, 10);
    c->parent_id = sqlite3_column_int64(s, 11);
    const unsigned char *h = sqlite3_column_text(s, 12);
    snprintf(c->hash, sizeof c->hash, "%s", h ? (const char *)h : "");
}

void idx_chunk_release(IdxChunk *c)
{
    if (!c) return;
    free(c->path);
    free(c->module);
    free(c->symbol);
    free(c->signature);
    free(c->docstring);
    memset(c, 0, sizeof *c);
}

CrErr idx_chunk_get(IdxStore *st, int64_t id, IdxChunk *out, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_GET, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        chunk_from_row(s, out);
        sqlite3_reset(s);
        return CR_OK;
    }
    sqlite3_reset(s);
    if (rc == SQLITE_DONE) return err_set(e, CR_ENOENT, "no chunk %lld", (long long)id);
    return idx_store_err(st, e, "chunk");
}

CrErr idx_file_chunks(IdxStore *st, const char *path, IdxChunk **out, size_t *n_out, ErrInfo *e)
{
    IdxChunk *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_OF_FILE, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        chunk_from_row(s, &v[n++]);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        idx_chunks_free(v, n);
        return idx_store_err(st, e, "file chunks");
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

void idx_chunks_free(IdxChunk *v, size_t n)
{
    for (size_t i = 0; i < n; i++) idx_chunk_release(&v[i]);
    free(v);
}

/* Words that carry no meaning in a question about code. */
static const char *const stopwords[] = {
    "a",     "about", "after", "all",   "also",  "an",    "and",   "any",   "are",    "as",
    "at",    "be",    "been",  "being", "but",   "by",    "can",   "could", "did",    "do",
    "does",  "doing", "done",  "each",  "for",   "from",  "had",   "has",   "have",   "how",
    "i",     "if",    "in",    "into",  "is",    "it",    "its",   "just",  "like",   "may",
    "me",    "might", "must",  "my",    "no",    "not",   "of",    "on",    "one",    "only",
    "or",    "other", "our",   "out",   "own",   "s",     "same",  "shall", "should", "so",
    "some",  "such",  "than",  "that",  "the",   "their", "them",  "then",  "there",  "these",
    "they",  "this",  "those", "through", "to",  "too",   "up",    "us",    "used",   "using",
    "very",  "was",   "we",    "were",  "what",  "when",  "where", "which", "while",  "who",
    "whose", "why",   "will",  "with",  "would", "you",   "your",  "e",     "g",      "eg",
    "ie",    "way",   "happens", "get", "gets",  "work",  "works", "make",  "makes",  "code",
};

static int is_stopword(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof stopwords / sizeof stopwords[0]; i++)
        if (strlen(stopwords[i]) == n && !memcmp(stopwords[i], w, n)) return 1;
    return 0;
}

void idx_query_words(const char *query, StrBuf *out)
{
    StrBuf toks;
    sb_init(&toks);
    idx_tok_code(query, strlen(query), &toks);
    for (const char *p = toks.buf; *p;) {
        while (*p == ' ') p++;
        const char *q = p;
        while (*q && *q != ' ') q++;
        size_t n = (size_t)(q - p);
        if (n && !is_stopword(p, n)) {
            if (out->len) sb_addc(out, ' ');
            sb_add(out, p, n);
        }
        p = q;
    }
    sb_release(&toks);
}

/* Field weights and normalisation: a match in a definition's name says far
 * more than one in its body. */
static const Bm25Params bm25_params = {
    1.2,
    {0.5, 0.5, 0.75, 0.75},
    {4.0, 1.5, 1.5, 1.0},
};

#define MAX_QUERY_TERMS 64

/* A damaged list was met in the snapshot: it is not used again (nor kept,
 * where this store may write), and the postings come from the search text
 * until a new snapshot is written. */
static void postings_distrust(IdxStore *st)
{
    char path[PATH_MAX + 16];
    log_msg(LOG_WARN, "%s/postings.bin is damaged; rebuilding the search postings", st->index_dir);
    st->post_distrust = 1;
    snprintf(path, sizeof path, "%s/postings.bin", st->index_dir);
    if (!st->readonly) unlink(path);
    idx_store_postings_invalidate(st);
}

CrErr idx_warm(IdxStore *st, ErrInfo *e)
{
    int64_t version = idx_store_data_version(st);
    if (st->post && (idx_postings_needs_rebuild(st->post) || version != st->post_version)) {
        /* Rows another process wrote: what is in memory is out of date. */
        idx_store_postings_invalidate(st);
        idx_dense_forget(st);
    }
    if (st->post) return CR_OK;
    st->post_version = version;
    CrErr rc = idx_postings_load(st, !st->post_distrust, &st->post, e);
    if (!rc) idx_store_postings_checkpoint(st);
    return rc;
}


void idx_store_postings_checkpoint(IdxStore *st)
{
    PostingsGen g;
    ErrInfo e = {0};
    if (!st->post || st->readonly || !sqlite3_get_autocommit(st->db) || !idx_postings_stale(st->post))
        return;
    if (idx_postings_current_gen(st, st->post_version, &g, &e) || g.gen < 0) return;
    if (idx_postings_save(st, st->post, &g, &e)) {
        if (idx_postings_damaged(st->post)) {
            postings_distrust(st);
            idx_warm(st, NULL);
        } else {
            /* A cache: a read-only index folder only makes opening slower. */
            log_msg(LOG_INFO, "search postings not saved: %s", e.msg);
        }
        return;
    }
    st->post_distrust = 0;
    /* Reopen from the new snapshot: the same postings, mapped, compact. */
    int64_t version = st->post_version;
    idx_store_postings_invalidate(st);
    st->post_version = version;
    if (idx_postings_load(st, 1, &st->post, &e)) log_msg(LOG_WARN, "search postings: %s", e.msg);
}


/* Adjacent question words often name one identifier ("allowed hosts" is
 * ALLOWED_HOSTS, "append slash" append_slash): appends each adjacent pair
 * of plain words joined by '_', space-separated. Only joins the code holds
 * become query terms. */
static void join_adjacent(const char *words, StrBuf *out)
{
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *p = words; *p;) {
        while (*p == ' ') p++;
        const char *q = p;
        while (*q && *q != ' ') q++;
        size_t n = (size_t)(q - p);
        int plain = n && !memchr(p, '_', n);
        if (plain && prev) {
            if (out->len) sb_addc(out, ' ');
            sb_add(out, prev, prev_len);
            sb_addc(out, '_');
            sb_add(out, p, n);
        }
        prev = plain ? p : NULL;
        prev_len = n;
        p = q;
    }
}

CrErr idx_search_bm25(IdxStore *st, const char *query, size_t limit, IdxHit **out, size_t *n_out,
                      ErrInfo *e)
{
    CrErr rc;
    StrBuf words, joined;
    uint32_t terms[MAX_QUERY_TERMS];
    *out = NULL;
    *n_out = 0;
    sb_init(&words);
    sb_init(&joined);
    idx_query_words(query, &words);
    join_adjacent(words.buf, &joined);
    IdxHit *v = xcalloc(limit + 1, sizeof *v);
    /* A second round only when the first met a damaged snapshot list. */
    for (int round = 0; round < 2; round++) {
        if ((rc = idx_warm(st, e))) break;
        size_t n_unknown = 0;
        size_t n_terms =
            idx_postings_query_terms(st->post, words.buf, terms, 0, MAX_QUERY_TERMS, &n_unknown);
        n_terms = idx_postings_query_terms(st->post, joined.buf, terms, n_terms, MAX_QUERY_TERMS, NULL);
        *n_out = n_terms && limit ? idx_postings_search(st->post, terms, n_terms, n_unknown, &bm25_params,
                                                    limit, v)
                                  : 0;
        if (!idx_postings_damaged(st->post)) break;
        postings_distrust(st);
        *n_out = 0;
    }
    sb_release(&joined);
    sb_release(&words);
    if (rc || !*n_out) {
        free(v);
        return rc;
    }
    *out = v;
    return CR_OK;
}

CrErr idx_edges(IdxStore *st, int64_t chunk_id, int outgoing, IdxEdge **out, size_t *n_out,
                ErrInfo *e)
{
    IdxEdge *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, outgoing ? STMT_EDGE_OUT : STMT_EDGE_IN, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, chunk_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        v[n].src = sqlite3_column_int64(s, 0);
        v[n].dst = sqlite3_column_int64(s, 1);
        v[n].kind = (IdxEdgeKind)sqlite3_column_int(s, 2);
        v[n].other_kind = (IdxKind)sqlite3_column_int(s, 3);
        v[n].other_file = sqlite3_column_int64(s, 4);
        n++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        return idx_store_err(st, e, "edges");
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

static CrErr collect_ids(IdxStore *st, sqlite3_stmt *s, int64_t **v, size_t *n, size_t *cap,
                         ErrInfo *e)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "lookup");
}

CrErr idx_lookup_symbol(IdxStore *st, const char *name, int64_t **out, size_t *n_out, ErrInfo *e)
{
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    CrErr rc;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_SYMBOL_BY_QUAL, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    rc = collect_ids(st, s, &v, &n, &cap, e);
    if (!rc && n == 0) {
        const char *last = strrchr(name, '.');
        s = idx_store_stmt(st, STMT_SYMBOL_BY_NAME, e);
        if (!s) {
            free(v);
            return CR_EDB;
        }
        sqlite3_bind_text(s, 1, last ? last + 1 : name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, 1000);
        rc = collect_ids(st, s, &v, &n, &cap, e);
    }
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

/* Refuses paths that are absolute or climb with "..": paths from the index
 * never do, and callers may pass what a client sent. */
static int path_climbs(const char *path)
{
    if (path[0] == '/') return 1;
    for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0')) return 1;
    return 0;
}

/* The file's current text from the cache when its size and mtime are
 * unchanged, else read afresh into the least recently used slot. */
static CrErr cached_file(IdxStore *st, const char *path, const FileCacheEntry **out, ErrInfo *e)
{
    StrBuf abs;
    struct stat sb;
    sb_init(&abs);
    sb_addf(&abs, "%s/%s", st->root, path);
    FileCache *fc = &st->files;
    fc->tick++;
    if (stat(abs.buf, &sb) != 0) {
        CrErr rc = err_set(e, errno == ENOENT || errno == ENOTDIR ? CR_ENOENT : CR_EIO, "%s: %s",
                           path, strerror(errno));
        sb_release(&abs);
        return rc;
    }
    int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    FileCacheEntry *victim = &fc->v[0];
    for (size_t i = 0; i < FILE_CACHE_SLOTS; i++) {
        FileCacheEntry *c = &fc->v[i];
        if (c->path && !strcmp(c->path, path) && c->size == (int64_t)sb.st_size &&
            c->mtime_ns == mtime) {
            c->used = fc->tick;
            *out = c;
            sb_release(&abs);
            return CR_OK;
        }
        if (c->used < victim->used) victim = c;
    }
    /* A symlink inside the workspace may point out of it: never read there. */
    char real[PATH_MAX];
    size_t rl = strlen(st->root);
    if (!realpath(abs.buf, real) || strncmp(real, st->root, rl) != 0 || real[rl] != '/') {
        CrErr rc = err_set(e, CR_EOUTSIDE, "%s: resolves outside the workspace", path);
        sb_release(&abs);
        return rc;
    }
    free(victim->path);
    victim->path = NULL;
    if (!victim->text.buf) sb_init(&victim->text);
    sb_reset(&victim->text);
    CrErr rc = sb_read_file(&victim->text, abs.buf, st->max_file_bytes * 2, e);
    sb_release(&abs);
    if (rc) return rc;
    /* Line starts, '\n'-separated as Python's ast counts lines. */
    const StrBuf *t = &victim->text;
    victim->n_lines = (uint32_t)count_lines(t->buf, t->len);
    victim->line_off = xrealloc(victim->line_off, ((size_t)victim->n_lines + 1) * sizeof(size_t));
    uint32_t l = 0;
    victim->line_off[0] = 0;
    for (const char *p = t->buf, *end = t->buf + t->len;
         l < victim->n_lines && (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        victim->line_off[++l] = (size_t)(p - t->buf) + 1;
    victim->line_off[victim->n_lines] = t->len;
    victim->path = xstrdup(path);
    victim->size = (int64_t)sb.st_size;
    victim->mtime_ns = mtime;
    victim->used = fc->tick;
    *out = victim;
    return CR_OK;
}

void idx_store_file_cache_release(FileCache *fc)
{
    for (size_t i = 0; i < FILE_CACHE_SLOTS; i++) {
        free(fc->v[i].path);
        free(fc->v[i].line_off);
        sb_release(&fc->v[i].text);
    }
    memset(fc, 0, sizeof *fc);
}

CrErr idx_read_lines(IdxStore *st, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                     uint32_t *out_total, ErrInfo *e)
{
    const FileCacheEntry *f = NULL;
    CrErr rc;
    if (path_climbs(path)) return err_set(e, CR_EOUTSIDE, "%s: not a path inside the workspace", path);
    if ((rc = cached_file(st, path, &f, e))) return rc;
    if (out_total) *out_total = f->n_lines;
    if (start < 1 || end < start || end > f->n_lines)
        return err_set(e, CR_EINVAL, "%s: lines %u-%u outside 1-%u", path, start, end, f->n_lines);
    size_t a = f->line_off[start - 1], b = end < f->n_lines ? f->line_off[end] : f->text.len;
    sb_add(out, f->text.buf + a, b - a);
    return CR_OK;
}
