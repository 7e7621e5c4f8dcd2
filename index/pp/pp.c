/* pp.c - whether a line is compiled: the condition of its innermost
 * preprocessor branch (the pp table, chunk_ts_pp.c) evaluated at query
 * time against the build configuration (pp_config.c: the file's -D and
 * -U, then the row's predefined macros) and the macros the workspace
 * defines (a definition counts where its own condition holds; a macro
 * nothing defines is not defined, and its value is unknown: it may come
 * from a system header). Nothing here is stored, so a #define or a
 * configuration changing changes the answers at once. */
#include "../chunk/lang/lang.h"
#include "pp_int.h"
#include "../store/store_int.h"

#include <stdlib.h>
#include <string.h>

enum { PP_DEPTH = 8, PP_ROWS = 64 };

typedef struct PpCtx {
    IdxStore *st;
    const PpConfig *cfg;
    const char *relpath;           /* the file asked about: whose flags apply */
    const char *const *predefined; /* its row's (this machine's, lacking a config) */
    const char *stack[PP_DEPTH];   /* the macros being decided (a definition under
                                    * `!defined(X)` defines X either way) */
    size_t depth;
    ErrInfo *e;
    CrErr rc;
} PpCtx;

typedef struct PpRow {
    int kind;
    int64_t file_id;
    uint32_t line;
    char *text;
} PpRow;

const char *idx_built_name(IdxBuilt b)
{
    return b == IDX_BUILT_YES ? "built" : b == IDX_BUILT_NO ? "not built" : "unknown";
}

IdxBuilt idx_built_and(IdxBuilt a, IdxBuilt b)
{
    if (a == IDX_BUILT_NO || b == IDX_BUILT_NO) return IDX_BUILT_NO;
    return a == IDX_BUILT_YES && b == IDX_BUILT_YES ? IDX_BUILT_YES : IDX_BUILT_UNKNOWN;
}

static int pp__step(PpCtx *c, sqlite3_stmt *s)
{
    int row = 0;
    CrErr rc = idx_store_step(c->st, s, &row, c->e, "preprocessor facts");
    if (rc && !c->rc) c->rc = rc;
    return row && !rc;
}

/* The condition of the innermost branch holding file:line, or NULL. */
static char *pp__cond_text(PpCtx *c, int64_t file_id, uint32_t line, uint32_t to)
{
    sqlite3_stmt *s = idx_store_stmt(c->st, STMT_PP_COND_AT, c->e);
    if (!s) {
        if (!c->rc) c->rc = CR_EDB;
        return NULL;
    }
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_int64(s, 2, line);
    sqlite3_bind_int64(s, 3, to < line ? line : to);
    char *v = pp__step(c, s) ? xstrdup((const char *)sqlite3_column_text(s, 0)) : NULL;
    sqlite3_reset(s);
    return v;
}

/* The definitions of name (kind PP_DEFINE), read whole before anything
 * else uses the statement. Caller frees. */
static PpRow *pp__defs(PpCtx *c, const char *name, size_t *n_out)
{
    PpRow *v = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *s = idx_store_stmt(c->st, STMT_PP_MACRO, c->e);
    if (!s && !c->rc) c->rc = CR_EDB;
    if (s) sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    while (s && n < PP_ROWS && pp__step(c, s)) {
        if (sqlite3_column_int(s, 0) != PP_DEFINE) continue;
        ARRAY_GROW(v, n + 1, cap);
        v[n++] =
            (PpRow){PP_DEFINE, sqlite3_column_int64(s, 1), (uint32_t)sqlite3_column_int64(s, 2),
                    xstrdup((const char *)sqlite3_column_text(s, 3))};
    }
    if (s) sqlite3_reset(s);
    *n_out = n;
    return v;
}

static void pp__rows_free(PpRow *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].text);
    free(v);
}

static IdxBuilt pp__holds(PpCtx *c, const char *cond);
static int pp__value(PpCtx *c, const char *name, int64_t *v);
static IdxBuilt pp__defined(PpCtx *c, const char *name);

/* The value of expr: what is known of each macro it names first. */
static int pp__eval(PpCtx *c, const char *expr, int64_t *v)
{
    size_t n;
    PpName *names = idx_pp_names(expr, &n);
    for (size_t i = 0; i < n; i++) {
        if (names[i].in_defined)
            names[i].defined = pp__defined(c, names[i].name);
        else
            names[i].known = pp__value(c, names[i].name, &names[i].value);
    }
    PpFacts f = {names, n};
    int ok = idx_pp_eval(expr, &f, v);
    idx_pp_names_free(names, n);
    return ok;
}

/* The row's predefined macro name ("NAME" or "NAME=VALUE"), or NULL. */
static const char *pp__predefined(const PpCtx *c, const char *name)
{
    size_t n = strlen(name);
    for (const char *const *p = c->predefined; p && *p; p++)
        if (!strncmp(*p, name, n) && ((*p)[n] == '\0' || (*p)[n] == '=')) return *p;
    return NULL;
}

static int pp__busy(const PpCtx *c, const char *name)
{
    for (size_t i = 0; i < c->depth; i++)
        if (!strcmp(c->stack[i], name)) return 1;
    return 0;
}

static IdxBuilt pp__defined(PpCtx *c, const char *name)
{
    const char *value;
    int flag = idx_pp_config_flag(c->cfg, c->relpath, name, &value);
    if (flag) return flag > 0 ? IDX_BUILT_YES : IDX_BUILT_NO;
    if (pp__predefined(c, name)) return IDX_BUILT_YES;
    if (pp__busy(c, name)) return IDX_BUILT_NO;
    if (c->depth >= PP_DEPTH || c->rc) return IDX_BUILT_UNKNOWN;
    size_t n;
    PpRow *rows = pp__defs(c, name, &n);
    IdxBuilt res = IDX_BUILT_NO;
    c->stack[c->depth++] = name;
    for (size_t i = 0; i < n && res != IDX_BUILT_YES; i++) {
        char *cond = pp__cond_text(c, rows[i].file_id, rows[i].line, rows[i].line);
        IdxBuilt b = cond ? pp__holds(c, cond) : IDX_BUILT_YES;
        if (b != IDX_BUILT_NO) res = b;
        free(cond);
    }
    c->depth--;
    pp__rows_free(rows, n);
    return res;
}

/* The value of an expression a macro stands for, under the same facts. */
static int pp__expr_value(PpCtx *c, const char *name, const char *text, int64_t *v)
{
    if (c->depth >= PP_DEPTH || pp__busy(c, name)) return 0;
    c->stack[c->depth++] = name;
    int ok = pp__eval(c, text, v);
    c->depth--;
    return ok;
}

static int pp__value(PpCtx *c, const char *name, int64_t *v)
{
    const char *value;
    int flag = idx_pp_config_flag(c->cfg, c->relpath, name, &value);
    if (flag < 0) {
        *v = 0;
        return 1;
    }
    if (flag > 0) return pp__expr_value(c, name, value, v);
    const char *pre = pp__predefined(c, name);
    if (pre) return pp__expr_value(c, name, strchr(pre, '=') ? strchr(pre, '=') + 1 : "1", v);
    if (c->depth >= PP_DEPTH || c->rc) return 0;
    if (pp__busy(c, name)) return 0;
    size_t n;
    PpRow *rows = pp__defs(c, name, &n);
    int ok = 0;
    size_t i = 0;
    IdxBuilt b = IDX_BUILT_NO;
    /* its definitions' conditions are read with name being decided: one
     * under `#ifndef name` (a default a build may override) holds */
    c->stack[c->depth++] = name;
    for (; i < n; i++) {
        char *cond = pp__cond_text(c, rows[i].file_id, rows[i].line, rows[i].line);
        b = cond ? pp__holds(c, cond) : IDX_BUILT_YES;
        free(cond);
        if (b != IDX_BUILT_NO) break; /* unknown: which one holds is not known */
    }
    c->depth--;
    if (b == IDX_BUILT_YES)
        ok = strcmp(rows[i].text, "(") && rows[i].text[0] &&
             pp__expr_value(c, name, rows[i].text, v);
    else if (n && n < PP_ROWS && b == IDX_BUILT_NO && !c->rc) {
        /* the workspace defines it, each time under a condition that does
         * not hold (`#if defined(_WIN32)` / `#define OS_WINDOWS 1`): not
         * defined, 0 as #if reads it */
        *v = 0;
        ok = 1;
    }
    pp__rows_free(rows, n);
    return ok;
}

static IdxBuilt pp__holds(PpCtx *c, const char *cond)
{
    int64_t v;
    if (!pp__eval(c, cond, &v)) return IDX_BUILT_UNKNOWN;
    return v ? IDX_BUILT_YES : IDX_BUILT_NO;
}

int idx_pp_configured(IdxStore *st)
{
    st->pp_config = idx_pp_config_load(st->pp_config, st->root);
    return st->pp_config != NULL;
}

CrErr idx_pp_cond(IdxStore *st, int64_t file_id, uint32_t line, uint32_t to, char **cond,
                  IdxBuilt *built, ErrInfo *e)
{
    PpCtx c = {.st = st, .e = e};
    *cond = NULL;
    *built = IDX_BUILT_YES;
    char *text = pp__cond_text(&c, file_id, line, to);
    if (!text) return c.rc;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_BY_ID, e);
    if (!s) {
        free(text);
        return CR_EDB;
    }
    sqlite3_bind_int64(s, 1, file_id);
    char *rel = pp__step(&c, s) ? xstrdup((const char *)sqlite3_column_text(s, 0)) : NULL;
    sqlite3_reset(s);
    const IdxLang *lang = rel ? idx_lang_for_file(&st->lang_pick, rel) : NULL;
    c.cfg = idx_pp_configured(st) ? st->pp_config : NULL;
    c.relpath = rel;
    c.predefined = lang ? lang->predefined : NULL;
    *built = pp__holds(&c, text);
    free(rel);
    if (c.rc) {
        free(text);
        return c.rc;
    }
    *cond = text;
    return CR_OK;
}

CrErr idx_variant_chunks(IdxStore *st, int64_t chunk_id, int64_t **out, size_t *n_out, ErrInfo *e)
{
    PpCtx c = {.st = st, .e = e};
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_VARIANTS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, chunk_id);
    while (pp__step(&c, s)) {
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (c.rc) {
        free(v);
        return c.rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

CrErr idx_pp_site_cond(IdxStore *st, int64_t file_id, uint32_t from, uint32_t to, const char *name,
                       char **cond, IdxBuilt *built, ErrInfo *e)
{
    PpCtx c = {.st = st, .e = e};
    uint32_t lines[64];
    size_t n = 0;
    sqlite3_stmt *s = name && name[0] ? idx_store_stmt(st, STMT_PP_SITES, e) : NULL;
    if (s) {
        sqlite3_bind_int64(s, 1, file_id);
        sqlite3_bind_int64(s, 2, from);
        sqlite3_bind_int64(s, 3, to);
        sqlite3_bind_text(s, 4, name, -1, SQLITE_STATIC);
        while (n < 64 && pp__step(&c, s))
            lines[n++] = (uint32_t)sqlite3_column_int64(s, 0);
        sqlite3_reset(s);
        if (c.rc) return c.rc;
    }
    if (!n) return idx_pp_cond(st, file_id, from, to, cond, built, e);
    *cond = NULL;
    *built = IDX_BUILT_NO;
    int best = 3;
    for (size_t i = 0; i < n && best > 0; i++) {
        char *t = NULL;
        IdxBuilt b;
        CrErr rc = idx_pp_cond(st, file_id, lines[i], lines[i], &t, &b, e);
        if (rc) {
            free(*cond);
            *cond = NULL;
            return rc;
        }
        int rank = b == IDX_BUILT_YES ? 0 : b == IDX_BUILT_UNKNOWN ? 1 : 2;
        if (rank < best) {
            best = rank;
            free(*cond);
            *cond = t;
            *built = b;
        } else {
            free(t);
        }
    }
    return CR_OK;
}
