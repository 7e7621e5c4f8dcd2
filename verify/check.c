#include "vfy_int.h"

#include <stdlib.h>
#include <string.h>

const char *vfy_reason_name(VfyReason r)
{
    static const char *const names[] = {
        "ok",
        "malformed",
        "outside-workspace",
        "file-not-found",
        "out-of-range",
        "not-in-context",
        "stale",
    };
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "malformed";
}

void vfy_citations_free(VfyCitation *v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].symbol);
    }
    free(v);
}

void vfy_rejected_free(VfyRejected *v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++)
        free(v[i].text);
    free(v);
}

void vfy_result_release(VfyResult *r)
{
    if (!r) return;
    free(r->answer);
    vfy_citations_free(r->citations, r->n_citations);
    vfy_rejected_free(r->rejected, r->n_rejected);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- checks */

typedef struct Checker {
    const VfySource *src;
    const VfyContextItem *ctx;
    size_t n_ctx;
    StrMap indexed;  /* path -> is_indexed answer, asked once per call */
    StrMap leaves;   /* path -> vfy_leaves_root answer */
    char *real_root; /* realpath of src->root; NULL when it does not exist */
    StrBuf lines;
} Checker;

/* Offset and length of lines [first, first+count) (0-based) of text; 0 when
 * the text has fewer lines. */
static int line_slice(const char *t, size_t len, uint32_t first, uint32_t count, size_t *off,
                      size_t *n)
{
    size_t i = 0;
    for (uint32_t k = 0; k < first; k++) {
        const char *nl = memchr(t + i, '\n', len - i);
        if (!nl) return 0;
        i = (size_t)(nl - t) + 1;
    }
    if (i >= len && count > 0) return 0;
    size_t j = i;
    for (uint32_t k = 0; k < count; k++) {
        if (j >= len) return 0;
        const char *nl = memchr(t + j, '\n', len - j);
        j = nl ? (size_t)(nl - t) + 1 : len;
    }
    *off = i;
    *n = j - i;
    return 1;
}

static int is_indexed(Checker *c, const char *path)
{
    int64_t v;
    if (!strmap_get(&c->indexed, path, &v)) {
        v = c->src->is_indexed(c->src->ud, path) ? 1 : 0;
        strmap_put(&c->indexed, path, v);
    }
    return v != 0;
}

/* Runs the checks after parsing on a normalised path. On VFY_OK fills the
 * citation's symbol and anchor. A source failure other than ENOENT/EINVAL
 * sets *err. */
static VfyReason check_span(Checker *c, const char *path, uint32_t a, uint32_t b, VfyCitation *cit,
                            CrErr *err, ErrInfo *e)
{
    if (!is_indexed(c, path)) return VFY_FILE_NOT_FOUND;
    if (a < 1) return VFY_OUT_OF_RANGE;
    sb_reset(&c->lines);
    uint32_t total = 0;
    CrErr rc = c->src->read_lines(c->src->ud, path, a, b, &c->lines, &total, e);
    if (rc == CR_EINVAL) return VFY_OUT_OF_RANGE;
    if (rc == CR_ENOENT || rc == CR_EIO || rc == CR_ETOOBIG || rc == CR_EBINARY || rc == CR_EUTF8 ||
        rc == CR_EOUTSIDE)
        return VFY_FILE_NOT_FOUND; /* gone, or no longer a readable source file */
    if (rc != CR_OK) {
        *err = rc;
        return VFY_OK;
    }
    if (b > total) return VFY_OUT_OF_RANGE;

    const VfyContextItem *best = NULL;
    uint32_t best_overlap = 0;
    for (size_t i = 0; i < c->n_ctx; i++) {
        const VfyContextItem *x = &c->ctx[i];
        if (strcmp(x->path, path) != 0 || x->end_line < a || x->start_line > b) continue;
        uint32_t lo = a > x->start_line ? a : x->start_line;
        uint32_t hi = b < x->end_line ? b : x->end_line;
        size_t po, pn, co, cn;
        if (!line_slice(x->text, x->text_len, lo - x->start_line, hi - lo + 1, &po, &pn) ||
            !line_slice(c->lines.buf, c->lines.len, lo - a, hi - lo + 1, &co, &cn))
            return VFY_STALE;
        char h1[17], h2[17];
        idx_hash_text(x->text + po, pn, h1);
        idx_hash_text(c->lines.buf + co, cn, h2);
        if (strcmp(h1, h2) != 0) return VFY_STALE;
        if (!best || hi - lo + 1 > best_overlap) {
            best = x;
            best_overlap = hi - lo + 1;
        }
    }
    if (!best) return VFY_NOT_IN_CONTEXT;

    cit->symbol = xstrdup(best->symbol ? best->symbol : "");
    vfy_anchor_hash(c->lines.buf, c->lines.len, cit->anchor);
    return VFY_OK;
}

static void add_rejected(VfyResult *r, size_t *cap, const char *text, size_t len, VfyReason why)
{
    const char *reason = vfy_reason_name(why);
    for (size_t i = 0; i < r->n_rejected; i++)
        if (r->rejected[i].reason == reason && strlen(r->rejected[i].text) == len &&
            memcmp(r->rejected[i].text, text, len) == 0)
            return;
    ARRAY_GROW(r->rejected, r->n_rejected + 1, *cap);
    r->rejected[r->n_rejected].text = xstrndup(text, len);
    r->rejected[r->n_rejected].reason = reason;
    r->n_rejected++;
}

/* Adds (path, a, b) unless already cited; takes cit's strings either way. */
static void add_citation(VfyResult *r, size_t *cap, VfyCitation *cit)
{
    for (size_t i = 0; i < r->n_citations; i++) {
        VfyCitation *x = &r->citations[i];
        if (x->start_line == cit->start_line && x->end_line == cit->end_line &&
            strcmp(x->path, cit->path) == 0) {
            free(cit->path);
            free(cit->symbol);
            return;
        }
    }
    ARRAY_GROW(r->citations, r->n_citations + 1, *cap);
    r->citations[r->n_citations++] = *cit;
}

/* Normalises a cited path and checks that it stays inside the workspace,
 * symlinks followed. VFY_OK with *out set, or the reason. */
static VfyReason resolve(Checker *c, const char *cited, char **out)
{
    CrErr nrc = vfy_normalize_path(c->src->root, cited, out);
    /* an absolute path may be written against the canonical root */
    if (nrc == CR_EOUTSIDE && c->real_root && strcmp(c->real_root, c->src->root) != 0)
        nrc = vfy_normalize_path(c->real_root, cited, out);
    if (nrc == CR_EOUTSIDE) return VFY_OUTSIDE;
    if (nrc != CR_OK) return VFY_MALFORMED; /* empty, the root itself, a NUL in a URI */
    if (!c->real_root) return VFY_OK;
    int64_t v;
    if (!strmap_get(&c->leaves, *out, &v)) {
        v = vfy_leaves_root(c->real_root, c->src->root, *out);
        strmap_put(&c->leaves, *out, v);
    }
    if (!v) return VFY_OK;
    free(*out);
    *out = NULL;
    return VFY_OUTSIDE;
}

/* The rejected text of mention i: the whole citation as written, or for one
 * part of a bracket "[path:part]". */
static void add_rejected_mention(VfyResult *r, size_t *cap, const char *answer, const VfyMention *m,
                                 size_t n_m, size_t i, VfyReason why)
{
    int alone = (i == 0 || m[i - 1].group_off != m[i].group_off) &&
                (i + 1 == n_m || m[i + 1].group_off != m[i].group_off);
    if (alone) {
        add_rejected(r, cap, answer + m[i].group_off, m[i].group_len, why);
        return;
    }
    StrBuf part;
    sb_init(&part);
    sb_addc(&part, '[');
    if (!memchr(answer + m[i].off, ':', m[i].len) && !memchr(answer + m[i].off, '#', m[i].len))
        sb_addf(&part, "%s:", m[i].path);
    sb_add(&part, answer + m[i].off, m[i].len);
    sb_addc(&part, ']');
    add_rejected(r, cap, part.buf, part.len, why);
    sb_release(&part);
}

/* Drops the weak mentions ("[cli:3]") that name no indexed file: prose
 * after all. Returns how many mentions are left. */
static size_t drop_weak(const VfySource *src, VfyMention *m, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char *rel = NULL;
        if (m[i].weak && vfy_check_path(src, m[i].path, &rel) != VFY_OK) {
            free(m[i].path);
            continue;
        }
        free(rel);
        m[k++] = m[i];
    }
    return k;
}

CrErr vfy_check(const VfySource *src, const char *answer, size_t len, const VfyContextItem *ctx,
                size_t n_ctx, VfyAuthor author, VfyResult *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    const char *source = author == VFY_AUTHOR_MODEL ? "model" : "auto";
    const char *origin = author == VFY_AUTHOR_MODEL ? "model" : "extractive";
    unsigned flags = author == VFY_AUTHOR_MODEL ? 0 : VFY_PARSE_BRACKETS_ONLY;
    VfyMention *m = NULL;
    size_t stop = len;
    size_t n_m = vfy_parse_ex(answer, len, flags, VFY_MAX_CITATIONS, &m, &stop);
    n_m = drop_weak(src, m, n_m);
    int *kept = n_m ? xcalloc(n_m, sizeof *kept) : NULL;
    char **canon = n_m ? xcalloc(n_m, sizeof *canon) : NULL;
    size_t cap_cit = 0, cap_rej = 0;
    Checker c = {.src = src, .ctx = ctx, .n_ctx = n_ctx};
    StrBuf text;
    strmap_init(&c.indexed);
    strmap_init(&c.leaves);
    sb_init(&c.lines);
    sb_init(&text);
    memset(out, 0, sizeof *out);
    if (src->root && src->root[0] == '/') c.real_root = realpath(src->root, NULL);

    for (size_t i = 0; i < n_m; i++) {
        VfyReason why = VFY_MALFORMED;
        char *path = NULL;
        if (!m[i].malformed && (why = resolve(&c, m[i].path, &path)) == VFY_OK) {
            VfyCitation cit = {.start_line = m[i].start_line, .end_line = m[i].end_line};
            why = check_span(&c, path, cit.start_line, cit.end_line, &cit, &rc, e);
            if (rc != CR_OK) {
                free(path);
                goto out;
            }
            if (why == VFY_OK) {
                kept[i] = 1;
                canon[i] = path;
                cit.path = xstrdup(path);
                cit.verified = 1;
                cit.source = source;
                cit.origin = origin;
                add_citation(out, &cap_cit, &cit);
                continue;
            }
        }
        free(path);
        add_rejected_mention(out, &cap_rej, answer, m, n_m, i, why);
    }

    vfy_rewrite(answer, stop, m, n_m, kept, canon, &text);
    if (stop < len) {
        while (text.len && (text.buf[text.len - 1] == ' ' || text.buf[text.len - 1] == '\n'))
            text.buf[--text.len] = '\0';
        sb_addf(&text,
                "%s(The answer was cut here: it has more than %d citations, and only the "
                "first %d were checked.)",
                text.len ? "\n\n" : "", VFY_MAX_CITATIONS, VFY_MAX_CITATIONS);
        out->truncated = 1;
        log_msg(LOG_WARN, "answer has more than %d citations; cut at byte %zu of %zu",
                VFY_MAX_CITATIONS, stop, len);
    }

    for (size_t i = 0; i < n_ctx && out->n_citations == 0; i++) {
        VfyCitation cit = {.start_line = ctx[i].start_line, .end_line = ctx[i].end_line};
        VfyReason why = check_span(&c, ctx[i].path, cit.start_line, cit.end_line, &cit, &rc, e);
        if (rc != CR_OK) goto out;
        if (why != VFY_OK) continue;
        cit.path = xstrdup(ctx[i].path);
        cit.verified = 1;
        cit.source = "auto";
        cit.origin = "fallback";
        add_citation(out, &cap_cit, &cit);
    }
    out->answer = sb_detach(&text, &out->answer_len);

out:
    if (rc != CR_OK) vfy_result_release(out);
    for (size_t i = 0; i < n_m; i++)
        free(canon[i]);
    free(canon);
    free(kept);
    vfy_mentions_free(m, n_m);
    strmap_release(&c.indexed);
    strmap_release(&c.leaves);
    free(c.real_root);
    sb_release(&c.lines);
    sb_release(&text);
    return rc;
}

VfyReason vfy_check_path(const VfySource *src, const char *path, char **out_rel)
{
    Checker c = {.src = src};
    strmap_init(&c.indexed);
    strmap_init(&c.leaves);
    sb_init(&c.lines);
    *out_rel = NULL;
    if (src->root && src->root[0] == '/') c.real_root = realpath(src->root, NULL);
    VfyReason why = resolve(&c, path, out_rel);
    if (why == VFY_OK && !is_indexed(&c, *out_rel)) {
        why = VFY_FILE_NOT_FOUND;
        free(*out_rel);
        *out_rel = NULL;
    }
    strmap_release(&c.indexed);
    strmap_release(&c.leaves);
    free(c.real_root);
    sb_release(&c.lines);
    return why;
}
