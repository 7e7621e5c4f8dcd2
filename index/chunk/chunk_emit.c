#include "chunk_emit.h"

#include <stdlib.h>
#include <string.h>

#define EMIT__DEFAULT_MAX 100u

static int emit__space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void idx_emit_init(ChunkEmit *em, const char *src, uint32_t len, uint32_t max_lines)
{
    memset(em, 0, sizeof *em);
    em->src = src;
    em->len = len;
    em->max_lines = max_lines ? max_lines : EMIT__DEFAULT_MAX;
    uint32_t n = (uint32_t)count_lines(src, len);
    em->n_lines = n;
    em->line_start = xmalloc((n + 2) * sizeof *em->line_start);
    em->line_kind = xcalloc(n + 2, 1);
    em->cut = xcalloc(n + 2, 1);
    em->owner = xmalloc((n + 2) * sizeof *em->owner);
    em->line_chunk = xmalloc((n + 2) * sizeof *em->line_chunk);
    uint32_t pos = 0;
    for (uint32_t l = 1; l <= n; l++) {
        em->line_start[l] = pos;
        const char *nl = memchr(src + pos, '\n', len - pos);
        uint32_t end = nl ? (uint32_t)(nl - src) : len;
        uint32_t p = pos;
        while (p < end && emit__space(src[p]))
            p++;
        em->line_kind[l] = p == end ? EMIT_BLANK : EMIT_CODE;
        em->owner[l] = -1;
        em->line_chunk[l] = -1;
        pos = nl ? end + 1 : end;
    }
    em->line_start[n + 1] = len;
}

void idx_emit_release(ChunkEmit *em)
{
    for (size_t i = 0; i < em->n_units; i++) {
        free(em->units[i].symbol);
        free(em->units[i].signature);
        free(em->units[i].doc);
    }
    for (size_t i = 0; i < em->n_refs; i++) {
        free(em->refs[i].module);
        free(em->refs[i].member);
        free(em->refs[i].alias);
        free(em->refs[i].name);
    }
    free(em->units);
    free(em->refs);
    free(em->line_start);
    free(em->line_kind);
    free(em->cut);
    free(em->owner);
    free(em->line_chunk);
    memset(em, 0, sizeof *em);
}

uint32_t idx_emit_first_byte(const ChunkEmit *em, uint32_t l)
{
    uint32_t p = em->line_start[l], end = em->line_start[l + 1];
    while (p < end && emit__space(em->src[p]))
        p++;
    return p;
}

uint32_t idx_emit_line_of(const ChunkEmit *em, uint32_t b)
{
    uint32_t lo = 1, hi = em->n_lines ? em->n_lines : 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (em->line_start[mid] <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void idx_emit_mark_comment(ChunkEmit *em, uint32_t a, uint32_t b)
{
    if (!em->n_lines) return;
    for (uint32_t l = idx_emit_line_of(em, a); l <= em->n_lines && em->line_start[l] < b; l++) {
        uint32_t f = idx_emit_first_byte(em, l);
        if (em->line_kind[l] == EMIT_CODE && f >= a && f < b) em->line_kind[l] = EMIT_COMMENT;
    }
}

uint32_t idx_emit_end_line(const ChunkEmit *em, uint32_t start, uint32_t end)
{
    if (end > em->len) end = em->len;
    while (end > start && emit__space(em->src[end - 1]))
        end--;
    return idx_emit_line_of(em, end > start ? end - 1 : start);
}

int idx_emit_unit_add(ChunkEmit *em, IdxKind kind, int parent, uint32_t start, uint32_t end,
                      char *symbol, char *signature, char *doc)
{
    if (start < 1) start = 1;
    if (end < start) end = start;
    if (end > em->n_lines) end = em->n_lines;
    ARRAY_GROW(em->units, em->n_units + 1, em->cap_units);
    int id = (int)em->n_units++;
    EmitUnit *u = &em->units[id];
    u->kind = kind;
    u->parent = parent;
    u->start = start;
    u->end = end;
    u->symbol = symbol ? symbol : xstrdup("");
    const char *dot = strrchr(u->symbol, '.');
    u->name = dot ? dot + 1 : u->symbol;
    u->signature = signature ? signature : xstrdup("");
    u->doc = doc;
    u->first_chunk = -1;
    return id;
}

int idx_emit_unit_by_symbol(const ChunkEmit *em, const char *symbol)
{
    for (size_t i = em->n_units; i-- > 0;)
        if (em->units[i].kind == IDX_KIND_CLASS && !strcmp(em->units[i].symbol, symbol))
            return (int)i;
    return -1;
}

ChunkRef *idx_emit_ref_push(ChunkEmit *em, RefKind kind, int unit, uint32_t line)
{
    ARRAY_GROW(em->refs, em->n_refs + 1, em->cap_refs);
    ChunkRef *ref = &em->refs[em->n_refs++];
    memset(ref, 0, sizeof *ref);
    ref->kind = kind;
    ref->chunk = unit;
    ref->line = line;
    return ref;
}

static void emit__push(ChunkEmit *em, ChunkSet *out, const EmitUnit *u, IdxKind kind, uint32_t a,
                       uint32_t b, uint32_t window, const char *doc, int parent)
{
    ARRAY_GROW(out->chunks, out->n_chunks + 1, out->cap_chunks);
    int idx = (int)out->n_chunks++;
    ChunkDef *d = &out->chunks[idx];
    d->kind = kind;
    d->start_line = a;
    d->end_line = b;
    d->window = window;
    d->symbol = xstrdup(u ? u->symbol : "");
    d->name = xstrdup(u ? u->name : "");
    d->signature = xstrdup(u ? u->signature : "");
    d->docstring = doc ? xstrdup(doc) : NULL;
    d->parent = parent;
    for (uint32_t l = a; l <= b; l++)
        em->line_chunk[l] = idx;
}

/* Lines a..b of one owner, in windows of at most max_lines cut where a
 * statement starts in the last 30% of a window when one does. */
static void emit__windows(ChunkEmit *em, ChunkSet *out, const EmitUnit *u, IdxKind kind, uint32_t a,
                          uint32_t b, const char *doc, int parent)
{
    uint32_t max = em->max_lines;
    if (b - a + 1 <= max) {
        emit__push(em, out, u, kind, a, b, 0, doc, parent);
        return;
    }
    uint32_t lmin = max - max * 3 / 10, window = 1, pos = a;
    if (lmin < 1) lmin = 1;
    while (pos <= b) {
        if (b - pos + 1 <= max) {
            emit__push(em, out, u, kind, pos, b, window, doc, parent);
            break;
        }
        uint32_t next = pos + max;
        for (uint32_t c = pos + max; c >= pos + lmin; c--) {
            if (em->cut[c]) {
                next = c;
                break;
            }
        }
        emit__push(em, out, u, kind, pos, next - 1, window++, doc, parent);
        pos = next;
    }
}

static int emit__has_code(const ChunkEmit *em, uint32_t a, uint32_t b)
{
    for (uint32_t l = a; l <= b; l++)
        if (em->line_kind[l] == EMIT_CODE) return 1;
    return 0;
}

void idx_emit_build(ChunkEmit *em, ChunkSet *out)
{
    for (size_t i = 0; i < em->n_units; i++)
        for (uint32_t l = em->units[i].start; l <= em->units[i].end; l++)
            em->owner[l] = (int)i;
    for (uint32_t l = 1; l <= em->n_lines;) {
        int o = em->owner[l];
        uint32_t a = l, b = l;
        while (b < em->n_lines && em->owner[b + 1] == o)
            b++;
        l = b + 1;
        while (a <= b && em->line_kind[a] == EMIT_BLANK)
            a++;
        while (b >= a && em->line_kind[b] == EMIT_BLANK)
            b--;
        if (a > b || !emit__has_code(em, a, b)) continue;
        if (o < 0) {
            const char *doc = em->module_doc && em->module_doc_line >= a && em->module_doc_line <= b
                                  ? em->module_doc
                                  : NULL;
            emit__windows(em, out, NULL, IDX_KIND_MODULE, a, b, doc, -1);
            continue;
        }
        EmitUnit *u = &em->units[o];
        int parent = u->parent >= 0 ? em->units[u->parent].first_chunk : -1;
        int first = u->first_chunk < 0;
        if (first) u->first_chunk = (int)out->n_chunks;
        emit__windows(em, out, u, u->kind, a, b, first ? u->doc : NULL, parent);
    }
}

/* The module's chunk nearest above line l, else the first below, else -1. */
static int emit__module_chunk(const ChunkEmit *em, uint32_t l)
{
    if (l > em->n_lines) l = em->n_lines;
    for (uint32_t k = l; k >= 1; k--)
        if (em->owner[k] < 0 && em->line_chunk[k] >= 0) return em->line_chunk[k];
    for (uint32_t k = l + 1; k <= em->n_lines; k++)
        if (em->owner[k] < 0 && em->line_chunk[k] >= 0) return em->line_chunk[k];
    return -1;
}

void idx_emit_refs_out(ChunkEmit *em, ChunkSet *out)
{
    StrMap seen;
    StrBuf key;
    strmap_init(&seen);
    sb_init(&key);
    for (size_t i = 0; i < em->n_refs; i++) {
        ChunkRef ref = em->refs[i];
        int chunk = -1;
        if (ref.chunk >= 0) chunk = em->units[ref.chunk].first_chunk;
        if (ref.chunk == IDX_EMIT_MODULE) chunk = emit__module_chunk(em, ref.line);
        if (chunk < 0 && ref.line >= 1 && ref.line <= em->n_lines) chunk = em->line_chunk[ref.line];
        int keep = chunk >= 0;
        if (keep && ref.kind != REF_IMPORT) {
            sb_reset(&key);
            sb_addi(&key, chunk);
            sb_addc(&key, ':');
            sb_addi(&key, (int)ref.kind);
            sb_addc(&key, ':');
            sb_adds(&key, ref.name ? ref.name : "(null)");
            /* calls of one name with different arities may reach different
             * overloads: one reference per arity */
            if (ref.argc > 0) {
                sb_addc(&key, '(');
                sb_addi(&key, ref.argc);
            }
            if (ref.argt) { /* and per argument types */
                sb_addc(&key, ':');
                sb_addi(&key, (int)(ref.argt & 0x7fffffff));
                sb_addc(&key, ':');
                sb_addi(&key, (int)(ref.argt >> 31));
            }
            if (strmap_get(&seen, key.buf, NULL))
                keep = 0;
            else
                strmap_put(&seen, key.buf, 1);
        }
        if (!keep) {
            free(ref.module);
            free(ref.member);
            free(ref.alias);
            free(ref.name);
            continue;
        }
        ref.chunk = chunk;
        ARRAY_GROW(out->refs, out->n_refs + 1, out->cap_refs);
        out->refs[out->n_refs++] = ref;
    }
    em->n_refs = 0;
    strmap_release(&seen);
    sb_release(&key);
}
